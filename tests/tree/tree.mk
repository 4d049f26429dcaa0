# The tree's shape (tests/tree/), from its sources and the objects the
# build made: no two files of the library, of the gdrmap command or of
# the simulator's libcuda call each other in a loop (scripts/file-graph.sh,
# the one checker, which the builds of gdrdrv and nvsim run too); no
# source or test file past 600 lines unless tests/tree/long-files says
# why; no citation of a document outside the tree, nor of an issue number
# in the code; gdrmap_copy_*'s inline path as short as gdr_copy_*'s in
# the built library.

TREE_TESTS := $(sort $(wildcard tests/tree/test_*))

.PHONY: check-tree
check-tree: lib tools sim-shim
	@echo "== the tree: call circles, file sizes, citations (tests/tree)"
	GDRMAP_BUILD=$(abspath $(O)) tests/run-tests.sh -t 120 -s $(CHECK_SUMMARY) \
		$(TREE_TESTS)
