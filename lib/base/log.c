// SPDX-License-Identifier: MIT
/* Logging, configured by GDRCopy's environment variables. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#include "log.h"

static int log_threshold;	/* 0: logging off */

/*
 * The last error explained in this thread, whatever the logging settings:
 * programs read it with gdrmap_last_error() instead of scraping stderr.
 * Room for gdr_open's, which holds every backend's reason.
 */
static _Thread_local char last_error[8192];
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
	char line[sizeof(last_error)];
	va_list ap;

	if (level != GDR_LOG_ERROR && !gdr_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (level == GDR_LOG_ERROR)
		memcpy(last_error, line, sizeof(line));
	if (!gdr_log_enabled(level))
		return;
	/* One fprintf, so lines of concurrent threads don't interleave. */
	fprintf(stderr, "gdrmap %s: %s: %s\n", names[level], func, line);
}

GDR_API const char *gdrmap_last_error(void)
{
	return last_error;
}
