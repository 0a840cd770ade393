/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/minisign.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/strv.h"
#include "core/trust.h"
#include "payload/util.h"

#define KEY_FILE_MAX 4096
#define SIG_LINE_MAX 1024

void stune_keyring_free(struct stune_keyring *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->keys[i].source);
	free(k->keys);
	free(k);
}

const char *stune_minisign_keyid_str(const uint8_t id[8], char *buf)
{
	static const char digits[] = "0123456789ABCDEF";
	for (int i = 0; i < 8; i++) { /* little-endian value, most significant first */
		buf[2 * i] = digits[id[7 - i] >> 4];
		buf[2 * i + 1] = digits[id[7 - i] & 15];
	}
	buf[16] = '\0';
	return buf;
}

/* Next line of *p (without "\n" or "\r\n"), NUL-terminated in place; NULL at the end. */
static char *next_line(char **p)
{
	if (!*p || !**p)
		return NULL;
	char *s = *p, *nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = s + strlen(s);
	}
	size_t n = strlen(s);
	if (n && s[n - 1] == '\r')
		s[n - 1] = '\0';
	return s;
}

static int b64(const char *line, uint8_t *out, size_t want)
{
	size_t got = 0;
	if (strlen(line) > SIG_LINE_MAX ||
	    sodium_base642bin(out, want, line, strlen(line), NULL, &got, NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    got != want)
		return -EBADMSG;
	return 0;
}

int stune_minisign_key_parse(const char *text, struct stune_minisign_key *out, char **err)
{
	_cleanup_free_ char *copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	char *p = copy, *line;
	while ((line = next_line(&p)) && (!*line || !strncmp(line, "untrusted comment:", 18)))
		;
	uint8_t raw[42];
	if (!line || b64(line, raw, sizeof(raw)) < 0)
		return stune_errf(err, -EBADMSG, "not a minisign public key (expected a base64 line of 42 bytes)");
	if (memcmp(raw, "Ed", 2) != 0)
		return stune_errf(err, -EBADMSG, "not an Ed25519 minisign public key (algorithm '%c%c')", raw[0],
				  raw[1]);
	memcpy(out->id, raw + 2, 8);
	memcpy(out->pk, raw + 10, 32);
	while ((line = next_line(&p)))
		if (*line)
			return stune_errf(err, -EBADMSG, "unexpected text after the key");
	return 0;
}

/* The refusal for a fault of core/trust.h: "SUBJECT: WHAT: the fault and its fix" (-EPERM). */
static int untrusted(char **err, const char *subject, const char *what, struct stune_trust_fault *bad)
{
	_cleanup_free_ char *why = stune_trust_fault_msg(bad, subject);
	stune_trust_fault_clear(bad);
	if (!why)
		return -ENOMEM;
	return stune_errf(err, -EPERM, "%s: %s: %s", subject, what, why);
}

/* Read one key file from an open fd: regular, small, root's (or the invoking user's) and not writable by
 * group or others (core/trust.h; the directories above it the caller checked). */
static int key_from_fd(int fd, const char *name, struct stune_minisign_key *k, char **err)
{
	struct stat st;
	struct stune_trust_fault bad = {0};
	if (fstat(fd, &st) < 0)
		return stune_errf(err, negative_errno(), "%s: %s", name, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return stune_errf(err, -EINVAL, "%s: not a regular file", name);
	if (stune_stat_trusted(name, &st, geteuid(), &bad) < 0)
		return untrusted(err, name, "refused as a trusted key", &bad);
	_cleanup_free_ uint8_t *data = NULL;
	size_t len = 0;
	int r = stune_read_fd(fd, KEY_FILE_MAX, &data, &len);
	if (r < 0)
		return stune_errf(err, r, "%s: %s", name, r == -EFBIG ? "too large for a public key" : strerror(-r));
	if (memchr(data, '\0', len))
		return stune_errf(err, -EBADMSG, "%s: not a minisign public key (binary data)", name);
	_cleanup_free_ char *text = strndup((const char *)data, len);
	if (!text)
		return -ENOMEM;
	_cleanup_free_ char *why = NULL;
	if ((r = stune_minisign_key_parse(text, k, &why)) < 0)
		return stune_errf(err, r, "%s: %s", name, why ? why : strerror(-r));
	if (!(k->source = strdup(name)))
		return -ENOMEM;
	return 0;
}

static int ring_add(struct stune_keyring *ring, struct stune_minisign_key *k, char **err)
{
	char id[17];
	for (size_t i = 0; i < ring->n; i++) {
		if (memcmp(ring->keys[i].id, k->id, 8))
			continue;
		if (!memcmp(ring->keys[i].pk, k->pk, 32)) { /* the same key twice: once is enough */
			free(k->source);
			return 0;
		}
		int e = stune_errf(err, -EEXIST, "%s and %s: two different keys with the same key id %s",
				   ring->keys[i].source, k->source, stune_minisign_keyid_str(k->id, id));
		free(k->source);
		return e;
	}
	struct stune_minisign_key *n = realloc(ring->keys, (ring->n + 1) * sizeof(*n));
	if (!n) {
		free(k->source);
		return -ENOMEM;
	}
	ring->keys = n;
	ring->keys[ring->n++] = *k;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int stune_keyring_load(struct stune_ctx *ctx, const char *extra, struct stune_keyring **out, char **err)
{
	_cleanup_(stune_keyring_freep) struct stune_keyring *ring = calloc(1, sizeof(*ring));
	int r;
	if (!ring)
		return -ENOMEM;
	if (sodium_init() < 0)
		return -EIO;

	_cleanup_free_ char *hostdir = NULL;
	if (stune_root_host_path(ctx->root, STUNE_TRUSTED_KEYS_DIR, &hostdir) < 0)
		return -ENOMEM;
	_cleanup_close_ int dfd = stune_root_open(ctx->root, STUNE_TRUSTED_KEYS_DIR, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 && dfd != -ENOENT)
		return stune_errf(err, dfd, "%s: %s", hostdir, strerror(-dfd));
	if (dfd >= 0) {
		/* The directory and every one above it up to the real / (the tree's prefix too). */
		struct stune_trust_fault bad = {0};
		if ((r = stune_dir_fd_trusted(dfd, geteuid(), &bad)) == -EPERM)
			return untrusted(err, hostdir, "its keys are not trusted", &bad);
		if (r < 0)
			return stune_errf(err, r, "%s: %s", hostdir, strerror(-r));
		int lfd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
		_cleanup_closedir_ DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
		if (!d) {
			r = negative_errno();
			if (lfd >= 0)
				close(lfd);
			return r;
		}
		_cleanup_(stune_strv_freep) char **names = NULL;
		size_t n = 0;
		struct dirent *de;
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (de->d_name[0] == '.' || l < 5 || strcmp(de->d_name + l - 4, ".pub"))
				continue;
			if ((r = stune_strv_push(&names, &n, strdup(de->d_name))) < 0)
				return r;
		}
		if (n)
			qsort(names, n, sizeof(*names), name_cmp); /* a stable order for messages */
		for (size_t i = 0; i < n; i++) {
			_cleanup_free_ char *host = NULL;
			if (asprintf(&host, "%s/%s", hostdir, names[i]) < 0)
				return -ENOMEM;
			/* In the directory just checked, never through a symbolic link (its target's directories
			 * would be unchecked); O_NONBLOCK: a FIFO named *.pub must not hang the open. */
			_cleanup_close_ int fd =
			    openat(dfd, names[i], O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 && errno == ELOOP)
				return stune_errf(err, -ELOOP, "%s: a symbolic link: refused as a trusted key", host);
			if (fd < 0)
				return stune_errf(err, negative_errno(), "%s: %s", host, strerror(errno));
			struct stune_minisign_key k = {0};
			if ((r = key_from_fd(fd, host, &k, err)) < 0 || (r = ring_add(ring, &k, err)) < 0)
				return r;
		}
	}
	if (extra) {
		/* A host path: it and every directory on the way (symbolic links too) are checked. */
		struct stune_trust_fault bad = {0};
		if ((r = stune_path_trusted(extra, geteuid(), &bad)) == -EPERM)
			return untrusted(err, extra, "refused as a trusted key", &bad);
		if (r < 0)
			return stune_errf(err, r, "%s: %s", extra, strerror(-r));
		_cleanup_close_ int fd = open(extra, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			return stune_errf(err, negative_errno(), "%s: %s", extra, strerror(errno));
		struct stune_minisign_key k = {0};
		if ((r = key_from_fd(fd, extra, &k, err)) < 0 || (r = ring_add(ring, &k, err)) < 0)
			return r;
	}
	*out = steal_pointer(&ring);
	return 0;
}

void stune_minisign_result_clear(struct stune_minisign_result *r)
{
	free(r->key_source);
	free(r->trusted_comment);
	memset(r, 0, sizeof(*r));
}

int stune_minisign_verify(const struct stune_keyring *keys, const void *data, size_t len, const char *sig,
			  struct stune_minisign_result *res, char **err)
{
	char idbuf[17];
	if (sodium_init() < 0)
		return -EIO;
	if (strlen(sig) > 4 * SIG_LINE_MAX)
		return stune_errf(err, -EBADMSG, "not a minisign signature (too long)");
	_cleanup_free_ char *copy = strdup(sig);
	if (!copy)
		return -ENOMEM;
	char *p = copy;
	char *l1 = next_line(&p), *l2 = next_line(&p), *l3 = next_line(&p), *l4 = next_line(&p);
	if (!l1 || strncmp(l1, "untrusted comment:", 18) || !l2 || !l3 || strncmp(l3, "trusted comment: ", 17) || !l4)
		return stune_errf(err, -EBADMSG,
				  "not a minisign signature (expected untrusted comment, signature, trusted comment, "
				  "global signature)");
	uint8_t s[74], global[64];
	if (b64(l2, s, sizeof(s)) < 0 || b64(l4, global, sizeof(global)) < 0)
		return stune_errf(err, -EBADMSG, "not a minisign signature (bad base64 or length)");
	int prehashed;
	if (!memcmp(s, "ED", 2))
		prehashed = 1;
	else if (!memcmp(s, "Ed", 2))
		prehashed = 0;
	else
		return stune_errf(err, -EBADMSG, "unknown minisign signature algorithm '%c%c'", s[0], s[1]);
	const struct stune_minisign_key *k = NULL;
	for (size_t i = 0; i < keys->n && !k; i++)
		if (!memcmp(keys->keys[i].id, s + 2, 8))
			k = &keys->keys[i];
	if (!k) {
		if (!keys->n)
			return stune_errf(err, -ENOKEY,
					  "signed with key %s, which is not a trusted key (no trusted keys: "
					  "etc/scsitune/trusted-keys/ is empty or missing)",
					  stune_minisign_keyid_str(s + 2, idbuf));
		/* The keys that are trusted, by ID and file (at most 4): which one the bundle should have been signed
		 * with. */
		_cleanup_free_ char *list = NULL;
		size_t llen = 0;
		FILE *f = open_memstream(&list, &llen);
		for (size_t i = 0; f && i < keys->n && i < 4; i++) {
			char kb[17];
			fprintf(f, "%s%s (%s)", i ? ", " : "", stune_minisign_keyid_str(keys->keys[i].id, kb),
				keys->keys[i].source ? keys->keys[i].source : "?");
		}
		if (f && keys->n > 4)
			fprintf(f, ", and %zu more", keys->n - 4);
		if (f)
			fclose(f);
		return stune_errf(err, -ENOKEY, "signed with key %s, which is not a trusted key (trusted: %s)",
				  stune_minisign_keyid_str(s + 2, idbuf), list ? list : "?");
	}
	int ok;
	if (prehashed) {
		uint8_t h[crypto_generichash_BYTES_MAX];
		crypto_generichash(h, sizeof(h), data, len, NULL, 0);
		ok = crypto_sign_verify_detached(s + 10, h, sizeof(h), k->pk) == 0;
	} else {
		ok = crypto_sign_verify_detached(s + 10, data, len, k->pk) == 0;
	}
	if (!ok)
		return stune_errf(err, -EKEYREJECTED,
				  "signature by key %s does not verify: the file is not the one that was signed",
				  stune_minisign_keyid_str(k->id, idbuf));
	const char *tc = l3 + 17;
	size_t tclen = strlen(tc);
	_cleanup_free_ uint8_t *gm = malloc(64 + tclen);
	if (!gm)
		return -ENOMEM;
	memcpy(gm, s + 10, 64);
	memcpy(gm + 64, tc, tclen);
	if (crypto_sign_verify_detached(global, gm, 64 + tclen, k->pk) != 0)
		return stune_errf(err, -EKEYREJECTED, "the trusted comment's signature by key %s does not verify",
				  stune_minisign_keyid_str(k->id, idbuf));
	memset(res, 0, sizeof(*res));
	memcpy(res->key_id, k->id, 8);
	res->prehashed = prehashed;
	if (!(res->key_source = strdup(k->source)) || !(res->trusted_comment = strdup(tc))) {
		stune_minisign_result_clear(res);
		return -ENOMEM;
	}
	return 0;
}
