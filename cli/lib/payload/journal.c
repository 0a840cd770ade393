/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/journal.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/statefile.h"
#include "core/trust.h"
#include "core/userfile.h"

DEFINE_CLEANUP_FUNC(json_object, json_object_put)

/* A journal is a few hundred bytes per file of the bundle. */
#define STUNE_PAYLOAD_JOURNAL_MAX_BYTES (16u << 20)

static const char *const kind_names[_STUNE_PAYLOAD_STEP_MAX] = {
    [STUNE_PAYLOAD_STEP_MKDIR] = "mkdir",      [STUNE_PAYLOAD_STEP_STAGE] = "stage",
    [STUNE_PAYLOAD_STEP_FILE] = "file",	       [STUNE_PAYLOAD_STEP_DEPMOD] = "depmod",
    [STUNE_PAYLOAD_STEP_INITRD] = "initramfs", [STUNE_PAYLOAD_STEP_KERNEL] = "kernel",
    [STUNE_PAYLOAD_STEP_DEFAULT] = "default",
};
static const char *const state_names[_STUNE_PAYLOAD_STEP_STATE_MAX] = {
    [STUNE_PAYLOAD_STEP_STATE_PENDING] = "pending",
    [STUNE_PAYLOAD_STEP_STATE_STARTED] = "started",
    [STUNE_PAYLOAD_STEP_STATE_DONE] = "done",
    [STUNE_PAYLOAD_STEP_STATE_SKIPPED] = "skipped",
};

const char *stune_payload_step_kind_name(enum stune_payload_step_kind k)
{
	return k < _STUNE_PAYLOAD_STEP_MAX ? kind_names[k] : "?";
}

const char *stune_payload_step_state_name(enum stune_payload_step_state s)
{
	return s < _STUNE_PAYLOAD_STEP_STATE_MAX ? state_names[s] : "?";
}

void stune_payload_journal_free(struct stune_payload_journal *j)
{
	if (!j)
		return;
	free(j->release);
	free(j->payload_version);
	free(j->bundle_sha256);
	free(j->key_id);
	free(j->manifest_sha256);
	for (size_t i = 0; i < j->n; i++) {
		free(j->steps[i].path);
		free(j->steps[i].sha256);
		free(j->steps[i].old_sha256);
		free(j->steps[i].target);
		free(j->steps[i].old_target);
		free(j->steps[i].note);
	}
	free(j->steps);
	for (size_t i = 0; i < j->n_index; i++)
		free(j->index[i].path);
	free(j->index);
	free(j);
}

