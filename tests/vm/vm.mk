# The VM tests: every tests/vm/cases/*.c is one test program, run inside a
# QEMU VM (tests/vm/run-vm.sh) against gdrdrv.ko and the simulated GPU.
# `make check` runs them on Debian 12's 6.1 and 6.12 kernels.

VM_SERIES    := 6.1 6.12
VM_CASE_SRCS := $(wildcard tests/vm/cases/*.c)
VM_CASE_BINS := $(patsubst tests/vm/cases/%.c,$(O)/tests/vm/cases/%,$(VM_CASE_SRCS))
VM_CASE_CFLAGS = $(ALL_CFLAGS) -Itests/common -Itests/vm/cases -pthread
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
VM_TOOLS       = $(if $(GDRMAP_BIN),$(GDRMAP_BIN) $(JSONQ_BIN) tools/tests/lib.sh)
VM_TOOLS_TESTS = $(if $(GDRMAP_BIN),$(filter %/test_doctor.sh %/test_measure.sh,$(TOOLS_TESTS)))

.PHONY: vm-cases vm-manifest check-vm $(addprefix check-vm-,$(VM_SERIES))
vm-cases: $(VM_CASE_BINS) $(VM_SIM_TESTS) $(VM_TOOLS)

# For build.sh: "KIND PATH" lines, everything user space the VM gets.
vm-manifest:
	@for f in $(VM_CASE_BINS); do echo "cases $$f"; done
	@for f in $(VM_SIM_TESTS); do echo "sim $$f"; done
	@for f in $(VM_TOOLS) $(VM_TOOLS_TESTS); do echo "tools $$f"; done
	@for f in $(wildcard $(O)/lib/libgdrapi.so* $(O)/sim/libcuda/libcuda.so*); do \
		echo "lib $$f"; done

# One VM run per kernel series; each appends its counts to $(CHECK_SUMMARY).
$(addprefix check-vm-,$(VM_SERIES)): check-vm-%:
	O=$(O) tests/vm/run-vm.sh -s $(CHECK_SUMMARY) $*

# Both kernels, even when the first fails.
check-vm:
	@status=0; for s in $(VM_SERIES); do \
		$(MAKE) --no-print-directory check-vm-$$s || status=1; done; \
	exit $$status

CHECK_SUITES += $(addprefix check-vm-,$(VM_SERIES))

-include $(patsubst tests/vm/cases/%.c,$(O)/tests/vm/dep/%.d,$(VM_CASE_SRCS))

# `make fuzz`: the fuzzer alone, longer: FUZZ_SECS per gdrdrv mode on each
# kernel of FUZZ_KERNELS, from seed SEED (random if empty; the log prints
# it).  The log of each kernel is $(O)/vm/<kver>/serial.log.
FUZZ_SECS    ?= 300
FUZZ_KERNELS ?= $(VM_SERIES)
SEED         ?=
.PHONY: fuzz
fuzz: lib
	@status=0; for s in $(FUZZ_KERNELS); do \
		GDRMAP_VM_ONLY='/fuzz$$' GDRMAP_FUZZ_SECS=$(FUZZ_SECS) \
		GDRMAP_FUZZ_SEED=$(SEED) \
		GDRMAP_CASE_TIMEOUT=$$(($(FUZZ_SECS) + 600)) \
		GDRMAP_VM_TIMEOUT=$$((2 * $(FUZZ_SECS) + 1800)) \
		O=$(O) tests/vm/run-vm.sh $$s || status=1; done; exit $$status
