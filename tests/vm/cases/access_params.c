/* SPDX-License-Identifier: MIT */
/*
 * The module's access parameters (gdrdrv(4)):
 *  - /dev/gdrdrv is created with mode dev_mode (default 0666, as GDRCopy)
 *    and group dev_gid (default 0); a mode or group that is none is
 *    refused at load;
 *  - allow_p2p_tokens (default 0) refuses PIN_BUFFER's p2p_token/va_space
 *    in callback mode (EPERM); with allow_p2p_tokens=1, a process of
 *    another user that learned this one's tokens (or guessed them: NVIDIA
 *    counts them up) pins and maps its memory, GDRCopy's ABI; persistent
 *    mode refuses tokens anyway (EINVAL).
 * The case reloads gdrdrv (the flavour of the pass) to try the node's
 * parameters, and loads it back as the pass had it whatever happens.  The
 * proprietary flavour makes no node (GDRCopy's scripts mknod it): it must
 * refuse to load with dev_mode or dev_gid, which it cannot honour, rather
 * than ignore them.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "vmtest.h"

#define TOKENS	"/sys/module/gdrdrv/parameters/allow_p2p_tokens"

static char pass_params[512];
static char ko[256];
static int reloaded;

/* fmt: the command, with %s for the module, its pass's parameters, extra. */
static int sh(const char *fmt, const char *extra)
{
	char cmd[1024];
	int st;

	reloaded = 1;
	snprintf(cmd, sizeof(cmd), fmt, ko, pass_params, extra);
	st = system(cmd);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void reload_as_pass(void)
{
	if (reloaded)
		sh("rmmod gdrdrv 2>/dev/null; insmod %s %s%s", "");
}

static void node_params(void)
{
	struct stat st;

	REQUIRE(stat(GDRDRV_DEVICE_PATH, &st) == 0, "stat: %s",
		strerror(errno));
	CHECK((st.st_mode & 0777) == 0666 && st.st_gid == 0,
	      "default node: mode %03o gid %u, want 0666 gid 0",
	      st.st_mode & 0777, st.st_gid);

	REQUIRE(sh("rmmod gdrdrv && insmod %s %s%s", " dev_mode=0660 dev_gid=44") == 0,
		"reloading with dev_mode=0660 dev_gid=44 failed");
	REQUIRE(stat(GDRDRV_DEVICE_PATH, &st) == 0, "stat: %s",
		strerror(errno));
	CHECK((st.st_mode & 0777) == 0660 && st.st_gid == 44,
	      "node: mode %03o gid %u, want 0660 gid 44", st.st_mode & 0777,
	      st.st_gid);

	CHECK(sh("rmmod gdrdrv && insmod %s %s%s 2>/dev/null", " dev_mode=01777") != 0,
	      "dev_mode=01777 was taken");
	CHECK(sh("insmod %s %s%s 2>/dev/null", " dev_gid=4294967295") != 0,
	      "dev_gid=4294967295 was taken");
	REQUIRE(sh("insmod %s %s%s", "") == 0, "loading gdrdrv back failed");
}

/* The proprietary flavour refuses what it cannot do, and says why. */
static void node_params_refused(void)
{
	CHECK(sh("rmmod gdrdrv && insmod %s %s%s 2>/dev/null", " dev_mode=0660") != 0,
	      "the proprietary flavour loaded with dev_mode=0660, which it cannot honour");
	CHECK(system("dmesg | grep -q 'dev_mode.*proprietary'") == 0,
	      "no kernel message says why dev_mode was refused");
	CHECK(sh("insmod %s %s%s 2>/dev/null", " dev_gid=44") != 0,
	      "the proprietary flavour loaded with dev_gid=44, which it cannot honour");
	REQUIRE(sh("lsmod | grep -q '^gdrdrv ' || insmod %s %s%s", "") == 0,
		"loading gdrdrv back failed");
}

static void set_tokens(int allow)
{
	REQUIRE(write_text(TOKENS, allow ? "1" : "0") == 0, "writing %s: %s",
		TOKENS, strerror(errno));
}

static int pin_tokens(int fd, CUdeviceptr d, size_t len,
		      const CUDA_POINTER_ATTRIBUTE_P2P_TOKENS *t)
{
	struct gdrdrv_pin_buffer_params p = {
		.addr = d, .size = len, .p2p_token = t->p2pToken,
		.va_space = t->vaSpaceToken,
	};
	int rc = gioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p);

	if (!rc)
		CHECK_RET(gdrdrv_unpin(fd, p.handle), 0);
	return rc;
}

/* Another user, with this process's tokens: what it gets. */
static int stranger_pins(CUdeviceptr d, size_t len,
			 const CUDA_POINTER_ATTRIBUTE_P2P_TOKENS *t)
{
	int st, fd, rc;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		fd = open(GDRDRV_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(101);
		rc = pin_tokens(fd, d, len, t);
		_exit(rc == 0 ? 0 : rc == -EPERM ? 1 : 102);
	}
	REQUIRE(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st),
		"the other user's process failed");
	return WEXITSTATUS(st);
}

static void token_param(void)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t = { 0 };
	const size_t len = 2 * GPU_PAGE;
	CUdeviceptr d = vm_alloc(len);
	int fd = gdrdrv_open(), rc;

	CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d));
	REQUIRE(t.p2pToken, "no P2P token");

	if (gdrdrv_persistent(fd)) {
		CHECK_RET(pin_tokens(fd, d, len, &t), -EINVAL);
	} else {
		/* The default. */
		rc = pin_tokens(fd, d, len, &t);
		CHECK(rc == -EPERM, "allow_p2p_tokens=0: pin with tokens: %s",
		      rc ? strerror(-rc) : "pinned");
		CHECK(stranger_pins(d, len, &t) == 1,
		      "allow_p2p_tokens=0: another user pinned with the tokens");
		set_tokens(1);
		CHECK_RET(pin_tokens(fd, d, len, &t), 0);
		CHECK(stranger_pins(d, len, &t) == 0,
		      "allow_p2p_tokens=1: another user could not pin with the tokens");
		set_tokens(0);
	}
	/* Without tokens: this process's own memory, always. */
	t.p2pToken = 0;
	t.vaSpaceToken = 0;
	CHECK_RET(pin_tokens(fd, d, len, &t), 0);
	close(fd);
	CU_OK(cuMemFree(d));
}

int main(void)
{
	const char *params = getenv("GDRMAP_VM_GDRDRV_PARAMS");
	const char *kodir = getenv("GDRMAP_VM_KODIR");
	const char *flavor = getenv("GDRMAP_VM_FLAVOR");

	snprintf(pass_params, sizeof(pass_params), "use_persistent_mapping=%s %s",
		 getenv("GDRMAP_VM_PERSISTENT") ? getenv("GDRMAP_VM_PERSISTENT") : "1",
		 params ? params : "");
	snprintf(ko, sizeof(ko), "%s/gdrdrv.ko", kodir ? kodir : "/lib/gdrmap");
	atexit(reload_as_pass);
	vm_cuda_init();
	if (flavor && !strcmp(flavor, "proprietary"))
		node_params_refused();
	else
		node_params();
	token_param();
	return test_done();
}
