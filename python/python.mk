# python/: the gdrmap Python package (pure Python, nothing to build) and
# its tests, run with Debian's python3 (PYTHON):
#   python/tests/test_*.py      host tests, against the tree's library and
#                               libgdrapi-mock.so (the real library with a
#                               backend whose "GPU memory" is host memory)
#                               and libgdrapi-mock-gdrcopy.so (the same
#                               without gdrmap's best-path copies, as
#                               GDRCopy's library)
#   python/tests/gpu/test_*.py  GPU tests: skip without a GPU, PyTorch or
#                               CuPy (bench/python-gpu-run.sh runs them there)

PYTHON ?= /usr/bin/python3
PY_MOCK_LIB := $(O)/python/libgdrapi-mock.so
PY_MOCK_GDRCOPY_LIB := $(O)/python/libgdrapi-mock-gdrcopy.so
PY_TESTS := $(sort $(wildcard python/tests/test_*.py)) \
	$(sort $(wildcard python/tests/gpu/test_*.py))

$(PY_MOCK_LIB): python/tests/mock_gdrapi.c $(LIB_INTERNAL_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilib -fPIC -shared -Wl,-z,defs -o $@ $< \
		$(LIB_INTERNAL_A) -lpthread -ldl

# The version script keeps the real library's gdrmap_copy_* (were the
# archive's objects to bring them) out of its dynamic symbols.
$(PY_MOCK_GDRCOPY_LIB): python/tests/mock_gdrapi.c python/tests/mock-gdrcopy.map \
		$(LIB_INTERNAL_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DMOCK_GDRCOPY -Ilib -fPIC -shared -Wl,-z,defs \
		-Wl,--version-script=python/tests/mock-gdrcopy.map -o $@ $< \
		$(LIB_INTERNAL_A) -lpthread -ldl

.PHONY: python-tests check-python
python-tests: lib tools $(PY_MOCK_LIB) $(PY_MOCK_GDRCOPY_LIB)

check-python: python-tests
	@echo "== Python package (python/tests, $(PYTHON))"
	@GDRMAP_BUILD=$(abspath $(O)) PYTHONDONTWRITEBYTECODE=1 \
		tests/run-tests.sh -t 600 -w $(PYTHON) -s $(CHECK_SUMMARY) $(PY_TESTS)
