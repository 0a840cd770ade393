/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Profile loading: libinih does the INI syntax; this file knows the sections,
 * keys and values (scsitune-profile(5)), follows include=, and keeps for every
 * value the file, line and the comment just above it (the "why" a plan shows).
 */
#include "tune/profile.h"
#include "tune/internal.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/userfile.h"

#define MAX_INCLUDE_DEPTH 16
/* The shipped profiles are a few KiB; a megabyte is no profile. */
#define STUNE_PROFILE_MAX_BYTES (1u << 20)

static const char *const class_names[_STUNE_SECTION_MAX] = {
    [STUNE_SECTION_HBA] = "hba",       [STUNE_SECTION_IRQ] = "irq",
    [STUNE_SECTION_QUEUE] = "queue",   [STUNE_SECTION_SCSI_DEVICE] = "scsi_device",
    [STUNE_SECTION_MODULE] = "module", [STUNE_SECTION_IRQBALANCE] = "irqbalance",
};

const char *stune_profile_section_name(enum stune_profile_section c)
{
	return c < _STUNE_SECTION_MAX ? class_names[c] : "?";
}

/* Value checkers: NULL when the value is good, else what was expected. */
typedef const char *(*check_fn)(const char *v);

static bool is_uint(const char *v, unsigned long long max)
{
	if (!*v || !isdigit((unsigned char)*v))
		return false;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	return !*end && errno == 0 && x <= max;
}

static const char *check_012(const char *v)
{
	return !strcmp(v, "0") || !strcmp(v, "1") || !strcmp(v, "2") ? NULL : "0, 1 or 2";
}

static const char *check_01(const char *v)
{
	return !strcmp(v, "0") || !strcmp(v, "1") ? NULL : "0 or 1";
}

static const char *check_yesno(const char *v)
{
	return !strcmp(v, "yes") || !strcmp(v, "no") ? NULL : "yes or no";
}

static const char *check_scheduler(const char *v)
{
	return stune_word_in("none mq-deadline kyber bfq kernel-default", v)
		   ? NULL
		   : "none, mq-deadline, kyber, bfq or kernel-default";
}

static const char *check_nr_requests(const char *v)
{
	/* blk-sysfs.c: below BLKDEV_MIN_RQ (4) is raised to 4; MAX_SCHED_RQ is 2048. */
	if (!strcmp(v, "kernel-default"))
		return NULL;
	return is_uint(v, 2048) && strtoul(v, NULL, 10) >= 4 ? NULL : "a number from 4 to 2048, or kernel-default";
}

static const char *check_read_ahead(const char *v)
{
	return is_uint(v, 1u << 20) ? NULL : "a number of KiB from 0 to 1048576";
}

static const char *check_queue_depth(const char *v)
{
	return is_uint(v, 65535) && strtoul(v, NULL, 10) >= 1 ? NULL : "a number from 1 to 65535";
}

static const char *check_affinity(const char *v)
{
	return stune_word_in("keep node-local node-local-spread", v) ? NULL : "keep, node-local or node-local-spread";
}

static const char *check_words(const char *v)
{
	return *v ? NULL : "one or more words";
}

static const char *check_param(const char *v)
{
	if (!*v)
		return "a value";
	for (const char *p = v; *p; p++)
		if (isspace((unsigned char)*p) || !isprint((unsigned char)*p))
			return "a value without spaces";
	return NULL;
}

struct key_spec {
	enum stune_profile_section cls;
	const char *key;
	check_fn check;
	bool match;
};

