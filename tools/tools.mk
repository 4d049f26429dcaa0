# tools/: the gdrmap command.  It links the shared library as any
# application does (public API only; gdrmap's extensions are weak, so it
# also runs against another libgdrapi.so.2) and finds it at run time next
# to itself: $ORIGIN/../lib is build/lib in the tree and PREFIX/lib when
# installed.  TOOLS_RPATH= drops the run path (packages).

TOOLS_SRCS := $(filter-out tools/gdrmap.c,$(wildcard tools/*.c))
TOOLS_OBJS := $(patsubst %.c,$(O)/%.o,$(TOOLS_SRCS))
# Linked in as well: the library's diagnosis of the module-free backend
# ($(LIB_DIAG_A), lib/lib.mk), whose facts doctor reports.
# And the tree's CUDA loader (common/cuda_load.c, built by lib/lib.mk).
TOOLS_LIBS = $(LIB_DIAG_A) $(O)/common/cuda_load.o -L$(O)/lib -lgdrapi \
	-ldl -lpthread -lm
GDRMAP_BIN := $(O)/tools/gdrmap
TOOLS_RPATH ?= $$ORIGIN/../lib
ifneq ($(TOOLS_RPATH),)
TOOLS_LDRPATH = -Wl,-rpath,'$(TOOLS_RPATH)'
endif
TOOLS_CFLAGS = $(ALL_CFLAGS) -Itools -Ilib -fvisibility=default

$(O)/tools/%.o: tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TOOLS_CFLAGS) -MMD -MP -c -o $@ $<

$(GDRMAP_BIN): $(O)/tools/gdrmap.o $(TOOLS_OBJS) $(LIB_DIAG_A) $(O)/common/cuda_load.o | lib
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(O)/tools/gdrmap.o $(TOOLS_OBJS) \
		$(TOOLS_LDRPATH) $(TOOLS_LIBS)

# The JSON checker the tests (and the VM's checks) use: no python there.
JSONQ_BIN := $(O)/tests/tools/jsonq
$(JSONQ_BIN): tests/tools/jsonq.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -lm

# Unit tests of the pure parts, linked with the tools' objects: one
# program per tests/tools/test_*.c.
TOOLS_UNIT := $(patsubst tests/tools/%.c,$(O)/tests/tools/%,\
	$(wildcard tests/tools/test_*.c))
$(TOOLS_UNIT): $(O)/tests/tools/%: tests/tools/%.c $(TOOLS_OBJS) \
		$(LIB_DIAG_A) $(O)/common/cuda_load.o | lib
	@mkdir -p $(dir $@)
	$(CC) $(TOOLS_CFLAGS) -Itests/common -o $@ $< $(TOOLS_OBJS) \
		-Wl,-rpath,$(abspath $(O))/lib $(TOOLS_LIBS)

TOOLS_TESTS := $(TOOLS_UNIT) $(wildcard tests/tools/test_*.sh)

.PHONY: tools tools-tests check-tools
tools: $(GDRMAP_BIN) $(JSONQ_BIN)
all: tools
tools-tests: tools $(TOOLS_UNIT)

# Host suite: help, bad input, doctor without a GPU, clean failures.
check-tools: tools-tests
	@echo "== gdrmap command (tests/tools)"
	GDRMAP=$(abspath $(GDRMAP_BIN)) JSONQ=$(abspath $(JSONQ_BIN)) \
		tests/run-tests.sh -t 120 -s $(CHECK_SUMMARY) $(TOOLS_TESTS)

# `make install` installs $(GDRMAP_BIN) (packaging/install.mk, install-tools).

# The demo: doctor, copylat and pplat on this machine's GPU, or on the
# simulated GPU in the test VM where there is none (tools/demo.sh).  It
# installs what it needs and builds the tools itself, into a log.
.PHONY: demo
demo:
	@O=$(O) tools/demo.sh $(O)/demo

-include $(TOOLS_OBJS:.o=.d) $(O)/tools/gdrmap.d
