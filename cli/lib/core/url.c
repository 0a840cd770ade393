/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/url.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"

#define CREDENTIALS_HINT \
	"credentials come only from an auth file (--auth-file FILE, or auth_file= in [upload] of the settings file)"

/* Where the authority starts (after "SCHEME:" and any slashes) and how long it is (to '/', '?' or '#'). */
static void authority(const char *url, size_t *start, size_t *len)
{
	size_t i = 0;
	if ((url[0] >= 'a' && url[0] <= 'z') || (url[0] >= 'A' && url[0] <= 'Z')) {
		i = strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
		i = url[i] == ':' ? i + 1 : 0;
	}
	/* A backslash too: curl reads http:\\h as no URL, but a looser reader might take it as a slash. */
	i += strspn(url + i, "/\\");
	*start = i;
	*len = strcspn(url + i, "/?#");
}

/* The user information's length, up to and with its last '@' in the authority; 0 when there is none. */
static size_t userinfo_len(const char *url, size_t *start)
{
	size_t len;
	authority(url, start, &len);
	for (size_t n = len; n > 0; n--)
		if (url[*start + n - 1] == '@')
			return n;
	return 0;
}

/* The offset of the value of the query's first p= (or bare p) parameter, its length in *vlen; 0 when there is none. */
static size_t password_param(const char *url, size_t *vlen)
{
	size_t q = strcspn(url, "?#");
	if (url[q] != '?')
		return 0; /* no query (a '?' after the '#' is the fragment's) */
	size_t end = q + strcspn(url + q, "#");
	for (size_t i = q + 1; i < end;) {
		size_t plen = strcspn(url + i, "&;#");
		if (url[i] == 'p' && (plen == 1 || url[i + 1] == '=')) {
			size_t v = i + (plen == 1 ? 1 : 2);
			*vlen = i + plen - v;
			return v;
		}
		i += plen + 1;
	}
	return 0;
}

int stune_url_check_credentials(const char *url, char **err)
{
	size_t start, vlen;
	if (userinfo_len(url, &start))
		return stune_errf(
		    err, -EPERM, "a URL with user information (user@ or user:password@) is refused: " CREDENTIALS_HINT);
	if (password_param(url, &vlen))
		return stune_errf(err, -EPERM, "a URL with a password parameter (p=) is refused: " CREDENTIALS_HINT);
	return 0;
}

char *stune_url_shown(const char *url)
{
	size_t start, vlen = 0;
	size_t ui = userinfo_len(url, &start);
	size_t pv = password_param(url, &vlen);
	char *out = NULL;
	if (!ui && !pv)
		return strdup(url);
	/* The user information comes before the query, so the two never overlap. */
	if (ui && pv) {
		if (asprintf(&out, "%.*s***@%.*s***%s", (int)start, url, (int)(pv - start - ui), url + start + ui,
			     url + pv + vlen) < 0)
			return NULL;
	} else if (ui) {
		if (asprintf(&out, "%.*s***@%s", (int)start, url, url + start + ui) < 0)
			return NULL;
	} else if (asprintf(&out, "%.*s***%s", (int)pv, url, url + pv + vlen) < 0)
		return NULL;
	return out;
}
