// SPDX-License-Identifier: MIT
/*
 * nvsim's nvidia_p2p_* contract, through its test client nvsim_selftest.ko
 * (inside the VM; skipped unless /proc/driver/nvsim_selftest exists):
 * argument checks, non-persistent pins invalidated by cuMemFree and by
 * process exit (put_pages then answers 0), persistent pins keeping their
 * pages valid and unused after cuMemFree until put_pages_persistent.
 */
#include <sys/wait.h>

#include "vm_sim.h"

#define ST "/proc/driver/nvsim_selftest"

static int st_cmd(const char *fmt, unsigned long long va, unsigned long long len)
{
	char buf[96];
	int fd = open(ST, O_WRONLY), n, ret;

	REQUIRE(fd >= 0, "open %s: %s", ST, strerror(errno));
	n = snprintf(buf, sizeof(buf), fmt, va, len);
	ret = write(fd, buf, (size_t)n) == n ? 0 : errno;
	close(fd);
	return ret;
}

struct st_state {
	int pinned, persistent, callbacks, put_rc;
	unsigned int entries;
	unsigned long long peek;
};

static struct st_state st_read(void)
{
	struct st_state s = { -1, -1, -1, -1, 0, 0 };
	FILE *f = fopen(ST, "r");

	REQUIRE(f, "open %s", ST);
	CHECK(fscanf(f, "pinned %d persistent %d callbacks %d put_rc %d entries %u peek %llx",
		     &s.pinned, &s.persistent, &s.callbacks, &s.put_rc,
		     &s.entries, &s.peek) == 6, "parse %s", ST);
	fclose(f);
	return s;
}

/* The child of the exit case: pin, then exit without freeing. */
static int child(void)
{
	CUdeviceptr d;

	sim_cuda_init();
	CU_OK(cuMemAlloc(&d, 2 * SIM_PAGE));
	return st_cmd("pin %llx %llx", d, 2 * SIM_PAGE) ? 2 : 0;
}

int main(int argc, char **argv)
{
	long pins0 = sim_count("outstanding_pins"), used0, cb0;
	const size_t len = 8 * SIM_PAGE;
	struct st_state s;
	CUdeviceptr d, big[64];
	uint64_t word = 0x1122334455667788ULL, got;
	size_t n, i;
	int status;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child();
	if (access(ST, F_OK)) {
		SKIP("nvsim_selftest.ko is not loaded");
		return test_done();
	}
	sim_cuda_init();

	/* Argument checks and good round trips, in the kernel. */
	CU_OK(cuMemAlloc(&d, len));
	CHECK(st_cmd("check %llx %llx", d, len) == 0,
	      "kernel-side checks failed (see the kernel log)");
	CHECK(sim_count("outstanding_pins") == pins0, "pins after check");

	/* cuMemFree fires the callback; put_pages afterwards says 0. */
	cb0 = sim_count("callbacks_fired");
	CHECK(st_cmd("pin %llx %llx", d, len) == 0, "pin");
	s = st_read();
	CHECK(s.pinned == 1 && s.entries == 8, "pinned %d entries %u",
	      s.pinned, s.entries);
	CHECK(sim_count("outstanding_pins") == pins0 + 1 &&
	      sim_count("pinned_pages") >= 8, "counted");
	CU_OK(cuMemFree(d));
	CHECK(sim_count("callbacks_fired") == cb0 + 1, "callback not fired");
	CHECK(sim_count("outstanding_pins") == pins0, "pin outlived the free");
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin");
	s = st_read();
	CHECK(s.put_rc == 0, "put_pages after the callback: %d", s.put_rc);

	/* Process exit fires it too (from the exiting task). */
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "vm_p2p", "--child", (char *)NULL);
		_exit(9);
	}
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %#x",
	      status);
	CHECK(sim_count("callbacks_fired") == cb0 + 2, "exit fired no callback");
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin");
	s = st_read();
	CHECK(s.put_rc == 0, "put_pages after exit: %d", s.put_rc);
	CHECK(sim_count("outstanding_pins") == pins0, "pins after exit");

	/* Persistent: survives cuMemFree, pages not reused, until put. */
	used0 = sim_count("used_pages");
	CU_OK(cuMemAlloc(&d, len));
	CU_OK(cuMemcpyHtoD(d, &word, sizeof(word)));
	CHECK(st_cmd("ppin %llx %llx", d, len) == 0, "ppin");
	CU_OK(cuMemFree(d));
	CHECK(sim_count("callbacks_fired") == cb0 + 2, "persistent callback");
	CHECK(sim_count("outstanding_pins") == pins0 + 1 &&
	      sim_count("used_pages") == used0 + 8, "persistent pin dropped");
	/* Fill every other page of the device with zeros. */
	for (n = 0; n < sizeof(big) / sizeof(big[0]); n++) {
		if (cuMemAlloc(&big[n], 4 * SIM_MIB) != CUDA_SUCCESS)
			break;
		CU_OK(cuMemsetD8(big[n], 0, 4 * SIM_MIB));
	}
	for (;;) {
		CUdeviceptr small;

		if (cuMemAlloc(&small, SIM_PAGE) != CUDA_SUCCESS)
			break;
		CU_OK(cuMemsetD8(small, 0, SIM_PAGE));
		/* leaked until exit on purpose: freed by the fd release */
	}
	s = st_read();
	got = s.peek;
	CHECK(got == word, "persistent page reused: %#llx", (unsigned long long)got);
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin persistent");
	s = st_read();
	CHECK(s.put_rc == 0, "put_pages_persistent %d", s.put_rc);
	for (i = 0; i < n; i++)
		CU_OK(cuMemFree(big[i]));
	CHECK(sim_count("outstanding_pins") == pins0, "pins at the end");
	return test_done();
}
