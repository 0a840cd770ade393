/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcurl is loaded with dlopen() when a batch is sent, not linked: Debian's
 * libcurl pulls in GnuTLS (through librtmp and libldap), whose constructor
 * reads /etc/gnutls/config as soon as the library is loaded. `detect
 * --sysroot` must touch no host file (the isolation tier), so nothing but an
 * upload loads it. The handle stays open for the life of the process (OpenSSL
 * and GnuTLS do not support being unloaded).
 */
#include "net/http.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/strv.h"
#include "core/hostcrypto.h"
#include "core/url.h"
#include "core/userfile.h"

/* An auth file is one line; a few KiB of anything else is not one. */
#define STUNE_AUTH_MAX_BYTES (64u << 10)

static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void stune_auth_free(struct stune_auth *a)
{
	if (!a)
		return;
	free_secret(a->header);
	free_secret(a->userpwd);
	free(a);
}

int stune_auth_load(const char *path, struct stune_auth **out, char **err)
{
	*err = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	char *buf = NULL;
	int r = stune_user_file_open(path, &fd, &st);
	if (r == -STUNE_ENOTREG)
		return stune_errf(err, r, "%s", stune_user_file_strerror(r, 0));
	if (r < 0)
		return r;
	if (st.st_mode & S_IROTH)
		return stune_errf(err, -EPERM, "readable by others (mode %04o): chmod o-r it", st.st_mode & 07777);
	size_t len = 0;
	r = stune_read_user_fd(fd, STUNE_AUTH_MAX_BYTES, 0, &buf, &len);
	if (r < 0)
		return r == -EFBIG ? stune_errf(err, r, "%s", stune_user_file_strerror(r, STUNE_AUTH_MAX_BYTES)) : r;
	buf[strcspn(buf, "\r\n")] = '\0';
	_cleanup_(stune_auth_freep) struct stune_auth *a = calloc(1, sizeof(*a));
	if (!a) {
		r = -ENOMEM;
		goto out;
	}
	const char *tok = NULL;
	if (!strncmp(buf, "Bearer ", 7) || !strncmp(buf, "Token ", 6)) {
		tok = buf + (buf[0] == 'B' ? 7 : 6);
		while (*tok == ' ')
			tok++;
		if (!*tok) {
			r = stune_errf(err, -EINVAL, "'%s' without a token", buf[0] == 'B' ? "Bearer" : "Token");
			goto out;
		}
		if (asprintf(&a->header, "Authorization: %s %s", buf[0] == 'B' ? "Bearer" : "Token", tok) < 0) {
			a->header = NULL;
			r = -ENOMEM;
			goto out;
		}
	} else if (strchr(buf, ':') && buf[0] != ':') {
		if (!(a->userpwd = strdup(buf))) {
			r = -ENOMEM;
			goto out;
		}
	} else {
		r = stune_errf(err, -EINVAL, "first line is not 'Bearer TOKEN', 'Token TOKEN' or 'user:password'");
		goto out;
	}
	*out = steal_pointer(&a);
out:
	explicit_bzero(buf, len);
	free(buf);
	return r;
}

int stune_upload_check_ca(const char *path)
{
	_cleanup_close_ int fd = -1;
	return stune_user_file_open(path, &fd, NULL);
}

int stune_upload_url(const char *url, char **out, char **err)
{
	*err = NULL;
	int r = stune_url_check_credentials(url, err);
	if (r < 0)
		return r;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return stune_errf(err, -EINVAL, "not an http:// or https:// URL");
	if (strchr(url, '#'))
		return stune_errf(err, -EINVAL, "a write URL has no '#' fragment");
	const char *q = strchr(url, '?');
	if (q && (strstr(q, "?precision=") || strstr(q, "&precision=")))
		return stune_errf(err, -EINVAL, "sets precision= itself: scsitune sends precision=ms");
	const char *sep = !q ? "?" : (q[1] == '\0' || url[strlen(url) - 1] == '&') ? "" : "&";
	return asprintf(out, "%s%sprecision=ms", url, sep) < 0 ? -ENOMEM : 0;
}

static struct curl_api {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	bool loaded;
} lc;

