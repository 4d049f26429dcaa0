# libgdrapi: the user library.

LIB_SONAME   := libgdrapi.so.2
LIB_REALNAME := libgdrapi.so.2.6
LIB_MAP      := lib/libgdrapi.map

# One folder per concern, in layers (docs/layout.md, whose include rule
# tests/tree/test_lib_layers.sh checks).  lib/isa/ is built by
# lib/isa/isa.mk, each file with its own instruction-set flags.
# common/cuda_load.c: the loader of libcuda.so.1 the whole tree shares.
LIB_SRCS := $(filter-out lib/isa/%,$(wildcard lib/*/*.c)) common/cuda_load.c
LIB_OBJS := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS))

# Why the module-free backend cannot work here (lib/diag/diag*.c) and the
# Vulkan devices it enumerates (lib/diag/vulkan.c), built once into an
# archive of their own that the library links and the gdrmap command
# links too (doctor needs the facts, not only the text a libgdrapi.so.2
# gives, and the library in use may be another one).  They call nothing
# else of the library.
LIB_DIAG_OBJS := $(patsubst %.c,$(O)/%.o,$(wildcard lib/diag/*.c))
LIB_DIAG_A    := $(O)/lib/libgdrdiag.a

LIB_ALL_OBJS = $(LIB_OBJS) $(ISA_OBJS)
LIB_SO_INPUTS = $(filter-out $(LIB_DIAG_OBJS),$(LIB_ALL_OBJS)) $(LIB_DIAG_A)

LIB_SO     := $(O)/lib/$(LIB_REALNAME)
# Every object of the library in one archive, hidden symbols included, so
# that unit tests can reach internals.
LIB_INTERNAL_A := $(O)/lib/libgdrapi-internal.a

.PHONY: lib
lib: $(LIB_SO) $(O)/lib/$(LIB_SONAME) $(O)/lib/libgdrapi.so $(LIB_INTERNAL_A) \
	$(LIB_DIAG_A)

$(O)/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilib -fPIC -MMD -MP -c -o $@ $<

# Built once, position independent, for the library and for every other
# program of the tree that loads CUDA (the command, tests, benchmarks).
$(O)/common/%.o: common/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(LIB_SO): $(LIB_SO_INPUTS) $(LIB_MAP)
	$(CC) $(SANFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) -Wl,-z,defs \
		-Wl,--version-script=$(LIB_MAP) -o $@ $(LIB_SO_INPUTS) \
		-lpthread -ldl

$(LIB_DIAG_A): $(LIB_DIAG_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(O)/lib/$(LIB_SONAME): $(LIB_SO)
	ln -sf $(LIB_REALNAME) $@

$(O)/lib/libgdrapi.so: $(O)/lib/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $@

$(LIB_INTERNAL_A): $(LIB_ALL_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# install and uninstall: packaging/install.mk.

-include $(LIB_OBJS:.o=.d)
