// SPDX-License-Identifier: MIT
/*
 * What a fork child inherits: nothing it can use.
 *
 * gdrdrv's mappings are not copied to a child (VM_DONTCOPY) and its file
 * descriptor answers only the process that opened it; CUDA contexts do
 * not survive fork either.  So in a child, every gdr_t and handle of the
 * parent is refused with EINVAL and an explanation, where it would
 * otherwise dereference a mapping the child does not have.  gdr_open in
 * the child gives it its own.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "base/internal.h"
#include "base/log.h"
#include "paths/threads.h"

_Atomic unsigned int gdr_fork_gen;

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_child(void)
{
	gdr_handles_fork_child();
	gdr_threads_fork_child();
	atomic_fetch_add_explicit(&gdr_fork_gen, 1, memory_order_relaxed);
}

static void fork_register(void)
{
	pthread_atfork(gdr_handles_fork_prepare, gdr_handles_fork_parent,
		       fork_child);
}

/* Once a process opens a gdr_t, its forks disown what it had. */
void gdr_fork_init(void)
{
	pthread_once(&fork_once, fork_register);
}

int gdr_opened_before_fork(const struct gdr *g, const char *caller)
{
	if (g->fork_gen == atomic_load_explicit(&gdr_fork_gen,
						memory_order_relaxed))
		return 0;
	gdr_err("%s: this gdr_t was opened by the parent process: " GDR_FORK_HINT,
		caller);
	return 1;
}
