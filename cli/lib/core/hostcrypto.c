/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/hostcrypto.h"

#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <stdbool.h>

static bool skipped;

void stune_crypto_no_host_config(void)
{
	/* OPENSSL_INIT_NO_LOAD_CONFIG marks the configuration as done: a later
	 * OPENSSL_INIT_LOAD_CONFIG (EVP's default context, libcurl) is a no-op. */
	if (OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) == 1)
		skipped = true;
}

void stune_crypto_host_config_for_tls(void)
{
	if (!skipped)
		return; /* libcurl's OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG) loads it, as usual */
	skipped = false;
	/* What OPENSSL_INIT_LOAD_CONFIG does: the built-in modules (ssl_conf for
	 * system_default's MinProtocol and CipherString), then the default file
	 * ($OPENSSL_CONF or OPENSSLDIR/openssl.cnf), a missing one ignored. */
	OPENSSL_load_builtin_modules();
	if (CONF_modules_load_file(NULL, NULL, CONF_MFLAGS_DEFAULT_SECTION | CONF_MFLAGS_IGNORE_MISSING_FILE) <= 0)
		ERR_clear_error();
}
