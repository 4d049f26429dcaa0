# Installation (included by the top-level Makefile).
#
#   make install            library, headers, gdrapi.pc, man pages and, when
#                           tools/ has built it, the gdrmap command
#   make install-lib        libgdrapi.so.2.6 and libgdrapi.so.2 (runtime)
#   make install-dev        libgdrapi.so, gdrapi.h, gdrconfig.h, gdrapi.pc
#   make install-man        man pages (sections 1, 3 and 4)
#   make install-tools      the gdrmap command, if it has been written
#   make install-kmod-config  /etc/modprobe.d/gdrdrv.conf and the udev rule
#                           giving /dev/gdrdrv its group and mode
#   make install-dkms       the module's source under /usr/src/gdrdrv-VERSION,
#                           registered with DKMS and built for every
#                           installed kernel that has headers (no DESTDIR)
#   make uninstall, uninstall-dkms   the reverse
# The module itself, without DKMS: `make modules_install` (kernel/kernel.mk).
#
# Variables: PREFIX LIBDIR INCLUDEDIR BINDIR (top-level Makefile), DESTDIR,
# MANDIR, PKGCONFIGDIR, SYSCONFDIR, UDEVRULESDIR, DKMSSRCDIR,
# GDRDRV_GROUP and GDRDRV_MODE (owner group and mode of /dev/gdrdrv that
# the udev rule sets; default video and 0660).

MANDIR       ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
SYSCONFDIR   ?= /etc
UDEVRULESDIR ?= $(SYSCONFDIR)/udev/rules.d
DKMSSRCDIR   ?= /usr/src
GDRDRV_GROUP ?= video
GDRDRV_MODE  ?= 0660

# gdrmap's own version (GDRMAP_VERSION_* in gdrapi.h): that of the
# packages and of the DKMS module.  The library file carries the API's.
GDRMAP_VERSION := $(shell sed -n 's/^\#define GDRMAP_VERSION_MAJOR[[:space:]]*//p' include/gdrapi.h).$(shell \
	sed -n 's/^\#define GDRMAP_VERSION_MINOR[[:space:]]*//p' include/gdrapi.h)
GDRAPI_VERSION := $(patsubst libgdrapi.so.%,%,$(LIB_REALNAME))

# The gdrmap command exists once tools/tools.mk does.
GDRMAP_TOOL := $(if $(wildcard tools/tools.mk),$(O)/tools/gdrmap)

