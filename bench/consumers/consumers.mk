# The consumer suite (bench/consumers/README.md): nccl_gdr, built with the
# plain C compiler (CUDA and NCCL are loaded at run time), and the host
# test that the suite's parts skip or fail cleanly where there is no GPU
# and that the latency summary judges as documented.

CONSUMERS_BIN := $(O)/bench/consumers/nccl_gdr

$(CONSUMERS_BIN): bench/consumers/nccl_gdr.c common/cuda_defs.h \
		$(O)/common/cuda_load.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(O)/common/cuda_load.o -ldl

.PHONY: consumers check-bench-consumers
consumers: $(CONSUMERS_BIN)
bench: consumers

check-bench-consumers: consumers lib
	@echo "== consumer suite, without a GPU (tests/consumers)"
	NCCL_GDR=$(abspath $(CONSUMERS_BIN)) GDRAPI=$(abspath $(O))/lib/libgdrapi.so.2 \
		tests/run-tests.sh -t 120 -s $(CHECK_SUMMARY) \
		tests/consumers/test_consumers.sh
