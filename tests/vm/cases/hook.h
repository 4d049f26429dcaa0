/* SPDX-License-Identifier: MIT */
/*
 * nvsim's test hook (/proc/driver/nvsim/hook, sim/README.md) for the VM
 * cases that force an order of gdrdrv's calls against the free callback
 * instead of hoping for it from timing.
 */
#ifndef GDRMAP_HOOK_H
#define GDRMAP_HOOK_H

#include "vmtest.h"

#define HOOK	"/proc/driver/nvsim/hook"

/* Whether this nvsim has the hook (root only). */
static inline int hook_present(void)
{
	return access(HOOK, W_OK) == 0;
}

/* Stops the next task that reaches point for va until events, or ms. */
static inline void hook_arm(const char *point, uint64_t va,
			    const char *events, int ms)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s %llx %s %d", point,
		 (unsigned long long)va, events, ms);
	REQUIRE(write_text(HOOK, cmd) == 0, "arming the hook: %s",
		strerror(errno));
}

/* Clears an armed hook that nothing reached. */
static inline void hook_disarm(void)
{
	REQUIRE(write_text(HOOK, "disarm") == 0, "disarming the hook: %s",
		strerror(errno));
}

/* The hook's state line: "STATE EVENTS-SEEN". */
static inline void hook_read(char *buf, size_t len)
{
	FILE *f = fopen(HOOK, "r");

	REQUIRE(f, "%s: %s", HOOK, strerror(errno));
	REQUIRE(fgets(buf, (int)len, f), "reading %s", HOOK);
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Whether a task is stopped at the hook now. */
static inline int hook_waiting(void)
{
	char st[64];

	hook_read(st, sizeof(st));
	return !strncmp(st, "waiting", 7);
}

/* Waits until a task stopped at the hook. */
static inline void hook_wait_stopped(void)
{
	char st[64];

	for (int i = 0; i < 2000; i++) {
		hook_read(st, sizeof(st));
		if (!strncmp(st, "waiting", 7))
			return;
		usleep(10000);
	}
	REQUIRE(0, "nothing stopped at the hook (it is \"%s\")", st);
}

/* The hook ended in state, having seen event (NULL: none at all). */
static inline void hook_expect(const char *state, const char *event)
{
	char st[64], *seen;

	hook_read(st, sizeof(st));
	seen = strchr(st, ' ');
	CHECK(seen && !strncmp(st, state, (size_t)(seen - st)) &&
	      (event ? strstr(seen, event) != NULL : !strcmp(seen, " -")),
	      "hook ended \"%s\", want %s having seen %s", st, state,
	      event ? event : "nothing");
}

#endif /* GDRMAP_HOOK_H */
