# Host unit tests: every tests/unit/test_*.c is one test program, linked
# with all of the library's objects (internals included).

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(O)/tests/unit/%,$(UNIT_SRCS))
UNIT_CFLAGS = $(ALL_CFLAGS) -Ilib -Itests/common -fvisibility=default

# What the tests share, compiled once (the fake CUDA driver, fake_cuda.c,
# and the fake nvidia.ko RM on top of it, fake_rm.c): an archive, so that
# a test links only what it uses.
UNIT_SUPPORT_SRCS := tests/unit/fake_cuda.c tests/unit/fake_rm.c
UNIT_SUPPORT_OBJS := $(patsubst tests/unit/%.c,$(O)/tests/unit/support/%.o,$(UNIT_SUPPORT_SRCS))
UNIT_SUPPORT_A    := $(O)/tests/unit/support/libunit-support.a

$(O)/tests/unit/support/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -MMD -MP -c -o $@ $<

$(UNIT_SUPPORT_A): $(UNIT_SUPPORT_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# Dependency files go to .deps/ so that test_* globs match programs only.
# UNIT_LDFLAGS: a test's own link flags (target-specific, below).
$(O)/tests/unit/%: tests/unit/%.c $(UNIT_SUPPORT_A) $(LIB_INTERNAL_A)
	@mkdir -p $(dir $@).deps
	$(CC) $(UNIT_CFLAGS) -MMD -MP -MF $(dir $@).deps/$*.d -o $@ $< \
		$(UNIT_SUPPORT_A) $(LIB_INTERNAL_A) -lpthread -ldl \
		$(UNIT_LDFLAGS)

# test_rm_capture's stand-in for libcuda (capture_lib.c), which calls
# ioctl through its own import: bound at load with its import slot in
# RELRO, and bound lazily.  The test finds them next to itself, and
# exports its own ioctl (-rdynamic) to answer their requests.
UNIT_CAPTURE_LIBS := $(O)/tests/unit/libgdrtest_capture.so \
		     $(O)/tests/unit/libgdrtest_capture_lazy.so
$(O)/tests/unit/libgdrtest_capture.so: UNIT_CAPTURE_BIND = -Wl,-z,relro,-z,now
$(O)/tests/unit/libgdrtest_capture_lazy.so: UNIT_CAPTURE_BIND = -Wl,-z,lazy
$(UNIT_CAPTURE_LIBS): tests/unit/capture_lib.c
	@mkdir -p $(dir $@).deps
	$(CC) $(UNIT_CFLAGS) -fPIC -shared $(UNIT_CAPTURE_BIND) -MMD -MP \
		-MF $(dir $@).deps/$(notdir $@).d -o $@ $<
$(O)/tests/unit/test_rm_capture: $(UNIT_CAPTURE_LIBS)
$(O)/tests/unit/test_rm_capture: UNIT_LDFLAGS = -rdynamic

.PHONY: unit-tests check-unit check-asan
unit-tests: $(UNIT_BINS) $(UNIT_CAPTURE_LIBS)

# The unit tests, built as configured.  test_copy_trace proves the access
# pattern of the routines as shipped; built with the sanitizers they are
# other code that nobody ships, and stepping them costs a minute.
UNIT_RUN = $(if $(filter 1,$(SAN)),$(filter-out %/test_copy_trace,$(UNIT_BINS)),$(UNIT_BINS))
check-unit: unit-tests
	@echo "== unit tests ($(O))"
	tests/run-tests.sh -t 600 -s $(CHECK_SUMMARY) $(UNIT_RUN)

# The same tests again under AddressSanitizer and UBSan, in their own tree.
check-asan:
	@echo "== unit tests under ASan + UBSan"
	$(MAKE) O=$(O)-asan SAN=1 CHECK_SUMMARY=$(CHECK_SUMMARY) check-unit

-include $(wildcard $(O)/tests/unit/.deps/*.d) $(UNIT_SUPPORT_OBJS:.o=.d)

# The unit tests built for arm64 and run under user-mode QEMU: the NEON
# copy routines and the rest of the library on the other architecture.
.PHONY: check-arm64
check-arm64:
	@echo "== unit tests on arm64 (qemu-aarch64)"
	$(MAKE) O=$(O)-arm64 CC=aarch64-linux-gnu-gcc unit-tests
	QEMU_LD_PREFIX=/usr/aarch64-linux-gnu tests/run-tests.sh -t 900 \
		-w qemu-aarch64 -s $(CHECK_SUMMARY) \
		$(patsubst $(O)/%,$(O)-arm64/%,$(UNIT_BINS))

# The same tree built again with other compilers: clang (the library and
# the unit tests) and the arm64 cross compiler (the library), -Werror.  A compiler that is not installed is a failure:
# CI installs both.
.PHONY: check-compilers
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
