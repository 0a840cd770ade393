/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcrypto reads the host's OpenSSL configuration (/usr/lib/ssl/openssl.cnf,
 * or $OPENSSL_CONF) at its first use, whatever that use is. It is loaded only
 * when needed (core/crypto-api.h: X.509 and CMS). Under --sysroot nothing of
 * the host may be read (the isolation tier), so the context asks that
 * libcrypto, when it is loaded (or now, if it is already), not load it; an
 * upload, which is this host talking to a server over TLS, loads it by hand,
 * since libcurl's own request to load it is then a no-op.
 */
#pragma once

/* libcrypto, once loaded, never loads the host's configuration implicitly. */
void stune_crypto_no_host_config(void);
/* For TLS: the host's configuration, loaded now if stune_crypto_no_host_config() kept it out. */
void stune_crypto_host_config_for_tls(void);
