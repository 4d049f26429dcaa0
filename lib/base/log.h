/* SPDX-License-Identifier: MIT */
/*
 * Messages on stderr, off unless GDRCOPY_ENABLE_LOGGING is set (GDRCopy's
 * variables, read once).  Every failure the library returns is explained
 * with gdr_err(): what went wrong, then what to do about it.  The last
 * such explanation of each thread is kept for gdrmap_last_error(), logging
 * on or off.
 */
#ifndef GDRMAP_LOG_H
#define GDRMAP_LOG_H

enum gdr_log_level {
	GDR_LOG_DEBUG = 1,
	GDR_LOG_INFO = 2,
	GDR_LOG_WARN = 3,
	GDR_LOG_ERROR = 4,
};

/* Nonzero if a message of this level would be printed. */
int gdr_log_enabled(enum gdr_log_level level);

__attribute__((format(printf, 3, 4)))
void gdr_log(enum gdr_log_level level, const char *func, const char *fmt, ...);

#define gdr_dbg(...)  gdr_log(GDR_LOG_DEBUG, __func__, __VA_ARGS__)
#define gdr_info(...) gdr_log(GDR_LOG_INFO, __func__, __VA_ARGS__)
#define gdr_warn(...) gdr_log(GDR_LOG_WARN, __func__, __VA_ARGS__)
#define gdr_err(...)  gdr_log(GDR_LOG_ERROR, __func__, __VA_ARGS__)

#endif /* GDRMAP_LOG_H */
