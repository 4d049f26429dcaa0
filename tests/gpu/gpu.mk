# Tests that need a real GPU: built in every `make check`, where they skip
# (exit 77) without one; run on a GPU machine with `make check-gpu`.
# They use the installed-style shared library, as applications do.

GPU_SRCS := $(wildcard tests/gpu/test_*.c)
GPU_BINS := $(patsubst tests/gpu/%.c,$(O)/tests/gpu/%,$(GPU_SRCS))

$(O)/tests/gpu/%: tests/gpu/%.c tests/gpu/gpu.h tests/gpu/kernels.h \
		$(O)/common/cuda_load.o lib
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/common -o $@ $< \
		$(O)/common/cuda_load.o -L$(O)/lib -lgdrapi \
		-Wl,-rpath,$(abspath $(O))/lib -ldl -lpthread

# This one loads the library itself, RTLD_LOCAL, as UCX and NCCL do.
$(O)/tests/gpu/test_gpu_rm_threads: tests/gpu/test_gpu_rm_threads.c \
		tests/gpu/gpu.h $(O)/common/cuda_load.o lib
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -Itests/common -o $@ $< \
		$(O)/common/cuda_load.o -Wl,-rpath,$(abspath $(O))/lib -ldl \
		-lpthread

.PHONY: gpu-tests check-gpu check-gpu-soak
gpu-tests: $(GPU_BINS)

# make check-gpu: every GPU test, each on every GPU it sees (tests/gpu
# through gpu.h, tests/python/gpu through PyTorch's and CuPy's device
# counts), with PYTHON (give it the Python that has PyTorch or CuPy);
# CONSUMERS=1 adds the consumer suite (bench/consumers/run.sh, into
# $(O)/consumers; minutes, as root).  Without a GPU every test skips
# (77), and make check runs it so.  The Python package's flag helper is
# built for PYTHON where it can be; without it the flags go through ctypes.
PY_GPU_TESTS := $(sort $(wildcard tests/python/gpu/test_*.py))
CONSUMERS ?= 0

check-gpu: gpu-tests python-mocks
	@echo "== GPU tests, on every GPU (tests/gpu, tests/python/gpu)"
	@if nvidia-smi -L 2>/dev/null; then . scripts/gpu-machine-env.sh; \
	else echo "no GPU here (nvidia-smi -L fails): every GPU test skips"; fi; \
	$(MAKE) --no-print-directory PYTHON=$(PYTHON) python-helper >/dev/null 2>&1 || \
		export GDRMAP_FASTFLAG=0; \
	status=0; \
	tests/run-tests.sh -t 300 -s $(CHECK_SUMMARY) $(GPU_BINS) \
		tests/gpu/test_soak.sh || status=1; \
	GDRMAP_BUILD=$(abspath $(O)) PYTHONDONTWRITEBYTECODE=1 \
		tests/run-tests.sh -t 600 -w $(PYTHON) -s $(CHECK_SUMMARY) \
		$(PY_GPU_TESTS) || status=1; \
	if [ "$(CONSUMERS)" = 1 ]; then \
		echo "== consumer suite (bench/consumers/run.sh $(O)/consumers)"; \
		CONSUMERS_PARTS="build torch nccl gdrmap ucx mpi" \
			bench/consumers/run.sh $(O)/consumers; rc=$$?; \
		case $$rc in 0) c="1 0 0" ;; 77) c="0 0 1" ;; *) c="0 1 0"; status=1 ;; esac; \
		echo "$$c" >>$(CHECK_SUMMARY); \
	fi; exit $$status

# make check-gpu-soak: the GPU tests in rounds for SOAK_S seconds (default
# 600), every GPU's memory back after each round (tests/gpu/soak.sh, into
# $(O)/soak).
SOAK_S ?= 600
check-gpu-soak: gpu-tests
	@echo "== GPU tests in rounds for $(SOAK_S) s (tests/gpu/soak.sh)"
	@if nvidia-smi -L >/dev/null 2>&1; then . scripts/gpu-machine-env.sh; fi; \
	tests/gpu/soak.sh $(SOAK_S) $(O)/soak $(GPU_BINS) || [ $$? = 77 ]
