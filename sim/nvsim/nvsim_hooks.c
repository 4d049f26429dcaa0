// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: a test hook that forces one interleaving of a client's get_pages
 * or put_pages with the free callback of the same pin (not real hardware;
 * used by tests/vm/cases/race_hooks.c and others).
 *
 * /proc/driver/nvsim/hook (root only).  Writing
 *	POINT VA EVENTS TIMEOUT_MS
 * arms the hook: the next time nvsim reaches POINT for the pin at device
 * address VA (hex), that task stops there until every one of EVENTS has
 * happened since, or TIMEOUT_MS passed, then goes on.  "disarm" clears it.
 *
 * POINT           where
 * put_enter       put_pages[_persistent](VA), before nvsim's lock
 * put_exit        the same, after the pin is released and the lock dropped
 * callback        before the free callback of the pin (nvsim's lock held)
 * callback_done   after the callback returned, before the table is freed
 * get_return      get_pages[_persistent](VA), the pin made (its callback
 *                 registered) and nvsim's lock dropped, before it returns
 *
 * EVENTS, comma separated: "callback" (the pin at VA was freed by its
 * callback), "pin" (any new pin), "put_enter" (put_pages for VA entered),
 * "free" (the memory at VA was freed).
 *
 * Reading gives "STATE EVENTS-SEEN": STATE is idle, armed, waiting, done
 * or timeout; a test polls for "waiting" before it makes the events happen.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "nvsim.h"

enum nvsim_hook_state {
	NVSIM_HOOK_IDLE,
	NVSIM_HOOK_ARMED,
	NVSIM_HOOK_WAITING,
	NVSIM_HOOK_DONE,
	NVSIM_HOOK_TIMEOUT,
};

static const char * const nvsim_hook_states[] = {
	"idle", "armed", "waiting", "done", "timeout",
};

static const char * const nvsim_hook_points[] = {
	[NVSIM_AT_PUT_ENTER] = "put_enter",
	[NVSIM_AT_PUT_EXIT] = "put_exit",
	[NVSIM_AT_CALLBACK] = "callback",
	[NVSIM_AT_CALLBACK_DONE] = "callback_done",
	[NVSIM_AT_GET_RETURN] = "get_return",
};

static const char * const nvsim_hook_events[] = {
	[NVSIM_EV_CALLBACK] = "callback",
	[NVSIM_EV_PIN] = "pin",
	[NVSIM_EV_PUT_ENTER] = "put_enter",
	[NVSIM_EV_FREE] = "free",
};

static struct {
	spinlock_t lock;	/* all fields */
	enum nvsim_hook_state state;
	enum nvsim_hook_point point;
	u64 va;
	unsigned int want;	/* events awaited, one bit each */
	unsigned int seen;	/* events seen while waiting */
	unsigned long timeout;	/* jiffies */
} nvsim_hook = {
	.lock = __SPIN_LOCK_UNLOCKED(nvsim_hook.lock),
};

static DECLARE_WAIT_QUEUE_HEAD(nvsim_hook_wq);

static bool nvsim_hook_satisfied(void)
{
	bool all;

	spin_lock(&nvsim_hook.lock);
	all = (nvsim_hook.seen & nvsim_hook.want) == nvsim_hook.want;
	spin_unlock(&nvsim_hook.lock);
	return all;
}

void nvsim_hook_at(enum nvsim_hook_point point, u64 va)
{
	unsigned long timeout;
	bool stop;

	if (READ_ONCE(nvsim_hook.state) != NVSIM_HOOK_ARMED)
		return;
	spin_lock(&nvsim_hook.lock);
	stop = nvsim_hook.state == NVSIM_HOOK_ARMED &&
	       nvsim_hook.point == point && nvsim_hook.va == va;
	if (stop) {
		nvsim_hook.state = NVSIM_HOOK_WAITING;
		nvsim_hook.seen = 0;
	}
	timeout = nvsim_hook.timeout;
	spin_unlock(&nvsim_hook.lock);
	if (!stop)
		return;

	pr_info("hook: stopped at %s for %#llx\n", nvsim_hook_points[point],
		va);
	stop = wait_event_timeout(nvsim_hook_wq, nvsim_hook_satisfied(),
				  timeout) != 0;
	spin_lock(&nvsim_hook.lock);
	nvsim_hook.state = stop ? NVSIM_HOOK_DONE : NVSIM_HOOK_TIMEOUT;
	spin_unlock(&nvsim_hook.lock);
	pr_info("hook: going on from %s (%s)\n", nvsim_hook_points[point],
		stop ? "events seen" : "timed out");
}

/* Event ev about [va, va + len); "pin" events ignore the range. */
void nvsim_hook_event(enum nvsim_hook_event ev, u64 va, u64 len)
{
	bool hit;

	if (READ_ONCE(nvsim_hook.state) != NVSIM_HOOK_WAITING)
		return;
	spin_lock(&nvsim_hook.lock);
	hit = nvsim_hook.state == NVSIM_HOOK_WAITING &&
	      (ev == NVSIM_EV_PIN ||
	       (nvsim_hook.va >= va && nvsim_hook.va - va < len));
	if (hit)
		nvsim_hook.seen |= BIT(ev);
	spin_unlock(&nvsim_hook.lock);
	if (hit)
		wake_up(&nvsim_hook_wq);
}

static int nvsim_hook_name(const char * const *names, int n,
			   const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return i;
	return -EINVAL;
}

static int nvsim_hook_arm(char *cmd)
{
	char point[16], events[64], *ev, *rest;
	unsigned int want = 0;
	unsigned long ms;
	int p, e;
	u64 va;

	if (sscanf(cmd, "%15s %llx %63s %lu", point, &va, events, &ms) != 4)
		return -EINVAL;
	p = nvsim_hook_name(nvsim_hook_points, ARRAY_SIZE(nvsim_hook_points),
			    point);
	if (p < 0 || !ms || ms > 60000)
		return -EINVAL;
	rest = events;
	while ((ev = strsep(&rest, ","))) {
		e = nvsim_hook_name(nvsim_hook_events,
				    ARRAY_SIZE(nvsim_hook_events), ev);
		if (e < 0)
			return -EINVAL;
		want |= BIT(e);
	}

	spin_lock(&nvsim_hook.lock);
	if (nvsim_hook.state == NVSIM_HOOK_WAITING) {
		spin_unlock(&nvsim_hook.lock);
		return -EBUSY;
	}
	nvsim_hook.point = p;
	nvsim_hook.va = va;
	nvsim_hook.want = want;
	nvsim_hook.seen = 0;
	nvsim_hook.timeout = msecs_to_jiffies(ms);
	nvsim_hook.state = NVSIM_HOOK_ARMED;
	spin_unlock(&nvsim_hook.lock);
	return 0;
}

static ssize_t nvsim_hook_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *pos)
{
	char buf[128];
	int ret = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);

	if (!strcmp(buf, "disarm")) {
		spin_lock(&nvsim_hook.lock);
		if (nvsim_hook.state == NVSIM_HOOK_WAITING)
			ret = -EBUSY;
		else
			nvsim_hook.state = NVSIM_HOOK_IDLE;
		spin_unlock(&nvsim_hook.lock);
	} else {
		ret = nvsim_hook_arm(buf);
	}
	return ret ? ret : len;
}

static int nvsim_hook_show(struct seq_file *m, void *v)
{
	enum nvsim_hook_state state;
	unsigned int seen;
	int e, n = 0;

	spin_lock(&nvsim_hook.lock);
	state = nvsim_hook.state;
	seen = nvsim_hook.seen;
	spin_unlock(&nvsim_hook.lock);

	seq_printf(m, "%s ", nvsim_hook_states[state]);
	for (e = 0; e < NVSIM_EV_COUNT; e++)
		if (seen & BIT(e))
			seq_printf(m, "%s%s", n++ ? "," : "",
				   nvsim_hook_events[e]);
	seq_puts(m, n ? "\n" : "-\n");
	return 0;
}

static int nvsim_hook_open(struct inode *inode, struct file *file)
{
	return single_open(file, nvsim_hook_show, NULL);
}

static const struct proc_ops nvsim_hook_ops = {
	.proc_open = nvsim_hook_open,
	.proc_read = seq_read,
	.proc_write = nvsim_hook_write,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

void nvsim_hooks_proc_init(struct proc_dir_entry *dir)
{
	if (!proc_create("hook", 0600, dir, &nvsim_hook_ops))
		pr_warn("cannot create /proc/driver/nvsim/hook\n");
}
