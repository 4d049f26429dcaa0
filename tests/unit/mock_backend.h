/* SPDX-License-Identifier: MIT */
/*
 * A backend for host tests: "pins" any range and maps anonymous memory in
 * place of GPU memory, counting what is outstanding so tests can check
 * that the core pairs every pin with an unpin and every map with an unmap.
 */
#ifndef GDRMAP_TEST_MOCK_BACKEND_H
#define GDRMAP_TEST_MOCK_BACKEND_H

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "base/internal.h"

static atomic_int mock_pins, mock_maps;
static gdr_mapping_type_t mock_map_type = GDR_MAPPING_TYPE_WC;
static int mock_fail_pin;		/* errno the next pins return */
static uint64_t mock_last_pin_addr, mock_last_pin_size;
static size_t mock_last_map_len;

static int mock_open(struct gdr *g, char *why, size_t len)
{
	(void)g, (void)why, (void)len;
	return 0;
}

static int mock_pin(struct gdr *g, struct gdr_region *r, uint64_t token,
		    uint32_t va_space)
{
	(void)g, (void)token, (void)va_space;
	if (mock_fail_pin)
		return mock_fail_pin;
	mock_last_pin_addr = r->pin_addr;
	mock_last_pin_size = r->pin_size;
	atomic_fetch_add(&mock_pins, 1);
	return 0;
}

static int mock_unpin(struct gdr *g, struct gdr_region *r)
{
	(void)g, (void)r;
	atomic_fetch_sub(&mock_pins, 1);
	return 0;
}

static int mock_map(struct gdr *g, struct gdr_region *r, size_t len,
		    gdr_mapping_type_t want, void **va,
		    gdr_mapping_type_t *got)
{
	void *p;

	(void)g, (void)r, (void)want;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return errno;
	/* As gdrdrv's mappings (VM_DONTCOPY): a fork child has none. */
	madvise(p, len, MADV_DONTFORK);
	/* Never zeros: a copy that skips bytes must not go unnoticed. */
	memset(p, 0xA5, len);
	mock_last_map_len = len;
	atomic_fetch_add(&mock_maps, 1);
	*va = p;
	*got = mock_map_type;
	return 0;
}

static int mock_unmap(struct gdr *g, struct gdr_region *r, void *va,
		      size_t len)
{
	(void)g, (void)r;
	atomic_fetch_sub(&mock_maps, 1);
	return munmap(va, len) ? errno : 0;
}

static const struct gdr_backend mock_backend = {
	.name = "mock",
	.id = 99,
	.open = mock_open,
	.pin = mock_pin,
	.unpin = mock_unpin,
	.map = mock_map,
	.unmap = mock_unmap,
};

static inline gdr_t mock_open_gdr(void)
{
	char why[256];
	int err;

	return gdr_open_backend(&mock_backend, why, sizeof(why), &err);
}

#endif /* GDRMAP_TEST_MOCK_BACKEND_H */
