// SPDX-License-Identifier: MIT
/*
 * fork: the rm backend's RM state belongs to the process that made it.
 * In the child, the parent's pin is refused (as every backend's is), and
 * a gdr_open of the child's own makes a new RM client, on a control file
 * of its own, with devices of its own: not one call names the parent's
 * client (the fake refuses and counts any that does), and the child's
 * pins map and move every byte.  The parent's client, pin and mapping
 * are untouched and still work after the child is gone.
 */
#include <sys/wait.h>

#include "rm_pins.h"

#define SIZE	(1UL << 20)

static uint32_t only_client(pid_t of)
{
	uint32_t h[8], found = 0;
	pid_t pid[8];
	int i, n, mine = 0;

	n = fake_rm_clients(h, pid, 8);
	for (i = 0; i < n && i < 8; i++) {
		if (pid[i] == of) {
			found = h[i];
			mine++;
		}
	}
	CHECK(mine == 1, "process %d has %d RM clients", (int)of, mine);
	return found;
}

static int child(gdr_t parent_g, gdr_mh_t parent_mh, char *parent_va,
		 uint32_t parent_client)
{
	struct fake_rm_stats st;
	unsigned char buf[64];
	CUdeviceptr mem;
	uint32_t mine;
	gdr_t g;

	memset(buf, 0x3c, sizeof(buf));
	CHECK_RET(gdr_copy_to_mapping(parent_mh, parent_va, buf, sizeof(buf)),
		  EINVAL);
	CHECK_RET(gdr_unpin_buffer(parent_g, parent_mh), EINVAL);

	mem = legacy_alloc(0, SIZE);
	g = rm_open();
	if (!g)
		return test_done();
	mine = only_client(getpid());
	CHECK(mine && mine != parent_client,
	      "the child's RM client 0x%x is a new one, not the parent's 0x%x",
	      mine, parent_client);
	pin_and_copy(g, 0, START_NONE, mem, 4096 + 11, 8000);
	pin_and_copy(g, 2, START_OWN_PRIMARY, legacy_alloc(2, SIZE), 0, 3000);
	CHECK_RET(gdr_close(g), 0);
	fake_rm_stats(&st);
	CHECK(st.foreign == 0 && st.refused == 0,
	      "no call named the parent's client (%d), none refused (%d: %s)",
	      st.foreign, st.refused, fake_rm_last_refusal());
	CHECK(st.dups == 0 && st.rm_maps == 0 && st.files == 1,
	      "the child leaves %d duplicates, %d mappings, %d files",
	      st.dups, st.rm_maps, st.files);
	return owner_done();
}

int main(void)
{
	uint32_t parent_client;
	CUdeviceptr mem;
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m;
	int status;
	pid_t pid;
	gdr_t g;

	fake_rm_install();
	mem = legacy_alloc(0, SIZE);
	g = rm_open();
	if (!g)
		return test_done();
	m = rm_pin_map(g, mem, SIZE, &mh, &base, &info);
	parent_client = only_client(getpid());

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child(g, mh, base, parent_client));
	CHECK(pid > 0, "fork");
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "the child passed (status %#x)",
	      status);

	CHECK(only_client(getpid()) == parent_client,
	      "the parent keeps its client 0x%x", parent_client);
	rm_both_ways(mh, m, mem, SIZE, 17, "the parent's pin after the fork");
	rm_unmap_unpin(g, mh, base, info.mapped_size);
	CHECK_RET(gdr_close(g), 0);
	return rm_done(1);
}
