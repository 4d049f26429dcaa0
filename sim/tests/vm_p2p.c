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
 * a put that fails (fail_puts) releases nothing; the failure model: a put
 * failing inside RM (fail_puts_rm) keeps the pin, yet a persistent one
 * has dropped its GPU reference, which blocks a reset while held; a get
 * failing late (fail_gets_late) leaves nothing; pid registration lets
 * another process pin and put this one's memory until its own
 * /dev/nvsim is released.
 */
#include <dirent.h>
#include <sys/ioctl.h>
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
	CHECK(nvsim_count("gpu_refs") == 1, "a persistent pin holds %ld GPU references",
	      nvsim_count("gpu_refs"));
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
	CHECK(nvsim_count("gpu_refs") == 1,
	      "a put failing before RM dropped the GPU reference (%ld left)",
	      nvsim_count("gpu_refs"));
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin again");
	s = st_read();
	CHECK(s.put_rc == 0 && s.pinned == 0, "second put: %d, pinned %d",
	      s.put_rc, s.pinned);
	CHECK(nvsim_count("outstanding_pins") == pins0, "pins after the put");
	CU_OK(cuMemFree(d));
}

/*
 * The driver's two kinds of failures and the GPU reference of persistent
 * pins (sim/nvsim/README.md).  GPU 0 must have no memory allocated, so
 * that it can be reset.
 */
static void failure_model(void)
{
	long pins0 = nvsim_count("outstanding_pins");
	long rm0 = nvsim_stat("rm_failed_puts");
	long late0 = nvsim_stat("late_failed_gets");
	long used0 = nvsim_count("used_pages");
	struct st_state s;
	CUdeviceptr d;

	REQUIRE(nvsim_gpu_count(0, "allocations") == 0 &&
		nvsim_count("gpu_refs") == 0,
		"GPU 0 is in use before the failure model's checks");

	/* Inside RM, non-persistent: nothing released; put it again. */
	CU_OK(cuMemAlloc(&d, 2 * SIM_PAGE));
	CHECK(st_cmd("pin %llx %llx", d, 2 * SIM_PAGE) == 0, "pin");
	REQUIRE(sim_set_param("fail_puts_rm", 1) == 0, "setting fail_puts_rm");
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin");
	s = st_read();
	CHECK(s.put_rc == -EIO && s.pinned == 1,
	      "put failing in RM: %d, pinned %d", s.put_rc, s.pinned);
	CHECK(nvsim_count("outstanding_pins") == pins0 + 1 &&
	      nvsim_stat("rm_failed_puts") == rm0 + 1,
	      "put failing in RM: pins %ld (were %ld), rm_failed_puts %ld (was %ld)",
	      nvsim_count("outstanding_pins"), pins0,
	      nvsim_stat("rm_failed_puts"), rm0);
	CHECK(st_cmd("unpin", 0, 0) == 0 && st_read().put_rc == 0 &&
	      nvsim_count("outstanding_pins") == pins0,
	      "the second put of a non-persistent pin");

	/* A persistent pin's GPU reference blocks a reset. */
	CHECK(st_cmd("ppin %llx %llx", d, 2 * SIM_PAGE) == 0, "ppin");
	CU_OK(cuMemFree(d));
	CHECK(nvsim_reset(0) == -EBUSY, "reset with a persistent pin: %d",
	      nvsim_reset(0));
	CHECK(st_cmd("unpin", 0, 0) == 0 && st_read().put_rc == 0, "unpin");
	CHECK(nvsim_count("gpu_refs") == 0, "GPU references %ld after the put",
	      nvsim_count("gpu_refs"));
	CHECK(nvsim_reset(0) == 0, "reset of an idle GPU: %d", nvsim_reset(0));

	/* Inside RM, persistent: the pin stays, its reference is gone. */
	CU_OK(cuMemAlloc(&d, 2 * SIM_PAGE));
	CHECK(st_cmd("ppin %llx %llx", d, 2 * SIM_PAGE) == 0, "ppin");
	REQUIRE(sim_set_param("fail_puts_rm", 1) == 0, "setting fail_puts_rm");
	CHECK(st_cmd("unpin", 0, 0) == 0, "unpin");
	s = st_read();
	CHECK(s.put_rc == -EIO && s.pinned == 1,
	      "persistent put failing in RM: %d, pinned %d", s.put_rc,
	      s.pinned);
	CHECK(nvsim_count("gpu_refs") == 0 &&
	      nvsim_count("abandoned_pins") == 1 &&
	      nvsim_count("outstanding_pins") == pins0 + 1,
	      "persistent put failing in RM: GPU references %ld, abandoned %ld, pins %ld",
	      nvsim_count("gpu_refs"), nvsim_count("abandoned_pins"),
	      nvsim_count("outstanding_pins"));
	CHECK(st_cmd("forget", 0, 0) == 0, "forget");
	CU_OK(cuMemFree(d));
	CHECK(nvsim_reset(0) == 0, "reset with an abandoned pin: %d",
	      nvsim_reset(0));
	CHECK(nvsim_count("outstanding_pins") == pins0 &&
	      nvsim_count("abandoned_pins") == 0 &&
	      nvsim_count("used_pages") == used0,
	      "after the reset: pins %ld (were %ld), abandoned %ld, used pages %ld (were %ld)",
	      nvsim_count("outstanding_pins"), pins0,
	      nvsim_count("abandoned_pins"), nvsim_count("used_pages"), used0);

	/* A get failing late leaves nothing, GPU reference included. */
	CU_OK(cuMemAlloc(&d, 2 * SIM_PAGE));
	REQUIRE(sim_set_param("fail_gets_late", 1) == 0,
		"setting fail_gets_late");
	CHECK(st_cmd("pin %llx %llx", d, 2 * SIM_PAGE) == EIO,
	      "a late-failing pin did not fail with EIO");
	REQUIRE(sim_set_param("fail_gets_late", 1) == 0,
		"setting fail_gets_late");
	CHECK(st_cmd("ppin %llx %llx", d, 2 * SIM_PAGE) == EIO,
	      "a late-failing persistent pin did not fail with EIO");
	CHECK(nvsim_count("outstanding_pins") == pins0 &&
	      nvsim_count("gpu_refs") == 0 &&
	      nvsim_stat("late_failed_gets") == late0 + 2,
	      "late failures: pins %ld (were %ld), GPU references %ld, late_failed_gets %ld (was %ld)",
	      nvsim_count("outstanding_pins"), pins0,
	      nvsim_count("gpu_refs"), nvsim_stat("late_failed_gets"), late0);
	CU_OK(cuMemFree(d));
	CHECK(nvsim_stat("gpu_ref_underflows") == 0,
	      "GPU references dropped below zero %ld times",
	      nvsim_stat("gpu_ref_underflows"));
}

