/* SPDX-License-Identifier: GPL-2.0-or-later */
/* core/url.c: credentials in a service URL, found where libcurl finds them, refused and never shown. */
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/url.h"
#include "fleet/query.h"
#include "net/http.h"
#include "tap.h"

#define SECRET "s3cretpw"

/* URLs with user information as libcurl reads it (curl_url: CURLUPART_USER or CURLUPART_PASSWORD set). */
static const char *const with_userinfo[] = {
    "http://user:" SECRET "@vm:8428/write",
    "https://user:" SECRET "@vm/api/v1/export",
    "http://user@vm/write", /* a user alone: credentials too */
    "http://:" SECRET "@vm/write",
    "http://us%40er:" SECRET "%40x@vm/write", /* the user's and the password's '@' percent-encoded */
    "http://user:" SECRET "@[::1]:8428/write",
    "http:///user:" SECRET "@vm/write", /* curl takes one to three slashes */
    "http:/user:" SECRET "@vm/write",
    "http://vm\\user:" SECRET "@vm2/write", /* a backslash is not a slash to curl */
    "http://vm;opt@vm2/write",		    /* login options: user information */
    "http://vm:8428@vm2/write",		    /* what looks like a port is the password */
    "ftp://user:" SECRET "@vm/",	    /* refused before the scheme is looked at */
};

/* URLs without credentials: an '@' in the path, the query or the fragment is not user information. */
static const char *const without[] = {
    "http://vm:8428/write",
    "http://vm:8428",
    "https://vm/select/0/prometheus/api/v1/query",
    "http://vm/a@b/write",
    "http://vm/write?db=a@b",
    "http://vm?db=a@b",
    "http://vm/write#a@b",
    "http://vm/a%40b/write",
    "http://ix:8086/query?db=s&u=reader", /* a user name alone is no secret */
    "http://ix:8086/query?db=s&pp=1&ap=2&x=p=3",
    "http://ix:8086/query?db=s#&p=in-the-fragment",
};

CASE(userinfo_refused, "user information (user@, user:password@, %40 in it, 1-3 slashes) is refused")
{
	for (size_t i = 0; i < sizeof(with_userinfo) / sizeof(with_userinfo[0]); i++) {
		char *err = NULL;
		int r = stune_url_check_credentials(with_userinfo[i], &err);
		CHECK_MSG(r == -EPERM, "%s: %d, not -EPERM", with_userinfo[i], r);
		CHECK_MSG(err && strstr(err, "user information") && strstr(err, "auth file") && !strstr(err, SECRET),
			  "%s: %s", with_userinfo[i], err ? err : "(no message)");
		free(err);
	}
}

CASE(no_userinfo, "an '@' in the path, query or fragment, or written %40, is not user information")
{
	for (size_t i = 0; i < sizeof(without) / sizeof(without[0]); i++) {
		char *err = NULL;
		CHECK_MSG(stune_url_check_credentials(without[i], &err) == 0 && !err, "%s: refused: %s", without[i],
			  err ? err : "");
		free(err);
		char *shown = stune_url_shown(without[i]);
		CHECK_STR(shown, without[i]); /* shown as it is */
		free(shown);
	}
}

CASE(password_param, "InfluxDB's p= password parameter is refused, wherever in the query")
{
	static const char *const urls[] = {
	    "http://ix:8086/write?db=s&u=me&p=" SECRET,
	    "http://ix:8086/write?p=" SECRET "&db=s",
	    "http://ix:8086/query?db=s;p=" SECRET,
	    "http://ix:8086/query?db=s&p=" SECRET "#frag",
	};
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		char *err = NULL;
		CHECK_MSG(stune_url_check_credentials(urls[i], &err) == -EPERM && err && strstr(err, "p=") &&
			      !strstr(err, SECRET),
			  "%s: %s", urls[i], err ? err : "not refused");
		free(err);
	}
}

CASE(shown, "the URL shown has *** for its user information and its p= value, the rest as given")
{
	static const char *const cases[][2] = {
	    {"http://user:" SECRET "@vm:8428/write", "http://***@vm:8428/write"},
	    {"http:///user:" SECRET "@vm/write?db=a@b", "http:///***@vm/write?db=a@b"},
	    {"http://us%40er:" SECRET "%40x@vm/write", "http://***@vm/write"},
	    {"http://ix/write?db=s&p=" SECRET "&u=me", "http://ix/write?db=s&p=***&u=me"},
	    {"http://u:" SECRET "@ix/write?p=" SECRET, "http://***@ix/write?p=***"},
	    {"u:" SECRET "@vm/write", "u:***@vm/write"}, /* no scheme: "u:" read as one */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = stune_url_shown(cases[i][0]);
		CHECK_STR(s, cases[i][1]);
		free(s);
	}
}

