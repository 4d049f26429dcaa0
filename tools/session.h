/* SPDX-License-Identifier: MIT */
/*
 * What every measuring subcommand sets up the same way: CUDA and one
 * device, the CPUs to run on, a gdr_t, GPU memory pinned and mapped;
 * the report's common header (text and JSON); and errors, which in JSON
 * mode also come out as a JSON document so a checker always has one.
 */
#ifndef GDRMAP_TOOLS_SESSION_H
#define GDRMAP_TOOLS_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "affinity.h"
#include "base/backend.h"
#include "tools_cuda.h"
#include "gdrapi.h"
#include "json.h"
#include "opts.h"

/*
 * gdrmap's extensions, weak: the tools also run against another
 * libgdrapi.so.2 (GDRCopy's, for comparison), which lacks them; then only
 * -a cumemalloc works.
 */
#pragma weak gdrmap_mem_alloc
#pragma weak gdrmap_mem_free
#pragma weak gdrmap_last_error
#pragma weak gdrmap_open

/*
 * The library opened as gdrmap's own programs open it: gdrmap_open, which
 * also takes a backend that maps only cuMemCreate memory (gdr_open leaves
 * that to the environment's choice); gdr_open in another libgdrapi.
 */
static inline gdr_t tools_gdr_open(void)
{
	return gdrmap_open ? gdrmap_open() : gdr_open();
}

#define TOOLS_STR_(x) #x
#define TOOLS_STR(x) TOOLS_STR_(x)
#define GDRMAP_TOOLS_VERSION \
	TOOLS_STR(GDRMAP_VERSION_MAJOR) "." TOOLS_STR(GDRMAP_VERSION_MINOR)

/* Exit codes of the measuring subcommands (doctor: 0, 1 or 2). */
#define EXIT_OK		0
#define EXIT_CANNOT	1	/* no GPU, no backend, CUDA or gdr error */
#define EXIT_USAGE	2
#define EXIT_WRONG	3	/* data moved through the mapping was wrong */

struct session {
	const struct opts *o;
	const struct tcu *cu;
	struct gpu_info gpu;
	CUcontext ctx;		/* the device's primary context */
	struct cpu_choice cpus;
	int cpu;		/* where the measuring thread runs; -1: anywhere */
	gdr_t g;
	const char *backend;
	enum alloc_kind alloc;	/* what -a auto became */
	double timer_ns;
};

/* GPU memory, pinned and mapped for the CPU. */
struct gpubuf {
	CUdeviceptr base;	/* of the allocation */
	size_t size;		/* bytes asked for */
	bool allocated, pinned, mapped;
	gdr_mh_t mh;
	void *map;		/* what gdr_map returned (info.va) */
	size_t map_len;
	gdr_info_t info;
	char *cpu;		/* CPU pointer to base */
	const char *map_type;	/* gdr_get_mapping_type_string's */
};

/*
 * Print an error (stderr, and in JSON mode a document with "error" on
 * stdout) and return code, so callers can `return fail(...)`.
 */
__attribute__((format(printf, 3, 4)))
int fail(const struct opts *o, int code, const char *fmt, ...);

/* 0, or an exit code after fail() has reported why. */
int session_open(struct session *s, const struct opts *o);
/* Close b (if not NULL: zeroed, or opened by gpubuf_open), then s: every
 * measuring subcommand's last step, whether it got that far or not. */
void session_close(struct session *s, struct gpubuf *b);

/*
 * GPU memory of the kind -a asks for (auto: gdrmap_mem_alloc, else
 * cuMemAlloc where the backend can pin it, as on the simulated GPU,
 * whose CUDA exports no file descriptors); 0 or an exit code.
 */
int gpu_alloc(struct session *s, size_t size, CUdeviceptr *base);
void gpu_free(struct session *s, CUdeviceptr base);

/* Allocate size bytes (gpu_alloc) and pin and map [base+off, base+size). */
int gpubuf_open(struct session *s, struct gpubuf *b, size_t size, size_t off);
void gpubuf_close(struct session *s, struct gpubuf *b);

/*
 * Move n random bytes at off both ways (the mapping, checked against
 * cuMemcpy) and compare: 0, EXIT_WRONG (mismatch, err says where) or
 * EXIT_CANNOT.
 */
int verify_both_ways(struct session *s, struct gpubuf *b, size_t off,
		     size_t n, char *err, size_t errlen);
/* The offset of the first byte where a and b differ, or -1. */
long first_diff(const unsigned char *a, const unsigned char *b, size_t n);

/*
 * Host memory for copies: pinned (cuMemAllocHost), as cuMemcpy is fastest
 * from and as GPU kernels can reach; page-aligned memory where pinning
 * fails.
 */
void *host_alloc(struct session *s, size_t n, bool *pinned);
void host_free(struct session *s, void *p, bool pinned);

/*
 * Host memory of a kind (copylat --host): HOST_PINNED (cuMemAllocHost),
 * HOST_REGISTERED (page-aligned, touched, cuMemHostRegister), or
 * HOST_PAGEABLE (page-aligned, touched); HOST_DEFAULT is pinned, or
 * pageable where pinning fails, and *kind then says which it became.
 * The memory, or NULL after fail() has said why.
 */
void *host_alloc_kind(struct session *s, size_t n, enum host_kind *kind);
void host_free_kind(struct session *s, void *p, enum host_kind kind);

/* Start one JSON document on stdout with what every command reports:
 * "tool", "command", "version", "simulated", "device", ..., "unit". */
void session_json_begin(struct json *j, const struct session *s,
			const struct gpubuf *b, const char *unit);
/* The same for text, with a banner when the GPU is simulated. */
void session_print_header(const struct session *s, const struct gpubuf *b);

#endif /* GDRMAP_TOOLS_SESSION_H */
