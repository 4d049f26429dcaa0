# The library as its consumers see it: the header compiled as C and C++
# by a program that uses all of it, linked with -lgdrapi and run; the
# library loaded with dlopen under both names consumers use; its exported
# symbols, SONAME and dependencies.  Then the whole tree built again with
# clang and for arm64, warnings as errors.

CONSUMER_FLAGS := -Wall -Wextra -Werror -Iinclude
CONSUMER_LINK  := -L$(O)/lib -lgdrapi -Wl,-rpath,$(abspath $(O))/lib

$(O)/tests/consumer/consumer-c: tests/consumer/consumer.c lib
	@mkdir -p $(dir $@)
	$(CC) -std=c99 -pedantic $(CONSUMER_FLAGS) -o $@ $< $(CONSUMER_LINK)

$(O)/tests/consumer/consumer-cxx: tests/consumer/consumer.c lib
	@mkdir -p $(dir $@)
	$(CXX) -x c++ -std=c++11 -pedantic $(CONSUMER_FLAGS) -o $@ $< \
		-x none $(CONSUMER_LINK)

$(O)/tests/consumer/dlopen_check: tests/consumer/dlopen_check.c lib
	@mkdir -p $(dir $@)
	$(CC) $(CONSUMER_FLAGS) -Itests/common -o $@ $< -ldl \
		-Wl,-rpath,$(abspath $(O))/lib

# Headers compile alone, in C and C++.
$(O)/tests/consumer/header-alone.stamp: include/gdrapi.h include/gdrconfig.h
	@mkdir -p $(dir $@)
	for h in gdrapi.h gdrconfig.h; do \
		printf '#include <%s>\nint main(void) { return 0; }\n' $$h | \
			$(CC) -std=c99 -pedantic $(CONSUMER_FLAGS) -fsyntax-only -x c - && \
		printf '#include <%s>\nint main() { return 0; }\n' $$h | \
			$(CXX) -std=c++11 -pedantic $(CONSUMER_FLAGS) -fsyntax-only -x c++ - || exit 1; \
	done
	touch $@

.PHONY: check-consumer check-compilers
check-consumer: $(O)/tests/consumer/consumer-c $(O)/tests/consumer/consumer-cxx \
		$(O)/tests/consumer/dlopen_check $(O)/tests/consumer/header-alone.stamp
	@echo "== consumers: C and C++ programs, dlopen, exported symbols"
	LD_LIBRARY_PATH=$(abspath $(O))/lib tests/run-tests.sh -s $(CHECK_SUMMARY) \
		$(O)/tests/consumer/consumer-c $(O)/tests/consumer/consumer-cxx \
		$(O)/tests/consumer/dlopen_check
	GDRMAP_LIB=$(LIB_SO) tests/run-tests.sh -s $(CHECK_SUMMARY) \
		tests/consumer/check-symbols.sh.run

# clang and an arm64 cross compiler, each building the library and the
# unit tests with -Werror.  A compiler that is not installed is a failure:
# CI installs both.
check-compilers:
	@echo "== other compilers: clang, aarch64-linux-gnu-gcc"
	@pass=0; fail=0; \
	if $(MAKE) -s O=$(O)-clang CC=clang CXX=clang++ WERROR=1 lib unit-tests; \
		then pass=$$((pass+1)); echo "PASS clang build"; \
		else fail=$$((fail+1)); echo "FAIL clang build"; fi; \
	if $(MAKE) -s O=$(O)-arm64 CC=aarch64-linux-gnu-gcc WERROR=1 lib; \
		then pass=$$((pass+1)); echo "PASS arm64 cross build"; \
		else fail=$$((fail+1)); echo "FAIL arm64 cross build"; fi; \
	echo "$$pass $$fail 0" >> $(CHECK_SUMMARY); \
	echo "$$pass passed, $$fail failed"; [ $$fail = 0 ]
