/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tuning profiles: INI files (parsed with libinih) with comments, include=
 * inheritance and one section per object class. Format: scsitune-profile(5).
 *
 * A loaded profile is a list of rules in the order they take effect: an
 * included profile's rules first, then the including file's. A section seen
 * again (in the same file or after an include) is the same rule: its keys
 * override key by key, and remember the file and line that set them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/macro.h"

enum stune_profile_section {
	STUNE_SECTION_HBA = 0,	   /* [hba]: which HBAs the profile tunes */
	STUNE_SECTION_IRQ,	   /* [irq]: IRQ placement policy for the HBAs' IRQs */
	STUNE_SECTION_QUEUE,	   /* [queue]: sys/block/X/queue/ */
	STUNE_SECTION_SCSI_DEVICE, /* [scsi_device]: sys/block/X/device/ */
	STUNE_SECTION_MODULE,	   /* [module:NAME]: driver parameters */
	STUNE_SECTION_IRQBALANCE,  /* [irqbalance] */
	_STUNE_SECTION_MAX
};

/* One key = value, with where it was set and the comment above it. */
struct stune_profile_value {
	char *key;
	char *value;	  /* normalised (trimmed, lower-case keywords) */
	const char *file; /* display name of the file (owned by the profile) */
	unsigned line;
	char *why; /* the comment lines just above the key, joined; NULL if none */
};

struct stune_profile_rule {
	enum stune_profile_section cls;
	char *label; /* "queue:hdd" → "hdd"; module name for [module:NAME]; NULL for plain [queue] */
	/* match_* keys (values kept as written, space-separated alternatives) */
	struct stune_profile_value *matches;
	size_t n_matches;
	struct stune_profile_value *settings;
	size_t n_settings;
};

struct stune_profile {
	char *name;   /* as asked for: "numa" or a path */
	char *path;   /* the file it came from */
	char **files; /* display names of every file read, include order; NULL-terminated */
	size_t n_files;
	struct stune_profile_rule *rules;
	size_t n_rules;
};

/*
 * Load NAME_OR_PATH: a name without '/' is looked up in dir (the profile
 * directory); anything with a '/' is a path. Includes of a name resolve in
 * dir too; includes of a path resolve against the including file's directory.
 * On a bad profile returns -EINVAL (missing file: -ENOENT, include loop: -ELOOP)
 * and *err holds one line "FILE:LINE: what" (caller frees); *out untouched.
 */
int stune_profile_load(const char *name_or_path, const char *dir, struct stune_profile **out, char **err);
/* Same, from text in memory (unit tests); display is the file name in messages. */
int stune_profile_load_string(const char *display, const char *text, const char *dir, struct stune_profile **out,
			      char **err);
void stune_profile_free(struct stune_profile *p);
DEFINE_CLEANUP_FUNC(struct stune_profile, stune_profile_free)

const char *stune_profile_section_name(enum stune_profile_section c);
/* The rule's value for key, or NULL. */
const struct stune_profile_value *stune_profile_rule_get(const struct stune_profile_rule *r, const char *key);
const struct stune_profile_value *stune_profile_rule_match(const struct stune_profile_rule *r, const char *key);
