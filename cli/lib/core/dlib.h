/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Libraries loaded with dlopen() when a command first needs them, not linked.
 *
 * Every scsitune process pays at start for each library it is linked with:
 * the loader maps it, relocates it and runs its constructors, page fault by
 * page fault. libarchive brings libxml2, ICU and libstdc++ (about 170 page
 * faults), libcrypto about 125, libkmod its own zstd and lzma: measured here,
 * `scsitune --version` took 19 ms linked with them and about 5 without, while
 * only the payload commands and detect on a host with firmware certificates
 * call them. So these are loaded on first use (libcurl and libnuma already
 * were, for reasons of their own: net/http.c, detect/numa-live.c).
 *
 * Each library has an API header (core/crypto-api.h, payload/archive-api.h,
 * payload/kmod-api.h) that lists the functions scsitune calls (an X-macro),
 * declares a struct of pointers typed from the library's own header
 * (__typeof__, so a prototype cannot drift), and maps each name to its
 * pointer, so that the code calling it reads as if it were linked. A name
 * used but not listed fails the link (the library is not linked); a name
 * listed but not mapped fails the compile. Every entry point that reaches
 * such a library calls its load function first, which returns -ENOPKG (and
 * names the library and the package that ships it) when it cannot be loaded.
 * A failed load is remembered: it is not retried.
 */
#pragma once

#include <pthread.h>
#include <stddef.h>

struct stune_dlib {
	const char *soname;  /* what dlopen() is given: "libarchive.so.13" */
	const char *package; /* the Debian package that ships it, for the error */
	const char *const *names;
	const size_t *offsets; /* where each name's pointer lies in *api */
	size_t n;
	void *api;
	void (*loaded)(void); /* run once, after every name is found (may be NULL) */
	pthread_mutex_t lock;
	int state; /* 0: not tried; 1: loaded; < 0: failed, why says why */
	char why[256];
};

#define STUNE_DLIB_NAME(f) #f,

/* The table of NAMES (from the X-macro), OFFSETS and the API struct, for one library. */
#define STUNE_DLIB_INIT(so, pkg, names_, offsets_, api_, hook)                              \
	{                                                                                   \
		.soname = (so), .package = (pkg), .names = (names_), .offsets = (offsets_), \
		.n = sizeof(names_) / sizeof((names_)[0]), .api = (api_), .loaded = (hook), \
		.lock = PTHREAD_MUTEX_INITIALIZER,                                          \
	}

/* One library's loader, VAR, with its tables: SYMS the X-macro of its
 * functions, OFFSET(f) the place of f's pointer in *api_ (offsetof). */
#define STUNE_DLIB_DEFINE(var, so, pkg, SYMS, OFFSET, api_, hook)         \
	static const char *const var##_names[] = {SYMS(STUNE_DLIB_NAME)}; \
	static const size_t var##_offsets[] = {SYMS(OFFSET)};             \
	static struct stune_dlib var = STUNE_DLIB_INIT(so, pkg, var##_names, var##_offsets, api_, hook)

/* Loads L once (thread-safe): 0, or -ENOPKG with *err (when err is not NULL) naming the library and why. */
int stune_dlib_load(struct stune_dlib *l, char **err);
