# The gdrdrv kernel module (included by the top-level Makefile).
#
#   make modules          build gdrdrv.ko for KDIR
#   make modules-clean    remove what `modules` built for KDIR
#   make modules_install  install it (INSTALL_MOD_DIR, DESTDIR honoured)
#   make -s print-gdrdrv-ko  where `modules` puts gdrdrv.ko for KDIR
# (The builds for every kernel of the matrix: tests/kernels/kernels.mk.)
#
# Variables:
#   KDIR                  kernel build tree; default /lib/modules/$(uname -r)/build
#                         if present, else the newest /usr/src/linux-headers-*-amd64
#   NVIDIA_SRC            NVIDIA driver source (the directory holding nv-p2p.h,
#                         or its parent, or an open-gpu-kernel-modules checkout);
#                         its nv-p2p.h and Module.symvers are used
#   KBUILD_EXTRA_SYMBOLS  Module.symvers providing nvidia_p2p_* (e.g. sim/nvsim's)
#   GDRDRV_NV_FLAVOR      opensource or proprietary (default: NVIDIA_SRC's
#                         licence, else opensource)
#   GDRDRV_WERROR         1: warnings are errors
# With neither NVIDIA_SRC nor KBUILD_EXTRA_SYMBOLS, gdrdrv is built against
# kernel/nvidia/nv-p2p.h and a build-only stub module (kernel/nvidia-stub)
# supplies the symbol CRCs.
#
# Sources are copied to $(O)/kernel/<kernel release>/ and built there, so
# nothing is written into the git tree and kernels build side by side.
# The module ends up in $(O)/kernel/<kernel release>/gdrdrv/gdrdrv.ko
# (gdrdrv-proprietary/ for that flavour, whose imports are then checked
# against KDIR's Module.symvers: no GPL-only export may be among them).

GDRDRV_DEFAULT_KDIR := $(or $(wildcard /lib/modules/$(shell uname -r)/build),\
	$(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | \
		grep -v -e -cloud- -e -rt- | sort -V | tail -n 1))
KDIR ?= $(GDRDRV_DEFAULT_KDIR)
NVIDIA_SRC ?=
INSTALL_MOD_DIR ?= extra

# The release name of KDIR: the directory name of a Debian headers package,
# or the name in include/config/kernel.release, or KDIR's directory name.
gdrdrv_kver = $(or $(strip $(if $(filter linux-headers-%,$(notdir $(realpath $(1)))),\
	$(patsubst linux-headers-%,%,$(notdir $(realpath $(1)))),\
	$(shell cat $(1)/include/config/kernel.release 2>/dev/null))),\
	$(notdir $(realpath $(1))))
GDRDRV_KVER = $(call gdrdrv_kver,$(KDIR))
GDRDRV_OUT = $(abspath $(O))/kernel/$(GDRDRV_KVER)

