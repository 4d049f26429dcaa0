# gdrmap - top-level build.  `make` builds the library and the gdrmap
# command; `make check` runs the tests that need no root, no network and
# no VM (minutes); `make check-all` runs every test that needs no GPU (CI);
# `make install` installs (PREFIX, LIBDIR, DESTDIR as usual).
#
# Build outputs go under $(O) (default build/); each part of the tree adds
# its rules and its suites from its own *.mk fragment below.  Which suites
# each tier runs is listed once, here.

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

# Every suite appends its counts ("passed failed skipped") here; the
# tiers empty it first and total it last.
CHECK_SUMMARY ?= $(abspath $(O))/check-summary

# The suites of each tier, in the order they run (docs/testing.md says
# what each one tests and how to run it alone).
#
# make check: no root, no network, no VM; as another user too.
CHECK_SUITES = check-unit check-asan check-arm64 check-compilers \
	check-abi check-libfuzzer check-tools check-python check-sim \
	check-bench-consumers check-packaging check-tree check-gpu
# make check-all: everything that needs no GPU, what CI runs: make
# check's suites, then the kernel matrix (gdrdrv and nvsim built against
# every kernel of it), the DKMS package in chroots, the VM suite on the
# x86-64 and arm64 kernels marked for it, and the packaging tests that
# install on this machine or in Debian root file systems (as root).
CHECK_ALL_SUITES = $(CHECK_SUITES) check-kbuild check-dkms \
	$(addprefix check-vm-,$(VM_KERNELS)) check-vm-arm64 \
	check-packaging-system

.PHONY: all check check-all install uninstall clean
all:

# isa.mk first: lib.mk's rules need ISA_OBJS when they are read.
include lib/isa/isa.mk
include lib/lib.mk
include tests/unit/unit.mk
include tests/libfuzzer/libfuzzer.mk
include tests/abi/abi.mk
include tests/gpu/gpu.mk
include bench/bench.mk
include kernel/kernel.mk
include tests/kernels/kernels.mk
include sim/sim.mk
include tools/tools.mk
include python/python.mk
include tests/vm/vm.mk
include tests/tree/tree.mk
include packaging/install.mk
include tests/packaging/packaging.mk

all: lib python-helper-if-headers

# Warnings are errors in every build a tier makes.  The last line totals
# the suites: "N passed, N failed, N skipped"; the exit status is 1 if any
# suite failed.
CHECK_TOTAL = echo "== summary of all suites"; \
	awk '{p+=$$1; f+=$$2; s+=$$3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' \
		$(CHECK_SUMMARY)

check:
	@scripts/deps.sh --check
	@mkdir -p $(O); rm -f $(CHECK_SUMMARY)
	@status=0; for s in $(CHECK_SUITES); do \
		$(MAKE) --no-print-directory WERROR=1 $$s || status=1; done; \
	$(CHECK_TOTAL); exit $$status

# The kernel packages and chroots are fetched in the background while the
# suites before the kernel matrix run (KERNEL_PREFETCH, kernels.mk); the
# matrix's results become the tables in $(KERNEL_TABLES), which
# `make update-tables` copies into the documents.
check-all:
	@scripts/deps.sh
	@mkdir -p $(O); rm -f $(CHECK_SUMMARY) $(KERNEL_RESULTS)
	@$(KERNEL_PREFETCH) \
	status=0; for s in $(CHECK_ALL_SUITES); do \
		$(MAKE) --no-print-directory WERROR=1 $$s || status=1; done; \
	wait; \
	$(MAKE) --no-print-directory kernel-tables || status=1; \
	$(CHECK_TOTAL); exit $$status

clean:
	rm -rf $(O) $(O)-*
