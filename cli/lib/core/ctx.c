/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/ctx.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libudev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpuset.h"
#include "core/hostcrypto.h"
#include "core/num.h"

int stune_ctx_new(const char *sysroot, struct stune_ctx **out)
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = calloc(1, sizeof(*ctx));
	int r;

	if (!ctx)
		return -ENOMEM;
	if ((r = stune_root_new(sysroot, &ctx->root)) < 0)
		return r;
	/* Under a sysroot, libcrypto (if a command loads it) must not read the host's openssl.cnf. */
	if (!stune_root_is_live(ctx->root))
		stune_crypto_no_host_config();
	if (stune_root_is_live(ctx->root)) {
		ctx->udev = udev_new();
		if (!ctx->udev)
			return -ENOMEM;
	}
	*out = steal_pointer(&ctx);
	return 0;
}

void stune_ctx_free(struct stune_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->udev)
		udev_unref(ctx->udev);
	stune_root_free(ctx->root);
	free(ctx);
}

void stune_ctx_set_log(struct stune_ctx *ctx, stune_log_fn fn, void *data)
{
	ctx->log_fn = fn;
	ctx->log_data = data;
}

struct stune_logmsg {
	enum stune_log_level level;
	char *path;
	char *msg;
};

/* The capture of the calling thread (see stune_log_capture). */
static __thread struct stune_logbuf *log_capture;

void stune_log_capture(struct stune_logbuf *buf)
{
	log_capture = buf;
}

static void emit(struct stune_ctx *ctx, enum stune_log_level level, const char *path, const char *msg)
{
	if (level <= STUNE_LOG_WARNING)
		ctx->n_warnings++;
	if (ctx->log_fn)
		ctx->log_fn(ctx->log_data, level, path, msg);
}

void stune_log_replay(struct stune_ctx *ctx, struct stune_logbuf *buf)
{
	for (size_t i = 0; i < buf->n; i++) {
		emit(ctx, buf->v[i].level, buf->v[i].path, buf->v[i].msg);
		free(buf->v[i].path);
		free(buf->v[i].msg);
	}
	free(buf->v);
	*buf = (struct stune_logbuf){0};
}

_printf_(4, 0) static void vlog(struct stune_ctx *ctx, enum stune_log_level level, const char *path, const char *fmt,
				va_list ap)
{
	_cleanup_free_ char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	struct stune_logbuf *cap = log_capture;
	if (!cap) {
		emit(ctx, level, path, msg);
		return;
	}
	struct stune_logmsg *v = realloc(cap->v, (cap->n + 1) * sizeof(*v));
	if (!v)
		return;
	cap->v = v;
	char *p = path ? strdup(path) : NULL;
	if (path && !p)
		return;
	v[cap->n++] = (struct stune_logmsg){.level = level, .path = p, .msg = steal_pointer(&msg)};
}

void stune_log(struct stune_ctx *ctx, enum stune_log_level level, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(ctx, level, path, fmt, ap);
	va_end(ap);
}

void stune_warn_path(struct stune_ctx *ctx, const char *path, const char *fmt, ...)
{
	_cleanup_free_ char *hp = NULL;
	va_list ap;

	if (stune_root_host_path(ctx->root, path, &hp) < 0)
		return;
	va_start(ap, fmt);
	vlog(ctx, STUNE_LOG_WARNING, hp, fmt, ap);
	va_end(ap);
}

int stune_parse_int64(const char *s, int64_t *out)
{
	char *end;
	if (!*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int stune_parse_uint64(const char *s, uint64_t *out)
{
	char *end;
	int base = 10;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!isxdigit((unsigned char)*s))
			return -EINVAL;
	}
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

_printf_(5, 0) static int vread(struct stune_ctx *ctx, char **out, char **path, unsigned flags, const char *fmt,
				va_list ap)
{
	int r;
	if (vasprintf(path, fmt, ap) < 0) {
		*path = NULL;
		return -ENOMEM;
	}
	r = stune_root_read(ctx->root, *path, out);
	if (r == -ENOENT && (flags & STUNE_ATTR_OPTIONAL))
		return r;
	if (r < 0)
		stune_warn_path(ctx, *path, "cannot read: %s", strerror(-r));
	return r;
}

static void warn_at(struct stune_ctx *ctx, const struct stune_rdir *dir, const char *rel, const char *fmt, ...)
    _printf_(4, 5);
static void warn_at(struct stune_ctx *ctx, const struct stune_rdir *dir, const char *rel, const char *fmt, ...)
{
	_cleanup_free_ char *path = NULL, *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0 || stune_path_join(&path, dir->path ? dir->path : "", rel) < 0)
		return;
	stune_warn_path(ctx, path, "%s", msg);
}

