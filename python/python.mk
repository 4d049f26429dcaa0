# python/: the gdrmap Python package (Python, and one optional compiled
# helper, gdrmap/_fastflag.c) and its tests, run with Debian's python3
# (PYTHON):
#   tests/python/test_*.py      host tests, against the tree's library and
#                               libgdrapi-mock.so (the real library with a
#                               backend whose "GPU memory" is host memory)
#                               and libgdrapi-mock-gdrcopy.so (the same
#                               without gdrmap's best-path copies, as
#                               GDRCopy's library)
#   tests/python/gpu/test_*.py  GPU tests: skip without a GPU, PyTorch or
#                               CuPy (make check-gpu, tests/gpu/gpu.mk)
#
# python-helper builds the helper into $(O)/python/gdrmap/, where the
# package finds it when it runs from the tree, with PYTHON's headers:
# for the stable ABI of 3.11 (_fastflag.abi3.so, loaded by every Python
# from 3.11 on) where PYTHON is 3.11 or newer, else for PYTHON alone.

PYTHON ?= /usr/bin/python3
PY_MOCK_LIB := $(O)/python/libgdrapi-mock.so
PY_MOCK_GDRCOPY_LIB := $(O)/python/libgdrapi-mock-gdrcopy.so
PY_TESTS := $(sort $(wildcard tests/python/test_*.py))

$(PY_MOCK_LIB): tests/python/mock_gdrapi.c $(LIB_INTERNAL_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilib -fPIC -shared -Wl,-z,defs -o $@ $< \
		$(LIB_INTERNAL_A) -lpthread -ldl

# The version script keeps the real library's gdrmap_copy_* (were the
# archive's objects to bring them) out of its dynamic symbols.
$(PY_MOCK_GDRCOPY_LIB): tests/python/mock_gdrapi.c tests/python/mock-gdrcopy.map \
		$(LIB_INTERNAL_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DMOCK_GDRCOPY -Ilib -fPIC -shared -Wl,-z,defs \
		-Wl,--version-script=tests/python/mock-gdrcopy.map -o $@ $< \
		$(LIB_INTERNAL_A) -lpthread -ldl

# The helper, rebuilt when its source is newer.  PYTHON says its name and
# headers; without Python.h (Debian: python3-dev) it fails, saying so.
PY_HELPER_DIR := $(O)/python/gdrmap

.PHONY: python-helper
python-helper:
	@set -e; mkdir -p $(PY_HELPER_DIR); \
	info=$$($(PYTHON) -c 'import sys, sysconfig; \
		print(".abi3.so" if sys.version_info >= (3, 11) else \
		sysconfig.get_config_var("EXT_SUFFIX"), \
		sysconfig.get_paths()["include"])') || \
		{ echo "python-helper: $(PYTHON) does not run" >&2; exit 1; }; \
	set -- $$info; \
	so=$(PY_HELPER_DIR)/_fastflag$$1; \
	[ -f "$$2/Python.h" ] || { echo "python-helper: $(PYTHON) has no \
		Python.h in $$2: install its headers (Debian: apt-get install \
		python3-dev)" >&2; exit 1; }; \
	[ "$$so" -nt python/gdrmap/_fastflag.c ] && \
		[ "$$so" -nt lib/isa/fence.h ] && exit 0; \
	echo "$(CC) $(ALL_CFLAGS) -fPIC -shared -isystem $$2 -o $$so python/gdrmap/_fastflag.c"; \
	$(CC) $(ALL_CFLAGS) -fPIC -shared -isystem "$$2" -o "$$so.tmp" \
		python/gdrmap/_fastflag.c; \
	mv "$$so.tmp" "$$so"

# `make` (all) builds the helper too where PYTHON has its headers, so that
# the package run from the tree (PYTHONPATH=python) takes it; where they
# are missing it says so and how to get them, and flags go through ctypes.
.PHONY: python-helper-if-headers
python-helper-if-headers:
	@if $(PYTHON) -c 'import os, sys, sysconfig; \
		sys.exit(not os.path.isfile(os.path.join( \
		sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; \
	then $(MAKE) --no-print-directory python-helper; \
	else echo "note: $(PYTHON) has no headers, so the Python package's flag helper is not built and its flags go through ctypes (about 1 us slower a call): install them (Debian: apt-get install python3-dev) and run make again" >&2; \
	fi

# python-mocks: what the tests need but the helper (a GPU machine's
# Python may have no headers: bench/python-gpu-run.sh builds it apart).
.PHONY: python-mocks python-tests check-python
python-mocks: lib tools $(PY_MOCK_LIB) $(PY_MOCK_GDRCOPY_LIB)
python-tests: python-mocks python-helper

check-python: python-tests
	@echo "== Python package (tests/python, $(PYTHON))"
	@GDRMAP_BUILD=$(abspath $(O)) PYTHONDONTWRITEBYTECODE=1 \
		tests/run-tests.sh -t 600 -w $(PYTHON) -s $(CHECK_SUMMARY) $(PY_TESTS)
