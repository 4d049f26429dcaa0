# libFuzzer on the host: the library's argument handling over the mock
# backend (tests/libfuzzer/fuzz_api.c), built with clang, ASan and UBSan in
# its own tree $(O)-libfuzzer.  `make check` fuzzes for LIBFUZZ_SECS
# (default 20) from a fixed seed after replaying tests/libfuzzer/corpus/, which
# holds the inputs that ever failed; `make libfuzz LIBFUZZ_SECS=N` runs
# longer from a random seed, new inputs going to $(O)-libfuzzer/corpus.

LIBFUZZ_SECS ?= 20
LIBFUZZ_SEED ?= 1
LIBFUZZ_O    := $(O)-libfuzzer
LIBFUZZ_BIN  := $(LIBFUZZ_O)/tests/libfuzzer/fuzz_api

# Built in the nested tree: the library instrumented for coverage.
$(O)/tests/libfuzzer/fuzz_api: tests/libfuzzer/fuzz_api.c tests/unit/mock_backend.h \
		$(LIB_INTERNAL_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilib -Itests/unit -Itests/common \
		-fvisibility=default -fsanitize=fuzzer -o $@ $< \
		$(LIB_INTERNAL_A) -lpthread -ldl

.PHONY: libfuzz-bin check-libfuzzer libfuzz
libfuzz-bin:
	$(MAKE) --no-print-directory O=$(LIBFUZZ_O) CC=clang SAN=1 \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" \
		$(LIBFUZZ_O)/tests/libfuzzer/fuzz_api

check-libfuzzer: libfuzz-bin
	@echo "== libFuzzer: the API's argument handling ($(LIBFUZZ_SECS) s)"
	GDRMAP_LIBFUZZ_BIN=$(LIBFUZZ_BIN) GDRMAP_LIBFUZZ_SECS=$(LIBFUZZ_SECS) \
	GDRMAP_LIBFUZZ_SEED=$(LIBFUZZ_SEED) tests/run-tests.sh \
		-t $$(($(LIBFUZZ_SECS) + 300)) -s $(CHECK_SUMMARY) \
		tests/libfuzzer/fuzz_api.sh.run

libfuzz: libfuzz-bin
	GDRMAP_LIBFUZZ_BIN=$(LIBFUZZ_BIN) GDRMAP_LIBFUZZ_SECS=$(LIBFUZZ_SECS) \
	GDRMAP_LIBFUZZ_SEED=0 tests/libfuzzer/fuzz_api.sh.run
