/* SPDX-License-Identifier: MIT */
/*
 * /proc/driver/gdrdrv/pinned ("pid bytes pins left", one line per process
 * with the device open) shows whoever opened it the processes of its own
 * user, and root every user's; each by the pid it has in the pid namespace
 * of the procfs the file is in, and none that namespace cannot see:
 *  - this process (root) pins; a process of user nobody pins: root sees
 *    both lines, nobody only its own;
 *  - a process in a new pid namespace (pid 1 there) pins and reads the file
 *    through a procfs it mounted there, as a container does: it sees its
 *    own line, as pid 1, and no other; root outside sees it by its pid
 *    here.
 * The proprietary flavour cannot translate pids between namespaces (the
 * kernel keeps that from modules that are not GPL): a procfs of another
 * pid namespace than the first shows no line.
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "vmtest.h"

#define PINNED_IN	"/driver/gdrdrv/pinned"
#define PINNED		"/proc" PINNED_IN
/* Where the pinner in a new pid namespace mounts a procfs of its own. */
#define NSPROC		"/tmp/proc_pinned.ns"
#define MAXL	64

struct view {
	int self;		/* the reader's pid, as it sees it */
	int n;
	int pid[MAXL];
	unsigned long long bytes[MAXL];
	int pins[MAXL];
};

static void read_view(struct view *v, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[128];

	v->n = 0;
	REQUIRE(f, "%s: %s", path, strerror(errno));
	/* "pid bytes pins left": the last is pins/close left to NVIDIA. */
	while (v->n < MAXL && fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %llu %d", &v->pid[v->n], &v->bytes[v->n],
			   &v->pins[v->n]) == 3)
			v->n++;
	fclose(f);
}

static int listed(const struct view *v, int pid)
{
	for (int i = 0; i < v->n; i++)
		if (v->pid[i] == pid)
			return i;
	return -1;
}

/*
 * The child's side (a fresh process, exec'ed): become uid (-1: stay),
 * pin a GPU page, print what the file at path shows it, wait for a byte on
 * stdin.
 */
static int pinner(int uid, const char *path)
{
	struct view v;
	uint64_t h;
	char c;
	int fd;

	if (uid >= 0 && (setgid((gid_t)uid) || setuid((uid_t)uid)))
		return 100;
	vm_cuda_init();
	fd = gdrdrv_open();
	if (gdrdrv_pin(fd, vm_alloc(GPU_PAGE), GPU_PAGE, &h))
		return 101;
	read_view(&v, path);
	printf("self %d\n", getpid());
	for (int i = 0; i < v.n; i++)
		printf("line %d %llu %d\n", v.pid[i], v.bytes[i], v.pins[i]);
	printf("end\n");
	fflush(stdout);
	if (read(0, &c, 1) < 0)
		return 102;
	close(fd);
	return 0;
}

struct child {
	pid_t pid;		/* as this process sees it */
	pid_t waitee;		/* whom to wait for */
	FILE *out;
	int in;
	struct view v;
};

/* Reads the child's view (its pid as it sees it, and its lines). */
static void child_view(struct child *c)
{
	char word[16];
	int a, p;
	unsigned long long b;

	c->v.n = 0;
	c->v.self = -1;
	while (fscanf(c->out, "%15s", word) == 1 && strcmp(word, "end")) {
		if (!strcmp(word, "self") && fscanf(c->out, "%d", &c->v.self) == 1)
			continue;
		if (!strcmp(word, "line") &&
		    fscanf(c->out, "%d %llu %d", &a, &b, &p) == 3 &&
		    c->v.n < MAXL) {
			c->v.pid[c->v.n] = a;
			c->v.bytes[c->v.n] = b;
			c->v.pins[c->v.n++] = p;
		}
	}
	REQUIRE(c->v.self > 0, "the child did not say who it is");
}

/*
 * Starts pinner(uid) with pipes; in a new pid namespace if newns (through
 * a middle process, which reports the pinner's pid in this namespace).
 */
