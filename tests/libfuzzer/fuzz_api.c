/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the library's argument handling, over the mock
 * backend (tests/unit/mock_backend.h), built with ASan and UBSan.
 *
 * The input is a program: each step is one API call whose arguments come
 * from the next bytes - handles that were pinned, unpinned or made up,
 * pointers inside, around and outside mappings, sizes from 0 to huge,
 * flags and enum values in and out of range, NULL outputs, a backend that
 * fails on demand.  A model of what is pinned and mapped predicts every
 * answer:
 *  - a call the model says is valid succeeds, one it says is not fails,
 *    with a positive errno of the documented set (never a crash);
 *  - a copy that succeeds moved exactly its bytes, and nothing else;
 *  - after gdr_close every pin and mapping of the backend is released.
 * A violation aborts (__builtin_trap), and libFuzzer saves the input:
 * put it in tests/libfuzzer/corpus/ so that every run replays it.
 */
#include <stdint.h>
#include <string.h>

#include "mock_backend.h"

/* GDRCopy's exported v1 symbol, which the header hides behind a macro. */
#undef gdr_get_info
int gdr_get_info(gdr_t g, gdr_mh_t handle, struct gdr_info_v1 *info);

#define GPU_ADDR	0x7f5500000000UL
#define SLOTS		8
#define STEPS		96

/* The input, read front to back; zeros once it runs out. */
struct input {
	const uint8_t *p;
	size_t left;
};

static uint64_t take(struct input *in, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++) {
		v = (v << 8) | (in->left ? *in->p : 0);
		if (in->left) {
			in->p++;
			in->left--;
		}
	}
	return v;
}

struct slot {
	int pinned;
	gdr_mh_t mh;		/* also kept once unpinned: stale */
	uint64_t pin_addr, pin_size;
	unsigned char *va;	/* mapping, NULL if none */
	size_t len;
};

static struct slot slots[SLOTS];
static gdr_t g;

#define EXPECT(cond)							\
	do {								\
		if (!(cond))						\
			__builtin_trap();				\
	} while (0)

/* A library answer: 0, or one of the positive errnos it documents. */
static int answered(int rc, int valid)
{
	EXPECT(rc == 0 || rc == EINVAL || rc == ENOMEM || rc == EBUSY ||
	       rc == EAGAIN || rc == EOPNOTSUPP || rc == EIO);
	if (valid >= 0)
		EXPECT((rc == 0) == valid);
	return rc;
}

static gdr_mh_t some_handle(struct input *in, struct slot **sp)
{
	struct slot *s = &slots[take(in, 1) % SLOTS];
	gdr_mh_t made = { .h = (unsigned long)take(in, 8) };

	*sp = NULL;
	if (take(in, 1) % 8 == 0) {
		/* A made-up value may be a live handle (the fuzzer learns them). */
		for (int i = 0; i < SLOTS; i++)
			if (slots[i].pinned && slots[i].mh.h == made.h)
				*sp = &slots[i];
		return made;
	}
	*sp = s;
	return s->mh;
}

static void op_pin(struct input *in)
{
	struct slot *s = &slots[take(in, 1) % SLOTS];
	uint64_t addr, size, mode = take(in, 1);
	int tokens = (mode & 32) != 0, fail = 0, rc, valid;
	uint32_t flags = 0;
	gdr_mh_t mh;

	if (s->pinned)
		return;
	addr = mode & 1 ? GPU_ADDR + take(in, 3) : take(in, 8);
	if (mode & 2)
		addr = 0;
	/* Sizes the mock can map, or sizes that wrap the address space. */
	size = mode & 4 ? UINT64_MAX - take(in, 2) :
	       take(in, 2) * (1 + take(in, 1) % 16);
	if ((mode & 8) && !tokens)
		flags = (uint32_t)take(in, 4);
	if (mode & 16)
		fail = (int[]){ EINVAL, ENOMEM, EIO }[take(in, 1) % 3];
	valid = addr && size && addr + size >= addr &&
		addr + size <= UINT64_MAX - GPU_PAGE_SIZE &&
		!(flags & ~(uint32_t)GDR_PIN_FLAG_FORCE_PCIE);

	mock_fail_pin = fail;
	if (tokens)
		rc = gdr_pin_buffer(g, addr, size, take(in, 8),
				    (uint32_t)take(in, 4), &mh);
	else
		rc = gdr_pin_buffer_v2(g, addr, size, flags, &mh);
	mock_fail_pin = 0;
	/* Good arguments reach the backend, whose error comes back. */
	answered(rc, valid && !fail);
	if (valid && fail)
		EXPECT(rc == fail);
	if (rc)
		return;
	EXPECT(mock_last_pin_addr == (addr & GPU_PAGE_MASK));
	EXPECT(mock_last_pin_addr + mock_last_pin_size >= addr + size &&
	       mock_last_pin_size % GPU_PAGE_SIZE == 0 &&
	       mock_last_pin_size - (addr + size - mock_last_pin_addr) <
	       GPU_PAGE_SIZE);
	*s = (struct slot) {
		.pinned = 1, .mh = mh, .pin_addr = mock_last_pin_addr,
		.pin_size = mock_last_pin_size,
	};
}

