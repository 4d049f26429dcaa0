// SPDX-License-Identifier: MIT
/*
 * nvsim's nvidia_p2p_* contract, through its test client nvsim_selftest.ko
 * (inside the VM; skipped unless /proc/driver/nvsim_selftest exists):
 * argument checks, non-persistent pins invalidated by cuMemFree and by
 * process exit (put_pages then answers 0), persistent pins keeping their
 * pages valid and unused after cuMemFree until put_pages_persistent; with
 * several GPUs, an address resolving to its own GPU (UUID, BAR pages) and
 * freeing one GPU's memory leaving another's pin alone; the driver's
 * strict rules (sim/nvsim/README.md): put_pages from another process
 * releases nothing, p2p tokens are sequential and va_space is 0xfe00, and
 * a put that fails (fail_puts) releases nothing.
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
	char uuid[33];
	unsigned long long phys;
};

static struct st_state st_read(void)
{
	struct st_state s = { -1, -1, -1, -1, 0, 0, "", 0 };
	FILE *f = fopen(ST, "r");

	REQUIRE(f, "open %s", ST);
	CHECK(fscanf(f, "pinned %d persistent %d callbacks %d put_rc %d entries %u peek %llx uuid %32s phys %llx",
		     &s.pinned, &s.persistent, &s.callbacks, &s.put_rc,
		     &s.entries, &s.peek, s.uuid, &s.phys) == 8, "parse %s", ST);
	fclose(f);
	return s;
}

/*
 * Device 1's memory pinned from a thread whose context is device 0's: the
 * page table is device 1's (UUID, BAR pages, data), and freeing device 0's
 * memory fires no callback of it; freeing its own does, counted on it.
 */
static void second_gpu(CUcontext c0)
{
	uint64_t word = 0x0102030405060708ULL;
	struct nvsim_info info = { .device = 1 };
	CUcontext c1 = gpu_primary(1);
	CUdeviceptr d0, d1;
	struct st_state s;
	char want[33];
	CUuuid u;
	long cb0, cb1;
	int fd, i;

	fd = open(NVSIM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0 && ioctl(fd, NVSIM_IOC_INFO, &info) == 0,
		"INFO of device 1: %s", strerror(errno));
	close(fd);
	CU_OK(cuDeviceGetUuid(&u, 1));
	for (i = 0; i < 16; i++)
		snprintf(want + 2 * i, 3, "%02x", (unsigned char)u.bytes[i]);

	CU_OK(cuCtxSetCurrent(c1));
	CU_OK(cuMemAlloc(&d1, 2 * SIM_PAGE));
	CU_OK(cuMemcpyHtoD(d1, &word, sizeof(word)));
	CU_OK(cuCtxSetCurrent(c0));
	CU_OK(cuMemAlloc(&d0, 2 * SIM_PAGE));

	cb0 = nvsim_gpu_count(0, "callbacks_fired");
	cb1 = nvsim_gpu_count(1, "callbacks_fired");
	CHECK(st_cmd("pin %llx %llx", d1, 2 * SIM_PAGE) == 0, "pin on device 1");
	s = st_read();
	CHECK(!strcmp(s.uuid, want), "device 1's pin has UUID %s, want %s",
	      s.uuid, want);
	CHECK(s.phys >= info.bar_phys &&
	      s.phys - info.bar_phys < info.bar_size,
	      "device 1's pin at %#llx, outside its BAR %#llx+%#llx", s.phys,
	      (unsigned long long)info.bar_phys,
	      (unsigned long long)info.bar_size);
	CHECK(s.peek == word, "device 1's pin reads %#llx", s.peek);
	CHECK(nvsim_gpu_count(1, "outstanding_pins") == 1 &&
	      nvsim_gpu_count(0, "outstanding_pins") == 0,
	      "pins counted on device 0 (%ld) / 1 (%ld)",
	      nvsim_gpu_count(0, "outstanding_pins"),
	      nvsim_gpu_count(1, "outstanding_pins"));

	CU_OK(cuMemFree(d0));
	s = st_read();
	CHECK(s.pinned == 1 && s.peek == word &&
	      nvsim_gpu_count(1, "callbacks_fired") == cb1 &&
	      nvsim_gpu_count(0, "callbacks_fired") == cb0,
	      "freeing device 0's memory touched device 1's pin");
	CU_OK(cuMemFree(d1));	/* any context may free it */
	CHECK(nvsim_gpu_count(1, "callbacks_fired") == cb1 + 1 &&
	      nvsim_gpu_count(0, "callbacks_fired") == cb0,
	      "device 1's free: callbacks %ld/%ld, were %ld/%ld",
	      nvsim_gpu_count(0, "callbacks_fired"),
	      nvsim_gpu_count(1, "callbacks_fired"), cb0, cb1);
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin");
	CHECK(st_read().put_rc == 0, "put_pages after device 1's callback");
	CU_OK(cuDevicePrimaryCtxRelease(1));
}