CASE(callers_refuse, "the write URL, the query URL and the POST itself refuse credentials (-EPERM), never quoting them")
{
	char *out = NULL, *err = NULL;
	CHECK(stune_upload_url("http://u:" SECRET "@vm/write", &out, &err) == -EPERM && !out && err &&
	      !strstr(err, SECRET));
	free(err), err = NULL;
	enum stune_query_api api;
	CHECK(stune_query_url("http://u:" SECRET "@vm:8428", STUNE_QUERY_AUTO, &out, &api, &err) == -EPERM && !out &&
	      err && !strstr(err, SECRET));
	free(err), err = NULL;
	/* Refused before libcurl is loaded or anything is sent. */
	struct stune_http_req q = {.url = "http://u:" SECRET "@127.0.0.1:1/write",
				   .content_type = "text/plain",
				   .body = "x",
				   .len = 1,
				   .timeout_s = 1,
				   .max_body = 16,
				   .what = "upload"};
	struct stune_http_resp resp;
	CHECK(stune_http_post(&q, &resp, &err) == -EPERM && !resp.body && err && !strstr(err, SECRET));
	free(err);
}

/* libcurl's own URL parser, loaded as http.c loads the library. */
struct curlu_api {
	CURLU *(*url)(void);
	CURLUcode (*set)(CURLU *u, CURLUPart what, const char *part, unsigned int flags);
	CURLUcode (*get)(CURLU *u, CURLUPart what, char **part, unsigned int flags);
	void (*cleanup)(CURLU *u);
	void (*free)(void *p);
};

static bool curl_has_userinfo(const struct curlu_api *c, const char *url, bool *parsed)
{
	CURLU *u = c->url();
	bool found = false;
	*parsed = u && c->set(u, CURLUPART_URL, url, 0) == CURLUE_OK;
	for (int i = 0; *parsed && i < 3; i++) {
		char *part = NULL;
		CURLUPart what = i == 0 ? CURLUPART_USER : i == 1 ? CURLUPART_PASSWORD : CURLUPART_OPTIONS;
		if (c->get(u, what, &part, 0) == CURLUE_OK && part)
			found = true;
		c->free(part);
	}
	if (u)
		c->cleanup(u);
	return found;
}

CASE(as_curl_reads, "every URL in which libcurl finds user information is refused (lists and 50,000 random ones)")
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	CHECK_MSG(h, "cannot load libcurl.so.4: %s", dlerror());
	if (!h)
		return;
	struct curlu_api c;
	*(void **)&c.url = dlsym(h, "curl_url");
	*(void **)&c.set = dlsym(h, "curl_url_set");
	*(void **)&c.get = dlsym(h, "curl_url_get");
	*(void **)&c.cleanup = dlsym(h, "curl_url_cleanup");
	*(void **)&c.free = dlsym(h, "curl_free");
	CHECK(c.url && c.set && c.get && c.cleanup && c.free);
	if (!(c.url && c.set && c.get && c.cleanup && c.free))
		return;
	bool parsed;
	/* The lists above are what they say to curl too (a list that says wrong proves nothing). */
	for (size_t i = 0; i < sizeof(with_userinfo) / sizeof(with_userinfo[0]); i++)
		CHECK_MSG(curl_has_userinfo(&c, with_userinfo[i], &parsed), "curl sees no user in %s",
			  with_userinfo[i]);
	for (size_t i = 0; i < sizeof(without) / sizeof(without[0]); i++)
		CHECK_MSG(!curl_has_userinfo(&c, without[i], &parsed) && parsed, "curl sees a user in %s", without[i]);
	/* Random URLs of the characters that matter; fixed seed, so a failure repeats. */
	static const char alphabet[] = "hhhuuu::@@///?#%40\\;[]p=&.";
	uint64_t x = 0x9e3779b97f4a7c15u;
	size_t n_user = 0;
	for (int i = 0; i < 50000; i++) {
		char url[40] = "http:";
		size_t len = 5 + (size_t)(i % 24);
		for (size_t k = 5; k < len; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			url[k] = alphabet[x % (sizeof(alphabet) - 1)];
		}
		url[len] = '\0';
		if (!curl_has_userinfo(&c, url, &parsed))
			continue;
		n_user++;
		CHECK_MSG(stune_url_check_credentials(url, NULL) == -EPERM, "curl sees a user in %s, not refused", url);
		char *s = stune_url_shown(url);
		CHECK_MSG(s && strstr(s, "***"), "%s shown as %s", url, s ? s : "(null)");
		free(s);
	}
	CHECK_MSG(n_user >= 200, "only %zu random URLs with a user to curl (want 200)", n_user);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
