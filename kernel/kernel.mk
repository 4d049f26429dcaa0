# The gdrdrv kernel module (included by the top-level Makefile).
#
#   make modules          build gdrdrv.ko for KDIR
#   make modules-clean    remove what `modules` built for KDIR
#   make modules_install  install it (INSTALL_MOD_DIR, DESTDIR honoured)
#   make check-kbuild     build warning-free for every Debian kernel whose
#                         headers are installed (6.1 and 6.12)
#   make -s print-gdrdrv-ko  where `modules` puts gdrdrv.ko for KDIR
#
# Variables:
#   KDIR                  kernel build tree; default /lib/modules/$(uname -r)/build
#                         if present, else the newest /usr/src/linux-headers-*-amd64
#   NVIDIA_SRC            NVIDIA driver source (the directory holding nv-p2p.h,
#                         or its parent, or an open-gpu-kernel-modules checkout);
#                         its nv-p2p.h and Module.symvers are used
#   KBUILD_EXTRA_SYMBOLS  Module.symvers providing nvidia_p2p_* (e.g. sim/nvsim's)
# With neither NVIDIA_SRC nor KBUILD_EXTRA_SYMBOLS, gdrdrv is built against
# kernel/nvidia/nv-p2p.h and a build-only stub module (kernel/nvidia-stub)
# supplies the symbol CRCs.
#
# Sources are copied to $(O)/kernel/<kernel release>/ and built there, so
# nothing is written into the git tree and kernels build side by side.
# The module ends up in $(O)/kernel/<kernel release>/gdrdrv/gdrdrv.ko.

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
GDRDRV_KO = $(GDRDRV_OUT)/gdrdrv/gdrdrv.ko

GDRDRV_SRCS := $(wildcard kernel/gdrdrv/*.c kernel/gdrdrv/*.h) kernel/gdrdrv/Kbuild
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

# Kbuild must not see our command-line variables (O=, CC=, CFLAGS=...).
GDRDRV_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
GDRDRV_KMAKE = env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL \
	$(MAKE) -j$(GDRDRV_JOBS) -C $(KDIR) \
	GDRMAP_UAPI_INC=$(abspath include/uapi) GDRMAP_NV_INC=$(GDRDRV_NV_INC) \
	GDRDRV_NV_FLAVOR=$(GDRDRV_NV_FLAVOR) GDRDRV_WERROR=$(GDRDRV_WERROR)
GDRDRV_WERROR ?= 0

.PHONY: modules modules-clean modules_install gdrdrv-check-env check-kbuild \
	print-gdrdrv-ko

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
	@mkdir -p $(GDRDRV_OUT)/gdrdrv
	@cp -p $(GDRDRV_SRCS) $(GDRDRV_OUT)/gdrdrv/
ifneq ($(GDRDRV_NEED_STUB),)
	@mkdir -p $(GDRDRV_OUT)/nvidia-stub
	@cp -p $(NVSTUB_SRCS) $(GDRDRV_OUT)/nvidia-stub/
	$(GDRDRV_KMAKE) M=$(GDRDRV_OUT)/nvidia-stub modules
endif
	$(GDRDRV_KMAKE) M=$(GDRDRV_OUT)/gdrdrv \
		KBUILD_EXTRA_SYMBOLS="$(GDRDRV_SYMVERS)" modules
	@echo "gdrdrv: built $(GDRDRV_KO) ($(GDRDRV_NV_FLAVOR) flavour)"

modules-clean:
	rm -rf $(GDRDRV_OUT)

# Where `make modules` puts gdrdrv.ko for KDIR (for scripts).
print-gdrdrv-ko:
	@echo $(GDRDRV_KO)

# Only gdrdrv.ko is installed, never the stub.
modules_install: modules
	$(GDRDRV_KMAKE) M=$(GDRDRV_OUT)/gdrdrv \
		INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) \
		modules_install

# `make check` suite: build for each installed Debian 6.1 and 6.12 kernel
# with -Werror, and fail on any warning in the log.  A series with no
# headers is skipped; none at all is a failure.
GDRDRV_CHECK_SERIES ?= 6.1 6.12
CHECK_SUITES += check-kbuild

check-kbuild:
	@echo "== gdrdrv kernel module builds"
	@pass=0; fail=0; skip=0; found=0; \
	for s in $(GDRDRV_CHECK_SERIES); do \
		kdir=$$(ls -d /usr/src/linux-headers-$$s.*-amd64 2>/dev/null | grep -Ev -- "-(cloud|rt)-amd64$$" | sort -V | tail -n 1); \
		if [ -z "$$kdir" ]; then \
			echo "SKIP gdrdrv build for $$s: no /usr/src/linux-headers-$$s.*-amd64" \
				"(apt-get install linux-headers-amd64 linux-headers-6.12-amd64)"; \
			skip=$$((skip + 1)); continue; fi; \
		found=1; log=$(abspath $(O))/kernel/check-kbuild-$$s.log; \
		mkdir -p $(abspath $(O))/kernel; \
		if $(MAKE) --no-print-directory modules KDIR=$$kdir GDRDRV_WERROR=1 \
			NVIDIA_SRC= KBUILD_EXTRA_SYMBOLS= >$$log 2>&1 && \
		   ! grep -Eiq 'warning:|WARNING: modpost' $$log; then \
			echo "PASS gdrdrv build for $$(basename $$kdir)"; pass=$$((pass + 1)); \
		else \
			echo "FAIL gdrdrv build for $$(basename $$kdir) (log: $$log)"; \
			grep -Ei 'warning:|error' $$log | head -n 20 | sed 's/^/    /'; \
			fail=$$((fail + 1)); fi; \
	done; \
	if [ $$found = 0 ]; then \
		echo "FAIL no Debian 6.1 or 6.12 kernel headers installed; on Debian 12:"; \
		echo "  apt-get install linux-headers-amd64 linux-headers-6.12-amd64"; \
		fail=$$((fail + 1)); fi; \
	echo "$$pass $$fail $$skip" >>$(CHECK_SUMMARY); \
	echo "$$pass passed, $$fail failed, $$skip skipped"; \
	[ $$fail = 0 ]