static int read_at(struct stune_ctx *ctx, const struct stune_rdir *dir, char **out, unsigned flags, const char *rel)
{
	int r = stune_root_read_at(ctx->root, dir, rel, out);
	if (r == -ENOENT && (flags & STUNE_ATTR_OPTIONAL))
		return r;
	if (r < 0)
		warn_at(ctx, dir, rel, "cannot read: %s", strerror(-r));
	return r;
}

static bool is_text(const char *val)
{
	for (const char *p = val; *p; p++)
		if (!isprint((unsigned char)*p) && *p != '\n' && *p != '\t')
			return false;
	return true;
}

/* Decimal, or 0x-hex keeping a 64-bit counter's bit pattern. */
static int parse_num(const char *val, struct stune_num *out)
{
	int64_t v;
	uint64_t u;
	int r;
	if (val[0] == '-') {
		r = stune_parse_int64(val, &v);
	} else {
		r = stune_parse_uint64(val, &u);
		if (r == 0 && u > INT64_MAX && !(val[0] == '0' && val[1] == 'x'))
			r = -ERANGE;
		v = (int64_t)u; /* 64-bit hex counters keep their bit pattern */
	}
	if (r == 0)
		*out = STUNE_NUM(v);
	return r;
}

int stune_attr_str(struct stune_ctx *ctx, char **out, unsigned flags, const char *fmt, ...)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *val = NULL;
	va_list ap;
	va_start(ap, fmt);
	int r = vread(ctx, &val, &path, flags, fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	if (!is_text(val)) {
		stune_warn_path(ctx, path, "unexpected non-text value");
		return -EILSEQ;
	}
	free(*out);
	*out = steal_pointer(&val);
	return 0;
}

int stune_attr_str_at(struct stune_ctx *ctx, const struct stune_rdir *dir, char **out, unsigned flags, const char *rel)
{
	_cleanup_free_ char *val = NULL;
	int r = read_at(ctx, dir, &val, flags, rel);
	if (r < 0)
		return r;
	if (!is_text(val)) {
		warn_at(ctx, dir, rel, "unexpected non-text value");
		return -EILSEQ;
	}
	free(*out);
	*out = steal_pointer(&val);
	return 0;
}

int stune_attr_num(struct stune_ctx *ctx, struct stune_num *out, unsigned flags, const char *fmt, ...)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *val = NULL;
	va_list ap;
	va_start(ap, fmt);
	int r = vread(ctx, &val, &path, flags, fmt, ap);
	va_end(ap);
	*out = (struct stune_num){0};
	if (r < 0)
		return r;
	if ((r = parse_num(val, out)) < 0) {
		stune_warn_path(ctx, path, "unexpected value '%.40s' (expected an integer)", val);
		return r;
	}
	return 0;
}

int stune_attr_num_raw_at(struct stune_ctx *ctx, const struct stune_rdir *dir, struct stune_num *out, char **raw,
			  unsigned flags, const char *rel)
{
	_cleanup_free_ char *val = NULL;
	int r = read_at(ctx, dir, &val, flags, rel);
	*out = (struct stune_num){0};
	if (r < 0)
		return r;
	if ((r = parse_num(val, out)) < 0)
		warn_at(ctx, dir, rel, "unexpected value '%.40s' (expected an integer)", val);
	if (raw) { /* kept even when it is not a number: it is what was there */
		free(*raw);
		*raw = steal_pointer(&val);
	}
	return r;
}

int stune_attr_num_at(struct stune_ctx *ctx, const struct stune_rdir *dir, struct stune_num *out, unsigned flags,
		      const char *rel)
{
	return stune_attr_num_raw_at(ctx, dir, out, NULL, flags, rel);
}

int stune_attr_cpulist(struct stune_ctx *ctx, struct stune_cpuset *out, unsigned flags, const char *fmt, ...)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *val = NULL;
	va_list ap;
	va_start(ap, fmt);
	int r = vread(ctx, &val, &path, flags, fmt, ap);
	va_end(ap);
	if (r < 0) {
		stune_cpuset_clear(out);
		return r;
	}
	r = stune_cpuset_parse_list(out, val);
	if (r < 0) {
		stune_cpuset_clear(out);
		stune_warn_path(ctx, path, "unexpected value '%.40s' (expected a CPU list)", val);
	}
	return r;
}
