/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tune/journal.h"
#include "tune/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/jsonw.h"
#include "core/statefile.h"
#include "core/trust.h"
#include "core/userfile.h"
#include "detect/irqbalance.h"
#include "tune/persist.h"

/* journal.json of the whole 4,096-disk plan is ~6 MiB (bench/); its log as much again. */
#define STUNE_JOURNAL_MAX_BYTES (256u << 20)

DEFINE_CLEANUP_FUNC(json_object, json_object_put)
DEFINE_CLEANUP_FUNC(json_tokener, json_tokener_free)

static const char *const jstate_names[_STUNE_J_MAX] = {
    [STUNE_J_PENDING] = "pending",   [STUNE_J_APPLIED] = "applied", [STUNE_J_IGNORED] = "ignored",
    [STUNE_J_FAILED] = "failed",     [STUNE_J_SKIPPED] = "skipped", [STUNE_J_RECORDED] = "recorded",
    [STUNE_J_REVERTED] = "reverted",
};

const char *stune_jstate_name(enum stune_jstate s)
{
	return s < _STUNE_J_MAX ? jstate_names[s] : "?";
}

void stune_journal_free(struct stune_journal *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		struct stune_jentry *e = &j->entries[i];
		free(e->object);
		free(e->setting);
		free(e->path);
		free(e->old);
		free(e->desired);
		free(e->after);
		free(e->boot_id);
	}
	free(j->entries);
	free(j->profile);
	free(j->profile_path);
	free(j->profile_dir);
	free(j->digest);
	free(j->payload);
	free(j->log_id);
	free(j);
}

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (s && !(*out = strdup(s)))
		return -ENOMEM;
	return 0;
}

