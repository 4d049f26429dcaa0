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

.PHONY: vm-cases check-vm $(addprefix check-vm-,$(VM_SERIES))
vm-cases: $(VM_CASE_BINS)

# One VM run per kernel series; each appends its counts to $(CHECK_SUMMARY).
$(addprefix check-vm-,$(VM_SERIES)): check-vm-%:
	O=$(O) tests/vm/run-vm.sh -s $(CHECK_SUMMARY) $*

check-vm: $(addprefix check-vm-,$(VM_SERIES))

CHECK_SUITES += $(addprefix check-vm-,$(VM_SERIES))

-include $(patsubst tests/vm/cases/%.c,$(O)/tests/vm/dep/%.d,$(VM_CASE_SRCS))