/* The child of the token case: its memory's tokens, on stdout. */
static int token_child(void)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t;
	CUdeviceptr d;

	sim_cuda_init();
	CU_OK(cuMemAlloc(&d, SIM_PAGE));
	CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d));
	printf("%llu %u\n", (unsigned long long)t.p2pToken, t.vaSpaceToken);
	return 0;
}

/* The tokens of a new process's memory. */
static CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens_of_new_process(void)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t = { 0, 0 };
	unsigned long long tok = 0;
	int pfd[2], status;
	FILE *in;
	pid_t pid;

	REQUIRE(pipe(pfd) == 0, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl("/proc/self/exe", "vm_p2p", "--token", (char *)NULL);
		_exit(9);
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	REQUIRE(in, "fdopen");
	CHECK(fscanf(in, "%llu %u", &tok, &t.vaSpaceToken) == 2,
	      "the token child printed no tokens");
	fclose(in);
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "token child %#x", status);
	t.p2pToken = tok;
	return t;
}

/* As strict as the driver (sim/nvsim/README.md). */
static void strict_rules(void)
{
	long pins0 = nvsim_count("outstanding_pins");
	long cb0 = nvsim_count("callbacks_fired");
	long foreign = nvsim_stat("foreign_puts");
	long failed = nvsim_stat("failed_puts");
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS mine, other;
	struct st_state s;
	CUdeviceptr d;
	int status;
	pid_t pid;

	/* Tokens: one sequential counter; every va_space is 0xfe00. */
	CU_OK(cuMemAlloc(&d, 2 * SIM_PAGE));
	CU_OK(cuPointerGetAttribute(&mine, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d));
	other = tokens_of_new_process();
	CHECK(mine.vaSpaceToken == 0xfe00 && other.vaSpaceToken == 0xfe00,
	      "va_space tokens %#x and %#x, want 0xfe00", mine.vaSpaceToken,
	      other.vaSpaceToken);
	CHECK(mine.p2pToken && other.p2pToken > mine.p2pToken &&
	      other.p2pToken - mine.p2pToken < 16,
	      "p2p tokens %llu then %llu: not one counter",
	      (unsigned long long)mine.p2pToken,
	      (unsigned long long)other.p2pToken);

	/* put_pages from another process: 0, and nothing released. */
	CHECK(st_cmd("pin %llx %llx", d, 2 * SIM_PAGE) == 0, "pin");
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(st_cmd("unpin", 0, 0) ? 2 : 0);
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the other process's unpin %#x", status);
	s = st_read();
	CHECK(s.put_rc == 0, "put_pages from another process: %d", s.put_rc);
	CHECK(nvsim_count("outstanding_pins") == pins0 + 1,
	      "put_pages from another process released the pin");
	CHECK(nvsim_stat("foreign_puts") == foreign + 1,
	      "foreign_puts %ld, was %ld", nvsim_stat("foreign_puts"), foreign);
	CU_OK(cuMemFree(d));	/* its callback releases it */
	CHECK(nvsim_count("callbacks_fired") == cb0 + 1 &&
	      nvsim_count("outstanding_pins") == pins0,
	      "the pin after its memory was freed");

	/* A failed put releases nothing; the next one does. */
	CU_OK(cuMemAlloc(&d, 2 * SIM_PAGE));
	CHECK(st_cmd("ppin %llx %llx", d, 2 * SIM_PAGE) == 0, "ppin");
	REQUIRE(sim_set_param("fail_puts", 1) == 0, "setting fail_puts");
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin");
	s = st_read();
	CHECK(s.put_rc == -ENOMEM && s.pinned == 1,
	      "put with fail_puts=1: %d, pinned %d", s.put_rc, s.pinned);
	CHECK(nvsim_count("outstanding_pins") == pins0 + 1,
	      "a failed put released the pin");
	CHECK(nvsim_stat("failed_puts") == failed + 1, "failed_puts %ld, was %ld",
	      nvsim_stat("failed_puts"), failed);
	CHECK(sim_get_param("fail_puts") == 0, "fail_puts did not count down");
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin again");
	s = st_read();
	CHECK(s.put_rc == 0 && s.pinned == 0, "second put: %d, pinned %d",
	      s.put_rc, s.pinned);
	CHECK(nvsim_count("outstanding_pins") == pins0, "pins after the put");
	CU_OK(cuMemFree(d));
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
	long pins0 = nvsim_count("outstanding_pins"), used0, cb0;
	const size_t len = 8 * SIM_PAGE;
	struct st_state s;
	CUdeviceptr d, big[64];
	uint64_t word = 0x1122334455667788ULL, got;
	size_t n, i;
	CUcontext ctx;
	int status;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child();
	if (argc > 1 && !strcmp(argv[1], "--token"))
		return token_child();
	if (access(ST, F_OK)) {
		SKIP("nvsim_selftest.ko is not loaded");
		return test_done();
	}
	ctx = sim_cuda_init();
	if (gpu_count() > 1)
		second_gpu(ctx);
	strict_rules();

	/* Argument checks and good round trips, in the kernel. */
	CU_OK(cuMemAlloc(&d, len));
	CHECK(st_cmd("check %llx %llx", d, len) == 0,
	      "kernel-side checks failed (see the kernel log)");
	CHECK(nvsim_count("outstanding_pins") == pins0, "pins after check");

	/* cuMemFree fires the callback; put_pages afterwards says 0. */
	cb0 = nvsim_count("callbacks_fired");
	CHECK(st_cmd("pin %llx %llx", d, len) == 0, "pin");
	s = st_read();
	CHECK(s.pinned == 1 && s.entries == 8, "pinned %d entries %u",
	      s.pinned, s.entries);
	CHECK(nvsim_count("outstanding_pins") == pins0 + 1 &&
	      nvsim_count("pinned_pages") >= 8, "counted");
	CU_OK(cuMemFree(d));
	CHECK(nvsim_count("callbacks_fired") == cb0 + 1, "callback not fired");
	CHECK(nvsim_count("outstanding_pins") == pins0, "pin outlived the free");
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
	CHECK(nvsim_count("callbacks_fired") == cb0 + 2, "exit fired no callback");
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin");
	s = st_read();
	CHECK(s.put_rc == 0, "put_pages after exit: %d", s.put_rc);
	CHECK(nvsim_count("outstanding_pins") == pins0, "pins after exit");

	/* Persistent: survives cuMemFree, pages not reused, until put. */
	used0 = nvsim_count("used_pages");
	CU_OK(cuMemAlloc(&d, len));
	CU_OK(cuMemcpyHtoD(d, &word, sizeof(word)));
	CHECK(st_cmd("ppin %llx %llx", d, len) == 0, "ppin");
	CU_OK(cuMemFree(d));
	CHECK(nvsim_count("callbacks_fired") == cb0 + 2, "persistent callback");
	CHECK(nvsim_count("outstanding_pins") == pins0 + 1 &&
	      nvsim_count("used_pages") == used0 + 8, "persistent pin dropped");
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
	CHECK(nvsim_count("outstanding_pins") == pins0, "pins at the end");
	return test_done();
}
