# sim/: gdrmap's simulated GPU (see sim/README.md).
#   make sim-modules [KDIR=...]  nvsim.ko, built in $(O)/sim/<kernelrelease>/nvsim
#        [NVSIM_STANDIN=1]       the proprietary stand-in of nvidia.ko instead
#                                (nvsim.ko + nvsim_prop.ko), in .../nvsim-standin
#        [NVSIM_WERROR=1]        warnings are errors
#   make sim-shim                $(O)/sim/libcuda/libcuda.so.1 (+ libcuda.so)
#   make check-sim               host sanity tests (no VM, no GPU)
# A build of nvsim or of the shim fails when its files call each other in
# a circle, even around a loop (scripts/file-graph.sh prints the graph from
# the objects).

# Kernel headers: the running kernel's, else the newest Debian amd64 ones.
SIM_KDIR_DEFAULT := $(firstword \
	$(wildcard /lib/modules/$(shell uname -r)/build) \
	$(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | \
		grep -v -e -cloud- -e -rt- | sort -V | tail -n 1))
KDIR ?= $(SIM_KDIR_DEFAULT)

# The name of the build directory: $(KDIR)/include/config/kernel.release
# (Debian: 6.1.192 for 6.1.0-56-amd64, 6.12.111+deb12-amd64 for 6.12).
NVSIM_KVER      = $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
# Where nvsim.ko and its Module.symvers (KBUILD_EXTRA_SYMBOLS for gdrdrv) go.
NVSIM_STANDIN  ?= 0
NVSIM_WERROR   ?= 0
NVSIM_BUILD_DIR = $(abspath $(O))/sim/$(NVSIM_KVER)/nvsim$(if $(filter 1,$(NVSIM_STANDIN)),-standin)
NVSIM_SYMVERS   = $(NVSIM_BUILD_DIR)/Module.symvers
NVSIM_KO        = $(NVSIM_BUILD_DIR)/nvsim.ko
NVSIM_SRCS      = $(wildcard sim/nvsim/*.c sim/nvsim/*.h) sim/nvsim/Kbuild \
		  kernel/nvidia/nv-p2p.h kernel/conftest.sh kernel/conftest.mk

.PHONY: sim-modules sim-shim check-sim sim-clean
# kbuild as kernel/kernel.mk calls it (KBUILD_MAKE): none of our make's
# command-line variables (O=, CC=) reach it.
sim-modules:
	@test -n "$(NVSIM_KVER)" || \
		{ echo "sim: no kernel headers at KDIR='$(KDIR)'" >&2; exit 1; }
	@rm -rf $(NVSIM_BUILD_DIR)/conftest
	@mkdir -p $(NVSIM_BUILD_DIR)/conftest
	cp -p $(NVSIM_SRCS) $(NVSIM_BUILD_DIR)/
	cp -p $(wildcard sim/nvsim/conftest/*.c) $(NVSIM_BUILD_DIR)/conftest/
	$(KBUILD_MAKE) M=$(NVSIM_BUILD_DIR) NVSIM_STANDIN=$(NVSIM_STANDIN) \
		NVSIM_WERROR=$(NVSIM_WERROR) modules
	@scripts/file-graph.sh -q $(NVSIM_BUILD_DIR)/nvsim.mod || { echo \
		"sim: nvsim's files call each other in a circle (scripts/file-graph.sh)" >&2; \
		exit 1; }
	@echo "sim: built $(NVSIM_KO)"

# The libcuda shim: user space, the project's flags, cu* symbols only.
SIM_SHIM_DIR   := $(O)/sim/libcuda
SIM_SHIM       := $(SIM_SHIM_DIR)/libcuda.so.1
SIM_SHIM_SRCS  := $(wildcard sim/libcuda/*.c)
SIM_SHIM_OBJS  := $(patsubst sim/libcuda/%.c,$(SIM_SHIM_DIR)/%.o,$(SIM_SHIM_SRCS))
SIM_SHIM_MAP   := sim/libcuda/libcuda.map
SIM_CFLAGS      = $(ALL_CFLAGS) -Isim/nvsim -fvisibility=default

sim-shim: $(SIM_SHIM) $(SIM_SHIM_DIR)/libcuda.so

$(SIM_SHIM_DIR)/%.o: sim/libcuda/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(SIM_SHIM): $(SIM_SHIM_OBJS) $(SIM_SHIM_MAP)
	@scripts/file-graph.sh -q $(SIM_SHIM_OBJS) || { echo \
		"sim: the shim's files call each other in a circle (scripts/file-graph.sh)" >&2; \
		exit 1; }
	$(CC) $(SANFLAGS) -shared -Wl,-soname,libcuda.so.1 -Wl,-z,defs \
		-Wl,--version-script=$(SIM_SHIM_MAP) -o $@ $(SIM_SHIM_OBJS) \
		-lpthread

$(SIM_SHIM_DIR)/libcuda.so: $(SIM_SHIM)
	ln -sf libcuda.so.1 $@

# Host tests: sim/tests/host_*.c, each one program (exit 0/1/77).
SIM_HTEST_SRCS := $(wildcard sim/tests/host_*.c)
SIM_HTEST_BINS := $(patsubst sim/tests/%.c,$(O)/sim/tests/%,$(SIM_HTEST_SRCS))

$(O)/sim/tests/%: sim/tests/%.c $(SIM_SHIM)
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -Itests/common -MMD -MP \
		-DSIM_SHIM_PATH='"$(abspath $(SIM_SHIM))"' -o $@ $< -ldl

check-sim: sim-shim $(SIM_HTEST_BINS)
	@echo "== simulated GPU host checks"
	tests/run-tests.sh -t 120 -s $(CHECK_SUMMARY) $(SIM_HTEST_BINS)

sim-clean:
	rm -rf $(O)/sim

-include $(SIM_SHIM_OBJS:.o=.d) $(SIM_HTEST_BINS:=.d)

# The simulator's own VM tests (sim/tests/vm_*.c): built here, run inside
# the VM with nvsim.ko (and, for vm_p2p, nvsim_selftest.ko) loaded.
SIM_VMTEST_SRCS := $(wildcard sim/tests/vm_*.c)
SIM_VMTEST_BINS := $(patsubst sim/tests/%.c,$(O)/sim/tests/%,$(SIM_VMTEST_SRCS))

.PHONY: sim-vm-tests
sim-vm-tests: $(SIM_VMTEST_BINS)

$(O)/sim/tests/vm_%: sim/tests/vm_%.c sim/tests/vm_sim.h $(SIM_SHIM)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isim/nvsim -Itests/common -MMD -MP -o $@ $< \
		-L$(SIM_SHIM_DIR) -l:libcuda.so.1

-include $(SIM_VMTEST_BINS:=.d)
