/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The payload journal: STATE/payload/journal.json, the same state
 * directory and lock (STATE/lock) as apply's journal. install writes it,
 * fsync'd, before it changes anything, with every step it is going to
 * take; each step is marked started before it runs and done after it, the
 * journal replaced atomically each time (tmp + fsync + rename + fsync of
 * the directory). Whatever point an install is killed at, the journal
 * names every path it may have created and what was there before, so
 * `payload remove` can put the tree back: created files are removed when
 * their SHA-256 is ours, created directories when empty, the initrd is
 * restored from the copy kept in STATE/payload/ when it is still the one
 * install made.
 * remove marks the journal (remove_started) before its first change: an
 * install that finds the mark finishes that remove before anything else,
 * never taking a half-removed payload for an installed one.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/macro.h"
#include "payload/util.h"

#define STUNE_PAYLOAD_JOURNAL_VERSION 1

enum stune_payload_step_kind {
	STUNE_PAYLOAD_STEP_MKDIR = 0, /* a directory install created (path) */
	STUNE_PAYLOAD_STEP_STAGE,     /* the staging directory (path) and the files in it */
	STUNE_PAYLOAD_STEP_FILE,      /* a file install created (path, sha256: its content) */
	STUNE_PAYLOAD_STEP_DEPMOD,    /* depmod for the release */
	STUNE_PAYLOAD_STEP_INITRD,    /* the initrd: old_sha256 before, kept in STATE/payload/kept; sha256 after */
	STUNE_PAYLOAD_STEP_KERNEL, /* the kernel package installed with apt (path: its release; target: PACKAGE=VERSION;
			    sha256: the .deb's) */
	STUNE_PAYLOAD_STEP_DEFAULT, /* --set-default: a boot link (path: vmlinuz or initrd.img) repointed from
			     old_target to target */
	_STUNE_PAYLOAD_STEP_MAX
};

enum stune_payload_step_state {
	STUNE_PAYLOAD_STEP_STATE_PENDING = 0, /* not begun */
	STUNE_PAYLOAD_STEP_STATE_STARTED,     /* begun, not known to have finished */
	STUNE_PAYLOAD_STEP_STATE_DONE,
	STUNE_PAYLOAD_STEP_STATE_SKIPPED, /* not done, on purpose (note says why) */
	_STUNE_PAYLOAD_STEP_STATE_MAX
};

struct stune_payload_step {
	enum stune_payload_step_kind kind;
	enum stune_payload_step_state state;
	char *path;	  /* root-relative */
	char *sha256;	  /* FILE: what install writes; INITRD: the new initrd */
	char *old_sha256; /* INITRD: the initrd before (NULL: there was none) */
	unsigned mode;	  /* INITRD: its mode before (0: unknown) */
	char *target;	  /* KERNEL: PACKAGE=VERSION; DEFAULT: the link's new target */
	char *old_target; /* DEFAULT: the link's target before (NULL: there was no link) */
	char *note;
};

struct stune_payload_file_digest {
	char *path; /* root-relative */
	char sha256[STUNE_SHA256_HEX];
};

struct stune_payload_journal {
	char *release;
	char *payload_version;
	char *bundle_sha256;
	char *key_id;
	char *manifest_sha256;
	long long started;
	bool complete;		  /* install finished */
	long long remove_started; /* when a remove began (0: none did): the tree may be half removed */
	struct stune_payload_step *steps;
	size_t n;
	/* depmod's index files before install (modules.*), for remove's check. */
	struct stune_payload_file_digest *index;
	size_t n_index;
};

const char *stune_payload_step_kind_name(enum stune_payload_step_kind k);
const char *stune_payload_step_state_name(enum stune_payload_step_state s);
void stune_payload_journal_free(struct stune_payload_journal *j);
DEFINE_CLEANUP_FUNC(struct stune_payload_journal, stune_payload_journal_free)
int stune_payload_journal_add(struct stune_payload_journal *j, enum stune_payload_step_kind kind, const char *path,
			      const char *sha256);

/* STATE/payload (created with mode 0700 when create; -ELOOP: a symbolic link, never followed). */
int stune_payload_journal_dir(const char *state_dir, bool create, char **out);
/* Save (atomic, fsync'd) / load STATE/payload/journal.json. load: -ENOENT none, -EBADMSG not a journal,
 * -ELOOP it (or STATE/payload) is a symbolic link, and stune_read_user_file()'s errors (a FIFO, a
 * device, over the size cap: core/userfile.h). */
int stune_payload_journal_save(const char *state_dir, const struct stune_payload_journal *j);
int stune_payload_journal_load(const char *state_dir, struct stune_payload_journal **out);
/* The words for load's errors ("not a scsitune payload journal", "a symbolic link: refused", ...). */
const char *stune_payload_journal_strerror(int r);
/* Remove the journal and the kept initrd. */
int stune_payload_journal_remove(const char *state_dir);
/* The kept initrd's host path (STATE/payload/kept-initrd). */
int stune_payload_journal_kept_path(const char *state_dir, char **out);
