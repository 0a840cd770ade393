/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A bundle's signer and shim's MOK list: standing, the password file, staging with mokutil (mok.h). */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/macro.h"
#include "core/strv.h"
#include "core/userfile.h"
#include "payload/mok.h"
#include "payload/util.h"

static bool same_cert(const struct stune_cert *a, const struct stune_cert *b)
{
	if (a->skid && b->skid)
		return !strcmp(a->skid, b->skid);
	return !a->skid && !b->skid && a->serial && b->serial && !strcmp(a->serial, b->serial) && a->issuer_cn &&
	       b->issuer_cn && !strcmp(a->issuer_cn, b->issuer_cn);
}

static bool listed(const struct stune_cert *v, size_t n, const struct stune_cert *c)
{
	for (size_t i = 0; i < n; i++)
		if (same_cert(&v[i], c))
			return true;
	return false;
}

void stune_mok_standing(const struct stune_module_trust *t, const struct stune_cert *c, struct stune_mok_standing *s)
{
	*s = (struct stune_mok_standing){0};
	s->pending = listed(t->pending, t->n_pending, c);
	for (size_t i = 0; i < t->n_certs; i++)
		if (t->certs[i].source && !strcmp(t->certs[i].source, "MokListRT") && same_cert(&t->certs[i], c))
			s->enrolled = true;
	/* proc/keys names an X.509 key by its SKID (by its serial when it has none) */
	const char *id = c->skid ? c->skid : c->serial;
	for (size_t i = 0; id && i < t->n_keys; i++) {
		const struct stune_kkey *k = &t->keys[i];
		if (!k->id || strcmp(k->id, id) || k->id_is_serial != !c->skid)
			continue;
		if (!s->key || (k->trusted == STUNE_YES && s->key->trusted != STUNE_YES))
			s->key = k;
	}
	if (s->key)
		s->keyring = stune_kkey_keyring(t, s->key);
	if (s->key && s->key->trusted == STUNE_YES)
		s->state = STUNE_MOK_TRUSTED;
	else if (s->pending)
		s->state = STUNE_MOK_PENDING; /* a new import since: MokManager asks again */
	else if (s->enrolled || (s->key && s->key->trusted == STUNE_NO))
		s->state = STUNE_MOK_ENROLLED;
	else if (t->keys_read && t->members_source)
		s->state = STUNE_MOK_ABSENT;
	else
		s->state = STUNE_MOK_UNKNOWN; /* the keyrings unread: the kernel may hold it */
}

const char *stune_mok_state_name(enum stune_mok_state s)
{
	switch (s) {
	case STUNE_MOK_TRUSTED:
		return "trusted";
	case STUNE_MOK_ENROLLED:
		return "enrolled";
	case STUNE_MOK_PENDING:
		return "pending";
	case STUNE_MOK_ABSENT:
		return "absent";
	case STUNE_MOK_UNKNOWN:
		break;
	}
	return "unknown";
}

void stune_mok_password_free(char *pw)
{
	if (pw) {
		explicit_bzero(pw, strlen(pw));
		free(pw);
	}
}

int stune_mok_password_load(const char *path, char **pw, char **err)
{
	*pw = NULL;
	*err = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r = stune_user_file_open(path, &fd, &st);
	if (r < 0)
		return stune_errf(err, r, "%s", stune_user_file_strerror(r, 0));
	if (st.st_uid != geteuid())
		return stune_errf(err, -EPERM, "owned by uid %u, not %u (the one running scsitune): chown it",
				  (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return stune_errf(err, -EPERM, "mode %04o: a password file is for its owner only: chmod 0600 it",
				  (unsigned)(st.st_mode & 07777));
	char *buf = NULL;
	size_t len = 0;
	r = stune_read_user_fd(fd, STUNE_MOK_PASSWORD_MAX + 2, STUNE_UF_TEXT, &buf, &len);
	if (r < 0)
		return stune_errf(err, r, "%s",
				  r == -EFBIG ? "longer than a password MokManager takes (at most 256 characters)"
					      : stune_user_file_strerror(r, STUNE_MOK_PASSWORD_MAX + 2));
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	const char *bad = len == 0 ? "empty: one line, the password"
			  : len > STUNE_MOK_PASSWORD_MAX
			      ? "longer than a password MokManager takes (at most 256 characters)"
			  : strchr(buf, '\n') ? "more than one line: one line, the password"
					      : NULL;
	for (size_t i = 0; !bad && i < len; i++)
		if (buf[i] < 0x20 || buf[i] > 0x7e)
			bad = "a character that is not printable ASCII (the password is typed at MokManager's console)";
	if (bad) {
		explicit_bzero(buf, len);
		free(buf);
		return stune_errf(err, -EBADMSG, "%s", bad);
	}
	*pw = buf;
	return 0;
}

int stune_mok_hash(const char *pw, char **hash)
{
	*hash = NULL;
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	if (!crypt_gensalt_rn("$6$", 0, NULL, 0, salt, sizeof(salt)))
		return errno == ENOMEM ? -ENOMEM : -EIO;
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	if (!cd)
		return -ENOMEM;
	const char *h = crypt_rn(pw, salt, cd, sizeof(*cd));
	int r = 0;
	if (!h || h[0] != '$')
		r = -EIO;
	else if (!(*hash = strdup(h)))
		r = -ENOMEM;
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return r;
}

int stune_mok_stage(const unsigned char *der, size_t len, const char *hash, const char *tmpdir, char **output)
{
	*output = NULL;
	_cleanup_free_ char *dir = stune_strdupf("%s/scsitune-enroll.XXXXXX", tmpdir ? tmpdir : "/tmp");
	if (!dir)
		return -ENOMEM;
	if (!mkdtemp(dir)) /* mode 0700, a new name: nothing of anyone else's in it */
		return negative_errno();
	_cleanup_free_ char *cert = stune_strdupf("%s/signer.der", dir), *hfile = stune_strdupf("%s/hash", dir);
	int r = -ENOMEM;
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		r = negative_errno();
	else if (cert && hfile && (r = stune_dir_write(dfd, "signer.der", der, len, 0600)) >= 0 &&
		 (r = stune_dir_write(dfd, "hash", hash, strlen(hash), 0600)) >= 0) {
		const char *argv[] = {"mokutil", "--import", cert, "--hash-file", hfile, NULL};
		r = stune_run(argv, NULL, output);
	}
	if (dfd >= 0) {
		unlinkat(dfd, "signer.der", 0);
		unlinkat(dfd, "hash", 0);
	}
	rmdir(dir);
	return r;
}
