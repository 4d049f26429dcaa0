/* SPDX-License-Identifier: MIT */
/*
 * Whether a load through p faults, tried in a child so that the test goes
 * on: the child dies of SIGSEGV, or exits 0 if the load worked.
 */
#ifndef GDRMAP_TEST_FAULTS_H
#define GDRMAP_TEST_FAULTS_H

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static inline int load_faults(const volatile char *p)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		(void)*p;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

#endif /* GDRMAP_TEST_FAULTS_H */