int stune_payload_journal_add(struct stune_payload_journal *j, enum stune_payload_step_kind kind, const char *path,
			      const char *sha256)
{
	struct stune_payload_step *n = realloc(j->steps, (j->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	j->steps = n;
	struct stune_payload_step *s = &n[j->n];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	if ((path && !(s->path = strdup(path))) || (sha256 && !(s->sha256 = strdup(sha256)))) {
		free(s->path);
		return -ENOMEM;
	}
	j->n++;
	return 0;
}

int stune_payload_journal_dir(const char *state_dir, bool create, char **out)
{
	/* Never through a symbolic link: what it pointed to would get the journal and the kept initrd. */
	return stune_state_subdir(state_dir, "payload", 0700, create, NULL, out);
}

int stune_payload_journal_kept_path(const char *state_dir, char **out)
{
	return asprintf(out, "%s/payload/kept-initrd", state_dir) < 0 ? -ENOMEM : 0;
}

static void put_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

int stune_payload_journal_save(const char *state_dir, const struct stune_payload_journal *j)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();
	_cleanup_free_ char *dir = NULL;
	int r;
	if (!o)
		return -ENOMEM;
	if ((r = stune_payload_journal_dir(state_dir, true, &dir)) < 0)
		return r;
	json_object_object_add(o, "version", json_object_new_int(STUNE_PAYLOAD_JOURNAL_VERSION));
	put_str(o, "release", j->release);
	put_str(o, "payload_version", j->payload_version);
	put_str(o, "bundle_sha256", j->bundle_sha256);
	put_str(o, "key_id", j->key_id);
	put_str(o, "manifest_sha256", j->manifest_sha256);
	json_object_object_add(o, "started", json_object_new_int64(j->started));
	json_object_object_add(o, "complete", json_object_new_boolean(j->complete));
	if (j->remove_started)
		json_object_object_add(o, "remove_started", json_object_new_int64(j->remove_started));
	json_object *steps = json_object_new_array();
	json_object_object_add(o, "steps", steps);
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_payload_step *s = &j->steps[i];
		json_object *e = json_object_new_object();
		put_str(e, "step", stune_payload_step_kind_name(s->kind));
		put_str(e, "state", stune_payload_step_state_name(s->state));
		put_str(e, "path", s->path);
		put_str(e, "sha256", s->sha256);
		put_str(e, "old_sha256", s->old_sha256);
		if (s->target)
			put_str(e, "target", s->target);
		if (s->old_target)
			put_str(e, "old_target", s->old_target);
		if (s->mode)
			json_object_object_add(e, "mode", json_object_new_int((int)s->mode));
		put_str(e, "note", s->note);
		json_object_array_add(steps, e);
	}
	json_object *idx = json_object_new_object();
	json_object_object_add(o, "depmod_index_before", idx);
	for (size_t i = 0; i < j->n_index; i++)
		json_object_object_add(idx, j->index[i].path, json_object_new_string(j->index[i].sha256));
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_free_ char *data = NULL;
	if (asprintf(&data, "%s\n", text) < 0)
		return -ENOMEM;
	return stune_write_atomic(dir, "journal.json", data, strlen(data), 0600, NULL);
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

static int name_index(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return (int)i;
	return -1;
}

int stune_payload_journal_load(const char *state_dir, struct stune_payload_journal **out)
{
	_cleanup_free_ char *dir = NULL, *p = NULL, *text = NULL;
	int r;
	/* Opened O_NONBLOCK|O_NOFOLLOW, a regular file only, read with a cap (core/userfile.h): a FIFO,
	 * a link to /dev/zero or a huge file is refused at once, never waited on or read whole. */
	if ((r = stune_payload_journal_dir(state_dir, false, &dir)) < 0)
		return r;
	if (asprintf(&p, "%s/journal.json", dir) < 0)
		return -ENOMEM;
	if ((r = stune_read_user_file(p, STUNE_PAYLOAD_JOURNAL_MAX_BYTES, STUNE_UF_NOFOLLOW | STUNE_UF_TEXT, &text,
				      NULL)) < 0)
		return r;
	_cleanup_(json_object_putp) json_object *o = json_tokener_parse(text);
	json_object *v, *steps, *idx;
	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "version", &v) ||
	    json_object_get_int(v) != STUNE_PAYLOAD_JOURNAL_VERSION || !json_object_object_get_ex(o, "steps", &steps) ||
	    !json_object_is_type(steps, json_type_array))
		return -EBADMSG;
	_cleanup_(stune_payload_journal_freep) struct stune_payload_journal *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	if ((r = get_str(o, "release", &j->release)) < 0 ||
	    (r = get_str(o, "payload_version", &j->payload_version)) < 0 ||
	    (r = get_str(o, "bundle_sha256", &j->bundle_sha256)) < 0 || (r = get_str(o, "key_id", &j->key_id)) < 0 ||
	    (r = get_str(o, "manifest_sha256", &j->manifest_sha256)) < 0)
		return r;
	if (!j->release)
		return -EBADMSG;
	if (json_object_object_get_ex(o, "started", &v))
		j->started = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "complete", &v))
		j->complete = json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "remove_started", &v))
		j->remove_started = json_object_get_int64(v);
	for (size_t i = 0; i < json_object_array_length(steps); i++) {
		json_object *e = json_object_array_get_idx(steps, i);
		_cleanup_free_ char *kind = NULL, *state = NULL;
		if ((r = get_str(e, "step", &kind)) < 0 || (r = get_str(e, "state", &state)) < 0)
			return r;
		int k = name_index(kind_names, _STUNE_PAYLOAD_STEP_MAX, kind),
		    s = name_index(state_names, _STUNE_PAYLOAD_STEP_STATE_MAX, state);
		if (k < 0 || s < 0)
			return -EBADMSG;
		if ((r = stune_payload_journal_add(j, (enum stune_payload_step_kind)k, NULL, NULL)) < 0)
			return r;
		struct stune_payload_step *st = &j->steps[j->n - 1];
		st->state = (enum stune_payload_step_state)s;
		if ((r = get_str(e, "path", &st->path)) < 0 || (r = get_str(e, "sha256", &st->sha256)) < 0 ||
		    (r = get_str(e, "old_sha256", &st->old_sha256)) < 0 || (r = get_str(e, "note", &st->note)) < 0 ||
		    (r = get_str(e, "target", &st->target)) < 0 || (r = get_str(e, "old_target", &st->old_target)) < 0)
			return r;
		json_object *mv;
		if (json_object_object_get_ex(e, "mode", &mv) && json_object_is_type(mv, json_type_int))
			st->mode = (unsigned)json_object_get_int(mv) & 07777;
		/* Paths are root-relative and stay so: a journal naming "/etc" or ".." is not ours. */
		if (st->path && (st->path[0] == '/' || strstr(st->path, "..")))
			return -EBADMSG;
	}
	if (json_object_object_get_ex(o, "depmod_index_before", &idx) && json_object_is_type(idx, json_type_object)) {
		json_object_object_foreach(idx, path, sha)
		{
			struct stune_payload_file_digest *n = realloc(j->index, (j->n_index + 1) * sizeof(*n));
			if (!n)
				return -ENOMEM;
			j->index = n;
			if (!json_object_is_type(sha, json_type_string) || strlen(json_object_get_string(sha)) != 64 ||
			    path[0] == '/' || strstr(path, ".."))
				return -EBADMSG;
			if (!(n[j->n_index].path = strdup(path)))
				return -ENOMEM;
			memcpy(n[j->n_index].sha256, json_object_get_string(sha), STUNE_SHA256_HEX);
			j->n_index++;
		}
	}
	*out = steal_pointer(&j);
	return 0;
}

const char *stune_payload_journal_strerror(int r)
{
	return r == -EBADMSG ? "not a scsitune payload journal"
			     : stune_state_strerror(r, STUNE_PAYLOAD_JOURNAL_MAX_BYTES);
}

int stune_payload_journal_remove(const char *state_dir)
{
	_cleanup_free_ char *p = NULL, *k = NULL, *d = NULL;
	if (asprintf(&p, "%s/payload/journal.json", state_dir) < 0 ||
	    stune_payload_journal_kept_path(state_dir, &k) < 0 || asprintf(&d, "%s/payload", state_dir) < 0)
		return -ENOMEM;
	if (unlink(k) < 0 && errno != ENOENT)
		return negative_errno();
	if (unlink(p) < 0 && errno != ENOENT)
		return negative_errno();
	(void)rmdir(d);
	return 0;
}
