// SPDX-License-Identifier: MIT
/* Set-up shared by the measuring subcommands (session.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "stats.h"

int fail(const struct opts *o, int code, const char *fmt, ...)
{
	char msg[1024];
	struct json j;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "gdrmap %s: %s\n", cmd_names[o->cmd], msg);
	if (o->json) {
		json_init(&j, stdout);
		json_obj_begin(&j, NULL);
		json_str(&j, "tool", "gdrmap");
		json_str(&j, "command", cmd_names[o->cmd]);
		json_str(&j, "error", msg);
		json_int(&j, "exit_code", code);
		json_finish(&j);
	}
	return code;
}

int session_open(struct session *s, const struct opts *o)
{
	char why[512];
	int b = 0;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->cpu = -1;
	s->cu = tcu_load(why, sizeof(why));
	if (!s->cu)
		return fail(o, EXIT_CANNOT, "%s", why);
	if (tcu_device_info(s->cu, o->device, &s->gpu, why, sizeof(why)))
		return fail(o, EXIT_CANNOT, "%s", why);
	if (cpus_choose(o->cpus, s->gpu.busid[0] ? s->gpu.busid : NULL,
			&s->cpus, why, sizeof(why)))
		return fail(o, EXIT_USAGE, "%s", why);
	/* Every CUDA call the command makes is for device -d. */
	if (tcu_use_device(s->cu, o->device, &s->ctx, why, sizeof(why)))
		return fail(o, EXIT_CANNOT, "%s", why);
	s->g = tools_gdr_open();
	if (!s->g)
		return fail(o, EXIT_CANNOT,
			    "%s failed (%s): %s; 'gdrmap doctor' says how to fix it",
			    gdrmap_open ? "gdrmap_open" : "gdr_open",
			    strerror(errno ? errno : ENODEV),
			    gdrmap_last_error ? gdrmap_last_error() :
			    "no gdrmap backend is usable here");
	if (gdr_get_attribute(s->g, GDRMAP_ATTR_BACKEND, &b) ||
	    !gdr_backend_name(b))
		s->backend = "unknown";
	else
		s->backend = gdr_backend_name(b);
	/* Only now: threads CUDA and the backends start inherit the
	 * affinity of the thread that starts them, and should not share
	 * the measuring CPU. */
	if (s->cpus.n) {
		s->cpu = s->cpus.cpu[0];
		if (pin_thread(s->cpu))
			return fail(o, EXIT_CANNOT, "cannot run on CPU %d",
				    s->cpu);
	}
	s->timer_ns = timer_overhead_ns();
	return 0;
}

void session_close(struct session *s, struct gpubuf *b)
{
	if (b)
		gpubuf_close(s, b);
	if (s->g)
		gdr_close(s->g);
	s->g = NULL;
	if (s->ctx)
		s->cu->CtxSetCurrent(NULL);
	s->ctx = NULL;
}

int gpu_alloc(struct session *s, size_t size, CUdeviceptr *base)
{
	const struct opts *o = s->o;
	unsigned long p = 0;
	char e[160];
	CUresult res;
	int err = ENOSYS;

	if (o->alloc != ALLOC_CUMEMALLOC) {
		if (gdrmap_mem_alloc)
			err = gdrmap_mem_alloc(o->device, size, &p);
		if (!err) {
			s->alloc = ALLOC_VMM;
			*base = (CUdeviceptr)p;
			return 0;
		}
		if (o->alloc == ALLOC_VMM || !strcmp(s->backend, "vulkan"))
			return fail(o, EXIT_CANNOT, "%s(%zu): %s: %s",
				    gdrmap_mem_alloc ? "gdrmap_mem_alloc" :
				    "this libgdrapi.so.2 (not gdrmap's?) has no gdrmap_mem_alloc",
				    size, strerror(err),
				    gdrmap_last_error ? gdrmap_last_error() : "");
	}
	res = s->cu->MemAlloc(base, size);
	if (res != CUDA_SUCCESS)
		return fail(o, EXIT_CANNOT, "cuMemAlloc(%zu): %s", size,
			    tcu_error(res, e, sizeof(e)));
	s->alloc = ALLOC_CUMEMALLOC;
	return 0;
}

void gpu_free(struct session *s, CUdeviceptr base)
{
	if (s->alloc == ALLOC_CUMEMALLOC)
		s->cu->MemFree(base);
	else if (gdrmap_mem_free)
		gdrmap_mem_free((unsigned long)base);
}