static const struct key_spec keys[] = {
    {STUNE_SECTION_HBA, "match_driver", check_words, true},
    {STUNE_SECTION_HBA, "match_pci", check_words, true},
    {STUNE_SECTION_IRQ, "match_driver", check_words, true},
    {STUNE_SECTION_IRQ, "affinity", check_affinity, false},
    {STUNE_SECTION_QUEUE, "match_driver", check_words, true},
    {STUNE_SECTION_QUEUE, "match_rotational", check_01, true},
    {STUNE_SECTION_QUEUE, "scheduler", check_scheduler, false},
    {STUNE_SECTION_QUEUE, "nr_requests", check_nr_requests, false},
    {STUNE_SECTION_QUEUE, "rq_affinity", check_012, false},
    {STUNE_SECTION_QUEUE, "nomerges", check_012, false},
    {STUNE_SECTION_QUEUE, "read_ahead_kb", check_read_ahead, false},
    {STUNE_SECTION_QUEUE, "add_random", check_01, false},
    {STUNE_SECTION_QUEUE, "io_poll", check_01, false},
    {STUNE_SECTION_SCSI_DEVICE, "match_driver", check_words, true},
    {STUNE_SECTION_SCSI_DEVICE, "match_rotational", check_01, true},
    {STUNE_SECTION_SCSI_DEVICE, "queue_depth", check_queue_depth, false},
    {STUNE_SECTION_IRQBALANCE, "ban_pinned", check_yesno, false},
};

bool stune_word_in(const char *list, const char *value)
{
	size_t n = strlen(value);
	for (const char *p = list; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *e = p;
		while (*e && *e != ' ' && *e != '\t' && *e != ',')
			e++;
		if (e > p && (size_t)(e - p) == n && !strncmp(p, value, n))
			return true;
		p = e;
	}
	return false;
}

static void pvalue_clear(struct stune_profile_value *v)
{
	free(v->key);
	free(v->value);
	free(v->why);
}

void stune_profile_free(struct stune_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++) {
		struct stune_profile_rule *r = &p->rules[i];
		free(r->label);
		for (size_t j = 0; j < r->n_matches; j++)
			pvalue_clear(&r->matches[j]);
		for (size_t j = 0; j < r->n_settings; j++)
			pvalue_clear(&r->settings[j]);
		free(r->matches);
		free(r->settings);
	}
	free(p->rules);
	for (size_t i = 0; i < p->n_files; i++)
		free(p->files[i]);
	free(p->files);
	free(p->name);
	free(p->path);
	free(p);
}

static const struct stune_profile_value *find_value(const struct stune_profile_value *v, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].key, key))
			return &v[i];
	return NULL;
}

const struct stune_profile_value *stune_profile_rule_get(const struct stune_profile_rule *r, const char *key)
{
	return find_value(r->settings, r->n_settings, key);
}

const struct stune_profile_value *stune_profile_rule_match(const struct stune_profile_rule *r, const char *key)
{
	return find_value(r->matches, r->n_matches, key);
}

/* ---- loading ---- */

struct loader {
	struct stune_profile *p;
	const char *dir;
	char *stack[MAX_INCLUDE_DEPTH]; /* real paths being loaded, for loop detection */
	const char *stack_display[MAX_INCLUDE_DEPTH];
	int depth;
	char *err;
	int err_r;
};

/* One file being parsed. */
struct file_state {
	struct loader *L;
	const char *display;  /* owned by L->p->files */
	const char *file_dir; /* directory of this file, for path includes */
	unsigned line;
	char *comment;	   /* comment lines collected so far */
	char *why;	   /* the comment that belongs to the line just read */
	unsigned err_line; /* first line where the handler failed */
	unsigned too_long; /* first line longer than inih's buffer */
	const char *text;  /* the file's text, read line by line */
};

static int set_err(struct loader *L, int r, const char *fmt, ...) _printf_(3, 4);
static int set_err(struct loader *L, int r, const char *fmt, ...)
{
	if (L->err)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&L->err, fmt, ap) < 0)
		L->err = NULL;
	va_end(ap);
	L->err_r = r;
	return 0; /* what the inih handler returns on error */
}

