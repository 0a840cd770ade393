/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/parallel.h"

#include <pthread.h>
#include <sched.h>

#include "core/ctx.h"

struct pool {
	struct stune_ctx *ctx;
	void (*fn)(void *arg, size_t i);
	void *arg;
	size_t n;
	size_t next; /* atomic */
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		if (i >= p->n)
			return NULL;
		p->fn(p->arg, i);
	}
}

/*
 * A worker thread with its own copy of the descriptor table: the files it
 * opens get consecutive numbers (batched closes take them in one
 * close_range), and no reference counting of a shared table on every read.
 * It opens and closes only its own files; the root's directory is in the copy.
 */
static void *worker_thread(void *arg)
{
	const struct pool *p = arg;
	if (!stune_root_is_live(p->ctx->root))
		(void)unshare(CLONE_FILES);
	return worker(arg);
}

void stune_parallel_for(struct stune_ctx *ctx, size_t n, size_t min_n, void (*fn)(void *arg, size_t i), void *arg)
{
	struct pool p = {.ctx = ctx, .fn = fn, .arg = arg, .n = n};
	size_t want = ctx->scan_threads;
	if (!want && n >= min_n) {
		/* CPUs this process may run on (a syscall: no /sys read, respects taskset). */
		cpu_set_t set;
		int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
		want = (size_t)(cpus > 16 ? 16 : cpus);
	}
	if (!want)
		want = 1;
	if (want > STUNE_MAX_SCAN_THREADS)
		want = STUNE_MAX_SCAN_THREADS;
	if (want > n)
		want = n ? n : 1;
	pthread_t tid[STUNE_MAX_SCAN_THREADS];
	size_t started = 0;
	for (size_t k = 1; k < want; k++) {
		if (pthread_create(&tid[started], NULL, worker_thread, &p) != 0)
			break; /* fewer threads is fine: the caller works too */
		started++;
	}
	worker(&p);
	for (size_t k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
}
