/* SPDX-License-Identifier: MIT */
/*
 * RM objects that earlier pins found (rm_known.c), so that a later pin of
 * memory inside one needs no export: libcuda's dma-buf export crashes
 * when another thread frees a buffer in the exported range
 * (docs/rm-backend.md, step 1), and a small buffer's page is shared.
 *
 * An object is trusted again only while a witness lives: an allocation
 * that lay inside it when it was found or last trusted (the pinned
 * buffer, or one beside it), which still has the buffer ID it had then.
 * CUDA never reuses a buffer ID, and frees no chunk while an allocation
 * in it lives, so a live witness means the object is still the one at
 * those addresses under that handle.  rm_known_take duplicates the
 * handle first and checks the witness after: the object was alive at the
 * duplicate.
 */
#ifndef GDRMAP_RM_KNOWN_H
#define GDRMAP_RM_KNOWN_H

#include <stdint.h>

struct rm_gpu;

/* Witnesses kept per object: pins of buffers that come and go in one
 * chunk keep it known while any of the last few, or a neighbour, lives;
 * one found dead gives its place to the next. */
#define RM_WITNESSES 4

struct rm_known {
	uint32_t client;		/* libcuda's */
	uint32_t src;			/* libcuda's handle of the object */
	uint64_t va_base;		/* where its byte 0 sits */
	uint64_t size;			/* as RM sized it */
	/* Allocations inside it and their buffer IDs then; ID 0: none. */
	uint64_t witness[RM_WITNESSES];
	unsigned long long witness_id[RM_WITNESSES];
};

/*
 * Remember k, an object of gpu of cudaMalloc memory (lying whole at its
 * addresses) whose size RM gave, with its witnesses (known already: they
 * join the ones it has).  With found_size, the size of witness 0, which
 * has just found it by an export, the allocations beside witness 0 and at
 * the object's first byte become witnesses too: alive inside the object
 * while witness 0 keeps it at its addresses, they lie in it as surely.
 */
void rm_known_add(const struct rm_gpu *gpu, struct rm_known *k,
		  uint64_t found_size);

/*
 * A remembered object of gpu holding all of [lo, hi), of libcuda's
 * client client (any if !have_client), into *k, duplicated into *dup:
 * its handle duplicated first, then its witness found alive and RM's
 * size of it unchanged.  1 if so; 0 if none is known, or the one known
 * failed (then it is forgotten, and the caller exports).
 */
int rm_known_take(struct rm_gpu *gpu, uint64_t lo, uint64_t hi,
		  int have_client, uint32_t client, struct rm_known *k,
		  uint32_t *dup);

#endif /* GDRMAP_RM_KNOWN_H */
