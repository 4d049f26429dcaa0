# `make check` suite of packaging/ and man/ (included by install.mk):
#   test-man.sh       every man page formats without a warning
#   test-install.sh   make install / uninstall into a DESTDIR
#   test-dkms-tree.sh the DKMS tree builds against found and named NVIDIA
#                     sources (skipped without kernel headers)
#   test-rpm.sh       the rpm spec parses and, with rpmbuild, builds
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
#   test-build-debs.sh build-debs.sh names missing build dependencies
#   test-debian-mirror.sh the Debian archives come from the apt sources
#   test-tree-paths.sh results name paths relative to the tree
#   test-dockerignore.sh the Docker build context is the two packages
#   test-newcomer.sh  the commands of README.md, python/README.md and the
#                     quick start, as written, in a fresh Debian 12 root
#                     (root only; minutes, with the download caches)
# As root the .debs are built once, into $(O)/deb-check, for the two tests
# that install them (GDRMAP_DEBS); each builds its own if that failed.
CHECK_SUITES += check-packages
PACKAGING_TESTS := $(sort $(wildcard packaging/test-*.sh))

.PHONY: check-packages check-man
check-packages: lib tools
	@echo "== packaging: man pages, make install, DKMS tree, rpm spec, Debian packages, container"
	@debs=; if [ "$$(id -u)" = 0 ] && \
		packaging/build-debs.sh $(abspath $(O))/deb-check >/dev/null 2>&1; then \
		debs=$(abspath $(O))/deb-check; fi; \
	O=$(abspath $(O)) GDRMAP_DEBS=$$debs \
		tests/run-tests.sh -t 900 -s $(CHECK_SUMMARY) $(PACKAGING_TESTS)

check-man:
	@tests/run-tests.sh packaging/test-man.sh
