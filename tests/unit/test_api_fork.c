/* SPDX-License-Identifier: MIT */
/*
 * After fork, the child has none of the parent's mappings (gdrdrv's are
 * VM_DONTCOPY; the mock's are MADV_DONTFORK to match) and may not use its
 * pins: every call with the parent's gdr_t or handles fails with EINVAL
 * and says why, instead of touching memory the child does not have.  A
 * gdr_t the child opens itself works.  The parent is unaffected.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR	0x7f1200000000UL
#define LEN		(2 * GPU_PAGE_SIZE)

static int says_fork(void)
{
	return strstr(gdrmap_last_error(), "fork") != NULL;
}

/* In the child: nothing inherited works, gdr_open does. */
static int child(gdr_t g, gdr_mh_t mh, void *va)
{
	unsigned char buf[64], *va2;
	gdr_info_v2_t info;
	gdr_mh_t mh2;
	int flag, v, major, minor;
	gdr_t g2;

	memset(buf, 0x3c, sizeof(buf));
	CHECK_RET(gdr_copy_to_mapping(mh, va, buf, sizeof(buf)), EINVAL);
	CHECK(says_fork(), "copy_to: \"%s\"", gdrmap_last_error());
	CHECK_RET(gdr_copy_from_mapping(mh, buf, va, sizeof(buf)), EINVAL);
	CHECK(says_fork(), "copy_from: \"%s\"", gdrmap_last_error());
	CHECK(buf[0] == 0x3c && buf[63] == 0x3c, "a refused copy wrote");
	CHECK_RET(gdr_map(g, mh, (void **)&va2, LEN), EINVAL);
	CHECK(says_fork(), "map: \"%s\"", gdrmap_last_error());
	CHECK_RET(gdr_unmap(g, mh, va, LEN), EINVAL);
	CHECK_RET(gdr_get_info_v2(g, mh, &info), EINVAL);
	CHECK_RET(gdr_get_callback_flag(g, mh, &flag), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, LEN, 0, 0, &mh2), EINVAL);
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v),
		  EINVAL);
	CHECK_RET(gdr_driver_get_version(g, &major, &minor), EINVAL);
	CHECK_RET(gdr_unpin_buffer(g, mh), EINVAL);
	/* Closing the parent's gdr_t succeeds and releases nothing (the
	 * parent's test checks its pins after the child exits). */
	CHECK_RET(gdr_close(g), 0);

	g2 = mock_open_gdr();
	CHECK(g2 != NULL, "opening in the child");
	if (!g2)
		return test_done();
	CHECK_RET(gdr_pin_buffer(g2, GPU_ADDR, LEN, 0, 0, &mh2), 0);
	CHECK_RET(gdr_map(g2, mh2, (void **)&va2, LEN), 0);
	CHECK_RET(gdr_copy_to_mapping(mh2, va2 + 5, buf, sizeof(buf)), 0);
	CHECK(!memcmp(va2 + 5, buf, sizeof(buf)), "the child's own copy");
	/* The parent's handle is still refused next to the child's own. */
	CHECK_RET(gdr_copy_to_mapping(mh, va, buf, 1), EINVAL);
	CHECK_RET(gdr_unmap(g2, mh2, va2, LEN), 0);
	CHECK_RET(gdr_unpin_buffer(g2, mh2), 0);
	CHECK_RET(gdr_close(g2), 0);
	return test_done();
}

int main(void)
{
	unsigned char src[100], dst[100], *va;
	gdr_mh_t mh;
	int status;
	pid_t pid;
	gdr_t g;

	g = mock_open_gdr();
	CHECK(g != NULL, "mock backend opens");
	if (!g)
		return test_done();
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, LEN, 0, 0, &mh), 0);
	CHECK_RET(gdr_map(g, mh, (void **)&va, LEN), 0);

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child(g, mh, va));
	CHECK(pid > 0, "fork failed");
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0,
	      "the child failed (status %#x): a signal means it touched the parent's mapping",
	      status);

	/* The parent's gdr_t, pin and mapping are untouched. */
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	memset(dst, 0x5a, sizeof(dst));
	CHECK_RET(gdr_copy_to_mapping(mh, va + 3, src, sizeof(src)), 0);
	CHECK_RET(gdr_copy_from_mapping(mh, dst, va + 3, sizeof(dst)), 0);
	CHECK(!memcmp(src, dst, sizeof(src)), "the parent's copies");
	CHECK_RET(gdr_unmap(g, mh, va, LEN), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_close(g), 0);
	CHECK(atomic_load(&mock_pins) == 0 && atomic_load(&mock_maps) == 0,
	      "pins %d maps %d left", atomic_load(&mock_pins),
	      atomic_load(&mock_maps));
	return test_done();
}