static int curl_load(char **err)
{
	if (lc.loaded)
		return 0;
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return stune_errf(err, -ENOPKG, "cannot load libcurl.so.4: %s", dlerror());
	struct {
		void **fn;
		const char *name;
	} syms[] = {
	    {(void **)&lc.global_init, "curl_global_init"},	  {(void **)&lc.easy_init, "curl_easy_init"},
	    {(void **)&lc.easy_setopt, "curl_easy_setopt"},	  {(void **)&lc.easy_perform, "curl_easy_perform"},
	    {(void **)&lc.easy_getinfo, "curl_easy_getinfo"},	  {(void **)&lc.easy_cleanup, "curl_easy_cleanup"},
	    {(void **)&lc.easy_strerror, "curl_easy_strerror"},	  {(void **)&lc.slist_append, "curl_slist_append"},
	    {(void **)&lc.slist_free_all, "curl_slist_free_all"},
	};
	for (size_t i = 0; i < ELEMENTSOF(syms); i++)
		if (!(*syms[i].fn = dlsym(h, syms[i].name))) {
			dlclose(h);
			return stune_errf(err, -ENOPKG, "libcurl.so.4 has no %s", syms[i].name);
		}
	/* TLS is the host's: its OpenSSL settings, also under --sysroot. */
	stune_crypto_host_config_for_tls();
	if (lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		dlclose(h);
		return stune_errf(err, -ENOMEM, "curl_global_init failed");
	}
	lc.loaded = true;
	return 0;
}

/* The answer's body: the first max_body bytes, or all of it (over the cap: over). */
struct body {
	char *buf;
	size_t len, cap, max;
	bool truncate;	/* keep the first max bytes and go on; else stop the transfer */
	bool over;	/* !truncate: more than max bytes came */
	bool truncated; /* truncate: bytes past max were dropped */
	/* A 200 answer to the sink (stune_http_req.sink): decided at its first bytes. */
	CURL *curl;
	int (*sink)(void *arg, const char *p, size_t n);
	void *sink_arg;
	int streaming; /* 0: not decided yet; 1: to the sink; -1: kept */
	int sink_r;    /* < 0: what the sink returned when it stopped the transfer */
};

static size_t body_cb(char *p, size_t size, size_t nmemb, void *data)
{
	struct body *b = data;
	size_t n = size * nmemb;
	if (b->sink && !b->streaming) {
		long status = 0;
		lc.easy_getinfo(b->curl, CURLINFO_RESPONSE_CODE, &status);
		b->streaming = status == 200 ? 1 : -1;
	}
	if (b->streaming > 0) {
		int r = b->sink(b->sink_arg, p, n);
		if (r < 0) {
			b->sink_r = r;
			return 0; /* CURLE_WRITE_ERROR ends the transfer */
		}
		return n;
	}
	if (b->len + n > b->max) {
		if (!b->truncate) {
			b->over = true;
			return 0; /* CURLE_WRITE_ERROR ends the transfer */
		}
		size_t room = b->max - b->len;
		n = room;
		b->truncated = true;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *nb = realloc(b->buf, cap);
		if (!nb)
			return 0;
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return size * nmemb;
}

/*
 * Servers may quote the credentials they refused (vmauth does), raw or as the
 * header they came in: every form scsitune sent them in is masked. The
 * secrets (the token; the password and user:password) and their encodings:
 * base64 (the Basic header; with and without '=' padding), percent-encoding
 * (upper and lower case hex, '+' for a space or not), JSON string escaping
 * (with "\/" or not, non-ASCII as \uXXXX or not).
 */
#define SECRET_MIN   4	 /* a shorter secret cannot be masked without masking half the text */
#define EXCERPT_MAX  200 /* bytes of a server's answer quoted in a message */
#define MAX_PATTERNS 32

struct patterns {
	char *v[MAX_PATTERNS];
	size_t n, longest;
	bool too_short; /* a secret under SECRET_MIN: the answer is not quoted at all */
};

static void patterns_free(struct patterns *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free_secret(ps->v[i]);
	ps->n = 0;
}

static void add_pattern(struct patterns *ps, char *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i], p)) {
			free_secret(p);
			return;
		}
	if (ps->n == MAX_PATTERNS || !*p) {
		free_secret(p);
		return;
	}
	size_t n = strlen(p);
	if (n > ps->longest)
		ps->longest = n;
	ps->v[ps->n++] = p;
}

static char *base64(const char *s, bool pad)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s);
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
	if (!out)
		return NULL;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v =
		    (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	if (!pad)
		while (o > out && o[-1] == '=')
			*--o = '\0';
	return out;
}

/* form: a space as '+' (application/x-www-form-urlencoded). */
static char *percent_encode(const char *s, bool upper, bool form)
{
	const char *hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *out = malloc(3 * strlen(s) + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p)) {
			*o++ = (char)*p;
			continue;
		}
		if (form && *p == ' ') {
			*o++ = '+';
			continue;
		}
		*o++ = '%';
		*o++ = hex[*p >> 4];
		*o++ = hex[*p & 15];
	}
	*o = '\0';
	return out;
}

/* A JSON string's content: slash escaped as "\/" or not; ascii: every code point past
 * U+007F as \uXXXX (surrogate pairs past U+FFFF), as Python's json.dumps writes it. */
