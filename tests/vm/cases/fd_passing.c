/* SPDX-License-Identifier: MIT */
/*
 * A gdrdrv fd passed over a UNIX socket works only in the process that
 * opened it: the receiver gets EACCES.  If the opener exits first, the
 * receiver's copy keeps the pins until it is closed, and closing it then
 * releases them cleanly (the opener's memory is gone by then).
 */
#include <sys/wait.h>

#include "fdpass.h"

/* The opener: pin, pass the fd on, wait for the word, exit. */
static void opener(int sock)
{
	uint64_t h;
	char c;
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	REQUIRE(gdrdrv_pin(fd, vm_alloc(2 * GPU_PAGE), 2 * GPU_PAGE, &h) == 0,
		"pin in the opener failed");
	if (write(sock, &h, sizeof(h)) != sizeof(h))
		_exit(2);
	send_fd(sock, fd);
	/* Wait until the receiver has tried the fd, then leave without
	 * closing anything: exit frees the GPU memory under the pin. */
	if (read(sock, &c, 1) != 1)
		_exit(3);
	_exit(test_done());
}

int main(void)
{
	struct gdrdrv_get_version_params v;
	struct gdrdrv_get_info_v2_params info;
	long pins0 = nvsim_count("outstanding_pins");
	int sv[2], fd, status;
	uint64_t h;
	void *m;
	pid_t pid;

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		close(sv[0]);
		opener(sv[1]);
	}
	close(sv[1]);
	REQUIRE(read(sv[0], &h, sizeof(h)) == sizeof(h), "no handle came");
	fd = recv_fd(sv[0]);

	CHECK_RET(gioctl(fd, GDRDRV_IOC_GET_VERSION, &v), -EACCES);
	CHECK_RET(gdrdrv_info(fd, h, &info), -EACCES);
	CHECK_RET(gdrdrv_unpin(fd, h), -EACCES);
	m = gdrdrv_mmap(fd, h, 2 * GPU_PAGE);
	CHECK(m == MAP_FAILED && errno == EACCES, "mmap of a passed fd: %s",
	      m == MAP_FAILED ? strerror(errno) : "succeeded");
	if (m != MAP_FAILED)
		munmap(m, 2 * GPU_PAGE);

	CHECK(write(sv[0], "x", 1) == 1, "write to the opener");
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "opener status %#x", status);

	/* Persistent pins outlive the opener's memory until this close;
	 * non-persistent ones were invalidated when it exited. */
	CHECK(close(fd) == 0, "close of the passed fd: %s", strerror(errno));
	CHECK(nvsim_count("outstanding_pins") == pins0,
	      "nvsim outstanding_pins %ld after the last close, was %ld",
	      nvsim_count("outstanding_pins"), pins0);
	CHECK(nvsim_count("used_pages") == 0, "nvsim used_pages %ld",
	      nvsim_count("used_pages"));
	close(sv[0]);
	return test_done();
}
