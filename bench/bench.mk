# Benchmarks that need a real GPU (run on the GPU machine, see
# bench/README.md).  They link the library's internals to time each copy
# routine set directly.

BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRCS))

$(O)/bench/%: bench/%.c $(LIB_INTERNAL_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilib -fvisibility=default -o $@ $< \
		$(LIB_INTERNAL_A) -ldl -lpthread

.PHONY: bench
bench: $(BENCH_BINS)

include bench/consumers/consumers.mk
