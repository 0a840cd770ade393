/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A bundle's signer and shim's Machine Owner Key list (scsitune payload
 * enroll): where the target host stands with the signer's certificate,
 * the one-time password read from a file, and the certificate staged for
 * enrolment with Debian's mokutil.
 *
 *   - standing, from what detect/modtrust.h read: trusted (a key of the
 *     certificate's SKID in a keyring the module verifier searches, such
 *     as .machine after the reboot), enrolled (in MokListRT but in no
 *     trusted keyring: a kernel without INTEGRITY_MACHINE_KEYRING, or
 *     MokListTrusted off), pending (in efivars MokNew: staged, shim's
 *     MokManager asks at the next boot), absent;
 *   - the password: the confirmation at the console is a person's (or a
 *     BMC console's) step, with the password from a file the fleet
 *     keeps; it must be root's (the caller's), mode 0600 or stricter, a
 *     regular file, one line of printable ASCII (typed at MokManager's
 *     prompt), 1 to 256 characters (shim's PASSWORD_MAX);
 *   - staging: the password's SHA-512 crypt hash (libcrypt, a fresh salt:
 *     what mokutil --generate-hash writes) and the certificate go into a
 *     private directory, and mokutil --import CERT --hash-file HASH reads
 *     them there, so the password is never on a command line.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "detect/modtrust.h"

#define STUNE_MOK_PASSWORD_MAX 256

enum stune_mok_state {
	STUNE_MOK_UNKNOWN = 0,
	STUNE_MOK_ABSENT,
	STUNE_MOK_PENDING,
	STUNE_MOK_ENROLLED,
	STUNE_MOK_TRUSTED
};

struct stune_mok_standing {
	enum stune_mok_state state;
	const struct stune_kkey *key;		 /* trusted or enrolled: the kernel's key of that SKID; NULL if none */
	const struct stune_sys_keyring *keyring; /* the keyring holding key (NULL when not known) */
	bool enrolled;				 /* in MokListRT */
	bool pending;				 /* in MokNew */
};

/* Where the certificate c (by its SKID) stands on the host t describes. unknown: the keyrings could not be read
 * and it is in neither firmware list. */
void stune_mok_standing(const struct stune_module_trust *t, const struct stune_cert *c, struct stune_mok_standing *s);
const char *stune_mok_state_name(enum stune_mok_state s); /* "trusted", "enrolled", "pending", "absent", "unknown" */

/* The password file (see above): *pw allocated (free with stune_mok_password_free). -errno with *err saying what
 * is wrong with it, without the path: -EPERM (owner, mode), -EBADMSG (its content), or the file's own error. */
int stune_mok_password_load(const char *path, char **pw, char **err);
void stune_mok_password_free(char *pw); /* zeroed, then freed */

/* SHA-512 crypt of pw with a fresh salt, as mokutil --generate-hash makes it. -ENOMEM, -EIO (libcrypt refused). */
int stune_mok_hash(const char *pw, char **hash);

/*
 * mokutil --import CERT --hash-file HASH, both written to a directory of mode 0700 under tmpdir (NULL: /tmp) and
 * removed after. 0 on success; mokutil's exit status (> 0) with *output (what it printed, allocated) when it
 * failed; -ENOENT when mokutil is not installed; -errno.
 */
int stune_mok_stage(const unsigned char *der, size_t len, const char *hash, const char *tmpdir, char **output);
