/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Credentials in a service URL (report --upload, --query, url= in [upload] of
 * the settings file): refused, since credentials come only from the auth file
 * (a password in a URL ends up in shell history, ps, messages, -o json and
 * the --html file; libcurl would send user:password@ as Basic auth).
 *
 * User information is looked for where libcurl looks: after "SCHEME:" and the
 * slashes that follow (curl takes one to three: http:/h and http:///u:p@h are
 * URLs to it), up to the first '/', '?' or '#': any '@' there means user
 * information (a user's '@' written %40 is still before a literal one). An
 * '@' in the path or the query is not user information. The password
 * parameter p= of InfluxDB 1.x's /write and /query is refused too.
 */
#pragma once

/*
 * 0 when url carries no credentials; -EPERM with *err (one line, without the
 * URL) when it has user information (user@, user:password@) or a p=
 * parameter. *err must be NULL or a message on entry.
 */
int stune_url_check_credentials(const char *url, char **err);
/* url for a message: its user information and a p= parameter's value as
 * "***" (scheme, then ***@vm:8428/write). NULL: out of memory. Caller frees. */
char *stune_url_shown(const char *url);
