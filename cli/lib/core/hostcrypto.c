/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/hostcrypto.h"

#include <stdbool.h>
#include <stddef.h>

#define STUNE_DLIB_LOADER
#include "core/crypto-api.h"
#include "core/dlib.h"

struct stune_crypto_api stune_crypto;

static bool no_config; /* under a sysroot: asked for before or after the load */
static bool skipped;   /* OPENSSL_INIT_NO_LOAD_CONFIG was done */

static void skip_config(void)
{
	/* OPENSSL_INIT_NO_LOAD_CONFIG marks the configuration as done: a later
	 * OPENSSL_INIT_LOAD_CONFIG (EVP's default context, libcurl) is a no-op. */
	if (stune_crypto.OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) == 1)
		skipped = true;
}

static void crypto_loaded(void)
{
	if (no_config)
		skip_config();
}

#define STUNE_CRYPTO_OFFSET(f) offsetof(struct stune_crypto_api, f),
STUNE_DLIB_DEFINE(crypto_lib, "libcrypto.so.3", "libssl3", STUNE_CRYPTO_SYMS, STUNE_CRYPTO_OFFSET, &stune_crypto,
		  crypto_loaded);

int stune_crypto_load(char **err)
{
	return stune_dlib_load(&crypto_lib, err);
}

void stune_crypto_no_host_config(void)
{
	pthread_mutex_lock(&crypto_lib.lock);
	no_config = true;
	if (crypto_lib.state > 0 && !skipped)
		skip_config();
	pthread_mutex_unlock(&crypto_lib.lock);
}

void stune_crypto_host_config_for_tls(void)
{
	if (!skipped)
		return; /* libcurl's OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG) loads it, as usual */
	skipped = false;
	/* What OPENSSL_INIT_LOAD_CONFIG does: the built-in modules (ssl_conf for
	 * system_default's MinProtocol and CipherString), then the default file
	 * ($OPENSSL_CONF or OPENSSLDIR/openssl.cnf), a missing one ignored. */
	stune_crypto.OPENSSL_load_builtin_modules();
	if (stune_crypto.CONF_modules_load_file(NULL, NULL,
						CONF_MFLAGS_DEFAULT_SECTION | CONF_MFLAGS_IGNORE_MISSING_FILE) <= 0)
		stune_crypto.ERR_clear_error();
}