static void spawn(struct child *c, int uid, int newns)
{
	int out[2], in[2], pidp[2];
	char arg[16];
	pid_t pid, inner;

	REQUIRE(pipe(out) == 0 && pipe(in) == 0 && pipe(pidp) == 0, "pipe");
	snprintf(arg, sizeof(arg), "%d", uid);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(in[0], 0);
		close(out[0]);
		close(in[1]);
		if (newns) {
			int st;

			if (unshare(CLONE_NEWPID | CLONE_NEWNS) ||
			    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
				_exit(110);
			inner = fork();
			if (inner < 0)
				_exit(111);
			if (inner == 0) {
				/* pid 1 there: a procfs of its namespace. */
				mkdir(NSPROC, 0700);
				if (mount("proc", NSPROC, "proc", 0, NULL))
					_exit(115);
				execl("/proc/self/exe", "proc_pinned",
				      "--pinner", arg, NSPROC PINNED_IN,
				      (char *)NULL);
				_exit(116);
			}
			if (inner > 0) {
				if (write(pidp[1], &inner, sizeof(inner)) !=
				    sizeof(inner))
					_exit(112);
				waitpid(inner, &st, 0);
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 113);
			}
		}
		execl("/proc/self/exe", "proc_pinned", "--pinner", arg,
		      PINNED, (char *)NULL);
		_exit(114);
	}
	close(out[1]);
	close(in[0]);
	close(pidp[1]);
	c->waitee = pid;
	c->pid = pid;
	if (newns)
		REQUIRE(read(pidp[0], &c->pid, sizeof(c->pid)) ==
			sizeof(c->pid), "no pid from the middle process");
	close(pidp[0]);
	c->out = fdopen(out[0], "r");
	c->in = in[1];
	REQUIRE(c->out, "fdopen");
	child_view(c);
}

static void finish(struct child *c, const char *who)
{
	int st;

	CHECK(write(c->in, "x", 1) == 1, "%s: write", who);
	close(c->in);
	fclose(c->out);
	REQUIRE(waitpid(c->waitee, &st, 0) == c->waitee, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %#x", who,
	      st);
}

int main(int argc, char **argv)
{
	const char *flavor = getenv("GDRMAP_VM_FLAVOR");
	int proprietary = flavor && !strcmp(flavor, "proprietary");
	struct child nobody, inns;
	struct view mine;
	int fd, i, me = getpid();
	uint64_t h;

	if (argc == 4 && !strcmp(argv[1], "--pinner"))
		return pinner(atoi(argv[2]), argv[3]);

	vm_cuda_init();
	fd = gdrdrv_open();
	REQUIRE(gdrdrv_pin(fd, vm_alloc(2 * GPU_PAGE), 2 * GPU_PAGE, &h) == 0,
		"pin failed");

	/* Another user's process. */
	spawn(&nobody, 65534, 0);
	i = listed(&nobody.v, nobody.v.self);
	CHECK(i >= 0 && nobody.v.bytes[i] == GPU_PAGE && nobody.v.pins[i] == 1,
	      "user nobody does not see its own pin");
	CHECK(listed(&nobody.v, me) < 0,
	      "user nobody sees root's process %d in %s", me, PINNED);
	CHECK(nobody.v.n == 1, "user nobody sees %d lines, want its own only",
	      nobody.v.n);
	read_view(&mine, PINNED);
	i = listed(&mine, me);
	CHECK(i >= 0 && mine.bytes[i] == 2 * GPU_PAGE && mine.pins[i] == 1,
	      "root does not see its own pin");
	CHECK(listed(&mine, nobody.pid) >= 0,
	      "root does not see user nobody's process %d", nobody.pid);
	finish(&nobody, "user nobody");

	/* A process in a new pid namespace. */
	spawn(&inns, -1, 1);
	CHECK(inns.v.self == 1, "the pinner is pid %d in its namespace",
	      inns.v.self);
	if (proprietary) {
		CHECK(inns.v.n == 0,
		      "the proprietary flavour shows %d lines in another pid namespace, want none",
		      inns.v.n);
	} else {
		CHECK(inns.v.n == 1 && inns.v.pid[0] == 1,
		      "in a new pid namespace: %d lines (first pid %d), want its own, pid 1",
		      inns.v.n, inns.v.n ? inns.v.pid[0] : -1);
	}
	read_view(&mine, PINNED);
	CHECK(listed(&mine, inns.pid) >= 0,
	      "root does not see the process %d of the new namespace",
	      inns.pid);
	finish(&inns, "new pid namespace");

	close(fd);
	read_view(&mine, PINNED);
	CHECK(listed(&mine, me) < 0, "a closed process is still listed");
	return test_done();
}