static char *json_escape(const char *s, bool slash, bool ascii)
{
	char *out = malloc(12 * strlen(s) + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\' || (slash && *p == '/')) {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (*p < 0x20)
			o += sprintf(o, "\\u%04x", *p);
		else if (ascii && *p >= 0xc0) {
			size_t n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
			uint32_t cp = *p & (0x7f >> n);
			size_t k = 1;
			for (; k < n && (p[k] & 0xc0) == 0x80; k++)
				cp = cp << 6 | (p[k] & 0x3f);
			if (k < n) { /* not UTF-8: as is */
				*o++ = (char)*p;
				continue;
			}
			p += n - 1;
			if (cp >= 0x10000)
				o += sprintf(o, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
					     0xdc00 + ((cp - 0x10000) & 0x3ff));
			else
				o += sprintf(o, "\\u%04x", cp);
		} else
			*o++ = (char)*p;
	}
	*o = '\0';
	return out;
}

static void add_secret(struct patterns *ps, const char *secret)
{
	if (strlen(secret) < SECRET_MIN)
		ps->too_short = true;
	add_pattern(ps, strdup(secret));
	add_pattern(ps, base64(secret, true));
	add_pattern(ps, base64(secret, false));
	add_pattern(ps, percent_encode(secret, true, false));
	add_pattern(ps, percent_encode(secret, false, false));
	add_pattern(ps, percent_encode(secret, true, true));
	add_pattern(ps, percent_encode(secret, false, true));
	for (int j = 0; j < 4; j++)
		add_pattern(ps, json_escape(secret, j & 1, j & 2));
}

static void auth_patterns(const struct stune_auth *a, struct patterns *ps)
{
	*ps = (struct patterns){0};
	if (!a)
		return;
	if (a->userpwd) {
		/* user:password first: the longer pattern wins where they overlap. */
		add_secret(ps, a->userpwd);
		const char *pw = strchr(a->userpwd, ':');
		add_secret(ps, pw ? pw + 1 : "");
	}
	if (a->header) {
		const char *tok = strchr(a->header + strlen("Authorization: "), ' ');
		add_secret(ps, tok ? tok + 1 : "");
	}
}

static void mask(char *msg, const struct patterns *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		size_t n = strlen(ps->v[i]);
		char *p = msg;
		while ((p = strstr(p, ps->v[i]))) {
			memcpy(p, "***", 3);
			memmove(p + 3, p + n, strlen(p + n) + 1);
			p += 3;
		}
	}
}

void stune_auth_redact(char *msg, const struct stune_auth *a)
{
	struct patterns ps;
	auth_patterns(a, &ps);
	mask(msg, &ps);
	patterns_free(&ps);
}

/*
 * What a message may quote of a server's answer: its first line, every form
 * of the credentials masked, at most EXCERPT_MAX bytes. NULL when nothing may
 * be quoted: the credentials hold a secret too short to mask, or no memory.
 * cut: the answer was cut at the capture limit (a secret may straddle it).
 */
static char *answer_excerpt(const char *body, size_t len, bool cut, const struct stune_auth *a)
{
	struct patterns ps;
	auth_patterns(a, &ps);
	if (ps.too_short) {
		patterns_free(&ps);
		return NULL;
	}
	size_t n = 0;
	while (n < len && body[n] && body[n] != '\r' && body[n] != '\n')
		n++;
	/* A line that runs into the cut may end in the first part of a secret: drop what could be one. */
	if (cut && n == len)
		n = n > ps.longest ? n - ps.longest : 0;
	char *line = strndup(body, n);
	if (line) {
		mask(line, &ps);
		size_t k = strlen(line);
		if (k > EXCERPT_MAX) {
			k = EXCERPT_MAX;
			while (k > 0 && ((unsigned char)line[k] & 0xc0) == 0x80)
				k--; /* not inside a UTF-8 sequence */
			memcpy(line + k, "...", 4);
		}
	}
	patterns_free(&ps);
	return line;
}

