# The ISA copy routines: one file per instruction set, each with its own
# flags.  Files for other architectures are not built at all.  cpu_*.c
# probe the CPU and get no -m flag: they must run on every CPU of the
# architecture.

ISA_SRCS_all     := lib/isa/dispatch.c lib/isa/copy_generic.c \
	lib/isa/copy_memcpy.c
ISA_SRCS_x86_64  := lib/isa/cpu_x86.c lib/isa/copy_sse41.c \
	lib/isa/copy_avx2.c lib/isa/copy_avx512.c lib/isa/copy_movdir64b.c
ISA_SRCS_aarch64 := lib/isa/cpu_arm64.c lib/isa/copy_neon.c

ISA_SRCS := $(ISA_SRCS_all) $(ISA_SRCS_$(TARGET_ARCH))
ISA_OBJS := $(patsubst %.c,$(O)/%.o,$(ISA_SRCS))

# Per-file instruction-set flags.
$(O)/lib/isa/copy_sse41.o:     ISAFLAGS := -msse4.1
$(O)/lib/isa/copy_avx2.o:      ISAFLAGS := -mavx2
$(O)/lib/isa/copy_avx512.o:    ISAFLAGS := -mavx512f -mavx512bw -mavx512vl
$(O)/lib/isa/copy_movdir64b.o: ISAFLAGS := -mmovdir64b -msse2
$(O)/lib/isa/copy_neon.o:      ISAFLAGS :=

$(O)/lib/isa/%.o: lib/isa/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ISAFLAGS) -Ilib -fPIC -MMD -MP -c -o $@ $<

-include $(ISA_OBJS:.o=.d)