int gpubuf_open(struct session *s, struct gpubuf *b, size_t size, size_t off)
{
	const struct opts *o = s->o;
	unsigned long addr;
	int err;

	memset(b, 0, sizeof(*b));
	b->size = size;
	if (off >= size)
		return fail(o, EXIT_USAGE, "offset %zu leaves nothing of %zu bytes",
			    off, size);
	err = gpu_alloc(s, size, &b->base);
	if (err)
		return err;
	b->allocated = true;
	addr = (unsigned long)b->base + off;
	err = gdr_pin_buffer(s->g, addr, size - off, 0, 0, &b->mh);
	if (err)
		return fail(o, EXIT_CANNOT,
			    "gdr_pin_buffer(%zu bytes, %s memory, %s backend): %s: %s",
			    size - off, alloc_names[s->alloc], s->backend,
			    strerror(err), gdrmap_last_error());
	b->pinned = true;
	err = gdr_get_info(s->g, b->mh, &b->info);
	if (err)
		return fail(o, EXIT_CANNOT, "gdr_get_info: %s", strerror(err));
	err = gdr_map_v2(s->g, b->mh, &b->map, size - off, o->map_flags);
	if (err)
		return fail(o, EXIT_CANNOT, "gdr_map_v2(%s): %s",
			    map_flag_names[o->map_flags], strerror(err));
	b->mapped = true;
	b->map_len = size - off;
	/* The mapping starts at info.va, the pinned window's start, which
	 * lies above base when the offset is 64 KiB or more: cpu may then
	 * point before the mapping, and only cpu + off is ever used. */
	err = gdr_get_info(s->g, b->mh, &b->info);
	if (err)
		return fail(o, EXIT_CANNOT, "gdr_get_info: %s", strerror(err));
	b->cpu = (char *)((uintptr_t)b->map + (uintptr_t)b->base -
			  (uintptr_t)b->info.va);
	/* Mapped, yet no mapping type: a copy-only pin, which the
	 * copies serve by DMA (gdrapi(3)). */
	if (b->info.mapping_type == GDR_MAPPING_TYPE_NONE)
		b->map_type = "copy-only";
	else if (gdr_get_mapping_type_string(b->info.mapping_type,
					     &b->map_type))
		b->map_type = "unknown";
	return 0;
}

void gpubuf_close(struct session *s, struct gpubuf *b)
{
	if (b->mapped)
		gdr_unmap(s->g, b->mh, b->map, b->map_len);
	if (b->pinned)
		gdr_unpin_buffer(s->g, b->mh);
	if (b->allocated)
		gpu_free(s, b->base);
	memset(b, 0, sizeof(*b));
}

static void fill_random(unsigned char *p, size_t n, unsigned int *seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(rand_r(seed) >> 5);
}

long first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

int verify_both_ways(struct session *s, struct gpubuf *b, size_t off,
		     size_t n, char *err, size_t errlen)
{
	static unsigned int seed = 20261121;
	unsigned char *ref = malloc(n ? n : 1), *got = malloc(n ? n : 1);
	int ret = EXIT_CANNOT, e;
	CUresult res;
	long bad;

	if (!ref || !got) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* CPU -> GPU: through the mapping, read back by cuMemcpyDtoH. */
	fill_random(ref, n, &seed);
	e = gdr_copy_to_mapping(b->mh, b->cpu + off, ref, n);
	if (e) {
		snprintf(err, errlen, "gdr_copy_to_mapping: %s", strerror(e));
		goto out;
	}
	res = s->cu->MemcpyDtoH(got, b->base + off, n);
	if (res != CUDA_SUCCESS) {
		snprintf(err, errlen, "cuMemcpyDtoH failed (%d)", res);
		goto out;
	}
	bad = first_diff(ref, got, n);
	if (bad >= 0) {
		snprintf(err, errlen,
			 "wrong data: %zu bytes written at offset %zu through the mapping, cuMemcpyDtoH sees byte %ld differ",
			 n, off, bad);
		ret = EXIT_WRONG;
		goto out;
	}
	/* GPU -> CPU: cuMemcpyHtoD, read through the mapping.  From
	 * pageable memory the copy may return before it lands. */
	fill_random(ref, n, &seed);
	res = s->cu->MemcpyHtoD(b->base + off, ref, n);
	if (res == CUDA_SUCCESS)
		res = s->cu->CtxSynchronize();
	if (res != CUDA_SUCCESS) {
		snprintf(err, errlen, "cuMemcpyHtoD failed (%d)", res);
		goto out;
	}
	memset(got, 0, n);
	e = gdr_copy_from_mapping(b->mh, got, b->cpu + off, n);
	if (e) {
		snprintf(err, errlen, "gdr_copy_from_mapping: %s", strerror(e));
		goto out;
	}
	bad = first_diff(ref, got, n);
	if (bad >= 0) {
		snprintf(err, errlen,
			 "wrong data: %zu bytes written at offset %zu by cuMemcpyHtoD, read through the mapping, differ at byte %ld",
			 n, off, bad);
		ret = EXIT_WRONG;
		goto out;
	}
	ret = 0;
out:
	free(ref);
	free(got);
	return ret;
}

