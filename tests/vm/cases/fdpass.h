/* SPDX-License-Identifier: MIT */
/*
 * Passing a file descriptor to another process over a UNIX socket
 * (SCM_RIGHTS), for the VM cases about a gdrdrv fd used or closed outside
 * the process that opened it.
 */
#ifndef GDRMAP_FDPASS_H
#define GDRMAP_FDPASS_H

#include <sys/socket.h>

#include "vmtest.h"

static inline void send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	REQUIRE(sendmsg(sock, &msg, 0) == 1, "sendmsg: %s", strerror(errno));
}

/* The descriptor sent, or -1 (the peer closed, or sent none). */
static inline int recv_fd_or_fail(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static inline int recv_fd(int sock)
{
	int fd = recv_fd_or_fail(sock);

	REQUIRE(fd >= 0, "no fd received: %s", strerror(errno));
	return fd;
}

#endif /* GDRMAP_FDPASS_H */