MAN_PAGES := $(wildcard man/man[1-8]/*.[1-8])
DKMS_DEST  = $(DESTDIR)$(DKMSSRCDIR)/gdrdrv-$(GDRMAP_VERSION)

.PHONY: install-lib install-dev install-man install-tools install-kmod-config \
	install-dkms install-dkms-src uninstall-dkms gdrmap-version

install: install-lib install-dev install-man install-tools

install-lib: lib
	install -d $(DESTDIR)$(LIBDIR)
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_REALNAME)
	ln -sf $(LIB_REALNAME) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig || true; fi

install-dev: install-lib $(O)/packaging/gdrapi.pc
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libgdrapi.so
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0644 include/gdrapi.h include/gdrconfig.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 0644 $(O)/packaging/gdrapi.pc $(DESTDIR)$(PKGCONFIGDIR)/gdrapi.pc

# Pages are installed under their section's directory, by file suffix.
install-man:
	@for p in $(MAN_PAGES); do \
		s=$${p##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s && \
		install -m 0644 $$p $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done; echo "installed $(words $(MAN_PAGES)) man pages in $(DESTDIR)$(MANDIR)"

install-tools: $(GDRMAP_TOOL)
ifneq ($(GDRMAP_TOOL),)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(GDRMAP_TOOL) $(DESTDIR)$(BINDIR)/gdrmap
else
	@echo "install-tools: no tools/ yet, the gdrmap command is not installed"
endif

# /etc/modprobe.d/gdrdrv.conf (module options, all commented out) and the
# udev rule that gives /dev/gdrdrv GDRDRV_GROUP and GDRDRV_MODE.
install-kmod-config: $(O)/packaging/60-gdrdrv.rules
	install -d $(DESTDIR)$(SYSCONFDIR)/modprobe.d $(DESTDIR)$(UDEVRULESDIR)
	install -m 0644 packaging/modprobe/gdrdrv.conf $(DESTDIR)$(SYSCONFDIR)/modprobe.d/gdrdrv.conf
	install -m 0644 $(O)/packaging/60-gdrdrv.rules $(DESTDIR)$(UDEVRULESDIR)/60-gdrdrv.rules

# The DKMS source tree: gdrdrv's sources, the in-tree nv-p2p.h, the
# build-only stub and a Makefile that finds the NVIDIA driver's source.
install-dkms-src: $(O)/packaging/dkms.conf
	install -d $(DKMS_DEST)/gdrdrv/conftest $(DKMS_DEST)/nvidia $(DKMS_DEST)/nvidia-stub \
		$(DKMS_DEST)/uapi
	install -m 0644 $(O)/packaging/dkms.conf $(DKMS_DEST)/dkms.conf
	install -m 0644 packaging/dkms/Makefile $(DKMS_DEST)/Makefile
	install -m 0755 packaging/dkms/find-nvidia-src.sh packaging/dkms/dkms-setup.sh \
		kernel/check-imports.sh $(DKMS_DEST)/
	install -m 0644 $(GDRDRV_SRCS) $(DKMS_DEST)/gdrdrv/
	chmod 0755 $(DKMS_DEST)/gdrdrv/conftest.sh
	install -m 0644 $(GDRDRV_CONFTESTS) $(DKMS_DEST)/gdrdrv/conftest/
	install -m 0644 $(NVSTUB_SRCS) $(DKMS_DEST)/nvidia-stub/
	install -m 0644 kernel/nvidia/nv-p2p.h $(DKMS_DEST)/nvidia/
	install -m 0644 include/uapi/gdrdrv_ioctl.h $(DKMS_DEST)/uapi/

install-dkms: install-dkms-src
	@if [ -n "$(DESTDIR)" ]; then echo "install-dkms: DESTDIR set, not running dkms"; exit 0; fi; \
	command -v dkms >/dev/null || { echo "install-dkms: dkms is not installed" >&2; exit 1; }; \
	$(DKMS_DEST)/dkms-setup.sh add $(GDRMAP_VERSION)

uninstall-dkms:
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null; then \
		packaging/dkms/dkms-setup.sh remove $(GDRMAP_VERSION); fi
	rm -rf $(DKMS_DEST)

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(LIB_REALNAME) \
		$(DESTDIR)$(LIBDIR)/$(LIB_SONAME) \
		$(DESTDIR)$(LIBDIR)/libgdrapi.so \
		$(DESTDIR)$(INCLUDEDIR)/gdrapi.h \
		$(DESTDIR)$(INCLUDEDIR)/gdrconfig.h \
		$(DESTDIR)$(PKGCONFIGDIR)/gdrapi.pc \
		$(DESTDIR)$(BINDIR)/gdrmap \
		$(DESTDIR)$(SYSCONFDIR)/modprobe.d/gdrdrv.conf \
		$(DESTDIR)$(UDEVRULESDIR)/60-gdrdrv.rules
	rm -f $(foreach p,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)))

# Files made from templates: @NAME@ replaced by the values above.
PKG_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@GDRAPI_VERSION@|$(GDRAPI_VERSION)|g' \
	-e 's|@GDRMAP_VERSION@|$(GDRMAP_VERSION)|g' -e 's|@GDRDRV_GROUP@|$(GDRDRV_GROUP)|g' \
	-e 's|@GDRDRV_MODE@|$(GDRDRV_MODE)|g'

# Rebuilt whenever a variable it depends on changes on the command line.
$(O)/packaging/%: packaging/%.in FORCE
	@mkdir -p $(dir $@)
	@$(PKG_SUBST) $< >$@.tmp && \
		if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(O)/packaging/dkms.conf: packaging/dkms/dkms.conf.in FORCE
	@mkdir -p $(dir $@)
	@$(PKG_SUBST) $< >$@
$(O)/packaging/60-gdrdrv.rules: packaging/udev/60-gdrdrv.rules.in FORCE
	@mkdir -p $(dir $@)
	@$(PKG_SUBST) $< >$@
.PHONY: FORCE
FORCE:

gdrmap-version:
	@echo $(GDRMAP_VERSION)