void session_json_begin(struct json *j, const struct session *s,
			const struct gpubuf *b, const char *unit)
{
	json_init(j, stdout);
	json_obj_begin(j, NULL);
	json_str(j, "tool", "gdrmap");
	json_str(j, "command", cmd_names[s->o->cmd]);
	json_str(j, "version", GDRMAP_TOOLS_VERSION);
	json_bool(j, "simulated", s->gpu.simulated);
	json_obj_begin(j, "device");
	json_int(j, "index", s->gpu.index);
	json_str(j, "name", s->gpu.name);
	json_str(j, "pci_bus_id", s->gpu.busid[0] ? s->gpu.busid : NULL);
	json_int(j, "memory_bytes", (long long)s->gpu.memory);
	json_int(j, "cuda_driver_version", s->cu->driver_version);
	json_obj_end(j);
	json_str(j, "backend", s->backend);
	json_str(j, "allocation", alloc_names[s->alloc]);
	json_str(j, "map_flag", map_flag_names[s->o->map_flags]);
	json_str(j, "mapping_type", b && b->map_type ? b->map_type : NULL);
	json_obj_begin(j, "cpus");
	json_str(j, "list", s->cpus.n ? s->cpus.list : NULL);
	json_str(j, "source", s->cpus.source);
	if (s->cpu >= 0)
		json_int(j, "measuring_cpu", s->cpu);
	else
		json_null(j, "measuring_cpu");
	json_obj_end(j);
	json_num(j, "timer_overhead_ns", s->timer_ns);
	json_str(j, "unit", unit);
}

void session_print_header(const struct session *s, const struct gpubuf *b)
{
	if (s->gpu.simulated)
		printf("*** SIMULATED GPU: '%s' is not real hardware; no figure below is performance data ***\n",
		       s->gpu.name);
	printf("gdrmap %s: GPU %d %s (%s), CUDA driver %d\n",
	       cmd_names[s->o->cmd], s->gpu.index, s->gpu.name,
	       s->gpu.busid[0] ? s->gpu.busid : "bus id unknown",
	       s->cu->driver_version);
	printf("backend %s, %s memory, mapping %s (asked: %s)\n", s->backend,
	       alloc_names[s->alloc], b && b->map_type ? b->map_type : "-",
	       map_flag_names[s->o->map_flags]);
	if (s->cpu >= 0)
		printf("CPUs %s (%s), measuring on CPU %d; reading the clock costs %.0f ns, included in every figure\n",
		       s->cpus.list, s->cpus.source, s->cpu, s->timer_ns);
	else
		printf("CPUs not chosen (%s); reading the clock costs %.0f ns, included in every figure\n",
		       s->cpus.note, s->timer_ns);
}

void *host_alloc(struct session *s, size_t n, bool *pinned)
{
	void *p = NULL;

	*pinned = s->cu->MemAllocHost(&p, n) == CUDA_SUCCESS && p;
	if (!*pinned && posix_memalign(&p, 4096, n))
		return NULL;
	return p;
}

void host_free(struct session *s, void *p, bool pinned)
{
	if (pinned)
		s->cu->MemFreeHost(p);
	else
		free(p);
}

void *host_alloc_kind(struct session *s, size_t n, enum host_kind *kind)
{
	const char *what = "posix_memalign";
	size_t len = (n + 4095) & ~(size_t)4095;
	char e[160];
	CUresult res;
	bool pinned;
	void *p;

	if (*kind == HOST_DEFAULT) {
		p = host_alloc(s, n, &pinned);
		*kind = pinned ? HOST_PINNED : HOST_PAGEABLE;
		if (p && !pinned)
			memset(p, 0, n);
		if (!p)
			fail(s->o, EXIT_CANNOT, "out of memory");
		return p;
	}
	if (*kind == HOST_PINNED) {
		res = s->cu->MemAllocHost(&p, n);
		if (res == CUDA_SUCCESS)
			return p;
		fail(s->o, EXIT_CANNOT, "cuMemAllocHost of %zu bytes: %s", n,
		     tcu_error(res, e, sizeof(e)));
		return NULL;
	}
	if (posix_memalign(&p, 4096, len))
		goto failed;
	/* Touched: every page is there before the first copy. */
	memset(p, 0, len);
	if (*kind == HOST_PAGEABLE)
		return p;
	what = "cuMemHostRegister";
	if (!s->cu->MemHostRegister) {
		free(p);
		fail(s->o, EXIT_CANNOT, "--host registered: this libcuda.so.1 has no cuMemHostRegister_v2");
		return NULL;
	}
	res = s->cu->MemHostRegister(p, len, 0);
	if (res == CUDA_SUCCESS)
		return p;
	free(p);
	fail(s->o, EXIT_CANNOT, "cuMemHostRegister of %zu bytes: %s", len,
	     tcu_error(res, e, sizeof(e)));
	return NULL;
failed:
	fail(s->o, EXIT_CANNOT, "%s of %zu bytes: out of memory", what, len);
	return NULL;
}

void host_free_kind(struct session *s, void *p, enum host_kind kind)
{
	if (!p)
		return;
	if (kind == HOST_REGISTERED && s->cu->MemHostUnregister)
		s->cu->MemHostUnregister(p);
	host_free(s, p, kind == HOST_PINNED);
}