static void op_unpin(struct input *in)
{
	struct slot *s;
	gdr_mh_t mh = some_handle(in, &s);
	int rc = gdr_unpin_buffer(g, mh);

	if (!s) {
		answered(rc, 0);
		return;
	}
	answered(rc, s->pinned && !s->va);
	if (s->pinned && s->va)
		EXPECT(rc == EBUSY);
	if (!rc)
		s->pinned = 0;
}

static void op_map(struct input *in)
{
	struct slot *s;
	gdr_mh_t mh = some_handle(in, &s);
	int flags = (int)(take(in, 1) % 7) - 1, rc;
	uint64_t sel = take(in, 1);
	size_t size = sel % 4 == 0 ? take(in, 8) : take(in, 3);
	void *va = NULL;
	int valid;

	/* Around the pinned size, where bounds go wrong. */
	if (s && sel % 4 == 1)
		size = s->pin_size + (take(in, 1) % 5) - 2;

	valid = s && s->pinned && !s->va && size && size <= s->pin_size &&
		(flags == GDR_MAP_FLAG_DEFAULT ||
		 flags == GDR_MAP_FLAG_REQ_WC_MAPPING);
	rc = gdr_map_v2(g, mh, take(in, 1) % 16 ? &va : NULL, size, flags);
	if (s && s->pinned && s->va)
		EXPECT(rc == EAGAIN || rc == EINVAL);
	/* The mock maps write-combined: asking for another type is a
	 * refusal the caller can fall back on. */
	if (s && s->pinned && !s->va && size && size <= s->pin_size &&
	    (flags == GDR_MAP_FLAG_REQ_CACHE_MAPPING ||
	     flags == GDR_MAP_FLAG_REQ_DEVICE_MAPPING) && va)
		EXPECT(rc == EOPNOTSUPP);
	if (!va)
		valid = 0;
	answered(rc, valid);
	if (rc)
		return;
	EXPECT(mock_last_map_len >= size && mock_last_map_len <= s->pin_size);
	s->va = va;
	s->len = mock_last_map_len;
}

static void op_unmap(struct input *in)
{
	struct slot *s;
	gdr_mh_t mh = some_handle(in, &s);
	uint64_t how = take(in, 1);
	uintptr_t va = s && s->va ? (uintptr_t)s->va : (uintptr_t)take(in, 8);
	size_t size = how & 1 ? 0 : (s ? s->len : take(in, 3));
	int rc;

	if (how & 2)
		va += 1 + how % 7;
	rc = gdr_unmap(g, mh, (void *)va, size);
	answered(rc, s && s->pinned && s->va && va == (uintptr_t)s->va && size);
	if (!rc)
		s->va = NULL;
}

/*
 * A copy to or from [at, at + n) of a mapping: exact and nothing around it
 * touched, or refused without touching anything.
 */
