// SPDX-License-Identifier: MIT
/*
 * crash_report.h, which the GPU tests install: a child that faults on
 * another thread must print the signal, the faulting address, a
 * backtrace and the maps line of its instruction pointer, and still die
 * of the signal, so that the runner sees the crash.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "crash_report.h"

static void *fault(void *addr)
{
	*(volatile int *)addr = 1;
	return NULL;
}

static void child(int fd)
{
	pthread_t t;

	dup2(fd, 2);
	crash_report_install();
	pthread_create(&t, NULL, fault, (void *)(uintptr_t)0x40);
	pthread_join(t, NULL);
	_exit(0);
}

int main(void)
{
	static char out[1 << 16];
	size_t len = 0;
	ssize_t r;
	int p[2], status = 0;
	pid_t pid;

	if (pipe(p))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(p[1]);
	}
	close(p[1]);
	while (len < sizeof(out) - 1 &&
	       (r = read(p[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	      "the child still dies of SIGSEGV (status 0x%x)", status);
	CHECK(strstr(out, "CRASH: signal 11, code 1, address "
			  "0x0000000000000040"),
	      "the report names the signal and the address:\n%s", out);
	CHECK(strstr(out, "backtrace") && strstr(out, "test_crash_report("),
	      "the backtrace names the test's own frames:\n%s", out);
	CHECK(strstr(out, "  maps: ") && strstr(out, "test_crash_report\n"),
	      "the maps line of the instruction pointer is printed:\n%s", out);
	return test_done();
}