/* The next entry slot of j (the array doubles), zeroed and counted. */
static struct stune_jentry *next_entry(struct stune_journal *j)
{
	if (j->n >= j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 64;
		struct stune_jentry *n = realloc(j->entries, cap * sizeof(*n));
		if (!n)
			return NULL;
		j->entries = n;
		j->cap = cap;
	}
	struct stune_jentry *e = &j->entries[j->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

int stune_journal_add(struct stune_journal *j, const char *object, const char *setting, const char *path,
		      const char *old, const char *desired, enum stune_jstate state)
{
	struct stune_jentry *e = next_entry(j);
	if (!e)
		return -ENOMEM;
	e->state = state;
	if (dup_opt(object, &e->object) < 0 || dup_opt(setting, &e->setting) < 0 || dup_opt(path, &e->path) < 0 ||
	    dup_opt(old, &e->old) < 0 || dup_opt(desired, &e->desired) < 0) {
		free(e->object);
		free(e->setting);
		free(e->path);
		free(e->old);
		free(e->desired);
		j->n--;
		return -ENOMEM;
	}
	return 0;
}

int stune_state_dir(const char *prefix, const char *opt, bool create, char **out, struct stune_trust_fault *bad)
{
	_cleanup_free_ char *d = NULL;
	if (opt) {
		if (!(d = strdup(opt)))
			return -ENOMEM;
	} else if (asprintf(&d, "%s%s", prefix ? prefix : "", STUNE_STATE_DIR) < 0)
		return -ENOMEM;
	size_t len = strlen(d);
	while (len > 1 && d[len - 1] == '/')
		d[--len] = '\0';
	/* Checked before anything is made in it, and again once it is there (core/trust.h). */
	int r = stune_path_trusted(d, geteuid(), bad);
	if (r < 0 || (create && ((r = stune_mkdir_p(d, 0755)) < 0 || (r = stune_path_trusted(d, geteuid(), bad)) < 0)))
		return r;
	*out = steal_pointer(&d);
	return 0;
}

/* How long a taker waits for a holder's pid to appear in the lock file (it writes it just after its flock). */
#define LOCK_PID_WAIT_MS 500

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The lock file of dir, opened without following a link and without blocking; a regular file. */
static int lock_open(const char *dir, int flags, char **path, int *fd)
{
	if (asprintf(path, "%s/lock", dir) < 0) {
		*path = NULL;
		return -ENOMEM;
	}
	_cleanup_close_ int f = open(*path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
	struct stat st;
	if (f < 0)
		return negative_errno();
	if (fstat(f, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -STUNE_ENOTREG;
	*fd = f;
	f = -1;
	return 0;
}

/* What the holder wrote in the lock file f: "PID COMMAND\n" (at most 63 bytes read). */
static void lock_read_holder(int f, struct stune_lock_holder *h)
{
	char buf[64];
	memset(h, 0, sizeof(*h));
	ssize_t k = pread(f, buf, sizeof(buf) - 1, 0);
	if (k < 0) {
		snprintf(h->why, sizeof(h->why), "the lock file cannot be read (%s)", strerror(errno));
		return;
	}
	buf[k] = '\0';
	if (k == 0) {
		snprintf(h->why, sizeof(h->why), "it wrote no pid there (so it is not scsitune, which always does)");
		return;
	}
	char *end;
	errno = 0;
	long pid = strtol(buf, &end, 10);
	if (end == buf || errno || pid <= 0 || pid > INT_MAX || (*end && *end != ' ' && *end != '\n')) {
		snprintf(h->why, sizeof(h->why), "the file holds no pid (not scsitune's lock file?)");
		return;
	}
	/* The file keeps the last holder's pid: a pid no process has is not the holder. */
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
		snprintf(
		    h->why, sizeof(h->why),
		    "it wrote no pid there (so it is not scsitune; pid %ld there is an earlier run's, not running)",
		    pid);
		return;
	}
	h->pid = (pid_t)pid;
	/* The command, lower-case words (what stune_lock_take writes). */
	size_t n = 0;
	if (*end == ' ')
		for (const char *c = end + 1; *c && *c != '\n' && n < sizeof(h->what) - 1; c++) {
			if (!((*c >= 'a' && *c <= 'z') || *c == ' ')) {
				n = 0;
				break;
			}
			h->what[n++] = *c;
		}
	h->what[n] = '\0';
}

#ifdef SCSITUNE_TEST_HOOKS
/* SCSITUNE_TEST_LOCK_HOLD=FILE: the lock taken, FILE is created and the lock held while FILE is there (60 s at
 * most): a test holds a real scsitune's lock as long as it needs. */
static void lock_hold_hook(void)
{
	const char *p = getenv("SCSITUNE_TEST_LOCK_HOLD");
	if (!p || !*p)
		return;
	int f = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (f >= 0)
		close(f);
	long long deadline = now_ms() + 60000;
	while (access(p, F_OK) == 0 && now_ms() < deadline)
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}
#else
static void lock_hold_hook(void)
{
}
#endif

/*
 * f could not be flock()ed (op: LOCK_EX or LOCK_SH): who holds it, or 0 when
 * the lock was taken after all (its holder ended meanwhile). An exclusive
 * holder is named by the pid it wrote; a taker may look between the
 * holder's flock and its write, so an unknown or dead pid is read again for
 * LOCK_PID_WAIT_MS. A taker of LOCK_EX that can take the lock shared is
 * kept out by shared holders only: verify, which writes no pid.
 */
static int lock_contended(const char *path, int f, int op, struct stune_lock_holder *h)
{
	long long deadline = now_ms() + LOCK_PID_WAIT_MS;
	for (;;) {
		if (op == LOCK_EX) {
			int pf = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
			bool shared_only = pf >= 0 && flock(pf, LOCK_SH | LOCK_NB) == 0;
			if (pf >= 0)
				close(pf);
			if (shared_only) {
				if (flock(f, LOCK_EX | LOCK_NB) == 0)
					return 0;
				if (errno != EWOULDBLOCK)
					return negative_errno();
				memset(h, 0, sizeof(*h));
				h->shared = true;
				snprintf(h->what, sizeof(h->what), "verify");
				snprintf(h->why, sizeof(h->why), "a shared holder writes no pid");
				return -EWOULDBLOCK;
			}
		}
		lock_read_holder(f, h);
		if (h->pid > 0 || now_ms() >= deadline)
			return -EWOULDBLOCK;
		nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
		if (flock(f, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK)
			return negative_errno();
	}
}

int stune_lock_take(const char *dir, const char *what, int *fd, struct stune_lock_holder *holder)
{
	_cleanup_free_ char *p = NULL;
	_cleanup_close_ int f = -1;
	struct stune_lock_holder h;
	int r = lock_open(dir, O_RDWR | O_CREAT, &p, &f);
	if (r < 0)
		return r;
	if (flock(f, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return negative_errno();
		if ((r = lock_contended(p, f, LOCK_EX, &h)) < 0) {
			if (holder)
				*holder = h;
			return r;
		}
	}
	/* The pid written over the old one, then the rest cut: the file is never empty while held. */
	char buf[64];
	int len = snprintf(buf, sizeof(buf), "%ld %s\n", (long)getpid(), what ? what : "");
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -EINVAL;
	ssize_t k = pwrite(f, buf, (size_t)len, 0);
	if (k != len)
		return k < 0 ? negative_errno() : -EIO;
	if (ftruncate(f, len) < 0)
		return negative_errno();
	lock_hold_hook();
	*fd = f;
	f = -1;
	return 0;
}

int stune_lock_take_shared(const char *dir, int *fd, struct stune_lock_holder *holder)
{
	_cleanup_free_ char *p = NULL;
	_cleanup_close_ int f = -1;
	struct stune_lock_holder h;
	*fd = -1;
	int r = lock_open(dir, O_RDONLY, &p, &f);
	if (r == -ENOENT)
		return 0; /* no lock file: nothing was ever applied with this state directory */
	if (r < 0)
		return r;
	if (flock(f, LOCK_SH | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return negative_errno();
		if ((r = lock_contended(p, f, LOCK_SH, &h)) < 0) {
			if (holder)
				*holder = h;
			return r;
		}
	}
	lock_hold_hook();
	*fd = f;
	f = -1;
	return 0;
}

/* The outcome fields of an entry: after, state, errno (when set). */
static void entry_outcome(struct stune_jsonw *w, const struct stune_jentry *e)
{
	stune_jsonw_str(w, "after", e->after);
	stune_jsonw_str(w, "state", stune_jstate_name(e->state));
	if (e->err)
		stune_jsonw_int(w, "errno", e->err);
}

static int journal_path(const char *dir, const char *name, char **out)
{
	return asprintf(out, "%s/%s", dir, name) < 0 ? -ENOMEM : 0;
}

struct doc {
	const struct stune_journal *j;
	const char *log_id;
};

/* journal.json, streamed (the bytes json-c printed for the tree it used to build: pretty, no space after ':'). */
static int fill_doc(FILE *f, void *data)
{
	const struct doc *d = data;
	const struct stune_journal *j = d->j;
	struct stune_jsonw w;
	stune_jsonw_init(&w, f, STUNE_JSONW_PRETTY);
	stune_jsonw_obj_begin(&w, NULL);
	stune_jsonw_int(&w, "version", STUNE_JOURNAL_VERSION);
	stune_jsonw_str(&w, "profile", j->profile);
	stune_jsonw_str(&w, "profile_path", j->profile_path);
	stune_jsonw_str(&w, "profile_dir", j->profile_dir);
	stune_jsonw_str(&w, "digest", j->digest);
	stune_jsonw_int(&w, "started", j->started);
	if (j->persist)
		stune_jsonw_bool(&w, "persist", true);
	if (j->payload)
		stune_jsonw_str(&w, "payload", j->payload);
	if (d->log_id)
		stune_jsonw_str(&w, "log", d->log_id);
	stune_jsonw_arr_begin(&w, "changes");
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_jentry *e = &j->entries[i];
		stune_jsonw_obj_begin(&w, NULL);
		stune_jsonw_str(&w, "object", e->object);
		stune_jsonw_str(&w, "setting", e->setting);
		stune_jsonw_str(&w, "path", e->path);
		if (e->kind != STUNE_JK_VALUE)
			stune_jsonw_str(&w, "kind", e->kind == STUNE_JK_FILE ? "file" : "symlink");
		if (e->absent)
			stune_jsonw_bool(&w, "absent", true);
		stune_jsonw_str(&w, "old", e->old);
		stune_jsonw_str(&w, "desired", e->desired);
		if (e->boot_id)
			stune_jsonw_str(&w, "boot_id", e->boot_id);
		entry_outcome(&w, e);
		stune_jsonw_end(&w);
	}
	stune_jsonw_end_all(&w);
	fputc('\n', f);
	return 0;
}

/* Write journal.json naming log_id (NULL: compact). */
static int save_doc(const char *dir, const struct stune_journal *j, const char *log_id)
{
	struct doc d = {j, log_id};
	return stune_write_atomic_fn(dir, "journal.json", 0644, fill_doc, &d, NULL);
}

/* Remove journal.log (after journal.json stopped naming it: a crash between leaves a log nobody replays). */
static int unlink_log(const char *dir)
{
	_cleanup_free_ char *p = NULL;
	int r = journal_path(dir, "journal.log", &p);
	if (r < 0)
		return r;
	return unlink(p) < 0 && errno != ENOENT ? negative_errno() : 0;
}

int stune_journal_save(const char *dir, struct stune_journal *j)
{
	int r = save_doc(dir, j, NULL);
	if (r < 0)
		return r;
	free(j->log_id);
	j->log_id = NULL;
	return unlink_log(dir);
}

/* n log lines: the JSON objects fill writes (k: 0 to n-1), each with its
 * newline, in one write(2) on an O_APPEND fd (a kill leaves at most the last
 * line torn, never half a line behind a whole one; the loader drops it). */
static int write_lines(int fd, void (*fill)(struct stune_jsonw *w, const void *data, size_t k), const void *data,
		       size_t n)
{
	_cleanup_free_ char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);
	if (!m)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		struct stune_jsonw w;
		stune_jsonw_init(&w, m, 0);
		fill(&w, data, k);
		stune_jsonw_end_all(&w);
		fputc('\n', m);
	}
	if (fclose(m) != 0)
		return -ENOMEM;
	ssize_t k = write(fd, line, len);
	if (k < 0)
		return negative_errno();
	return (size_t)k == len ? 0 : -EIO;
}

static void fill_head(struct stune_jsonw *w, const void *data, size_t k)
{
	(void)k;
	stune_jsonw_obj_begin(w, NULL);
	stune_jsonw_str(w, "log", data);
}

int stune_journal_log_begin(const char *dir, struct stune_journal *j, int *fd)
{
	_cleanup_free_ char *p = NULL, *id = NULL;
	int r;
	if ((r = journal_path(dir, "journal.log", &p)) < 0)
		return r;
	if (asprintf(&id, "%lld-%ld", j->started, (long)getpid()) < 0)
		return -ENOMEM;
	/* The log first (empty but for its id), then the journal that names it. */
	_cleanup_close_ int f = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (f < 0)
		return negative_errno();
	if ((r = write_lines(f, fill_head, id, 1)) < 0 || (r = save_doc(dir, j, id)) < 0)
		return r;
	free(j->log_id);
	j->log_id = steal_pointer(&id);
	*fd = f;
	f = -1;
	return 0;
}

struct entry_lines {
	const struct stune_journal *j;
	const size_t *i;
};

static void fill_entry(struct stune_jsonw *w, const void *data, size_t k)
{
	const struct entry_lines *l = data;
	stune_jsonw_obj_begin(w, NULL);
	stune_jsonw_int(w, "i", (int64_t)l->i[k]);
	entry_outcome(w, &l->j->entries[l->i[k]]);
}

int stune_journal_log_entries(int fd, const struct stune_journal *j, const size_t *i, size_t n)
{
	struct entry_lines l = {j, i};
	return n ? write_lines(fd, fill_entry, &l, n) : 0;
}

static int get_str(json_object *o, const char *k, char **out)
{
	json_object *v;
	*out = NULL;
	if (!json_object_object_get_ex(o, k, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -EBADMSG;
	return (*out = strdup(json_object_get_string(v))) ? 0 : -ENOMEM;
}

static enum stune_jstate jstate_from_name(const char *name)
{
	for (int s = 0; s < _STUNE_J_MAX; s++)
		if (!strcmp(name, jstate_names[s]))
			return (enum stune_jstate)s;
	return _STUNE_J_MAX;
}

/* One JSON value that is exactly the len bytes of line (no newline); NULL otherwise. */
static json_object *parse_line(const char *line, size_t len)
{
	if (len == 0 || len > INT_MAX)
		return NULL;
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return NULL;
	json_object *o = json_tokener_parse_ex(tok, line, (int)len);
	if (o &&
	    (json_tokener_get_error(tok) != json_tokener_success || (size_t)json_tokener_get_parse_end(tok) != len)) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* One outcome line onto its entry; false: not a whole, valid line (a torn tail ends the replay). */
static bool replay_line(struct stune_journal *j, const char *line, size_t len)
{
	if (len < 2 || line[len - 1] != '\n')
		return false;
	_cleanup_(json_object_putp) json_object *o = parse_line(line, len - 1);
	json_object *v;
	if (!o || !json_object_object_get_ex(o, "i", &v) || !json_object_is_type(v, json_type_int))
		return false;
	int64_t i = json_object_get_int64(v);
	_cleanup_free_ char *state = NULL, *after = NULL;
	if (i < 0 || (uint64_t)i >= j->n || get_str(o, "state", &state) < 0 || !state ||
	    get_str(o, "after", &after) < 0)
		return false;
	enum stune_jstate st = jstate_from_name(state);
	if (st == _STUNE_J_MAX)
		return false;
	struct stune_jentry *e = &j->entries[i];
	e->state = st;
	e->err = json_object_object_get_ex(o, "errno", &v) ? json_object_get_int(v) : 0;
	free(e->after);
	e->after = steal_pointer(&after);
	return true;
}

/* Replay journal.log onto j when its first line names j's log. */
static int replay_log(const char *dir, struct stune_journal *j)
{
	_cleanup_free_ char *p = NULL, *text = NULL;
	size_t len = 0;
	int r = journal_path(dir, "journal.log", &p);
	if (r < 0)
		return r;
	r = stune_read_user_file(p, STUNE_JOURNAL_MAX_BYTES, STUNE_UF_NOFOLLOW, &text, &len);
	if (r == -ENOENT)
		return 0; /* no log: every outcome still pending */
	if (r < 0)
		return r;
	/* Lines up to each '\n'; a torn last line has none (and a NUL makes a line invalid). */
	const char *line = text, *end = text + len;
	const char *nl = memchr(line, '\n', len);
	if (!nl)
		return 0;
	_cleanup_(json_object_putp) json_object *head = parse_line(line, (size_t)(nl - line));
	json_object *v;
	if (!head || !json_object_object_get_ex(head, "log", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), j->log_id))
		return 0; /* another apply's log */
	for (line = nl + 1; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl || !replay_line(j, line, (size_t)(nl - line) + 1))
			break;
	}
	return 0;
}

/* A path scsitune writes: relative, plain components, under sys/ or proc/ (a
 * value; irqbalance's defaults file when it could not be read) or etc/ (a file
 * or link). */
static bool path_ok(enum stune_jkind kind, const char *path)
{
	const char *top = kind == STUNE_JK_VALUE ? "sys/\0proc/\0" : "etc/\0";
	bool under = kind == STUNE_JK_VALUE && !strcmp(path, STUNE_IRQBALANCE_DEFAULTS);
	for (const char *t = top; *t; t += strlen(t) + 1)
		under |= !strncmp(path, t, strlen(t));
	if (!under)
		return false;
	for (const char *c = path; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f)
				return false;
		c += n;
		if (*c && !*++c)
			return false; /* a trailing '/' */
	}
	return true;
}

const char *stune_journal_strerror(int r)
{
	switch (r) {
	case -EBADMSG:
		return "not a scsitune journal";
	case -EXDEV:
		return "a change names a path scsitune never writes (edited by hand?): refused";
	case -ELOOP:
		return "a symbolic link: refused";
	}
	return stune_user_file_strerror(r, STUNE_JOURNAL_MAX_BYTES);
}

int stune_journal_load(const char *dir, struct stune_journal **out)
{
	return stune_journal_load_named(dir, out, NULL);
}

/* One entry of "changes" into e (which owns what it got even on error). */
static int load_entry(json_object *o, struct stune_jentry *e)
{
	json_object *v;
	_cleanup_free_ char *state = NULL, *kind = NULL;
	int r;
	if (!json_object_is_type(o, json_type_object))
		return -EBADMSG;
	if ((r = get_str(o, "object", &e->object)) < 0 || (r = get_str(o, "setting", &e->setting)) < 0 ||
	    (r = get_str(o, "path", &e->path)) < 0 || (r = get_str(o, "old", &e->old)) < 0 ||
	    (r = get_str(o, "desired", &e->desired)) < 0 || (r = get_str(o, "after", &e->after)) < 0 ||
	    (r = get_str(o, "state", &state)) < 0 || (r = get_str(o, "boot_id", &e->boot_id)) < 0)
		return r;
	if (!e->object || !e->setting || !e->path || !state)
		return -EBADMSG;
	if ((e->state = jstate_from_name(state)) == _STUNE_J_MAX)
		return -EBADMSG;
	if (json_object_object_get_ex(o, "errno", &v))
		e->err = json_object_get_int(v);
	if ((r = get_str(o, "kind", &kind)) < 0)
		return r;
	if (kind && strcmp(kind, "file") && strcmp(kind, "symlink"))
		return -EBADMSG;
	e->kind = !kind ? STUNE_JK_VALUE : !strcmp(kind, "file") ? STUNE_JK_FILE : STUNE_JK_SYMLINK;
	e->absent = json_object_object_get_ex(o, "absent", &v) && json_object_get_boolean(v);
	return path_ok(e->kind, e->path) ? 0 : -EXDEV;
}

static size_t skip_space(const char *t, size_t i, size_t n)
{
	while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/*
 * Where the top-level "changes" array of text is: *lb its '[', *rb its ']'.
 * false unless text is an object with exactly one "changes" key at its top
 * level and an array after it, in strict JSON outside its strings (the
 * caller then parses the whole tree). A scan of the bytes: strings (with
 * their escapes) skipped, brackets counted.
 */
static bool changes_span(const char *t, size_t n, size_t *lb, size_t *rb)
{
	size_t i = skip_space(t, 0, n), key = 0, found = 0;
	int depth = 0;
	bool closed = false;
	if (i >= n || t[i] != '{')
		return false;
	for (; i < n; i++) {
		switch (t[i]) {
		case '"':
			key = i++;
			while (i < n && t[i] != '"')
				i += t[i] == '\\' ? 2 : 1;
			if (i >= n)
				return false;
			if (depth == 1 && i - key == 8 && !memcmp(t + key, "\"changes", 8)) {
				size_t k = skip_space(t, i + 1, n);
				if (k < n && t[k] == ':') {
					k = skip_space(t, k + 1, n);
					if (k >= n || t[k] != '[' || found++)
						return false;
					*lb = k;
				}
			}
			break;
		case '\'':
		case '/':
			return false; /* json-c's single-quoted strings and comments: the tree takes them */
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			if (--depth == 1 && found == 1 && !closed && i > *lb) {
				if (t[i] != ']')
					return false;
				*rb = i;
				closed = true;
			}
			if (depth == 0)
				return found == 1 && closed;
			break;
		}
	}
	return false;
}

/*
 * The entries between [lb, rb] of text, one JSON value at a time through one
 * tokener, each freed before the next: a journal of 20,000 entries as one
 * json-c tree (a hash table per object, all alive at once) took 250 ms to
 * parse; this, 25 ms.
 */
static int load_entries_each(const char *t, size_t lb, size_t rb, struct stune_journal *j)
{
	_cleanup_(json_tokener_freep) json_tokener *tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	size_t i = skip_space(t, lb + 1, rb);
	if (i == rb)
		return 0;
	for (;;) {
		_cleanup_(json_object_putp) json_object *o = json_tokener_parse_ex(tok, t + i, (int)(rb - i));
		if (!o || json_tokener_get_error(tok) != json_tokener_success)
			return -EBADMSG;
		i += json_tokener_get_parse_end(tok);
		json_tokener_reset(tok);
		struct stune_jentry *e = next_entry(j);
		if (!e)
			return -ENOMEM;
		int r = load_entry(o, e);
		if (r < 0)
			return r;
		i = skip_space(t, i, rb);
		if (i == rb)
			return 0;
		if (t[i] != ',')
			return -EBADMSG;
		if ((i = skip_space(t, i + 1, rb)) == rb)
			return 0; /* a trailing comma, as json-c takes it */
	}
}

/* The whole text as one tree (what changes_span does not take): its "changes" array. */
static int load_entries_tree(json_object *root, struct stune_journal *j)
{
	json_object *arr;
	if (!json_object_object_get_ex(root, "changes", &arr) || !json_object_is_type(arr, json_type_array))
		return -EBADMSG;
	size_t n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct stune_jentry *e = next_entry(j);
		if (!e)
			return -ENOMEM;
		int r = load_entry(json_object_array_get_idx(arr, i), e);
		if (r < 0)
			return r;
	}
	return 0;
}

int stune_journal_load_named(const char *dir, struct stune_journal **out, const char **file)
{
	if (file)
		*file = "journal.json";
	_cleanup_free_ char *p = NULL;
	if (asprintf(&p, "%s/journal.json", dir) < 0)
		return -ENOMEM;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = stune_read_user_file(p, STUNE_JOURNAL_MAX_BYTES, STUNE_UF_NOFOLLOW | STUNE_UF_TEXT, &text, &len);
	if (r < 0)
		return r;
	/* The rest of the document without its entries ("changes": []), when they can be cut out. */
	size_t lb = 0, rb = 0;
	bool each = changes_span(text, len, &lb, &rb);
	_cleanup_free_ char *head = each ? malloc(len - (rb - lb + 1) + 3) : NULL;
	if (each && !head)
		return -ENOMEM;
	if (each) {
		memcpy(head, text, lb);
		memcpy(head + lb, "[]", 2);
		memcpy(head + lb + 2, text + rb + 1, len - rb - 1);
		head[len - (rb - lb + 1) + 2] = '\0';
	}
	_cleanup_(json_object_putp) json_object *root = json_tokener_parse(each ? head : text);
	json_object *v;
	/* A second "changes" the scan did not see as one (spelled with escapes: json-c keeps the last): the tree. */
	if (each && root &&
	    (!json_object_object_get_ex(root, "changes", &v) || !json_object_is_type(v, json_type_array) ||
	     json_object_array_length(v) != 0)) {
		each = false;
		json_object_put(root);
		root = json_tokener_parse(text);
	}
	if (!root || !json_object_object_get_ex(root, "version", &v) || json_object_get_int(v) != STUNE_JOURNAL_VERSION)
		return -EBADMSG;
	_cleanup_(stune_journal_freep) struct stune_journal *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	if ((r = get_str(root, "profile", &j->profile)) < 0 ||
	    (r = get_str(root, "profile_path", &j->profile_path)) < 0 ||
	    (r = get_str(root, "profile_dir", &j->profile_dir)) < 0 || (r = get_str(root, "digest", &j->digest)) < 0)
		return r;
	if (json_object_object_get_ex(root, "started", &v))
		j->started = json_object_get_int64(v);
	if ((r = each ? load_entries_each(text, lb, rb, j) : load_entries_tree(root, j)) < 0)
		return r;
	j->persist = json_object_object_get_ex(root, "persist", &v) && json_object_get_boolean(v);
	if ((r = get_str(root, "payload", &j->payload)) < 0)
		return r;
	if ((r = get_str(root, "log", &j->log_id)) < 0)
		return r;
	if (j->log_id && (r = replay_log(dir, j)) < 0) {
		if (file)
			*file = "journal.log";
		return r;
	}
	*out = steal_pointer(&j);
	return 0;
}

int stune_journal_remove(const char *dir)
{
	_cleanup_free_ char *p = NULL;
	if (asprintf(&p, "%s/journal.json", dir) < 0)
		return -ENOMEM;
	if (unlink(p) < 0 && errno != ENOENT)
		return negative_errno();
	int r = unlink_log(dir);
	if (r < 0)
		return r;
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
}

static void hash_str(crypto_hash_sha256_state *m, const char *s)
{
	s = s ? s : "";
	crypto_hash_sha256_update(m, (const unsigned char *)s, strlen(s) + 1);
}

int stune_profile_digest(const struct stune_profile *p, char **out)
{
	/* SHA-256 through libsodium (libcrypto is loaded only where X.509 or
	 * CMS is read: core/crypto-api.h). */
	crypto_hash_sha256_state m;
	unsigned char md[crypto_hash_sha256_BYTES];
	const unsigned mdlen = sizeof(md);
	crypto_hash_sha256_init(&m);
	/* The resolved text: one "[class:label]" line per rule, then its keys, include order. */
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct stune_profile_rule *ru = &p->rules[i];
		hash_str(&m, stune_profile_section_name(ru->cls));
		hash_str(&m, ru->label);
		for (size_t k = 0; k < ru->n_matches; k++) {
			hash_str(&m, ru->matches[k].key);
			hash_str(&m, ru->matches[k].value);
		}
		for (size_t k = 0; k < ru->n_settings; k++) {
			hash_str(&m, ru->settings[k].key);
			hash_str(&m, ru->settings[k].value);
		}
	}
	crypto_hash_sha256_final(&m, md);
	char *hex = malloc(mdlen * 2 + 1);
	if (!hex)
		return -ENOMEM;
	for (unsigned i = 0; i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	*out = hex;
	return 0;
}

/* --- what a journal may name ------------------------------------------------------ */

/* One path component: not empty, ".", "..", nor holding a '/' or a control character. */
static bool plain_component(const char *s, size_t n)
{
	if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* The disk attributes a plan writes (plan.c: the [queue] keys, [scsi_device] queue_depth; nr_requests is
 * also recorded after a scheduler switch), below sys/block/DISK/. */
static const char *const disk_attrs[] = {
    "queue/scheduler",	   "queue/nr_requests", "queue/rq_affinity", "queue/nomerges",
    "queue/read_ahead_kb", "queue/add_random",	"queue/io_poll",     "device/queue_depth",
};

/* A kernel attribute's entry: why apply could not have written it, or NULL. */
static const char *check_value(const struct stune_jentry *e)
{
	const char *p = e->path;
	if (e->absent)
		return "a kernel attribute marked absent (apply never creates one: revert would remove it)";
	if (!strncmp(p, "sys/block/", 10)) {
		const char *name = p + 10, *rest = strchr(name, '/');
		if (rest && plain_component(name, (size_t)(rest - name)))
			for (size_t i = 0; i < ELEMENTSOF(disk_attrs); i++)
				if (!strcmp(rest + 1, disk_attrs[i]))
					return NULL;
		return "not a disk attribute apply writes (sys/block/DISK/queue/{scheduler, nr_requests, "
		       "rq_affinity, nomerges, read_ahead_kb, add_random, io_poll}, sys/block/DISK/device/queue_depth)";
	}
	if (!strncmp(p, "proc/irq/", 9)) {
		const char *n = p + 9;
		size_t d = strspn(n, "0123456789");
		if (d == 0 || d > 10 || (strcmp(n + d, "/smp_affinity_list") && strcmp(n + d, "/smp_affinity")))
			return "not an IRQ attribute apply writes (proc/irq/N/smp_affinity_list or smp_affinity)";
		/* Its object names the same IRQ: revert writes none of an earlier boot's (it knows them by it). */
		if (strncmp(e->object, "irq:", 4) || strlen(e->object + 4) != d || strncmp(e->object + 4, n, d))
			return "an IRQ's attribute whose object is not that IRQ (irq:N)";
		return NULL;
	}
	/* irqbalance's defaults it could not read: journaled as not written (skipped), never restored. */
	if (!strcmp(p, STUNE_IRQBALANCE_DEFAULTS) && e->state == STUNE_J_SKIPPED)
		return NULL;
	return "not a kernel attribute apply writes (a disk's queue settings, an IRQ's smp_affinity_list)";
}

/* The files and the link apply writes (irqbalance's defaults, --persist: persist.h), each its row's object. */
static const struct {
	enum stune_jkind kind;
	const char *path, *object;
} apply_files[] = {
    {STUNE_JK_FILE, STUNE_IRQBALANCE_DEFAULTS, "irqbalance"},
    {STUNE_JK_FILE, STUNE_PERSIST_RULES, "persist:udev-rules"},
    {STUNE_JK_FILE, STUNE_PERSIST_UNIT, "persist:boot-unit"},
    {STUNE_JK_SYMLINK, STUNE_PERSIST_WANTS, "persist:boot-unit-enable"},
    {STUNE_JK_FILE, STUNE_PERSIST_MODPROBE, "persist:modprobe"},
};

/* Where the boot unit's enabling link may have pointed before apply: the unit, in a systemd unit directory. */
static bool unit_link_target(const char *t)
{
	static const char *const ok[] = {
	    ("/" STUNE_PERSIST_UNIT),
	    "/lib/systemd/system/scsitune-apply.service",
	    "/usr/lib/systemd/system/scsitune-apply.service",
	    "../scsitune-apply.service",
	};
	for (size_t i = 0; i < ELEMENTSOF(ok); i++)
		if (!strcmp(t, ok[i]))
			return true;
	return false;
}

/* A file's or link's entry: why apply could not have written it, or NULL. */
static const char *check_file(const struct stune_jentry *e)
{
	for (size_t i = 0; i < ELEMENTSOF(apply_files); i++) {
		if (strcmp(e->path, apply_files[i].path))
			continue;
		if (e->kind != apply_files[i].kind)
			return e->kind == STUNE_JK_FILE ? "apply writes a symbolic link there, not a file"
							: "apply writes a file there, not a symbolic link";
		if (strcmp(e->object, apply_files[i].object))
			return "not the object apply journals for this path";
		if (e->kind == STUNE_JK_SYMLINK && !e->absent && e->old && !unit_link_target(e->old))
			return "the link's old target is not scsitune-apply.service in a systemd unit directory "
			       "(revert would point the link at it)";
		return NULL;
	}
	return e->kind == STUNE_JK_FILE ? "not a file apply writes (etc/default/irqbalance and the --persist files)"
					: "not a symbolic link apply writes (" STUNE_PERSIST_WANTS ")";
}

int stune_apply_journal_check(const struct stune_journal *j, size_t *bad, const char **why)
{
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_jentry *e = &j->entries[i];
		const char *w = e->kind == STUNE_JK_VALUE ? check_value(e) : check_file(e);
		if (w) {
			*bad = i;
			*why = w;
			return -EXDEV;
		}
	}
	return 0;
}
