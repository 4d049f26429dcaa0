# The library's ABI as its consumers see it (make check-abi): the header
# compiled as C and C++ by a program that uses all of it, linked with
# -lgdrapi and run; the library loaded with dlopen under both names
# consumers use; its exported symbols, SONAME and dependencies.

CONSUMER_FLAGS := -Wall -Wextra -Werror -Iinclude
CONSUMER_LINK  := -L$(O)/lib -lgdrapi -Wl,-rpath,$(abspath $(O))/lib

$(O)/tests/abi/consumer-c: tests/abi/consumer.c lib
	@mkdir -p $(dir $@)
	$(CC) -std=c99 -pedantic $(CONSUMER_FLAGS) -o $@ $< $(CONSUMER_LINK)

$(O)/tests/abi/consumer-cxx: tests/abi/consumer.c lib
	@mkdir -p $(dir $@)
	$(CXX) -x c++ -std=c++11 -pedantic $(CONSUMER_FLAGS) -o $@ $< \
		-x none $(CONSUMER_LINK)

$(O)/tests/abi/dlopen_check: tests/abi/dlopen_check.c lib
	@mkdir -p $(dir $@)
	$(CC) $(CONSUMER_FLAGS) -Itests/common -o $@ $< -ldl \
		-Wl,-rpath,$(abspath $(O))/lib

# Headers compile alone, in C and C++.
$(O)/tests/abi/header-alone.stamp: include/gdrapi.h include/gdrconfig.h
	@mkdir -p $(dir $@)
	for h in gdrapi.h gdrconfig.h; do \
		printf '#include <%s>\nint main(void) { return 0; }\n' $$h | \
			$(CC) -std=c99 -pedantic $(CONSUMER_FLAGS) -fsyntax-only -x c - && \
		printf '#include <%s>\nint main() { return 0; }\n' $$h | \
			$(CXX) -std=c++11 -pedantic $(CONSUMER_FLAGS) -fsyntax-only -x c++ - || exit 1; \
	done
	touch $@

.PHONY: check-abi
check-abi: $(O)/tests/abi/consumer-c $(O)/tests/abi/consumer-cxx \
		$(O)/tests/abi/dlopen_check $(O)/tests/abi/header-alone.stamp
	@echo "== the ABI as consumers see it: C and C++ programs, dlopen, exported symbols"
	LD_LIBRARY_PATH=$(abspath $(O))/lib tests/run-tests.sh -s $(CHECK_SUMMARY) \
		$(O)/tests/abi/consumer-c $(O)/tests/abi/consumer-cxx \
		$(O)/tests/abi/dlopen_check
	GDRMAP_LIB=$(LIB_SO) tests/run-tests.sh -s $(CHECK_SUMMARY) \
		tests/abi/check-symbols.sh.run
