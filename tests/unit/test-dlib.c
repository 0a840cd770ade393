/* SPDX-License-Identifier: GPL-2.0-or-later */
/* core/dlib.c: libraries loaded on first use; and which libraries the engine's loaders take. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define STUNE_DLIB_LOADER
#include "core/crypto-api.h"
#include "core/dlib.h"
#include "payload/archive-api.h"
#include "payload/kmod-api.h"
#include "tap.h"

/* libm: a library every Debian system has (its prototypes in <math.h>). */
#define ZSYMS(X) X(cbrt) X(hypot)
struct zapi {
#define M(f) __typeof__(f) *f;
	ZSYMS(M)
#undef M
};
#define ZOFF(f) offsetof(struct zapi, f),
static const char *const znames[] = {ZSYMS(STUNE_DLIB_NAME)};
static const size_t zoffsets[] = {ZSYMS(ZOFF)};
static int hook_calls;
static void hook(void)
{
	hook_calls++;
}

CASE(loads_once, "a library's functions found, the hook run once however often it is loaded, the functions work")
{
	struct zapi z = {0};
	struct stune_dlib l = STUNE_DLIB_INIT("libm.so.6", "libc6", znames, zoffsets, &z, hook);
	char *err = NULL;
	hook_calls = 0;
	CHECK(stune_dlib_load(&l, &err) == 0 && !err);
	CHECK(stune_dlib_load(&l, &err) == 0 && !err);
	CHECK(hook_calls == 1);
	CHECK(z.cbrt && z.hypot);
	if (z.cbrt && z.hypot)
		CHECK(fabs(z.cbrt(27.0) - 3.0) < 1e-12 && fabs(z.hypot(3.0, 4.0) - 5.0) < 1e-12);
}

CASE(missing_library,
     "a library that cannot be loaded: -ENOPKG naming it and its Debian package, kept for the next call, no hook")
{
	struct zapi z = {0};
	struct stune_dlib l =
	    STUNE_DLIB_INIT("libscsitune-absent.so.9", "libscsitune-absent9", znames, zoffsets, &z, hook);
	char *err = NULL;
	hook_calls = 0;
	CHECK(stune_dlib_load(&l, &err) == -ENOPKG);
	CHECK(err && strstr(err, "cannot load libscsitune-absent.so.9 (Debian package libscsitune-absent9)"));
	free(err);
	err = NULL;
	CHECK(stune_dlib_load(&l, &err) == -ENOPKG && err && strstr(err, "libscsitune-absent.so.9"));
	free(err);
	CHECK(stune_dlib_load(&l, NULL) == -ENOPKG); /* no place for the message */
	CHECK(hook_calls == 0 && !z.cbrt);
}

static const char *const badnames[] = {"cbrt", "scsitune_no_such_function"};

CASE(missing_function, "a library without one of the functions: -ENOPKG naming the function, no hook")
{
	struct zapi z = {0};
	struct stune_dlib l = STUNE_DLIB_INIT("libm.so.6", "libc6", badnames, zoffsets, &z, hook);
	char *err = NULL;
	hook_calls = 0;
	CHECK(stune_dlib_load(&l, &err) == -ENOPKG);
	CHECK(err && strstr(err, "libm.so.6 has no scsitune_no_such_function"));
	free(err);
	CHECK(hook_calls == 0);
}

CASE(engine_libraries,
     "the engine's loaders find every function they list in Debian's libcrypto, libarchive and libkmod")
{
	char *err = NULL;
	CHECK(stune_crypto_load(&err) == 0 && !err);
	CHECK(stune_archive_load(&err) == 0 && !err);
	CHECK(stune_kmod_load(&err) == 0 && !err);
	free(err);
	CHECK(stune_crypto.d2i_X509 && stune_crypto.OPENSSL_init_crypto);
	CHECK(stune_archive.archive_read_new && stune_archive.archive_write_set_format_pax_restricted);
	CHECK(stune_kmod.kmod_new && stune_kmod.kmod_module_probe_insert_module);
	if (stune_archive.archive_read_new) {
		struct archive *a = stune_archive.archive_read_new();
		CHECK(a != NULL);
		if (a)
			stune_archive.archive_read_free(a);
	}
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
