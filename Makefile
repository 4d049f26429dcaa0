# gdrmap - top-level build.  `make` builds the library (and, later, the
# tools and modules); `make check` runs every test that needs no GPU;
# `make install` installs (PREFIX, LIBDIR, DESTDIR as usual).
#
# Build outputs go under $(O) (default build/); each part of the tree adds
# its rules from its own *.mk fragment below.

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
DESTDIR    ?=
O          ?= build

CC      ?= cc
CXX     ?= c++
AR      ?= ar
CFLAGS  ?= -O2 -g
# WERROR=1 (as CI builds) turns warnings into errors.
WERROR  ?= 0
# SAN=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer.
SAN     ?= 0

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-missing-field-initializers
ifeq ($(WERROR),1)
WARN += -Werror
endif
SANFLAGS :=
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
endif

# The architecture the compiler targets decides which copy routines exist.
# (Quietly: make demo installs the compiler before it builds.)
TARGET_ARCH := $(shell $(CC) -dumpmachine 2>/dev/null | cut -d- -f1)

# common/glibc_compat.h: what is built here loads on glibc 2.36 (Debian 12)
# wherever it is built.
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -include common/glibc_compat.h \
	$(WARN) $(SANFLAGS) -Iinclude -Icommon \
	-fvisibility=hidden $(CFLAGS)

.PHONY: all check install uninstall clean
all:

# Suites of `make check`, in order; fragments append theirs.
CHECK_SUITES := check-unit check-asan check-arm64 check-abi check-compilers \
	check-gpu check-tree

# copy.mk first: lib.mk's rules need COPY_OBJS when they are read.
include lib/copy/copy.mk
include lib/lib.mk
include tests/unit/unit.mk
include tests/libfuzzer/libfuzzer.mk
include tests/tree/tree.mk
include tests/abi/abi.mk
include tests/gpu/gpu.mk
include bench/bench.mk
-include kernel/kernel.mk
-include tests/kernels/kernels.mk
-include sim/sim.mk
-include tools/tools.mk
include python/python.mk
-include tests/vm/vm.mk
-include packaging/install.mk

all: lib

# `make check`: every suite that needs no GPU.  Each suite appends its
# counts to $(CHECK_SUMMARY); the last line totals them.
# Warnings are errors in every build `make check` makes.
# The kernel matrix's results become README.md's kernel table.
check:
	@scripts/deps.sh
	@mkdir -p $(O); rm -f $(CHECK_SUMMARY) $(KERNEL_RESULTS)
	@$(KERNEL_PREFETCH) \
	status=0; for s in $(CHECK_SUITES); do \
		$(MAKE) --no-print-directory WERROR=1 $$s || status=1; done; \
	wait; \
	$(if $(KERNEL_RESULTS),$(MAKE) --no-print-directory kernel-table || status=1;) \
	echo "== summary of all suites"; \
	awk '{p+=$$1; f+=$$2; s+=$$3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' \
		$(CHECK_SUMMARY); exit $$status

clean:
	rm -rf $(O) $(O)-*
