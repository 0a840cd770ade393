/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /etc/scsitune/scsitune.conf (libinih): settings a fleet sets once per host.
 *
 *   [upload]
 *   url = https://vm.example:8428/write
 *   auth_file = /etc/scsitune/upload.auth
 *   ca_file = /etc/scsitune/ca.pem
 *
 * An unknown section or key is an error naming the file and line.
 */
#pragma once

#include <stdbool.h>

#include "macro.h"

#define STUNE_CONFIG_DEFAULT "/etc/scsitune/scsitune.conf"

struct stune_config {
	char *upload_url;
	char *upload_auth_file;
	char *upload_ca_file;
};

/*
 * Parse path into a new config. A missing file gives an empty config when
 * missing_ok, else -ENOENT. -EINVAL with *err ("LINE: message") on a syntax
 * error or an unknown section or key.
 */
int stune_config_load(const char *path, bool missing_ok, struct stune_config **out, char **err);
void stune_config_free(struct stune_config *c);
DEFINE_CLEANUP_FUNC(struct stune_config, stune_config_free)
