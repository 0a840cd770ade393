/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/config.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/root.h"
#include "core/url.h"
#include "core/userfile.h"

/* A settings file is a few lines. */
#define STUNE_CONFIG_MAX_BYTES (1u << 20)

struct parse {
	struct stune_config *c;
	char *err; /* the first handler error */
	bool nomem;
};

int stune_parse_upload_timeout(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *s == '+' || v < STUNE_UPLOAD_TIMEOUT_MIN ||
	    v > STUNE_UPLOAD_TIMEOUT_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	char **slot = NULL;
	if (!strcmp(section, "upload") && !strcmp(name, "timeout") && *value) {
		if (stune_parse_upload_timeout(value, &p->c->upload_timeout_s) == 0)
			return 1;
		if (!p->err && asprintf(&p->err, "upload.timeout: '%s' is not a number of seconds from %d to %d", value,
					STUNE_UPLOAD_TIMEOUT_MIN, STUNE_UPLOAD_TIMEOUT_MAX) < 0) {
			p->err = NULL;
			p->nomem = true;
		}
		return 0;
	}
	if (!strcmp(section, "upload")) {
		if (!strcmp(name, "url"))
			slot = &p->c->upload_url;
		else if (!strcmp(name, "auth_file"))
			slot = &p->c->upload_auth_file;
		else if (!strcmp(name, "ca_file"))
			slot = &p->c->upload_ca_file;
	}
	if (!slot) {
		if (!p->err && asprintf(&p->err, "unknown %s '%s%s%s'", *section ? "key" : "key outside a section",
					section, *section ? "." : "", name) < 0) {
			p->err = NULL;
			p->nomem = true;
		}
		return 0;
	}
	if (!*value) {
		if (!p->err && asprintf(&p->err, "%s.%s: empty value", section, name) < 0) {
			p->err = NULL;
			p->nomem = true;
		}
		return 0;
	}
	/* Credentials come only from auth_file=: a URL that carries them is refused, shown without them. */
	_cleanup_free_ char *why = NULL;
	if (slot == &p->c->upload_url && stune_url_check_credentials(value, &why) < 0) {
		_cleanup_free_ char *shown = stune_url_shown(value);
		if (!p->err && (!why || !shown || asprintf(&p->err, "upload.url %s: %s", shown, why) < 0)) {
			p->err = NULL;
			p->nomem = true;
		}
		return 0;
	}
	free(*slot);
	if (!(*slot = strdup(value))) {
		p->nomem = true;
		return 0;
	}
	return 1;
}

void stune_config_free(struct stune_config *c)
{
	if (!c)
		return;
	free(c->upload_url);
	free(c->upload_auth_file);
	free(c->upload_ca_file);
	free(c);
}

/* ini_parse_file or ini_parse_string, then the one error convention. */
static int finish(struct stune_config **c, struct parse *p, int line, struct stune_config **out, char **err)
{
	int r = 0;
	if (p->nomem)
		r = -ENOMEM;
	else if (line != 0) {
		if (line < 0)
			r = -EIO;
		else if (asprintf(err, "%d: %s", line, p->err ? p->err : "syntax error") < 0) {
			*err = NULL;
			r = -ENOMEM;
		} else
			r = -EINVAL;
	}
	free(p->err);
	if (r == 0)
		*out = steal_pointer(c);
	return r;
}

int stune_config_load(const char *path, bool missing_ok, struct stune_config **out, char **err)
{
	*err = NULL;
	_cleanup_(stune_config_freep) struct stune_config *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	_cleanup_free_ char *text = NULL;
	int r = stune_read_user_file(path, STUNE_CONFIG_MAX_BYTES, STUNE_UF_TEXT, &text, NULL);
	if (r < 0) {
		if (r == -ENOENT && missing_ok) {
			*out = steal_pointer(&c);
			return 0;
		}
		return r;
	}
	struct parse p = {.c = c};
	int line = ini_parse_string(text, handler, &p);
	return finish(&c, &p, line, out, err);
}

int stune_config_load_root(const struct stune_root *root, bool missing_ok, struct stune_config **out, char **err)
{
	*err = NULL;
	_cleanup_(stune_config_freep) struct stune_config *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	_cleanup_free_ char *text = NULL;
	int r = stune_root_read_regular(root, STUNE_CONFIG_PATH, &text);
	if (r == -ENOENT && missing_ok) {
		*out = steal_pointer(&c);
		return 0;
	}
	if (r < 0)
		return r;
	struct parse p = {.c = c};
	int line = ini_parse_string(text, handler, &p);
	return finish(&c, &p, line, out, err);
}
