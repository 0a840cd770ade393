/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HTTP(S) with libcurl: the POST both the upload (line protocol to the
 * write URL) and report --query use, the auth file, the write URL and the CA
 * file. The spool that makes an upload lose nothing is net/spool.h.
 *
 * Results of a send: 0 (2xx); -EAGAIN, worth retrying (connection refused or
 * reset, timeout, 5xx, 429); -EPROTO, permanent (any other 4xx, TLS
 * verification failure, a URL curl rejects); -EPERM, a URL that carries
 * credentials (core/url.h: they come only from the auth file), refused
 * before anything is sent. *err is a one-line message; a
 * timeout says which limit ran out ("no answer within the 30 s upload timeout").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/macro.h"

/* Credentials from an auth file: "Bearer TOKEN", "Token TOKEN" or "user:password". */
struct stune_auth {
	char *header;  /* "Authorization: Bearer TOKEN", or NULL */
	char *userpwd; /* "user:password" for basic auth, or NULL */
};
/*
 * Read the first line of path. -EPERM (with *err) when the file is readable by
 * others, -EINVAL (with *err) when the line has none of the three forms.
 */
int stune_auth_load(const char *path, struct stune_auth **out, char **err);
void stune_auth_free(struct stune_auth *a);
DEFINE_CLEANUP_FUNC(struct stune_auth, stune_auth_free)

/*
 * The write URL with precision=ms added ('?' or '&' as the URL needs).
 * -EPERM (with *err) for a URL with credentials in it (core/url.h); -EINVAL
 * (with *err) for one that is not http(s)://, has a fragment, or sets
 * precision itself.
 */
int stune_upload_url(const char *url, char **out, char **err);

/* The CA file for TLS: a readable regular file (libcurl would block on a FIFO
 * and fail late on a directory). -errno as stune_user_file_open() gives it. */
int stune_upload_check_ca(const char *path);

/* Seconds one POST may take in all (connecting: at most STUNE_UPLOAD_CONNECT_TIMEOUT_S of it). */
#define STUNE_UPLOAD_DEFAULT_TIMEOUT_S 30L
#define STUNE_UPLOAD_CONNECT_TIMEOUT_S 5L

struct stune_upload {
	const char *url;     /* as given; precision=ms is added */
	const char *ca_file; /* NULL: the system's CA store */
	const struct stune_auth *auth;
	long timeout_s; /* 0: STUNE_UPLOAD_DEFAULT_TIMEOUT_S; connecting gets min(this, 5 s) */
};

/*
 * One HTTP(S) POST, the engine of the upload and of report --query: TLS
 * always verified, credentials from an auth file, bounded by timeout_s
 * (connecting by min(timeout_s, 5 s)). Results as for stune_upload_send;
 * the answer's body (NUL-terminated) is kept in *resp also for a non-2xx
 * answer (*err then quotes its first line, at most 200 bytes, credentials
 * masked, or only the status when they cannot be). A body over
 * max_body bytes is cut there (truncate) or ends the transfer with -EFBIG.
 */
struct stune_http_req {
	const char *url, *content_type, *body;
	size_t len;
	const char *ca_file;
	const struct stune_auth *auth;
	long timeout_s;
	size_t max_body;
	bool truncate;
	const char *what; /* "upload", "query": named in the timeout message */
	/* When set, a 200 answer's body goes to sink as it comes, never kept
	 * whole (max_body then bounds only another answer's body, and
	 * resp->body stays NULL); sink returns < 0 to stop the transfer, and
	 * stune_http_post returns that (the sink keeps its own message). */
	int (*sink)(void *arg, const char *p, size_t n);
	void *sink_arg;
};
struct stune_http_resp {
	char *body; /* owned by the caller */
	size_t len;
	long status;
};
int stune_http_post(const struct stune_http_req *q, struct stune_http_resp *resp, char **err);
/* Mask the auth file's token, password and user:password, raw and in every
 * encoding they travel in (base64, percent-encoding, JSON), in a message the
 * server sent. A non-2xx answer is quoted only through this, and not at all
 * when a secret is under 4 characters. */
void stune_auth_redact(char *msg, const struct stune_auth *a);

/* One POST of a batch of line protocol to the write URL (precision=ms
 * added); results as for stune_http_post. */
int stune_upload_send(const struct stune_upload *u, const char *body, size_t len, char **err);
