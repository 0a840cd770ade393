/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The apply journal and lock, and stune_root_write, on a temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune/journal.h"
#include "tune/profile.h"
#include "core/root.h"
#include "tap.h"

/* Write text as STATE/journal.json and load it: the loader's result, *k the journal or NULL. */
static int load_text(const char *state, const char *text, struct stune_journal **k)
{
	char jp[600];
	snprintf(jp, sizeof(jp), "%s/journal.json", state);
	FILE *f = fopen(jp, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	*k = NULL;
	return stune_journal_load(state, k);
}

/* STATE: the default state directory inside this case's root (made). */
static char *state_dir(void)
{
	char *state = NULL;
	struct stune_trust_fault bad = {0};
	int r = stune_state_dir(tap_tmpdir(), NULL, true, &state, &bad);
	stune_trust_fault_clear(&bad);
	return r < 0 ? NULL : state;
}

/* The two-entry journal the round trip saves: scheduler failed, nr_requests recorded. */
static struct stune_journal *two_entries(void)
{
	struct stune_journal *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->profile = strdup("numa");
	j->profile_path = strdup("/p/numa");
	j->digest = strdup("ab");
	j->started = 1700000000;
	CHECK(stune_journal_add(j, "wwn-1", "queue/scheduler", "sys/block/sda/queue/scheduler", "[mq-deadline] none",
				"none", STUNE_J_PENDING) == 0);
	CHECK(stune_journal_add(j, "wwn-1", "queue/nr_requests", "sys/block/sda/queue/nr_requests", "64", NULL,
				STUNE_J_RECORDED) == 0);
	j->entries[0].state = STUNE_J_FAILED;
	j->entries[0].err = EINVAL;
	return j;
}

CASE(state_dir_default, "state dir: the default inside the root")
{
	_cleanup_free_ char *state = NULL;
	_cleanup_(stune_trust_fault_clear) struct stune_trust_fault bad = {0};
	CHECK(stune_state_dir(tap_tmpdir(), NULL, true, &state, &bad) == 0);
	char want[512];
	snprintf(want, sizeof(want), "%s/var/lib/scsitune", tap_tmpdir());
	CHECK_STR(state, want);
}

CASE(round_trip, "journal: a round trip keeps NULLs and states")
{
	_cleanup_free_ char *state = state_dir();
	struct stune_journal *j = two_entries();
	CHECK(state && j);
	if (!state || !j) {
		stune_journal_free(j);
		return;
	}
	CHECK(stune_journal_save(state, j) == 0);
	struct stune_journal *k = NULL;
	CHECK(stune_journal_load(state, &k) == 0);
	CHECK(k && k->n == 2);
	if (k && k->n == 2) {
		CHECK_STR(k->profile, "numa");
		CHECK(k->started == 1700000000);
		CHECK_STR(k->entries[0].old, "[mq-deadline] none");
		CHECK(k->entries[0].state == STUNE_J_FAILED && k->entries[0].err == EINVAL);
		CHECK(k->entries[1].desired == NULL && k->entries[1].state == STUNE_J_RECORDED);
	}
	stune_journal_free(k);
	stune_journal_free(j);
}

CASE(outcome_log, "outcome log: replayed onto journal.json, a torn tail survived, compacted by save")
{
	/* The outcome log: replayed onto journal.json; a torn tail is ignored;
	 * a log journal.json does not name is not replayed; save compacts. */
	_cleanup_free_ char *state = state_dir();
	struct stune_journal *j = two_entries();
	CHECK(state && j);
	if (!state || !j) {
		stune_journal_free(j);
		return;
	}
	CHECK(stune_journal_save(state, j) == 0);
	int log = -1;
	j->entries[0].state = STUNE_J_PENDING;
	j->entries[0].err = 0;
	CHECK(stune_journal_log_begin(state, j, &log) == 0 && log >= 0 && j->log_id);
	j->entries[0].state = STUNE_J_APPLIED;
	j->entries[0].after = strdup("[none] mq-deadline");
	j->entries[1].after = strdup("64");
	size_t both[] = {0, 1};
	CHECK(stune_journal_log_entries(log, j, both, 0) == 0);	 /* nothing: no write */
	CHECK(stune_journal_log_entries(log, j, both, 2) == 0);	 /* two lines, one write */
	CHECK(write(log, "{\"i\":1,\"state\":\"rev", 20) == 20); /* torn */
	close(log);
	struct stune_journal *k = NULL;
	CHECK(stune_journal_load(state, &k) == 0 && k && k->n == 2);
	if (k && k->n == 2) {
		CHECK(k->entries[0].state == STUNE_J_APPLIED);
		CHECK_STR(k->entries[0].after, "[none] mq-deadline");
		CHECK(k->entries[1].state == STUNE_J_RECORDED); /* the torn line changed nothing */
		CHECK_STR(k->entries[1].after, "64");
		CHECK(k->log_id && !strcmp(k->log_id, j->log_id));
	}
	stune_journal_free(k);
	char lp[600];
	snprintf(lp, sizeof(lp), "%s/journal.log", state);
	FILE *lf = fopen(lp, "w");
	CHECK(lf);
	if (lf) {
		fputs("{\"log\":\"someone-else\"}\n{\"i\":0,\"state\":\"failed\"}\n", lf);
		fclose(lf);
	}
	k = NULL;
	CHECK(stune_journal_load(state, &k) == 0 && k && k->n == 2 && k->entries[0].state == STUNE_J_PENDING);
	stune_journal_free(k);
	j->entries[0].state = STUNE_J_APPLIED;
	CHECK(stune_journal_save(state, j) == 0 && !j->log_id);
	CHECK(access(lp, F_OK) < 0); /* compact: no log */
	k = NULL;
	CHECK(stune_journal_load(state, &k) == 0 && k && !k->log_id && k->entries[0].state == STUNE_J_APPLIED);
	stune_journal_free(k);
	stune_journal_free(j);
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s/journal.json.tmp", state);
	CHECK(access(tmp, F_OK) < 0); /* renamed, not left behind */
}

CASE(not_a_journal, "journal: not a journal is refused")
{
	_cleanup_free_ char *state = state_dir();
	struct stune_journal *k = NULL;
	CHECK(state && load_text(state, "{\"version\": 99}", &k) == -EBADMSG && !k);
}

CASE(entries_one_at_a_time, "journal: entries read one at a time, the same as the whole-document path")
{
	_cleanup_free_ char *state = state_dir();
	struct stune_journal *k = NULL;
	/* The entries are read one at a time when the "changes" array can be cut
	 * out of the text, else from the whole tree: the same journal either way.
	 * Written by hand: keys in another order, "changes" first, a string value
	 * holding "changes": [ and brackets, escapes, no spaces. */
	static const char *const same[] = {
	    "{\"changes\":[{\"object\":\"a\\\"]}\",\"setting\":\"s\",\"path\":\"sys/x\",\"old\":\"[1] 2\","
	    "\"state\":\"applied\"},{\"object\":\"b\",\"setting\":\"s\",\"path\":\"sys/y\",\"old\":\"0\","
	    "\"state\":\"pending\",\"boot_id\":\"b1\"}],\"version\":1,\"profile\":\"x \\\"changes\\\": [\"}",
	    /* two "changes" keys: json-c keeps the last one; so does the loader (the whole tree) */
	    "{\"version\":1,\"changes\":[{\"object\":\"z\"}],\"profile\":\"x \\\"changes\\\": [\",\"changes\":["
	    "{\"object\":\"a\\\"]}\",\"setting\":\"s\",\"path\":\"sys/x\",\"old\":\"[1] 2\",\"state\":\"applied\"},"
	    "{\"object\":\"b\",\"setting\":\"s\",\"path\":\"sys/y\",\"old\":\"0\",\"state\":\"pending\","
	    "\"boot_id\":\"b1\"}]}",
	    /* the same, the second key spelled with an escape (the same key to json-c) */
	    "{\"version\":1,\"changes\":[{\"object\":\"z\"}],\"profile\":\"x \\\"changes\\\": [\",\"chang\\u0065s\":["
	    "{\"object\":\"a\\\"]}\",\"setting\":\"s\",\"path\":\"sys/x\",\"old\":\"[1] 2\",\"state\":\"applied\"},"
	    "{\"object\":\"b\",\"setting\":\"s\",\"path\":\"sys/y\",\"old\":\"0\",\"state\":\"pending\","
	    "\"boot_id\":\"b1\"}]}",
	};
	for (size_t t = 0; t < sizeof(same) / sizeof(same[0]); t++) {
		CHECK(load_text(state, same[t], &k) == 0 && k && k->n == 2);
		if (k && k->n == 2) {
			CHECK_STR(k->entries[0].object, "a\"]}");
			CHECK_STR(k->entries[0].old, "[1] 2");
			CHECK(k->entries[0].state == STUNE_J_APPLIED && !k->entries[0].boot_id);
			CHECK_STR(k->entries[1].boot_id, "b1");
			CHECK_STR(k->profile, "x \"changes\": [");
		}
		stune_journal_free(k);
	}
}

CASE(broken_entries_refused, "journal: broken between the entries, or an entry not an object, is refused")
{
	_cleanup_free_ char *state = state_dir();
	struct stune_journal *k = NULL;
	static const char *const bad[] = {
	    ("{\"version\":1,\"changes\":[{\"object\":\"a\",\"setting\":\"s\",\"path\":\"sys/x\",\"state\":"
	     "\"applied\"} {\"object\":\"b\"}]}"),
	    "{\"version\":1,\"changes\":[5]}",
	    "{\"version\":1,\"changes\":[{\"object\":\"a\"",
	    "{\"version\":1,\"changes\":{}}",
	};
	for (size_t t = 0; t < sizeof(bad) / sizeof(bad[0]); t++) {
		int br = load_text(state, bad[t], &k);
		CHECK(br == -EBADMSG && !k);
		if (br != -EBADMSG)
			fprintf(stderr, "# bad[%zu] loaded: %d\n", t, br);
		stune_journal_free(k);
	}
}

CASE(lenient_same_both_paths, "journal: json-c's leniencies the same on both paths")
{
	_cleanup_free_ char *state = state_dir();
	struct stune_journal *k = NULL;
	/* json-c's leniencies, the same on both paths: a trailing comma; a comment or
	 * single quotes (these send the loader to the whole tree). */
	static const char *const lenient[] = {
	    "{\"version\":1,\"changes\":[{\"object\":\"a\",\"setting\":\"s\",\"path\":\"sys/x\",\"state\":"
	    "\"applied\"},]}",
	    "{\"version\":1,/* \"changes\":[ */\"changes\":[{\"object\":\"a\",\"setting\":\"s\",\"path\":"
	    "\"sys/x\",\"state\":\"applied\"}]}",
	    "{'version':1,'profile':'\"changes\":[','changes':[{\"object\":\"a\",\"setting\":\"s\",\"path\":"
	    "\"sys/x\",\"state\":\"applied\"}]}",
	};
	for (size_t t = 0; t < sizeof(lenient) / sizeof(lenient[0]); t++) {
		int lr = load_text(state, lenient[t], &k);
		CHECK(lr == 0 && k && k->n == 1 && !strcmp(k->entries[0].object, "a"));
		if (lr != 0)
			fprintf(stderr, "# lenient[%zu]: %d\n", t, lr);
		stune_journal_free(k);
	}
}

CASE(empty_changes, "journal: an empty array of changes")
{
	_cleanup_free_ char *state = state_dir();
	struct stune_journal *k = NULL;
	CHECK(load_text(state, "{\"version\":1,\"changes\":[ ]}", &k) == 0 && k && k->n == 0);
	stune_journal_free(k);
	CHECK(stune_journal_remove(state) == 0);
	CHECK(stune_journal_load(state, &k) == -ENOENT);
}

CASE(lock_second_taker, "lock: a second taker is refused and told the pid and the command")
{
	_cleanup_free_ char *state = state_dir();
	int fd1 = -1, fd2 = -1;
	struct stune_lock_holder holder = {0};
	CHECK(stune_lock_take(state, "apply", &fd1, NULL) == 0);
	CHECK(stune_lock_take(state, "revert", &fd2, &holder) == -EWOULDBLOCK);
	CHECK(holder.pid == getpid() && !strcmp(holder.what, "apply") && !holder.shared);
	/* verify's shared lock: kept out by the exclusive holder, told the same */
	memset(&holder, 0, sizeof(holder));
	CHECK(stune_lock_take_shared(state, &fd2, &holder) == -EWOULDBLOCK);
	CHECK(holder.pid == getpid() && !strcmp(holder.what, "apply"));
	close(fd1);
	CHECK(stune_lock_take(state, "revert", &fd2, &holder) == 0);
	close(fd2);
}

CASE(lock_shared, "lock: verifies share it, an exclusive taker is told a verify holds it")
{
	_cleanup_free_ char *state = state_dir();
	int ex = -1, s1 = -1, s2 = -1;
	struct stune_lock_holder holder = {0};
	/* no lock file: nothing to wait for, nothing created */
	CHECK(stune_lock_take_shared(state, &s1, &holder) == 0 && s1 == -1);
	CHECK(stune_lock_take(state, "apply", &ex, NULL) == 0);
	close(ex);
	CHECK(stune_lock_take_shared(state, &s1, &holder) == 0 && s1 >= 0);
	CHECK(stune_lock_take_shared(state, &s2, &holder) == 0 && s2 >= 0);
	CHECK(stune_lock_take(state, "apply", &ex, &holder) == -EWOULDBLOCK);
	CHECK(holder.shared && !strcmp(holder.what, "verify"));
	close(s1);
	close(s2);
	CHECK(stune_lock_take(state, "apply", &ex, &holder) == 0);
	close(ex);
}

CASE(lock_pid_unknown, "lock: a holder that wrote no pid is reported with why, never a stale pid")
{
	_cleanup_free_ char *state = state_dir();
	_cleanup_free_ char *p = NULL;
	CHECK(asprintf(&p, "%s/lock", state) > 0);
	int ex = -1;
	struct stune_lock_holder holder = {0};
	/* a holder of the flock that is not scsitune: an empty file */
	int f = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(f >= 0 && flock(f, LOCK_EX) == 0);
	CHECK(stune_lock_take(state, "apply", &ex, &holder) == -EWOULDBLOCK);
	CHECK(holder.pid == 0 &&
	      strstr(holder.why, "it wrote no pid there (so it is not scsitune, which always does)"));
	/* the pid of a process that is gone: not named as the holder */
	CHECK(pwrite(f, "2147483646 apply\n", 17, 0) == 17);
	memset(&holder, 0, sizeof(holder));
	CHECK(stune_lock_take(state, "apply", &ex, &holder) == -EWOULDBLOCK);
	CHECK(holder.pid == 0 && strstr(holder.why, "pid 2147483646 there is an earlier run's, not running"));
	close(f);
	/* a symbolic link in its place: never followed */
	CHECK(unlink(p) == 0 && symlink("/dev/null", p) == 0);
	CHECK(stune_lock_take(state, "apply", &ex, NULL) == -ELOOP);
	CHECK(stune_lock_take_shared(state, &ex, NULL) == -ELOOP);
	CHECK(unlink(p) == 0);
}

CASE(profile_digest, "digest: 64 hex digits, stable, changes with a value")
{
	struct stune_profile *p1 = NULL, *p2 = NULL;
	char *err = NULL, *d1 = NULL, *d1b = NULL, *d2 = NULL;
	CHECK(stune_profile_load_string("a", "[hba]\nmatch_driver = *\n[queue]\nscheduler = none\n", tap_tmpdir(), &p1,
					&err) == 0);
	CHECK(stune_profile_load_string("b", "[hba]\nmatch_driver = *\n[queue]\nscheduler = mq-deadline\n",
					tap_tmpdir(), &p2, &err) == 0);
	if (p1 && p2) {
		CHECK(stune_profile_digest(p1, &d1) == 0 && strlen(d1) == 64);
		CHECK(stune_profile_digest(p1, &d1b) == 0 && !strcmp(d1, d1b));
		CHECK(stune_profile_digest(p2, &d2) == 0 && strcmp(d1, d2));
	}
	free(d1);
	free(d1b);
	free(d2);
	free(err);
	stune_profile_free(p1);
	stune_profile_free(p2);
}

CASE(root_write, "root write: inside the root, truncating, -errno as given")
{
	struct stune_root *r = NULL;
	char sub[600];
	snprintf(sub, sizeof(sub), "%s/sys", tap_tmpdir());
	mkdir(sub, 0755);
	snprintf(sub, sizeof(sub), "%s/sys/attr", tap_tmpdir());
	FILE *f = fopen(sub, "w");
	fputs("a long old value\n", f);
	fclose(f);
	CHECK(stune_root_new(tap_tmpdir(), &r) == 0);
	CHECK(stune_root_write(r, "sys/attr", "2\n") == 0);
	char *v = NULL;
	CHECK(stune_root_read(r, "sys/attr", &v) == 0);
	CHECK_STR(v, "2");
	free(v);
	CHECK(stune_root_write(r, "sys/none", "1") == -ENOENT);
	CHECK(stune_root_write(r, "sys", "1") == -EISDIR);
	stune_root_free(r);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
