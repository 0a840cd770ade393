/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scsitune payload enroll (enroll.c). */
#pragma once
#include <stdbool.h>

#include "cli.h"

/*
 * FILE's signer: pwfile given, staged for enrolment into shim's MOK list
 * unless the kernel trusts it or it is staged already (exit 0); else
 * (--status) where the host stands: 0 trusted, 3 staged and pending, 2
 * neither, 1 not known or an error. dry_run (with pwfile): every check and
 * the password's hash, no mokutil; allowed under --sysroot.
 */
int payload_enroll(struct global_opts *g, const char *file, const char *sig, const char *key, const char *pwfile,
		   bool dry_run);