static void append_comment(struct file_state *s, const char *text)
{
	while (*text == ' ' || *text == '\t')
		text++;
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		n--;
	if (!n)
		return;
	size_t old = s->comment ? strlen(s->comment) : 0;
	char *c = realloc(s->comment, old + n + 2);
	if (!c)
		return;
	if (old)
		c[old++] = ' ';
	memcpy(c + old, text, n);
	c[old + n] = '\0';
	s->comment = c;
}

/* fgets-style reader for inih over the file's text: counts lines and collects comments. */
static char *reader(char *str, int num, void *stream)
{
	struct file_state *s = stream;
	char *got;

	if (!*s->text)
		return NULL;
	const char *nl = strchr(s->text, '\n');
	size_t len = nl ? (size_t)(nl - s->text) + 1 : strlen(s->text);
	if (len >= (size_t)num) {
		/* inih would cut the line in two: refuse it instead. */
		s->line++;
		if (!s->too_long)
			s->too_long = s->line;
		s->text += len;
		str[0] = '\n';
		str[1] = '\0';
		return str;
	}
	memcpy(str, s->text, len);
	str[len] = '\0';
	s->text += len;
	got = str;
	s->line++;
	free(s->why);
	s->why = NULL;
	const char *p = str;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '#' || *p == ';') {
		append_comment(s, p + 1);
	} else if (*p == '\n' || *p == '\r' || !*p) {
		free(s->comment);
		s->comment = NULL;
	} else {
		s->why = s->comment;
		s->comment = NULL;
	}
	return got;
}

static int parse_section(const char *section, enum stune_profile_section *cls, const char **label)
{
	const char *colon = strchr(section, ':');
	size_t n = colon ? (size_t)(colon - section) : strlen(section);
	*label = colon ? colon + 1 : NULL;
	for (int c = 0; c < _STUNE_SECTION_MAX; c++)
		if (strlen(class_names[c]) == n && !strncmp(class_names[c], section, n)) {
			*cls = (enum stune_profile_section)c;
			if (*label) {
				if (c == STUNE_SECTION_HBA || c == STUNE_SECTION_IRQBALANCE || !**label)
					return -EINVAL;
				for (const char *p = *label; *p; p++)
					if (!isalnum((unsigned char)*p) && !strchr("_-.", *p))
						return -EINVAL;
			} else if (c == STUNE_SECTION_MODULE)
				return -EINVAL;
			return 0;
		}
	return -ENOENT;
}

static struct stune_profile_rule *get_rule(struct stune_profile *p, enum stune_profile_section cls, const char *label)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		struct stune_profile_rule *r = &p->rules[i];
		if (r->cls == cls && ((!r->label && !label) || (r->label && label && !strcmp(r->label, label))))
			return r;
	}
	struct stune_profile_rule *n = realloc(p->rules, (p->n_rules + 1) * sizeof(*n));
	if (!n)
		return NULL;
	p->rules = n;
	struct stune_profile_rule *r = &p->rules[p->n_rules];
	*r = (struct stune_profile_rule){.cls = cls};
	if (label && !(r->label = strdup(label)))
		return NULL;
	p->n_rules++;
	return r;
}

static int set_value(struct file_state *s, struct stune_profile_value **arr, size_t *n, const char *section,
		     const char *key, const char *value)
{
	struct stune_profile_value *v = NULL;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*arr)[i].key, key))
			v = &(*arr)[i];
	if (v && v->file == s->display)
		return set_err(s->L, -EINVAL, "%s:%u: '%s' set twice in [%s] (first at line %u)", s->display, s->line,
			       key, section, v->line);
	if (!v) {
		struct stune_profile_value *na = realloc(*arr, (*n + 1) * sizeof(*na));
		if (!na)
			return set_err(s->L, -ENOMEM, "out of memory");
		*arr = na;
		v = &na[(*n)++];
		*v = (struct stune_profile_value){0};
		if (!(v->key = strdup(key)))
			return set_err(s->L, -ENOMEM, "out of memory");
	}
	free(v->value);
	free(v->why);
	v->value = strdup(value);
	v->why = s->why ? strdup(s->why) : NULL;
	v->file = s->display;
	v->line = s->line;
	if (!v->value)
		return set_err(s->L, -ENOMEM, "out of memory");
	return 1;
}

