/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libkmod, loaded on first use (core/dlib.h says why): module lookup, load
 * and unload (payload/kmod.c). Include this, not <libkmod.h>, in the files
 * that call it; its load function before the first call.
 */
#pragma once

#include <libkmod.h>

#define STUNE_KMOD_SYMS(X)                 \
	X(kmod_module_get_initstate)       \
	X(kmod_module_get_module)          \
	X(kmod_module_get_path)            \
	X(kmod_module_get_refcnt)          \
	X(kmod_module_new_from_lookup)     \
	X(kmod_module_new_from_name)       \
	X(kmod_module_probe_insert_module) \
	X(kmod_module_remove_module)       \
	X(kmod_module_unref)               \
	X(kmod_module_unref_list)          \
	X(kmod_new)                        \
	X(kmod_set_log_priority)           \
	X(kmod_unref)

struct stune_kmod_api {
#define STUNE_DLIB_MEMBER(f) __typeof__(f) *f;
	STUNE_KMOD_SYMS(STUNE_DLIB_MEMBER)
#undef STUNE_DLIB_MEMBER
};
extern struct stune_kmod_api stune_kmod;

/* libkmod.so.2 loaded (once, libcrypto first: it is linked with it), or -ENOPKG */
int stune_kmod_load(char **err);

/* The names as the library's (not in the file that fills the struct). */
#ifndef STUNE_DLIB_LOADER
#define kmod_module_get_initstate	(*stune_kmod.kmod_module_get_initstate)
#define kmod_module_get_module		(*stune_kmod.kmod_module_get_module)
#define kmod_module_get_path		(*stune_kmod.kmod_module_get_path)
#define kmod_module_get_refcnt		(*stune_kmod.kmod_module_get_refcnt)
#define kmod_module_new_from_lookup	(*stune_kmod.kmod_module_new_from_lookup)
#define kmod_module_new_from_name	(*stune_kmod.kmod_module_new_from_name)
#define kmod_module_probe_insert_module (*stune_kmod.kmod_module_probe_insert_module)
#define kmod_module_remove_module	(*stune_kmod.kmod_module_remove_module)
#define kmod_module_unref		(*stune_kmod.kmod_module_unref)
#define kmod_module_unref_list		(*stune_kmod.kmod_module_unref_list)
#define kmod_new			(*stune_kmod.kmod_new)
#define kmod_set_log_priority		(*stune_kmod.kmod_set_log_priority)
#define kmod_unref			(*stune_kmod.kmod_unref)
#endif
