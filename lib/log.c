// SPDX-License-Identifier: MIT
/* Logging, configured by GDRCopy's environment variables. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static int log_threshold;	/* 0: logging off */
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_configure(void)
{
	const char *level;

	if (!getenv("GDRCOPY_ENABLE_LOGGING"))
		return;
	level = getenv("GDRCOPY_LOG_LEVEL");
	log_threshold = level ? atoi(level) : GDR_LOG_ERROR;
	if (log_threshold < GDR_LOG_DEBUG || log_threshold > GDR_LOG_ERROR)
		log_threshold = GDR_LOG_ERROR;
}

int gdr_log_enabled(enum gdr_log_level level)
{
	pthread_once(&log_once, log_configure);
	return log_threshold && (int)level >= log_threshold;
}

void gdr_log(enum gdr_log_level level, const char *func, const char *fmt, ...)
{
	static const char *const names[] = {
		[GDR_LOG_DEBUG] = "debug", [GDR_LOG_INFO] = "info",
		[GDR_LOG_WARN] = "warning", [GDR_LOG_ERROR] = "error",
	};
	char line[1024];
	va_list ap;

	if (!gdr_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One fprintf, so lines of concurrent threads don't interleave. */
	fprintf(stderr, "gdrmap %s: %s: %s\n", names[level], func, line);
}
