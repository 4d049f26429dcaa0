# `make check` suite of packaging/ and man/ (included by install.mk):
#   test-man.sh       every man page formats without a warning
#   test-install.sh   make install / uninstall into a DESTDIR
#   test-dkms-tree.sh the DKMS tree builds against found and named NVIDIA
#                     sources (skipped without kernel headers)
#   test-rpm.sh       the rpm spec parses and, with rpmbuild, builds
#   test-packages.sh  the Debian packages: build, install, use, DKMS, purge
#                     (root only: skipped otherwise)
CHECK_SUITES += check-packages
PACKAGING_TESTS := $(sort $(wildcard packaging/test-*.sh))

.PHONY: check-packages check-man
check-packages: lib
	@echo "== packaging: man pages, make install, DKMS tree, rpm spec, Debian packages"
	@O=$(abspath $(O)) tests/run-tests.sh -t 900 -s $(CHECK_SUMMARY) $(PACKAGING_TESTS)

check-man:
	@tests/run-tests.sh packaging/test-man.sh
