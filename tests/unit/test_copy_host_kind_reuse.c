// SPDX-License-Identifier: MIT
/*
 * A thread's copies by the chosen path from or to the same pageable
 * buffer and size ask CUDA what the buffer is once in PAGEABLE_REUSE (64)
 * copies, not each time (lib/paths/path_auto.c, chosen_host_kind): the
 * question costs 0.24-0.40 µs for pageable memory on an H200, a tenth of
 * a 64 KiB write through the mapping.  Pinned answers are never reused;
 * a buffer registered since is seen pinned within 64 copies; another
 * size or buffer asks; a copy by a path named always asks, so the staged
 * path refuses a buffer registered a copy ago.  Every copy's bytes reach
 * the GPU, checked.
 */
#include <stdlib.h>

#include "fake_vulkan.h"
#include "owner_pins.h"

#define AREA	(1UL << 20)
#define N	(64UL << 10)

static unsigned char *buf, *back;

/* times writes of n bytes from host; the host queries they made. */
static int writes(gdr_mh_t mh, char *map, CUdeviceptr gpu,
		  unsigned char *host, size_t n, int times)
{
	static unsigned int seed = 7;
	int k, before = atomic_load(&fake_host_queries);

	pattern(host, n, ++seed);
	for (k = 0; k < times; k++)
		LIB(gdrmap_copy_to_mapping(mh, map, host, n), 0);
	memset(back, POISON, n);
	CHECK(fake_gpu_rw(gpu, back, n, 0) == 0, "read the GPU side");
	CHECK(memcmp(back, host, n) == 0, "%d writes of %zu B: bytes wrong",
	      times, n);
	return atomic_load(&fake_host_queries) - before;
}

static void reuse(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	int asked, err;

	(void)arg;
	writes(mh, map, gpu, buf, N, 100);	/* the choice made */
	asked = writes(mh, map, gpu, buf, N, 640);
	CHECK(asked >= 10 && asked <= 12,
	      "640 writes of 64 KiB from one pageable buffer asked CUDA %d times, not once in 64",
	      asked);
	asked = writes(mh, map, gpu, buf + 4096, N, 64);
	CHECK(asked >= 1 && asked <= 2,
	      "another buffer asks again (%d times in 64)", asked);
	asked = writes(mh, map, gpu, buf, 2 * N, 64);
	CHECK(asked >= 1 && asked <= 2,
	      "another size asks again (%d times in 64)", asked);

	/* Registered now: a path named asks, and the staged path, which
	 * pinned memory does not need, refuses it at once. */
	CHECK(fake_host_register(buf, AREA) == 0, "register the buffer");
	err = gdrmap_copy_to_mapping_via(mh, map, buf, 2 * N,
					 GDRMAP_COPY_PATH_STAGED);
	CHECK(err == EOPNOTSUPP,
	      "the staged path refuses the buffer registered since (%d: %s)",
	      err, gdrmap_last_error());
	/* The chosen path sees it pinned within 64 copies; from then on
	 * each copy asks (pinned answers are not reused). */
	asked = writes(mh, map, gpu, buf, 2 * N, 200);
	CHECK(asked >= 200 - 64,
	      "registered since: the chosen path asks again within 64 copies, then every copy (%d of 200 asked)",
	      asked);
	fake_host_unregister(buf);
}

int main(int argc, char **argv)
{
	char why[512];
	gdr_t g;
	int err = 0;

	(void)argc, (void)argv;
	buf = malloc(AREA);
	back = malloc(AREA);
	if (!buf || !back)
		return 1;
	gdr_cuda_use_syms(&fake_syms);
	g = gdr_open_backend(&gdr_backend_dmabuf, why, sizeof(why), &err);
	CHECK(g != NULL, "dmabuf opens: %s", why);
	if (!g)
		return test_done();
	on_mapped(g, 0, AREA, reuse, NULL);
	CHECK_RET(gdr_close(g), 0);
	free(buf);
	free(back);
	return owner_done();
}