static int load_file(struct loader *L, const char *path, const char *display, unsigned from_line,
		     const char *from_file);

static bool valid_name(const char *name)
{
	if (!*name || *name == '.')
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_-.", *p))
			return false;
	return true;
}

static int do_include(struct file_state *s, const char *what)
{
	struct loader *L = s->L;
	_cleanup_free_ char *path = NULL;
	const char *display = what;

	if (!*what)
		return set_err(L, -EINVAL, "%s:%u: include: empty name", s->display, s->line);
	if (strchr(what, '/')) {
		while (what[0] == '.' && what[1] == '/')
			what += 2;
		if (what[0] == '/' || !s->file_dir)
			path = strdup(what);
		else if (asprintf(&path, "%s/%s", s->file_dir, what) < 0)
			path = NULL;
		display = path;
	} else {
		if (!valid_name(what))
			return set_err(L, -EINVAL, "%s:%u: include: bad profile name '%s'", s->display, s->line, what);
		if (!L->dir)
			return set_err(L, -ENOENT, "%s:%u: include '%s': no profile directory to look in", s->display,
				       s->line, what);
		if (asprintf(&path, "%s/%s", L->dir, what) < 0)
			path = NULL;
	}
	if (!path)
		return set_err(L, -ENOMEM, "out of memory");
	int r = load_file(L, path, display, s->line, s->display);
	return r < 0 ? 0 : 1;
}

static int handle(struct file_state *s, const char *section, const char *name, const char *value);

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct file_state *s = user;
	int r = handle(s, section, name, value);
	if (r == 0 && !s->err_line)
		s->err_line = s->line;
	return r;
}

static int handle(struct file_state *s, const char *section, const char *name, const char *value)
{
	struct loader *L = s->L;

	if (L->err)
		return 0;
	if (!*section) {
		if (!strcmp(name, "include"))
			return do_include(s, value);
		return set_err(L, -EINVAL, "%s:%u: key '%s' outside a section (only include= may come first)",
			       s->display, s->line, name);
	}
	enum stune_profile_section cls;
	const char *label;
	int r = parse_section(section, &cls, &label);
	if (r == -ENOENT)
		return set_err(L, -EINVAL, "%s:%u: unknown section [%s]", s->display, s->line, section);
	if (r < 0)
		return set_err(L, -EINVAL, "%s:%u: bad section name [%s]", s->display, s->line, section);
	if (!strcmp(name, "include"))
		return set_err(L, -EINVAL, "%s:%u: include= must come before the first section", s->display, s->line);

	struct stune_profile_rule *rule = get_rule(L->p, cls, label);
	if (!rule)
		return set_err(L, -ENOMEM, "out of memory");

	if (cls == STUNE_SECTION_MODULE) {
		/* Driver parameters: names are the driver's; check their shape only. */
		bool ok = *name != '\0';
		for (const char *p = name; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '_')
				ok = false;
		if (!ok)
			return set_err(L, -EINVAL, "%s:%u: bad parameter name '%s' in [%s]", s->display, s->line, name,
				       section);
		const char *why = check_param(value);
		if (why)
			return set_err(L, -EINVAL, "%s:%u: bad value '%s' for %s in [%s] (expected %s)", s->display,
				       s->line, value, name, section, why);
		return set_value(s, &rule->settings, &rule->n_settings, section, name, value);
	}
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		if (keys[i].cls != cls || strcmp(keys[i].key, name))
			continue;
		const char *why = keys[i].check(value);
		if (why)
			return set_err(L, -EINVAL, "%s:%u: bad value '%s' for %s in [%s] (expected %s)", s->display,
				       s->line, value, name, section, why);
		if (keys[i].match)
			return set_value(s, &rule->matches, &rule->n_matches, section, name, value);
		return set_value(s, &rule->settings, &rule->n_settings, section, name, value);
	}
	return set_err(L, -EINVAL, "%s:%u: unknown key '%s' in [%s]", s->display, s->line, name, section);
}

