# The VM tests: every tests/vm/cases/*.c is one test program, run inside a
# QEMU VM (tests/vm/run-vm.sh) against gdrdrv.ko and the simulated GPU.
# `make check-all` runs them on the kernels of tests/kernels/kernels.conf marked
# for the VM (Debian 11's 5.10, Debian 12's 6.1 and 6.12) and on the newest
# of those marked "newest" (trixie-backports', sid's).

VM_ARCH      := $(shell dpkg --print-architecture 2>/dev/null)
VM_KERNELS   := $(shell awk -v a=$(VM_ARCH) '$$1 == "kernel" && $$3 == a && $$7 == "yes" \
	{ print $$2 }' tests/kernels/kernels.conf) newest
VM_CASE_SRCS := $(wildcard tests/vm/cases/*.c)
VM_CASE_BINS := $(patsubst tests/vm/cases/%.c,$(O)/tests/vm/cases/%,$(VM_CASE_SRCS))
# -Isim/nvsim: the cases that act as another NVIDIA client (an MPS
# server) use /dev/nvsim's ioctls directly.
VM_CASE_CFLAGS = $(ALL_CFLAGS) -Itests/common -Itests/vm/cases -Isim/nvsim -pthread
# The cases call the CUDA driver API of the libcuda shim and the public API
# of libgdrapi; inside the VM both come from /usr/lib/gdrmap.
VM_CASE_LIBS = -L$(O)/lib -L$(O)/sim/libcuda -l:libgdrapi.so.2 \
	-l:libcuda.so.1 -pthread

$(O)/tests/vm/cases/%: tests/vm/cases/%.c | lib sim-shim
	@mkdir -p $(dir $@) $(O)/tests/vm/dep
	$(CC) $(VM_CASE_CFLAGS) -MMD -MP -MF $(O)/tests/vm/dep/$*.d -o $@ $< \
		$(VM_CASE_LIBS)

# What else runs in the VM, from other parts of the tree (empty where a
# part is absent): the simulator's own tests, once with only nvsim loaded,
# and those of the gdrmap command's tests whose answers change with a GPU
# present, once with gdrdrv loaded (test_cli.sh's do not, and it runs on
# the host; under TCG it alone would take half a minute).
VM_SIM_TESTS   = $(SIM_VMTEST_BINS)
VM_TOOLS       = $(if $(GDRMAP_BIN),$(GDRMAP_BIN) $(JSONQ_BIN) tests/tools/harness.sh)
VM_TOOLS_TESTS = $(if $(GDRMAP_BIN),$(filter %/test_doctor.sh %/test_measure.sh,$(TOOLS_TESTS)))

.PHONY: vm-cases vm-manifest check-vm $(addprefix check-vm-,$(VM_KERNELS))
vm-cases: $(VM_CASE_BINS) $(VM_SIM_TESTS) $(VM_TOOLS)

# For build.sh: "KIND PATH" lines, everything user space the VM gets.
vm-manifest:
	@for f in $(VM_CASE_BINS); do echo "cases $$f"; done
	@for f in $(VM_SIM_TESTS); do echo "sim $$f"; done
	@for f in $(VM_TOOLS) $(VM_TOOLS_TESTS); do echo "tools $$f"; done
	@for f in $(wildcard $(O)/lib/libgdrapi.so* $(O)/sim/libcuda/libcuda.so*); do \
		echo "lib $$f"; done

# One VM run per kernel; each appends its counts to $(CHECK_SUMMARY) (and
# its result line to $(GDRMAP_KERNEL_RESULTS), tests/kernels/kernels.mk).
$(addprefix check-vm-,$(VM_KERNELS)): check-vm-%:
	O=$(O) tests/vm/run-vm.sh -s $(CHECK_SUMMARY) $*

# Every kernel, even when one fails.
check-vm:
	@status=0; for s in $(VM_KERNELS); do \
		$(MAKE) --no-print-directory check-vm-$$s || status=1; done; \
	exit $$status

# arm64 guests under qemu-system-aarch64, with everything cross-built: the
# arm64 kernels of kernels.conf marked for the VM (4K and 16K pages).
# Emulated arm64 is too slow for the whole suite on every commit:
#   make check-arm64-vm            the whole suite on each, as x86-64 runs it
#   make check-vm-arm64-NAME       one kernel, the whole suite
#   make check-vm-arm64            what `make check-all` runs: on each kernel
#       VM_ARM64_SUBSET: the simulator's tests; every case in gdrdrv's
#       callback mode (its mappings zapped by handle << PAGE_SHIFT,
#       invalidation, SIGBUS) and in the proprietary flavour's persistent
#       mode, with a 3 s stress case and 30 s of fuzzing each (60 s per
#       kernel, as on x86-64); the command's doctor test (left out: the
#       open flavour's persistent pass and test_measure.sh)
VM_ARM64_KERNELS := $(shell awk '$$1 == "kernel" && $$3 == "arm64" && $$7 == "yes" \
	{ print $$2 }' tests/kernels/kernels.conf)
VM_ARM64_SUBSET  := GDRMAP_VM_MODES=0 GDRMAP_VM_PROPRIETARY_MODES=1 GDRMAP_STRESS_SECS=3 \
	GDRMAP_FUZZ_SECS=30 \
	GDRMAP_VM_ONLY='/vm/(cases|sim)/|/test_doctor'
# A whole-suite run took 6.5 min on a loaded 2-core machine: room for worse.
VM_ARM64_TIMEOUT ?= 1500

.PHONY: check-arm64-vm check-vm-arm64 $(addprefix check-vm-arm64-,$(VM_ARM64_KERNELS))
$(addprefix check-vm-arm64-,$(VM_ARM64_KERNELS)): check-vm-arm64-%:
	O=$(O) GDRMAP_VM_TIMEOUT=$${GDRMAP_VM_TIMEOUT:-$(VM_ARM64_TIMEOUT)} \
		tests/vm/run-vm.sh -a arm64 -s $(CHECK_SUMMARY) $*

check-arm64-vm check-vm-arm64:
	@status=0; for s in $(VM_ARM64_KERNELS); do \
		$(if $(filter check-vm-arm64,$@),$(VM_ARM64_SUBSET)) \
		$(MAKE) --no-print-directory check-vm-arm64-$$s || status=1; done; \
	exit $$status

-include $(patsubst tests/vm/cases/%.c,$(O)/tests/vm/dep/%.d,$(VM_CASE_SRCS))

# `make ioctl-fuzz`: the VM's fuzzer of gdrdrv (cases/ioctl_fuzz.c) alone,
# longer (libFuzzer on the library's API is `make libfuzz`): FUZZ_SECS per
# gdrdrv mode on each kernel of FUZZ_KERNELS, from seed SEED (random if
# empty), every test's output shown (the seeds and counts of each pass).  The log of each kernel
# is $(O)/vm/<kver>/serial.log.
FUZZ_SECS    ?= 300
FUZZ_KERNELS ?= $(VM_KERNELS)
SEED         ?=
.PHONY: ioctl-fuzz
ioctl-fuzz: lib
	@status=0; for s in $(FUZZ_KERNELS); do \
		GDRMAP_VM_ONLY='/ioctl_fuzz$$' GDRMAP_FUZZ_SECS=$(FUZZ_SECS) \
		GDRMAP_FUZZ_SEED=$(SEED) VERBOSE=1 \
		GDRMAP_CASE_TIMEOUT=$$(($(FUZZ_SECS) + 600)) \
		GDRMAP_VM_TIMEOUT=$$((2 * $(FUZZ_SECS) + 1800)) \
		O=$(O) tests/vm/run-vm.sh $$s || status=1; done; exit $$status

# GDRCopy's own sanity suite against its gdrdrv and gdrmap's, with either
# library (tests/vm/gdrcopy-sanity.sh): needs a GDRCopy source tree
# (GDRCOPY_SRC=DIR; skipped without one; NVIDIA_SRC and CUDA as the
# script says), on the kernels of SANITY_KERNELS.  Not in check-all: the
# tree carries no GDRCopy source.
SANITY_KERNELS ?= 6.1
.PHONY: gdrcopy-sanity
gdrcopy-sanity:
	O=$(O) GDRCOPY_SRC="$(GDRCOPY_SRC)" NVIDIA_SRC="$(NVIDIA_SRC)" \
		CUDA="$(CUDA)" tests/vm/gdrcopy-sanity.sh $(SANITY_KERNELS)
