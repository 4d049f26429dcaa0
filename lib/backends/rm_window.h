/* SPDX-License-Identifier: MIT */
/*
 * The window of an rm pin (rm_window.c): the RM objects behind a range
 * of CUDA memory, duplicated into the library's client, and their CPU
 * mapping, side by side in one reserved range of the address space.
 */
#ifndef GDRMAP_RM_WINDOW_H
#define GDRMAP_RM_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "base/cuda_api.h"

/* Room for a reason (why) in the calls below. */
#define RM_WHY_LEN 512

struct rm_gpu;
struct rm_pin;

/*
 * Pin [addr, +size) of gpu, with s entered in a context of its device:
 * the window [*win, +*win_len) may narrow at its ends.  The new pin, or
 * NULL with *err (an errno, or gdr_pin_unmappable()'s value for memory
 * RM or CUDA will not hand over, already explained) and why saying why.
 */
struct rm_pin *rm_window_pin(const struct gdr_cuda_scope *s,
			     struct rm_gpu *gpu, uint64_t addr, uint64_t size,
			     uint64_t *win, uint64_t *win_len, int *err,
			     char *why);
/* Free the duplicates and the pin; it must not be mapped. */
void rm_window_free(struct rm_pin *p);

/* Map the first len bytes of p's window, which starts at GPU address
 * win, at one CPU address *va: 0 or an errno with why. */
int rm_window_map(struct rm_pin *p, uint64_t win, size_t len, void **va,
		  char *why, size_t why_len);
void rm_window_unmap(struct rm_pin *p);

#endif /* GDRMAP_RM_WINDOW_H */