/* The descriptor of /dev/nvsim that the shim opened, or -1. */
static int shim_fd(void)
{
	char path[300], target[64];
	struct dirent *e;
	DIR *dir = opendir("/proc/self/fd");
	ssize_t n;
	int fd = -1;

	while (dir && (e = readdir(dir)) && fd < 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			if (!strcmp(target, NVSIM_DEVICE_PATH))
				fd = atoi(e->d_name);
		}
	}
	if (dir)
		closedir(dir);
	return fd;
}

/* The client of the registration case: see pid_registration. */
static int registered_client(int ready, int go, unsigned long long va)
{
	int fd = open(NVSIM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	char c;

	if (fd < 0 || write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 2;
	if (st_cmd("pin %llx %llx", va, 2 * SIM_PAGE) ||
	    st_read().peek != 0x5555555555555555ULL)
		return 3;
	if (st_cmd("unpin", 0, 0) || st_read().put_rc || st_read().pinned)
		return 4;
	if (st_cmd("pin %llx %llx", va, 2 * SIM_PAGE))
		return 5;
	close(fd);	/* its "RM client": the registration ends */
	if (st_cmd("unpin", 0, 0) || st_read().put_rc)
		return 6;
	return st_cmd("pin %llx %llx", va, 2 * SIM_PAGE) == EINVAL ? 0 : 7;
}

/*
 * NVSIM_IOC_REGISTER_PID: a registered process pins and puts this one's
 * memory with token 0; once its own /dev/nvsim is released, its put finds
 * nothing (0, a foreign put), and the pin waits for the memory's free.
 */
static void pid_registration(void)
{
	long pins0 = nvsim_count("outstanding_pins");
	long foreign = nvsim_stat("foreign_puts");
	long cb0 = nvsim_count("callbacks_fired");
	struct nvsim_register_pid reg = { .pid = 0 };
	int ready[2], go[2], status, fd = shim_fd();
	CUdeviceptr d;
	pid_t pid;
	char c;

	REQUIRE(fd >= 0, "the shim's /dev/nvsim descriptor was not found");
	CU_OK(cuMemAlloc(&d, 2 * SIM_PAGE));
	CU_OK(cuMemsetD8(d, 0x55, 2 * SIM_PAGE));
	REQUIRE(pipe(ready) == 0 && pipe(go) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(registered_client(ready[1], go[0], d));
	REQUIRE(pid > 0 && read(ready[0], &c, 1) == 1, "the client did not start");
	reg.pid = 999999;
	CHECK(ioctl(fd, NVSIM_IOC_REGISTER_PID, &reg) && errno == ESRCH,
	      "registering a pid with no /dev/nvsim: %s", strerror(errno));
	reg.pid = pid;
	CHECK(ioctl(fd, NVSIM_IOC_REGISTER_PID, &reg) == 0,
	      "REGISTER_PID: %s", strerror(errno));
	CHECK(write(go[1], "g", 1) == 1, "telling the client");
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the registered client: status %#x", status);
	CHECK(nvsim_count("outstanding_pins") == pins0 + 1 &&
	      nvsim_stat("foreign_puts") == foreign + 1,
	      "after the client's RM client went: pins %ld (were %ld), foreign puts %ld (were %ld)",
	      nvsim_count("outstanding_pins"), pins0,
	      nvsim_stat("foreign_puts"), foreign);
	CU_OK(cuMemFree(d));
	CHECK(nvsim_count("outstanding_pins") == pins0 &&
	      nvsim_count("callbacks_fired") == cb0 + 1,
	      "the pin after its memory was freed");
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(go[i]);
	}
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
	failure_model();
	pid_registration();

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