static int add_file_name(struct stune_profile *p, const char *display, const char **stored)
{
	/* NULL-terminated as well as counted. */
	char **n = realloc(p->files, (p->n_files + 2) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->files = n;
	n[p->n_files + 1] = NULL;
	if (!(n[p->n_files] = strdup(display)))
		return -ENOMEM;
	*stored = n[p->n_files++];
	return 0;
}

static int parse_state(struct file_state *s)
{
	struct loader *L = s->L;
	int r = ini_parse_stream(reader, s, handler, s);
	free(s->comment);
	free(s->why);
	s->comment = s->why = NULL;
	if (r == -2)
		return set_err(L, -ENOMEM, "out of memory"), -ENOMEM;
	/* inih's syntax errors and over-long lines count too: the first line in the file wins. */
	unsigned syn = 0;
	const char *what = NULL;
	if (s->too_long && (r <= 0 || s->too_long <= (unsigned)r))
		syn = s->too_long, what = "line too long";
	else if (r > 0)
		syn = (unsigned)r, what = "syntax error: expected [section] or key = value";
	if (syn && (!s->err_line || syn < s->err_line)) {
		free(L->err);
		L->err = NULL;
		set_err(L, -EINVAL, "%s:%u: %s", s->display, syn, what);
	}
	return L->err ? L->err_r : 0;
}

static int load_file(struct loader *L, const char *path, const char *display, unsigned from_line, const char *from_file)
{
	_cleanup_free_ char *real = realpath(path, NULL);
	if (!real) {
		int e = errno;
		if (from_file)
			return set_err(L, e == ENOENT ? -ENOENT : -e, "%s:%u: include '%s': %s", from_file, from_line,
				       display, e == ENOENT ? "no such profile" : strerror(e)),
			       e == ENOENT ? -ENOENT : -e;
		if (e == ENOENT && !strchr(L->p->name, '/'))
			return set_err(L, -ENOENT, "profile '%s' not found in %s", display, L->dir ? L->dir : "(none)"),
			       -ENOENT;
		return set_err(L, -e, "profile %s: %s", display, strerror(e)), -e;
	}
	for (int i = 0; i < L->depth; i++)
		if (!strcmp(L->stack[i], real)) {
			/* "a -> b -> a" */
			char chain[1024] = "";
			for (int j = i; j < L->depth; j++) {
				strncat(chain, L->stack_display[j], sizeof(chain) - strlen(chain) - 1);
				strncat(chain, " -> ", sizeof(chain) - strlen(chain) - 1);
			}
			strncat(chain, display, sizeof(chain) - strlen(chain) - 1);
			return set_err(L, -ELOOP, "%s:%u: include loop: %s", from_file, from_line, chain), -ELOOP;
		}
	if (L->depth >= MAX_INCLUDE_DEPTH)
		return set_err(L, -ELOOP, "%s:%u: includes nested more than %d deep", from_file, from_line,
			       MAX_INCLUDE_DEPTH),
		       -ELOOP;

	/* Regular files only, read whole with a cap: a FIFO or /dev/zero would
	 * block or never end, a directory would read as an empty profile. */
	_cleanup_free_ char *text = NULL;
	int rd = stune_read_user_file(real, STUNE_PROFILE_MAX_BYTES, STUNE_UF_TEXT, &text, NULL);
	if (rd < 0) {
		const char *why = stune_user_file_strerror(rd, STUNE_PROFILE_MAX_BYTES);
		if (from_file)
			return set_err(L, rd, "%s:%u: include '%s': %s", from_file, from_line, display, why), rd;
		return set_err(L, rd, "profile %s: %s", display, why), rd;
	}
	struct file_state s = {.L = L, .text = text};
	int r = add_file_name(L->p, display, &s.display);
	if (r < 0)
		return set_err(L, r, "out of memory"), r;
	_cleanup_free_ char *dirbuf = strdup(path);
	if (!dirbuf)
		return set_err(L, -ENOMEM, "out of memory"), -ENOMEM;
	char *slash = strrchr(dirbuf, '/');
	if (slash)
		*slash = '\0';
	s.file_dir = slash ? (*dirbuf ? dirbuf : "/") : ".";

	L->stack[L->depth] = real;
	L->stack_display[L->depth] = s.display;
	L->depth++;
	r = parse_state(&s);
	L->depth--;
	return r;
}

/*
 * A profile must say which HBAs it tunes: one without [hba] match_driver or
 * match_pci would retune every disk of the host, the boot disk too.
 */
static int check_scope(struct loader *L)
{
	for (size_t i = 0; i < L->p->n_rules; i++)
		if (L->p->rules[i].cls == STUNE_SECTION_HBA && L->p->rules[i].n_matches)
			return 0;
	set_err(L, -EINVAL,
		"%s: no [hba] scope: say which HBAs the profile tunes, e.g. '[hba]' and 'match_driver = mpi3mr' "
		"('match_driver = *' for every HBA)",
		L->p->n_files ? L->p->files[0] : L->p->name);
	return -EINVAL;
}

static int finish(struct loader *L, int r, struct stune_profile **out, char **err)
{
	if (r >= 0 && !L->err)
		r = check_scope(L);
	if (r < 0 || L->err) {
		if (err)
			*err = steal_pointer(&L->err);
		free(L->err);
		stune_profile_free(L->p);
		return r < 0 ? r : (L->err_r < 0 ? L->err_r : -EINVAL);
	}
	*out = L->p;
	return 0;
}

int stune_profile_load(const char *name_or_path, const char *dir, struct stune_profile **out, char **err)
{
	struct loader L = {.dir = dir};
	if (err)
		*err = NULL;
	if (!(L.p = calloc(1, sizeof(*L.p))) || !(L.p->name = strdup(name_or_path))) {
		stune_profile_free(L.p);
		return -ENOMEM;
	}
	_cleanup_free_ char *path = NULL;
	if (strchr(name_or_path, '/'))
		path = strdup(name_or_path);
	else if (!valid_name(name_or_path)) {
		set_err(&L, -EINVAL,
			"bad profile name '%s' (a name is letters, digits, '_', '-' and '.'; give a path "
			"with a '/')",
			name_or_path);
		return finish(&L, -EINVAL, out, err);
	} else if (!dir) {
		set_err(&L, -ENOENT, "profile '%s': no profile directory (use --profile-dir)", name_or_path);
		return finish(&L, -ENOENT, out, err);
	} else if (asprintf(&path, "%s/%s", dir, name_or_path) < 0)
		path = NULL;
	if (!path || !(L.p->path = strdup(path)))
		return finish(&L, -ENOMEM, out, err);
	int r = load_file(&L, path, name_or_path, 0, NULL);
	return finish(&L, r, out, err);
}

int stune_profile_load_string(const char *display, const char *text, const char *dir, struct stune_profile **out,
			      char **err)
{
	struct loader L = {.dir = dir};
	if (err)
		*err = NULL;
	if (!(L.p = calloc(1, sizeof(*L.p))) || !(L.p->name = strdup(display))) {
		stune_profile_free(L.p);
		return -ENOMEM;
	}
	struct file_state s = {.L = &L, .text = text, .file_dir = dir};
	int r = add_file_name(L.p, display, &s.display);
	if (r == 0)
		r = parse_state(&s);
	return finish(&L, r, out, err);
}