# The module's sources with what its Kbuild needs for the compile tests.
GDRDRV_SRCS := $(wildcard kernel/gdrdrv/*.c kernel/gdrdrv/*.h) kernel/gdrdrv/Kbuild \
	kernel/conftest.sh kernel/conftest.mk
GDRDRV_CONFTESTS := $(wildcard kernel/gdrdrv/conftest/*.c)
NVSTUB_SRCS := kernel/nvidia-stub/nv-p2p-stub.c kernel/nvidia-stub/Kbuild

ifneq ($(NVIDIA_SRC),)
GDRDRV_NV_H := $(firstword $(wildcard $(NVIDIA_SRC)/nv-p2p.h \
	$(NVIDIA_SRC)/nvidia/nv-p2p.h $(NVIDIA_SRC)/kernel-open/nvidia/nv-p2p.h))
GDRDRV_NV_INC = $(abspath $(dir $(GDRDRV_NV_H)))
GDRDRV_NV_SYMVERS = $(abspath $(firstword $(wildcard $(NVIDIA_SRC)/Module.symvers \
	$(NVIDIA_SRC)/../Module.symvers $(NVIDIA_SRC)/kernel-open/Module.symvers)))
# The open modules carry a GPL-compatible licence; the proprietary ones don't.
GDRDRV_NV_FLAVOR ?= $(if $(shell grep -rlsF 'MODULE_LICENSE("Dual MIT/GPL")' \
	--include='*.c' $(GDRDRV_NV_INC) | head -n 1),opensource,proprietary)
else
GDRDRV_NV_INC = $(abspath kernel/nvidia)
GDRDRV_NV_FLAVOR ?= opensource
endif

GDRDRV_BUILD = $(GDRDRV_OUT)/gdrdrv$(if $(filter proprietary,$(GDRDRV_NV_FLAVOR)),-proprietary)
GDRDRV_KO = $(GDRDRV_BUILD)/gdrdrv.ko

# Where nvidia_p2p_*'s symbol CRCs come from.
ifneq ($(KBUILD_EXTRA_SYMBOLS),)
GDRDRV_SYMVERS = $(foreach s,$(KBUILD_EXTRA_SYMBOLS),$(abspath $(s)))
GDRDRV_NEED_STUB :=
else ifneq ($(NVIDIA_SRC),)
GDRDRV_SYMVERS = $(GDRDRV_NV_SYMVERS)
GDRDRV_NEED_STUB :=
else
GDRDRV_SYMVERS = $(GDRDRV_OUT)/nvidia-stub/Module.symvers
GDRDRV_NEED_STUB := 1
endif

# kbuild for KDIR, for this tree's modules (sim/sim.mk's too).  Kbuild
# must not see our command-line variables (O= would replace the
# KBUILD_OUTPUT that Debian's 7.x headers set; CC=, CFLAGS=...).
KBUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
KBUILD_MAKE = env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL \
	$(MAKE) -j$(KBUILD_JOBS) -C $(KDIR)
GDRDRV_KMAKE = $(KBUILD_MAKE) \
	GDRMAP_UAPI_INC=$(abspath include/uapi) GDRMAP_NV_INC=$(GDRDRV_NV_INC) \
	GDRDRV_NV_FLAVOR=$(GDRDRV_NV_FLAVOR) GDRDRV_WERROR=$(GDRDRV_WERROR)
GDRDRV_WERROR ?= 0

.PHONY: modules modules-clean modules_install gdrdrv-check-env print-gdrdrv-ko

gdrdrv-check-env:
	@if [ -z "$(KDIR)" ] || [ ! -f "$(KDIR)/Makefile" ]; then \
		echo "gdrdrv: no kernel build tree (KDIR='$(KDIR)'); install one, e.g." >&2; \
		echo "  apt-get install linux-headers-\$$(uname -r)" >&2; exit 1; fi
	@if [ -n "$(NVIDIA_SRC)" ] && [ -z "$(GDRDRV_NV_H)" ]; then \
		echo "gdrdrv: no nv-p2p.h under NVIDIA_SRC=$(NVIDIA_SRC)" >&2; exit 1; fi
	@if [ -n "$(NVIDIA_SRC)" ] && [ -z "$(KBUILD_EXTRA_SYMBOLS)" ] && \
	    [ -z "$(GDRDRV_NV_SYMVERS)" ]; then \
		echo "gdrdrv: no Module.symvers under NVIDIA_SRC=$(NVIDIA_SRC);" \
			"build the NVIDIA modules first or pass KBUILD_EXTRA_SYMBOLS" >&2; \
		exit 1; fi

modules: gdrdrv-check-env
	@rm -rf $(GDRDRV_BUILD)/conftest
	@mkdir -p $(GDRDRV_BUILD)/conftest
	@cp -p $(GDRDRV_SRCS) $(GDRDRV_BUILD)/
	@cp -p $(GDRDRV_CONFTESTS) $(GDRDRV_BUILD)/conftest/
ifneq ($(GDRDRV_NEED_STUB),)
	@mkdir -p $(GDRDRV_OUT)/nvidia-stub
	@cp -p $(NVSTUB_SRCS) $(GDRDRV_OUT)/nvidia-stub/
	$(GDRDRV_KMAKE) M=$(GDRDRV_OUT)/nvidia-stub modules
endif
	$(GDRDRV_KMAKE) M=$(GDRDRV_BUILD) \
		KBUILD_EXTRA_SYMBOLS="$(GDRDRV_SYMVERS)" modules
ifeq ($(GDRDRV_NV_FLAVOR),proprietary)
	kernel/check-imports.sh $(GDRDRV_KO) $(KDIR)/Module.symvers
endif
	@scripts/file-graph.sh -q $(GDRDRV_BUILD)/gdrdrv.mod || { echo \
		"gdrdrv: its files call each other in a circle (scripts/file-graph.sh)" >&2; \
		exit 1; }
	@echo "gdrdrv: built $(GDRDRV_KO) ($(GDRDRV_NV_FLAVOR) flavour)"

modules-clean:
	rm -rf $(GDRDRV_OUT)

# Where `make modules` puts gdrdrv.ko for KDIR (for scripts).
print-gdrdrv-ko:
	@echo $(GDRDRV_KO)

# Only gdrdrv.ko is installed, never the stub.
modules_install: modules
	$(GDRDRV_KMAKE) M=$(GDRDRV_BUILD) \
		INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) \
		modules_install
