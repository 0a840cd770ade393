/* SPDX-License-Identifier: GPL-2.0-or-later */
/* payload/mok: the MOK password file (whose, which mode, what type, what
 * content), its crypt hash (what mokutil --hash-file reads), and a
 * certificate's standing against the keyrings and firmware lists. */
#include <crypt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/macro.h"
#include "payload/mok.h"
#include "tap.h"

static char *path_of(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%s/%s", tap_tmpdir(), name);
	return buf;
}

static void put(const char *name, const void *data, size_t len, mode_t mode)
{
	FILE *f = fopen(path_of(name), "w");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0 || chmod(path_of(name), mode) != 0)
		abort();
}

/* load name: its -errno (0: the password is want); err must match why when given. */
static int load(const char *name, const char *want, const char *why)
{
	char *pw = NULL, *err = NULL;
	int r = stune_mok_password_load(path_of(name), &pw, &err);
	if (r == 0 && want && strcmp(pw, want))
		r = 1;
	if (r < 0 && why && (!err || !strstr(err, why))) {
		fprintf(stderr, "# %s: got '%s', expected '%s'\n", name, err ? err : "(none)", why);
		r = 2;
	}
	if (r == 0 && err)
		r = 3;
	stune_mok_password_free(pw);
	free(err);
	return r;
}

CASE(password_ok, "one line of printable ASCII, mode 0600 or 0400, the caller's: read without its newline")
{
	put("pw", "s3cret pass\n", 12, 0600);
	CHECK(load("pw", "s3cret pass", NULL) == 0);
	put("pw2", "x", 1, 0400);
	CHECK(load("pw2", "x", NULL) == 0);
	char big[STUNE_MOK_PASSWORD_MAX + 1];
	memset(big, 'a', sizeof(big));
	put("pw3", big, STUNE_MOK_PASSWORD_MAX, 0600); /* 256 characters: shim's PASSWORD_MAX */
	CHECK(load("pw3", NULL, NULL) == 0);
}

CASE(password_mode, "a password file others or the group may read is refused, naming its mode")
{
	put("pw", "s3cret\n", 7, 0640);
	CHECK(load("pw", NULL, "mode 0640") == -EPERM);
	put("pw2", "s3cret\n", 7, 0604);
	CHECK(load("pw2", NULL, "chmod 0600") == -EPERM);
}

CASE(password_owner, "a password file of another user is refused, naming the owner")
{
	put("pw", "s3cret\n", 7, 0600);
	if (geteuid() == 0) {
		CHECK(chown(path_of("pw"), 65534, 65534) == 0);
		CHECK(load("pw", NULL, "owned by uid 65534") == -EPERM);
	} else { /* not root: a file of root's is there to test with */
		char *pw = NULL, *err = NULL;
		int r = stune_mok_password_load("/etc/hostname", &pw, &err);
		CHECK(r == -EPERM || r == -ENOENT);
		stune_mok_password_free(pw);
		free(err);
	}
}

CASE(password_content, "empty, two lines, a control or non-ASCII byte, a NUL, over 256 characters: refused")
{
	put("empty", "", 0, 0600);
	CHECK(load("empty", NULL, "empty") == -EBADMSG);
	put("nl", "\n", 1, 0600);
	CHECK(load("nl", NULL, "empty") == -EBADMSG);
	put("two", "a\nb\n", 4, 0600);
	CHECK(load("two", NULL, "more than one line") == -EBADMSG);
	put("tab", "a\tb\n", 4, 0600);
	CHECK(load("tab", NULL, "printable ASCII") == -EBADMSG);
	put("utf8", "p\xc3\xa4ss\n", 6, 0600);
	CHECK(load("utf8", NULL, "printable ASCII") == -EBADMSG);
	put("cr", "pass\r\n", 6, 0600);
	CHECK(load("cr", NULL, "printable ASCII") == -EBADMSG);
	put("nul", "pa\0ss\n", 6, 0600);
	CHECK(load("nul", NULL, NULL) == -EILSEQ);
	char big[STUNE_MOK_PASSWORD_MAX + 3];
	memset(big, 'a', sizeof(big));
	put("big", big, STUNE_MOK_PASSWORD_MAX + 1, 0600);
	CHECK(load("big", NULL, "at most 256") == -EBADMSG);
	put("huge", big, sizeof(big), 0600);
	CHECK(load("huge", NULL, "at most 256") == -EFBIG);
}

CASE(password_type, "a FIFO, a directory or a missing file is refused without blocking")
{
	CHECK(mkfifo(path_of("fifo"), 0600) == 0);
	CHECK(load("fifo", NULL, "not a regular file") < 0);
	CHECK(mkdir(path_of("dir"), 0700) == 0);
	CHECK(load("dir", NULL, NULL) == -EISDIR);
	CHECK(load("missing", NULL, NULL) == -ENOENT);
}

CASE(hash, "the hash is SHA-512 crypt with a fresh salt, and crypt() of the password gives it back")
{
	char *a = NULL, *b = NULL;
	CHECK(stune_mok_hash("s3cret pass", &a) == 0);
	CHECK(stune_mok_hash("s3cret pass", &b) == 0);
	CHECK(a && !strncmp(a, "$6$", 3));
	CHECK(a && b && strcmp(a, b)); /* another salt each time */
	struct crypt_data cd = {0};
	const char *again = a ? crypt_r("s3cret pass", a, &cd) : NULL;
	CHECK(again && a && !strcmp(again, a));
	const char *wrong = a ? crypt_r("s3cret pasS", a, &cd) : NULL;
	CHECK(wrong && a && strcmp(wrong, a));
	free(a);
	free(b);
}

CASE(standing,
     "trusted (a key in a searched keyring) beats pending beats enrolled; absent only when the keyrings were read")
{
	struct stune_cert c = {.skid = (char *)"aabb", .serial = (char *)"1f", .issuer_cn = (char *)"fleet"};
	struct stune_cert other = {.skid = (char *)"ccdd", .serial = (char *)"20", .issuer_cn = (char *)"other"};
	struct stune_cert mok = {.skid = (char *)"aabb", .serial = (char *)"1f", .source = "MokListRT"};
	struct stune_kkey key = {.name = (char *)"fleet", .id = (char *)"aabb", .trusted = STUNE_YES, .cert = SIZE_MAX};
	struct stune_module_trust t = {.keys_read = true, .members_source = "keyctl"};
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++)
		t.keyrings[i].name = "x";
	struct stune_mok_standing s;

	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_ABSENT && !s.key);
	t.pending = &other;
	t.n_pending = 1;
	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_ABSENT); /* another certificate pending */
	t.pending = &c;
	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_PENDING && s.pending);
	t.certs = &mok;
	t.n_certs = 1;
	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_PENDING && s.enrolled); /* imported again: MokManager asks again */
	t.n_pending = 0;
	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_ENROLLED && !s.key);
	t.keys = &key;
	t.n_keys = 1;
	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_TRUSTED && s.key == &key);
	CHECK_STR(stune_mok_state_name(s.state), "trusted");
	key.trusted = STUNE_NO; /* in .platform only */
	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_ENROLLED);
	t.n_certs = 0;
	key.id_is_serial = true; /* a key named by serial is not this SKID's */
	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_ABSENT && !s.key);
	t.members_source = NULL; /* membership unknown */
	stune_mok_standing(&t, &c, &s);
	CHECK(s.state == STUNE_MOK_UNKNOWN);
	CHECK_STR(stune_mok_state_name(s.state), "unknown");
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
