/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libarchive, loaded on first use (core/dlib.h says why): payload bundles
 * (payload/bundle.c) and initramfs images (payload/initrd.c). Include this,
 * not <archive.h>, in the files that call it; its load function before the
 * first call.
 */
#pragma once

#include <archive.h>
#include <archive_entry.h>

#define STUNE_ARCHIVE_SYMS(X)                    \
	X(archive_entry_filetype)                \
	X(archive_entry_free)                    \
	X(archive_entry_hardlink)                \
	X(archive_entry_new)                     \
	X(archive_entry_pathname)                \
	X(archive_entry_set_filetype)            \
	X(archive_entry_set_gid)                 \
	X(archive_entry_set_gname)               \
	X(archive_entry_set_mtime)               \
	X(archive_entry_set_pathname)            \
	X(archive_entry_set_perm)                \
	X(archive_entry_set_size)                \
	X(archive_entry_set_uid)                 \
	X(archive_entry_set_uname)               \
	X(archive_entry_size)                    \
	X(archive_entry_size_is_set)             \
	X(archive_error_string)                  \
	X(archive_filter_bytes)                  \
	X(archive_filter_code)                   \
	X(archive_read_data)                     \
	X(archive_read_data_block)               \
	X(archive_read_free)                     \
	X(archive_read_new)                      \
	X(archive_read_next_header)              \
	X(archive_read_open_memory)              \
	X(archive_read_support_filter_all)       \
	X(archive_read_support_filter_zstd)      \
	X(archive_read_support_format_cpio)      \
	X(archive_read_support_format_tar)       \
	X(archive_write_add_filter_zstd)         \
	X(archive_write_close)                   \
	X(archive_write_data)                    \
	X(archive_write_free)                    \
	X(archive_write_header)                  \
	X(archive_write_new)                     \
	X(archive_write_open)                    \
	X(archive_write_set_bytes_in_last_block) \
	X(archive_write_set_format_pax_restricted)

struct stune_archive_api {
#define STUNE_DLIB_MEMBER(f) __typeof__(f) *f;
	STUNE_ARCHIVE_SYMS(STUNE_DLIB_MEMBER)
#undef STUNE_DLIB_MEMBER
};
extern struct stune_archive_api stune_archive;

/* libarchive.so.13 loaded (once), or -ENOPKG */
int stune_archive_load(char **err);

/* The names as the library's (not in the file that fills the struct). */
#ifndef STUNE_DLIB_LOADER
#define archive_entry_filetype			(*stune_archive.archive_entry_filetype)
#define archive_entry_free			(*stune_archive.archive_entry_free)
#define archive_entry_hardlink			(*stune_archive.archive_entry_hardlink)
#define archive_entry_new			(*stune_archive.archive_entry_new)
#define archive_entry_pathname			(*stune_archive.archive_entry_pathname)
#define archive_entry_set_filetype		(*stune_archive.archive_entry_set_filetype)
#define archive_entry_set_gid			(*stune_archive.archive_entry_set_gid)
#define archive_entry_set_gname			(*stune_archive.archive_entry_set_gname)
#define archive_entry_set_mtime			(*stune_archive.archive_entry_set_mtime)
#define archive_entry_set_pathname		(*stune_archive.archive_entry_set_pathname)
#define archive_entry_set_perm			(*stune_archive.archive_entry_set_perm)
#define archive_entry_set_size			(*stune_archive.archive_entry_set_size)
#define archive_entry_set_uid			(*stune_archive.archive_entry_set_uid)
#define archive_entry_set_uname			(*stune_archive.archive_entry_set_uname)
#define archive_entry_size			(*stune_archive.archive_entry_size)
#define archive_entry_size_is_set		(*stune_archive.archive_entry_size_is_set)
#define archive_error_string			(*stune_archive.archive_error_string)
#define archive_filter_bytes			(*stune_archive.archive_filter_bytes)
#define archive_filter_code			(*stune_archive.archive_filter_code)
#define archive_read_data			(*stune_archive.archive_read_data)
#define archive_read_data_block			(*stune_archive.archive_read_data_block)
#define archive_read_free			(*stune_archive.archive_read_free)
#define archive_read_new			(*stune_archive.archive_read_new)
#define archive_read_next_header		(*stune_archive.archive_read_next_header)
#define archive_read_open_memory		(*stune_archive.archive_read_open_memory)
#define archive_read_support_filter_all		(*stune_archive.archive_read_support_filter_all)
#define archive_read_support_filter_zstd	(*stune_archive.archive_read_support_filter_zstd)
#define archive_read_support_format_cpio	(*stune_archive.archive_read_support_format_cpio)
#define archive_read_support_format_tar		(*stune_archive.archive_read_support_format_tar)
#define archive_write_add_filter_zstd		(*stune_archive.archive_write_add_filter_zstd)
#define archive_write_close			(*stune_archive.archive_write_close)
#define archive_write_data			(*stune_archive.archive_write_data)
#define archive_write_free			(*stune_archive.archive_write_free)
#define archive_write_header			(*stune_archive.archive_write_header)
#define archive_write_new			(*stune_archive.archive_write_new)
#define archive_write_open			(*stune_archive.archive_write_open)
#define archive_write_set_bytes_in_last_block	(*stune_archive.archive_write_set_bytes_in_last_block)
#define archive_write_set_format_pax_restricted (*stune_archive.archive_write_set_format_pax_restricted)
#endif