static void op_copy(struct input *in, int to)
{
	static unsigned char host[1 << 17];
	struct slot *s;
	gdr_mh_t mh = some_handle(in, &s);
	uint64_t sel = take(in, 1);
	int64_t len = s && s->va ? (int64_t)s->len : 1 << 16, at;
	size_t n;
	uintptr_t base = s && s->va ? (uintptr_t)s->va : GPU_ADDR;
	int null_host = take(in, 1) % 32 == 0, rc, valid, fill;
	unsigned char *p, lo = 0, hi = 0;
	int has_lo, has_hi;

	/* Mostly around the mapping's edges, where bounds go wrong. */
	at = (sel & 1 ? len : 0) + (int64_t)take(in, 1) - 128;
	if (sel & 2)
		at = (int64_t)take(in, 3) - 16;
	if (sel & 4)
		n = (size_t)(len - at + (int64_t)(take(in, 1) % 5) - 2);
	else if (sel & 8)
		n = (size_t)take(in, 8);
	else
		n = (size_t)take(in, 2) % 4096;
	p = (unsigned char *)(base + (uintptr_t)at);

	valid = s && s->pinned && s->va && at >= 0 &&
		(size_t)at <= s->len && n <= s->len - (size_t)at;
	if (!n)
		valid = 1;
	else if (null_host)
		valid = 0;
	/* host is the bound of what this target can check. */
	if (valid && n > sizeof(host))
		return;
	fill = (int)take(in, 1) | 1;
	memset(host, fill, n < sizeof(host) ? n : sizeof(host));
	has_lo = valid && n && at > 0;
	has_hi = valid && n && (size_t)at + n < s->len;
	if (has_lo)
		lo = p[-1];
	if (has_hi)
		hi = p[n];
	if (to)
		rc = gdr_copy_to_mapping(mh, p, null_host ? NULL : host, n);
	else
		rc = gdr_copy_from_mapping(mh, null_host ? NULL : host, p, n);
	answered(rc, valid);
	if (rc || !n)
		return;
	EXPECT(!memcmp(host, p, n));
	EXPECT(!has_lo || p[-1] == lo);
	EXPECT(!has_hi || p[n] == hi);
}

static void op_query(struct input *in)
{
	struct slot *s;
	gdr_mh_t mh = some_handle(in, &s);
	uint64_t which = take(in, 1);
	gdr_info_v2_t info;
	struct gdr_info_v1 v1;
	const char *str;
	int v, flag, major, minor, rc, live = s && s->pinned;

	switch (which % 6) {
	case 0:
		rc = gdr_get_info_v2(g, mh, which & 8 ? NULL : &info);
		answered(rc, live && !(which & 8));
		if (!rc)
			EXPECT(info.mapped == (s->va != NULL) &&
			       info.va == s->pin_addr);
		break;
	case 1:
		rc = gdr_get_info(g, mh, which & 8 ? NULL : &v1);
		answered(rc, live && !(which & 8));
		break;
	case 2:
		rc = gdr_get_callback_flag(g, mh, which & 8 ? NULL : &flag);
		answered(rc, live && !(which & 8));
		break;
	case 3:
		v = (int)take(in, 4);
		rc = gdr_get_attribute(g, (gdr_attr_t)v, which & 8 ? NULL : &flag);
		answered(rc, which & 8 ? 0 : -1);
		break;
	case 4:
		v = (int)take(in, 4);
		rc = gdr_get_mapping_type_string((gdr_mapping_type_t)v,
						 which & 8 ? NULL : &str);
		answered(rc, !(which & 8) && v >= 0 && v < GDR_MAPPING_TYPE_MAX);
		if (!rc)
			EXPECT(str && *str);
		break;
	default:
		rc = gdr_driver_get_version(g, which & 8 ? NULL : &major,
					    which & 16 ? NULL : &minor);
		answered(rc, !(which & 24));
		break;
	}
}

/* gdr_close releases everything; the handles stay, stale. */
static void close_all(void)
{
	EXPECT(gdr_close(g) == 0);
	EXPECT(atomic_load(&mock_pins) == 0 && atomic_load(&mock_maps) == 0);
	for (int i = 0; i < SLOTS; i++) {
		slots[i].pinned = 0;
		slots[i].va = NULL;
	}
	g = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };

	memset(slots, 0, sizeof(slots));
	g = mock_open_gdr();
	EXPECT(g);
	for (int step = 0; step < STEPS && in.left; step++) {
		switch (take(&in, 1) % 10) {
		case 0:
		case 1:
			op_pin(&in);
			break;
		case 2:
			op_unpin(&in);
			break;
		case 3:
			op_map(&in);
			break;
		case 4:
			op_unmap(&in);
			break;
		case 5:
			op_copy(&in, 1);
			break;
		case 6:
			op_copy(&in, 0);
			break;
		case 7:
		case 8:
			op_query(&in);
			break;
		default:
			/* Everything of the old gdr_t goes stale. */
			close_all();
			g = mock_open_gdr();
			EXPECT(g);
			break;
		}
	}
	close_all();
	return 0;
}
