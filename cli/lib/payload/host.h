/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the target host (the live system, or the --sysroot tree) says about
 * a kernel release, all through the root layer:
 *   - the running release (proc/sys/kernel/osrelease) and the Debian package
 *     version it was built as ("... Debian 6.1.192-3 (...)" in proc/version);
 *   - the installed linux-image-RELEASE package's version (dpkg's status file,
 *     var/lib/dpkg/status);
 *   - module signature enforcement (sys/module/module/parameters/sig_enforce),
 *     the lockdown mode (sys/kernel/security/lockdown), and what the kernel
 *     trusts for modules: how it booted, Secure Boot, its keyrings and keys
 *     (detect/modtrust.h: the EFI variable SecureBoot-8be4df61-93ca-11d2-
 *     aa0d-00e098032b8c, proc/keys, the keyrings' membership);
 *   - the kernel package's own copy of a module (lib/modules/R/modules.order)
 *     and the modules that depend on it (lib/modules/R/modules.dep, which
 *     depmod writes with every dependency, direct or not).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "core/num.h"
#include "detect/modtrust.h"

#define STUNE_PAYLOAD_SUBDIR "updates/scsitune" /* under lib/modules/RELEASE */
#define STUNE_DPKG_STATUS    "var/lib/dpkg/status"

struct stune_payload_host {
	char *release;			/* the release asked about */
	char *running_release;		/* NULL when unreadable */
	bool running;			/* release == running_release */
	char *running_debian_version;	/* from proc/version, when running */
	char *installed_debian_version; /* dpkg: linux-image-RELEASE, "install ok installed"; NULL when not installed */
	bool modules_dir;		/* lib/modules/RELEASE is a directory */
	enum stune_tristate sig_enforce;
	char *lockdown;			  /* none / integrity / confidentiality; NULL without the LSM */
	enum stune_tristate secure_boot;  /* trust->secure_boot; unknown until stune_payload_host_read_trust() */
	struct stune_module_trust *trust; /* NULL until stune_payload_host_read_trust() */
};

void stune_payload_host_free(struct stune_payload_host *h);
DEFINE_CLEANUP_FUNC(struct stune_payload_host, stune_payload_host_free)
/* release NULL: the running one. Unreadable facts stay NULL / unknown. */
int stune_payload_host_read(struct stune_ctx *ctx, const char *release, struct stune_payload_host **out);
/* What the kernel trusts for modules (preflight's): Secure Boot, keyrings, keys. Only -ENOMEM fails. */
int stune_payload_host_read_trust(struct stune_ctx *ctx, struct stune_payload_host *h);

/* "Debian 6.1.192-3" in a proc/version text (after the '#'): the version, allocated; NULL if none. */
char *stune_proc_version_debian(const char *text);
/* Version of an installed package in a dpkg status text; NULL if absent or not installed. */
char *stune_dpkg_status_version(const char *text, const char *package);

/* lib/modules/R/<path> of the kernel package's copy of module name (modules.order); -ENOENT if none. */
int stune_stock_module_path(struct stune_ctx *ctx, const char *release, const char *name, char **out);
/*
 * Modules (root-relative paths) that depend on any of names, from
 * lib/modules/R/modules.dep, whichever copy of a name depmod chose. Our own
 * modules and the named ones are left out. NULL-terminated.
 */
int stune_module_dependents(struct stune_ctx *ctx, const char *release, char *const *names, char ***out);
