# The suites of packaging/ and man/ (their tests are here, in tests/packaging/).
#
# check-packaging (make check: no root, no network, no VM):
#   test-man.sh       every man page formats without a warning
#   test-install.sh   make install / uninstall into a DESTDIR
#   test-rpm.sh       the rpm spec parses and, with rpmbuild, builds
#   test-build-debs.sh build-debs.sh names missing build dependencies
#   test-debian-mirror.sh the Debian archives come from the apt sources
#   test-tree-paths.sh results name paths relative to the tree
#   test-dockerignore.sh the Docker build context is the two packages
#
# check-packaging-system (make check-all: the packages built and used on
# a system, as root, most of them with the network):
#   test-dkms-tree.sh the DKMS tree builds against found and named NVIDIA
#                     sources (skipped without kernel headers)
#   test-packages.sh  the Debian packages: build, install, use, DKMS, purge
#                     (root only: skipped otherwise)
#   test-container.sh the container recipe in a Debian 12 root file system
#                     (mmdebstrap, cached): doctor and a consumer in a
#                     chroot, with and without the Vulkan loader and the
#                     graphics capability (root only)
#   test-deps.sh      scripts/deps.sh on a machine whose dpkg was
#                     interrupted: it finishes dpkg's work, as root, in
#                     that root file system (root only)
#   test-newer-glibc.sh  the .debs built in a Debian 13 root (glibc 2.41)
#                     install and run in the container's Debian 12 root
#                     (root only)
#   test-newcomer.sh  the commands of README.md, python/README.md and the
#                     quick start, as written, in a fresh Debian 12 root
#                     (root only; minutes, with the download caches)
PACKAGING_TESTS := $(addprefix tests/packaging/,test-man.sh test-install.sh test-rpm.sh \
	test-build-debs.sh test-debian-mirror.sh test-tree-paths.sh test-dockerignore.sh)
PACKAGING_SYSTEM_TESTS := $(addprefix tests/packaging/,test-dkms-tree.sh test-packages.sh \
	test-container.sh test-deps.sh test-newer-glibc.sh test-newcomer.sh)
# Every tests/packaging/test-*.sh is in one of the two lists.
PACKAGING_UNLISTED := $(filter-out $(PACKAGING_TESTS) $(PACKAGING_SYSTEM_TESTS),\
	$(wildcard tests/packaging/test-*.sh))
ifneq ($(PACKAGING_UNLISTED),)
$(error tests/packaging/packaging.mk: put $(PACKAGING_UNLISTED) in a suite)
endif

.PHONY: check-packaging check-packaging-system check-man
check-packaging: lib tools
	@echo "== packaging: man pages, make install, rpm spec, build-debs, mirrors, paths, Docker context"
	@O=$(abspath $(O)) tests/run-tests.sh -t 600 -s $(CHECK_SUMMARY) $(PACKAGING_TESTS)

# As root the .debs are built once, into $(O)/deb-check, for the two tests
# that install them (GDRMAP_DEBS); each builds its own if that failed.
check-packaging-system: lib tools
	@echo "== packaging on a system: DKMS tree, Debian packages, container, deps.sh, newer glibc, newcomer"
	@debs=; if [ "$$(id -u)" = 0 ] && \
		packaging/build-debs.sh $(abspath $(O))/deb-check >/dev/null 2>&1; then \
		debs=$(abspath $(O))/deb-check; fi; \
	O=$(abspath $(O)) GDRMAP_DEBS=$$debs \
		tests/run-tests.sh -t 900 -s $(CHECK_SUMMARY) $(PACKAGING_SYSTEM_TESTS)

check-man:
	@tests/run-tests.sh tests/packaging/test-man.sh
