# The kernel matrix (tests/kernels/README.md, kernels.conf): gdrdrv and
# nvsim built for every Debian kernel of it, the DKMS package installed in
# chroots, the VM suite booted on some (tests/vm/vm.mk).
#
#   make check-kbuild     build gdrdrv (both flavours) and nvsim with -Werror
#                         against each kernel, where it builds (host or chroot),
#                         of each of KERNEL_ARCHES
#   make test-modules [KDIR=...]  those modules for one kernel, here
#   make check-dkms       gdrmap-dkms builds and installs its module in the
#                         chroots of DKMS_KERNELS
#   make check-kernels    all of the matrix alone: those two and the VM suites
#   make kernel-tables    the kernel table and the kernel API table, from the
#                         last run's results, into $(KERNEL_TABLES)
#   make update-tables    copy them into docs/testing.md and
#                         kernel/gdrdrv/README.md (no test writes the tree)
#
# Each suite appends its result lines to $(KERNEL_RESULTS), which `make
# check-all` empties first and turns into the tables last.

KERNEL_RESULTS ?= $(abspath $(O))/kernel-results
KERNEL_TABLES  ?= $(abspath $(O))/tables
DKMS_KERNELS   ?= 5.10 sid
export GDRMAP_KERNEL_RESULTS = $(KERNEL_RESULTS)

# `make check-all` starts this first, in the background, and waits for it
# last: the chroots and kernel packages are fetched while the other suites
# run (the suites that need them wait on the cache's locks).  Killed with
# make by ^C (same process group).
# The prefetch resolves "newest" once per run; the suites after it keep
# those lists however long the run takes (GDRMAP_APT_MAX_AGE, matrix.sh).
KERNEL_PREFETCH = mkdir -p $(abspath $(O))/kernel; \
	O=$(O) tests/kernels/check-kernels.sh -p >$(abspath $(O))/kernel/prefetch.log 2>&1 & \
	export GDRMAP_APT_MAX_AGE=$${GDRMAP_APT_MAX_AGE:-86400};

.PHONY: check-kbuild check-dkms check-kernels kernel-tables update-tables test-modules

# The modules the tests load, for KDIR, warnings as errors: nvsim, nvsim
# built for the proprietary stand-in of nvidia.ko, and gdrdrv against each
# in its flavour.  check-kbuild builds them for every kernel, and the VM
# build (tests/vm/build.sh) finds them made.
TEST_NVSIM_DIR = $(abspath $(O))/sim/$(NVSIM_KVER)
test-modules:
	$(MAKE) --no-print-directory sim-modules NVSIM_WERROR=1 NVSIM_STANDIN=0
	$(MAKE) --no-print-directory sim-modules NVSIM_WERROR=1 NVSIM_STANDIN=1
	$(MAKE) --no-print-directory modules GDRDRV_WERROR=1 GDRDRV_NV_FLAVOR=opensource \
		NVIDIA_SRC= KBUILD_EXTRA_SYMBOLS=$(TEST_NVSIM_DIR)/nvsim/Module.symvers
	$(MAKE) --no-print-directory modules GDRDRV_WERROR=1 GDRDRV_NV_FLAVOR=proprietary \
		NVIDIA_SRC= KBUILD_EXTRA_SYMBOLS=$(TEST_NVSIM_DIR)/nvsim-standin/Module.symvers

# The host's architecture's kernels, then arm64's (cross-built).
KERNEL_ARCHES ?= $(sort $(shell dpkg --print-architecture) arm64)

check-kbuild:
	@status=0; for a in $(KERNEL_ARCHES); do \
		O=$(O) tests/kernels/check-kernels.sh -a $$a -s $(CHECK_SUMMARY) \
			-r $(KERNEL_RESULTS) || status=1; done; exit $$status

check-dkms:
	@O=$(O) tests/kernels/check-dkms.sh -s $(CHECK_SUMMARY) $(DKMS_KERNELS)

check-kernels:
	@mkdir -p $(O); rm -f $(CHECK_SUMMARY)
	@status=0; for s in check-kbuild check-dkms $(addprefix check-vm-,$(VM_KERNELS)) \
		    check-vm-arm64; do \
		$(MAKE) --no-print-directory $$s || status=1; done; \
	awk '{p+=$$1; f+=$$2; s+=$$3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' \
		$(CHECK_SUMMARY); exit $$status

kernel-tables:
	@tests/kernels/report.sh -o $(KERNEL_TABLES) $(KERNEL_RESULTS)

update-tables:
	tests/kernels/report.sh -u $(KERNEL_TABLES) docs/testing.md kernel/gdrdrv/README.md
