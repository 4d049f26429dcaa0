/* SPDX-License-Identifier: MIT */
/*
 * libgdrapi in a fork child, over the real module: the child has none of
 * the parent's mappings (VM_DONTCOPY), so every call with the parent's
 * gdr_t or handle fails with EINVAL and says fork is why, where a copy
 * through the inherited handle used to dereference the missing mapping
 * (SIGSEGV).  gdr_open works in the child.  The parent goes on unharmed.
 */
#include <sys/wait.h>

#include "gdrapi.h"
#include "vmtest.h"

#define LEN	(2 * GPU_PAGE)

static int child(gdr_t g, gdr_mh_t mh, void *va)
{
	unsigned char buf[256];
	gdr_info_v2_t info;
	gdr_t g2;

	memset(buf, 0x3c, sizeof(buf));
	CHECK_RET(gdr_copy_to_mapping(mh, va, buf, sizeof(buf)), EINVAL);
	CHECK(strstr(gdrmap_last_error(), "fork"), "copy_to: \"%s\"",
	      gdrmap_last_error());
	CHECK_RET(gdr_copy_from_mapping(mh, buf, va, sizeof(buf)), EINVAL);
	CHECK(buf[0] == 0x3c && buf[255] == 0x3c, "a refused copy wrote");
	CHECK_RET(gdr_get_info_v2(g, mh, &info), EINVAL);
	CHECK_RET(gdr_unmap(g, mh, va, LEN), EINVAL);
	CHECK_RET(gdr_unpin_buffer(g, mh), EINVAL);
	/* Succeeds, as GDRCopy's does, and releases nothing of the
	 * parent's (its pins are counted after the child exits). */
	CHECK_RET(gdr_close(g), 0);

	g2 = gdr_open();
	CHECK(g2 != NULL, "gdr_open in the child: %s", gdrmap_last_error());
	if (g2)
		CHECK_RET(gdr_close(g2), 0);
	return test_done();
}

int main(void)
{
	long pins0 = nvsim_count("outstanding_pins");
	unsigned char src[LEN], dst[LEN];
	CUdeviceptr d;
	void *va;
	gdr_mh_t mh;
	gdr_t g;
	int st;
	pid_t pid;

	vm_cuda_init();
	d = vm_alloc(LEN);
	gpu_fill(d, LEN, 23);
	g = gdr_open();
	REQUIRE(g, "gdr_open: %s", gdrmap_last_error());
	REQUIRE(gdr_pin_buffer(g, d, LEN, 0, 0, &mh) == 0, "pin: %s",
		gdrmap_last_error());
	REQUIRE(gdr_map(g, mh, &va, LEN) == 0, "map: %s", gdrmap_last_error());

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child(g, mh, va));
	REQUIRE(pid > 0, "fork");
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0,
	      "the child failed (status %#x; a signal means it touched the parent's mapping)",
	      st);

	CHECK_RET(gdr_copy_from_mapping(mh, dst, va, LEN), 0);
	CHECK(find_mismatch(dst, LEN, 23) < 0, "the parent's mapping after fork");
	fill_pattern(src, LEN, 24);
	CHECK_RET(gdr_copy_to_mapping(mh, va, src, LEN), 0);
	CHECK(gpu_mismatch(d, LEN, 24) < 0, "the parent's write after fork");
	CHECK_RET(gdr_unmap(g, mh, va, LEN), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_close(g), 0);
	CU_OK(cuMemFree(d));
	CHECK(nvsim_count("outstanding_pins") == pins0, "pins %ld, had %ld",
	      nvsim_count("outstanding_pins"), pins0);
	return test_done();
}