static bool curl_retryable(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

static struct curl_slist *request_headers(const struct stune_http_req *q)
{
	char ctype[128];
	snprintf(ctype, sizeof(ctype), "Content-Type: %s", q->content_type);
	struct curl_slist *hdrs = lc.slist_append(NULL, ctype);
	if (hdrs && q->auth && q->auth->header) {
		struct curl_slist *h = lc.slist_append(hdrs, q->auth->header);
		if (!h) {
			lc.slist_free_all(hdrs);
			return NULL;
		}
		hdrs = h;
	}
	return hdrs;
}

/* What curl said, as the caller's error: the timeouts named, retryable or not. */
static int curl_failure(const struct stune_http_req *q, CURLcode cc, const char *errbuf, long timeout,
			long connect_timeout, char **err)
{
	const char *msg = *errbuf ? errbuf : lc.easy_strerror(cc);
	if (cc == CURLE_OPERATION_TIMEDOUT) {
		/* The connect phase has its own, shorter limit: curl says "Connection timed out". */
		if (strstr(msg, "Connection timed out"))
			return stune_errf(err, -EAGAIN, "not connected within the %ld s connect timeout (%s)",
					  connect_timeout, msg);
		return stune_errf(err, -EAGAIN, "no answer within the %ld s %s timeout (%s)", timeout, q->what, msg);
	}
	return stune_errf(err, curl_retryable(cc) ? -EAGAIN : -EPROTO, "%s", msg);
}

int stune_http_post(const struct stune_http_req *q, struct stune_http_resp *resp, char **err)
{
	*resp = (struct stune_http_resp){0};
	/* Credentials travel only from the auth file, never from the URL (its callers check it first too). */
	int r = stune_url_check_credentials(q->url, err);
	if (r < 0)
		return r;
	if ((r = curl_load(err)) < 0)
		return r;
	CURL *c = lc.easy_init();
	if (!c)
		return -ENOMEM;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct body b = {
	    .max = q->max_body, .truncate = q->truncate, .curl = c, .sink = q->sink, .sink_arg = q->sink_arg};
	struct curl_slist *hdrs = request_headers(q);
	if (!hdrs) {
		lc.easy_cleanup(c);
		return -ENOMEM;
	}
	lc.easy_setopt(c, CURLOPT_URL, q->url);
	lc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	lc.easy_setopt(c, CURLOPT_DISALLOW_USERNAME_IN_URL, 1L); /* and curl refuses one too */
	lc.easy_setopt(c, CURLOPT_POST, 1L);
	lc.easy_setopt(c, CURLOPT_POSTFIELDS, q->body);
	lc.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->len);
	lc.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	lc.easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	lc.easy_setopt(c, CURLOPT_WRITEFUNCTION, body_cb);
	lc.easy_setopt(c, CURLOPT_WRITEDATA, &b);
	lc.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	long timeout = q->timeout_s > 0 ? q->timeout_s : STUNE_UPLOAD_DEFAULT_TIMEOUT_S;
	long connect_timeout = timeout < STUNE_UPLOAD_CONNECT_TIMEOUT_S ? timeout : STUNE_UPLOAD_CONNECT_TIMEOUT_S;
	lc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connect_timeout);
	lc.easy_setopt(c, CURLOPT_TIMEOUT, timeout);
	lc.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	lc.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	lc.easy_setopt(c, CURLOPT_USERAGENT, "scsitune");
	if (q->ca_file)
		lc.easy_setopt(c, CURLOPT_CAINFO, q->ca_file);
	if (q->auth && q->auth->userpwd) {
		lc.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		lc.easy_setopt(c, CURLOPT_USERPWD, q->auth->userpwd);
	}
	CURLcode cc = lc.easy_perform(c);
	long status = 0;
	lc.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	lc.easy_cleanup(c);
	lc.slist_free_all(hdrs);

	if (b.sink_r < 0) { /* the sink said why (its own message) */
		free(b.buf);
		return b.sink_r;
	}
	if (b.over) {
		free(b.buf);
		return stune_errf(err, -EFBIG,
				  "the answer is larger than %zu bytes: narrow the query (--hosts, --since)",
				  q->max_body);
	}
	if (cc != CURLE_OK) {
		free(b.buf);
		return curl_failure(q, cc, errbuf, timeout, connect_timeout, err);
	}
	resp->status = status;
	resp->body = b.buf;
	resp->len = b.len;
	if (status >= 200 && status < 300)
		return 0;
	/* The first line of the answer, credentials masked, or only the status. */
	_cleanup_free_ char *line = answer_excerpt(b.buf ? b.buf : "", b.len, b.truncated, q->auth);
	r = status >= 500 || status == 429 || status == 408 ? -EAGAIN : -EPROTO;
	if (!line)
		return stune_errf(
		    err, r, "HTTP %ld (the answer is not quoted: the credentials sent are too short to mask in it)",
		    status);
	return stune_errf(err, r, "HTTP %ld%s%s", status, *line ? ": " : "", line);
}

int stune_upload_send(const struct stune_upload *u, const char *body, size_t len, char **err)
{
	_cleanup_free_ char *url = NULL;
	int r = stune_upload_url(u->url, &url, err);
	if (r < 0)
		return r;
	struct stune_http_req q = {.url = url,
				   .content_type = "text/plain; charset=utf-8",
				   .body = body,
				   .len = len,
				   .ca_file = u->ca_file,
				   .auth = u->auth,
				   .timeout_s = u->timeout_s,
				   .max_body = 4096,
				   .truncate = true,
				   .what = "upload"};
	struct stune_http_resp resp;
	r = stune_http_post(&q, &resp, err);
	free(resp.body);
	return r;
}
