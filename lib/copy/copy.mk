# The copy engine: one file per instruction set, each with its own flags.
# Files for other architectures are not built at all.  cpu_*.c probe the
# CPU and get no -m flag: they must run on every CPU of the architecture.

COPY_SRCS_all     := lib/copy/dispatch.c lib/copy/copy_generic.c \
	lib/copy/copy_memcpy.c
COPY_SRCS_x86_64  := lib/copy/cpu_x86.c lib/copy/copy_sse41.c \
	lib/copy/copy_avx2.c lib/copy/copy_avx512.c lib/copy/copy_movdir64b.c
COPY_SRCS_aarch64 := lib/copy/cpu_arm64.c lib/copy/copy_neon.c

COPY_SRCS := $(COPY_SRCS_all) $(COPY_SRCS_$(TARGET_ARCH))
COPY_OBJS := $(patsubst %.c,$(O)/%.o,$(COPY_SRCS))

# Per-file instruction-set flags.
$(O)/lib/copy/copy_sse41.o:     ISAFLAGS := -msse4.1
$(O)/lib/copy/copy_avx2.o:      ISAFLAGS := -mavx2
$(O)/lib/copy/copy_avx512.o:    ISAFLAGS := -mavx512f -mavx512bw -mavx512vl
$(O)/lib/copy/copy_movdir64b.o: ISAFLAGS := -mmovdir64b -msse2
$(O)/lib/copy/copy_neon.o:      ISAFLAGS :=

$(O)/lib/copy/%.o: lib/copy/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ISAFLAGS) -Ilib -fPIC -MMD -MP -c -o $@ $<

-include $(COPY_OBJS:.o=.d)
