/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /etc/scsitune/scsitune.conf (libinih): settings a fleet sets once per host.
 *
 *   [upload]
 *   url = https://vm.example:8428/write
 *   auth_file = /etc/scsitune/upload.auth
 *   ca_file = /etc/scsitune/ca.pem
 *   timeout = 30
 *
 * An unknown section or key, or a bad value (a url with credentials in it:
 * core/url.h), is an error naming the file and line.
 */
#pragma once

#include <stdbool.h>

#include "core/macro.h"

/* The default settings file, relative to the root (live: /, or --sysroot DIR). */
#define STUNE_CONFIG_PATH    "etc/scsitune/scsitune.conf"
#define STUNE_CONFIG_DEFAULT "/" STUNE_CONFIG_PATH

/* Bounds of the upload timeout, in seconds (the default is in upload.h). */
#define STUNE_UPLOAD_TIMEOUT_MIN 1
#define STUNE_UPLOAD_TIMEOUT_MAX 3600

struct stune_root;

struct stune_config {
	char *upload_url;
	char *upload_auth_file;
	char *upload_ca_file;
	long upload_timeout_s; /* 0: not set */
};

/*
 * Parse path into a new config. A missing file gives an empty config when
 * missing_ok, else -ENOENT. -EINVAL with *err ("LINE: message") on a syntax
 * error or an unknown section or key.
 */
int stune_config_load(const char *path, bool missing_ok, struct stune_config **out, char **err);
/* The same for STUNE_CONFIG_PATH inside root (the root layer: --sysroot's tree, or /). */
int stune_config_load_root(const struct stune_root *root, bool missing_ok, struct stune_config **out, char **err);
/* "1".."3600" -> seconds; -EINVAL otherwise. */
int stune_parse_upload_timeout(const char *s, long *out);
void stune_config_free(struct stune_config *c);
DEFINE_CLEANUP_FUNC(struct stune_config, stune_config_free)
