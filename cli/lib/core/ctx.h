/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One context per run: the root, the udev handle (live only), and the log
 * callback through which the engine reports warnings. The engine never prints.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/macro.h"
#include "core/root.h"

struct udev;
struct stune_cpuset;
struct stune_num;

/* NOTICE: a fact the user should see without -v (e.g. why fio is not bound); INFO: -v only. */
enum stune_log_level {
	STUNE_LOG_ERR = 3,
	STUNE_LOG_WARNING = 4,
	STUNE_LOG_NOTICE = 5,
	STUNE_LOG_INFO = 6,
	STUNE_LOG_DEBUG = 7
};

/* path: host path of the file concerned, or NULL. */
typedef void (*stune_log_fn)(void *data, enum stune_log_level level, const char *path, const char *msg);

struct stune_ctx {
	struct stune_root *root;
	struct udev *udev; /* NULL under --sysroot */
	stune_log_fn log_fn;
	void *log_data;
	unsigned n_warnings;
	/* Worker threads for the per-disk scan: 0 = one per usable CPU (at most 16)
	 * once there are 128 disks or more; N = up to N whatever the count. */
	unsigned scan_threads;
};

/* sysroot NULL: live system (libudev). */
int stune_ctx_new(const char *sysroot, struct stune_ctx **out);
void stune_ctx_free(struct stune_ctx *ctx);
DEFINE_CLEANUP_FUNC(struct stune_ctx, stune_ctx_free)
void stune_ctx_set_log(struct stune_ctx *ctx, stune_log_fn fn, void *data);

/*
 * Messages of work done on other threads are captured per item and replayed
 * in item order, so output never depends on scheduling. While a capture is
 * active on the calling thread, stune_log and stune_warn_path append to it.
 */
struct stune_logbuf {
	struct stune_logmsg *v;
	size_t n;
};
void stune_log_capture(struct stune_logbuf *buf); /* NULL ends the capture */
/* Send the captured messages through ctx's log callback, then free them. */
void stune_log_replay(struct stune_ctx *ctx, struct stune_logbuf *buf);

void stune_log(struct stune_ctx *ctx, enum stune_log_level level, const char *path, const char *fmt, ...)
    _printf_(4, 5);
/* Warn about a root-relative path. */
void stune_warn_path(struct stune_ctx *ctx, const char *path, const char *fmt, ...) _printf_(3, 4);

/*
 * Attribute readers. They return 0, -ENOENT when the file is absent, or
 * another -errno; on anything but 0 the output is left unset. A warning
 * naming the file is logged for unreadable files and garbage values, and for
 * missing files unless STUNE_ATTR_OPTIONAL.
 */
enum { STUNE_ATTR_OPTIONAL = 1 << 0 };

int stune_attr_str(struct stune_ctx *ctx, char **out, unsigned flags, const char *fmt, ...) _printf_(4, 5);
/* Decimal or 0x-hex integer. */
int stune_attr_num(struct stune_ctx *ctx, struct stune_num *out, unsigned flags, const char *fmt, ...) _printf_(4, 5);
/* cpulist or blk-mq list. */
int stune_attr_cpulist(struct stune_ctx *ctx, struct stune_cpuset *out, unsigned flags, const char *fmt, ...)
    _printf_(4, 5);

/*
 * The same, for an entry of a directory opened once (stune_root_dir_open):
 * one path walk per directory. Warnings name dir's path joined with the entry.
 */
int stune_attr_str_at(struct stune_ctx *ctx, const struct stune_rdir *dir, char **out, unsigned flags, const char *rel);
int stune_attr_num_at(struct stune_ctx *ctx, const struct stune_rdir *dir, struct stune_num *out, unsigned flags,
		      const char *rel);
/* Keep the raw text read (raw: NULL when unreadable) as well as the number. */
int stune_attr_num_raw_at(struct stune_ctx *ctx, const struct stune_rdir *dir, struct stune_num *out, char **raw,
			  unsigned flags, const char *rel);

/* Strict number parsing shared by the readers: whole string, optional sign. */
int stune_parse_int64(const char *s, int64_t *out);
int stune_parse_uint64(const char *s, uint64_t *out); /* accepts 0x prefix */
