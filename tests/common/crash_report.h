/* SPDX-License-Identifier: MIT */
/*
 * Where a test died, printed by the test itself: the GPU machines have no
 * debugger and keep no core files, so a crash there is otherwise only
 * "Segmentation fault" (how test_gpu_rm_threads died once, 2026-12-02,
 * and passed 20 times after).  On a fatal signal: the signal, the faulting
 * address, the instruction pointer, the thread, a backtrace (object +
 * offset for each frame: resolve with addr2line -e OBJ OFFSET), and the
 * lines of /proc/self/maps that hold the address and the instruction
 * pointer.  Then the signal is raised again with its default action, so
 * the test still dies of it and the runner still sees a crash.
 *
 * crash_report_install() once, early in main().  Only async-signal-safe
 * calls in the handler, but for backtrace(), which is called once at
 * install so that its lazy loading of libgcc_s is done by then.
 */
#ifndef GDRMAP_TEST_CRASH_REPORT_H
#define GDRMAP_TEST_CRASH_REPORT_H

#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static void crash_puts(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

static void crash_put_hex(uintptr_t v)
{
	const int digits = (int)(2 * sizeof(v));
	char b[2 + 2 * sizeof(v) + 1];
	int i;

	b[0] = '0';
	b[1] = 'x';
	for (i = 0; i < digits; i++)
		b[2 + i] = "0123456789abcdef"[(v >> (4 * (digits - 1 - i))) &
					      15];
	b[sizeof(b) - 1] = '\0';
	crash_puts(b);
}

static void crash_put_dec(long v)
{
	char b[24];
	int i = (int)sizeof(b) - 1;

	b[i] = '\0';
	if (v < 0)
		v = -v;
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i > 0);
	crash_puts(b + i);
}

static uintptr_t crash_hex_field(const char **p)
{
	uintptr_t v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* The lines of /proc/self/maps whose range holds a or b. */
static void crash_print_maps(uintptr_t a, uintptr_t b)
{
	static char buf[1 << 16];
	char line[512];
	size_t len = 0, k;
	ssize_t r;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return;
	while ((r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)r;
		buf[len] = '\0';
		for (;;) {
			char *nl = memchr(buf, '\n', len);
			const char *p = buf;
			uintptr_t lo, hi;

			if (!nl)
				break;
			k = (size_t)(nl - buf) + 1;
			lo = crash_hex_field(&p);
			p++;
			hi = crash_hex_field(&p);
			if ((a >= lo && a < hi) || (b >= lo && b < hi)) {
				size_t n = k < sizeof(line) ? k :
					   sizeof(line) - 1;

				memcpy(line, buf, n);
				line[n] = '\0';
				crash_puts("  maps: ");
				crash_puts(line);
			}
			memmove(buf, buf + k, len - k);
			len -= k;
		}
		if (len == sizeof(buf) - 1)
			len = 0;	/* a line longer than the buffer */
	}
	close(fd);
}

static void crash_handler(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	uintptr_t ip = 0;
	void *frames[48];
	int n;

#if defined(__x86_64__)
	ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	ip = (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
#endif
	crash_puts("\nCRASH: signal ");
	crash_put_dec(sig);
	crash_puts(", code ");
	crash_put_dec(si->si_code);
	crash_puts(", address ");
	crash_put_hex((uintptr_t)si->si_addr);
	crash_puts(", ip ");
	crash_put_hex(ip);
	crash_puts(", thread ");
	crash_put_dec((long)syscall(SYS_gettid));
	crash_puts(" of process ");
	crash_put_dec((long)getpid());
	crash_puts("\nbacktrace (object(symbol+offset) [address]):\n");
	n = backtrace(frames, (int)(sizeof(frames) / sizeof(frames[0])));
	backtrace_symbols_fd(frames, n, 2);
	crash_print_maps((uintptr_t)si->si_addr, ip);
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void crash_report_install(void)
{
	static char altstack[1 << 16];
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;
	void *prime[1];
	size_t i;

	backtrace(prime, 1);
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

#endif
