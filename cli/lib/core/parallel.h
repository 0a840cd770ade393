/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Many small independent reads (a sysfs attribute of each of thousands of
 * devices) on a few threads: on a host with thousands of disks these
 * commands are bound by per-file syscalls, and the path walk of each open
 * runs on the CPU that asked.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct stune_ctx;

/* Upper bound of the worker threads (SCSITUNE_THREADS). */
#define STUNE_MAX_SCAN_THREADS 64

/*
 * Call fn(arg, i) once for every i in [0, n), on up to ctx->scan_threads
 * threads (SCSITUNE_THREADS) or, when that is 0 and n >= min_n, one per
 * CPU this process may run on (at most 16); fewer than min_n items stay on
 * the calling thread, which always takes part. fn must only touch item i
 * and what is safe to share; it must not log through ctx (capture instead).
 * Under a --sysroot each worker gets its own copy of the descriptor table
 * (the kernel skips the reference counting a shared table needs on every
 * read); live, one table (an LD_PRELOAD sysfs expects it).
 */
void stune_parallel_for(struct stune_ctx *ctx, size_t n, size_t min_n, void (*fn)(void *arg, size_t i), void *arg);
