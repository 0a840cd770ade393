/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Upload of line protocol over HTTP(S) with libcurl, and the spool that makes
 * it lose nothing: every batch is written under STATE_DIR/spool/ before the
 * first attempt and deleted only after the server answered 2xx.
 *
 * Results of a send: 0 (2xx); -EAGAIN, worth retrying (connection refused or
 * reset, timeout, 5xx, 429); -EPROTO, permanent (any other 4xx, TLS
 * verification failure, a URL curl rejects). *err is a one-line message; a
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
 * -EINVAL (with *err) for a URL that is not http(s)://, has a fragment, or
 * sets precision itself.
 */
int stune_upload_url(const char *url, char **out, char **err);

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
 * answer (*err then quotes its first line, credentials masked). A body over
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
};
struct stune_http_resp {
	char *body; /* owned by the caller */
	size_t len;
	long status;
};
int stune_http_post(const struct stune_http_req *q, struct stune_http_resp *resp, char **err);
/* Mask the auth file's token or password in a message the server sent. */
void stune_auth_redact(char *msg, const struct stune_auth *a);

/* The spool: STATE_DIR/spool/HASH.lp, named after the content (FNV-1a 64). */
int stune_spool_add(const char *state_dir, const char *body, size_t len, char **path);
/* Spool files, sorted by name; *n = 0 when the directory does not exist. */
int stune_spool_list(const char *state_dir, char ***paths, size_t *n);
void stune_spool_list_free(char **paths, size_t n);
int stune_spool_read(const char *path, char **body, size_t *len);
int stune_spool_remove(const char *path);
