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

.PHONY: gpu-tests check-gpu
gpu-tests: $(GPU_BINS)

check-gpu: gpu-tests
	@echo "== GPU tests (skip without a GPU)"
	tests/run-tests.sh -t 300 -s $(CHECK_SUMMARY) $(GPU_BINS)
