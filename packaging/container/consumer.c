// SPDX-License-Identifier: MIT
/*
 * The smallest program that uses gdrmap as an application does: open it
 * (gdrmap_open: it pins only memory it allocates, so any backend serves
 * it, the vulkan one included) and, on a GPU, pin and map 1 MiB of
 * memory every backend can pin (gdrmap_mem_alloc), write a pattern
 * through the mapping and read it back.  When something fails it prints the library's own reason
 * (gdrmap_last_error()): no environment variable is needed to see why.
 *
 * Run in containers by tests/packaging/test-container.sh (a Debian root file
 * system, no GPU) and bench/container-run.sh (the GPU machine).
 * Exit status: 0 it worked, 1 it failed (the reason printed), 3 the
 * bytes read back through the mapping were not those written.
 *
 *   cc -o consumer consumer.c $(pkg-config --cflags --libs gdrapi)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdrapi.h>

#define SIZE (1UL << 20)

static const char *const backends[] = { "?", "gdrdrv", "dmabuf", "vulkan" };

static int failed(const char *call, int err)
{
	printf("%s failed (%s): %s\n", call, strerror(err ? err : ENODEV),
	       gdrmap_last_error());
	return 1;
}

/* Through the mapping and back; 0 if every byte came back. */
static int round_trip(gdr_mh_t mh, void *map)
{
	unsigned char *out = malloc(SIZE), *in = malloc(SIZE);
	size_t i;
	int bad = 1;

	if (out && in) {
		for (i = 0; i < SIZE; i++)
			out[i] = (unsigned char)(i * 131 + 7) | 1;
		memset(in, 0, SIZE);
		gdr_copy_to_mapping(mh, map, out, SIZE);
		gdr_copy_from_mapping(mh, in, map, SIZE);
		bad = memcmp(in, out, SIZE) != 0;
	}
	free(out);
	free(in);
	return bad;
}

int main(void)
{
	unsigned long dptr = 0;
	gdr_info_t info;
	void *map = NULL;
	gdr_mh_t mh;
	int b = 0, err, rc = 1;
	gdr_t g;

	errno = 0;
	g = gdrmap_open();
	if (!g)
		return failed("gdrmap_open", errno);
	if (gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &b) || b < 1 || b > 3)
		b = 0;
	printf("gdrmap_open: backend %s\n", backends[b]);
	err = gdrmap_mem_alloc(0, SIZE, &dptr);
	if (err) {
		rc = failed("gdrmap_mem_alloc", err);
		goto close;
	}
	err = gdr_pin_buffer(g, dptr, SIZE, 0, 0, &mh);
	if (err) {
		rc = failed("gdr_pin_buffer", err);
		goto free;
	}
	err = gdr_map(g, mh, &map, SIZE);
	if (!err)
		err = gdr_get_info(g, mh, &info);
	if (err) {
		rc = failed("gdr_map", err);
		goto unpin;
	}
	rc = round_trip(mh, (char *)map + (dptr - info.va)) ? 3 : 0;
	printf("pinned and mapped 1 MiB of GPU memory: %s\n",
	       rc ? "the bytes read back differ" :
	       "every byte written came back");
	gdr_unmap(g, mh, map, SIZE);
unpin:
	gdr_unpin_buffer(g, mh);
free:
	gdrmap_mem_free(dptr);
close:
	gdr_close(g);
	return rc;
}
