/* SPDX-License-Identifier: GPL-2.0-or-later */
/* core/parallel.c: every item once, on as many threads as asked, the caller's included. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/parallel.h"
#include "tap.h"

struct run {
	unsigned *seen;	 /* per item: how many calls */
	pthread_t *by;	 /* per item: the thread that took it */
	int wait_others; /* the first thread to take an item waits for another's */
	size_t first;	 /* 1 + the index of the first item taken (atomic) */
	int others;	 /* another thread took an item (atomic) */
};

static void visit(void *arg, size_t i)
{
	struct run *r = arg;
	__atomic_fetch_add(&r->seen[i], 1, __ATOMIC_RELAXED);
	r->by[i] = pthread_self();
	if (!r->wait_others)
		return;
	size_t none = 0;
	if (!__atomic_compare_exchange_n(&r->first, &none, i + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    !pthread_equal(r->by[none - 1], r->by[i])) {
		__atomic_store_n(&r->others, 1, __ATOMIC_RELEASE);
		return;
	}
	/* Not a timing assumption: on a busy machine (or a fast one) one thread
	 * may take every item before another runs. The first thread to take an
	 * item waits for another thread's (a condition, with a 30 s deadline: a
	 * second thread that never runs fails the count of threads below). */
	for (int ms = 0; ms < 30000 && !__atomic_load_n(&r->others, __ATOMIC_ACQUIRE); ms++)
		usleep(1000);
}

/* Items called exactly once each; *threads: how many distinct threads took
 * them. wait_others: the first thread to take an item waits for another. */
static int once_each(struct stune_ctx *ctx, size_t n, size_t min_n, int wait_others, size_t *threads)
{
	struct run r = {calloc(n ? n : 1, sizeof(*r.seen)), calloc(n ? n : 1, sizeof(*r.by)), wait_others, 0, 0};
	int bad = !r.seen || !r.by;
	if (!bad)
		stune_parallel_for(ctx, n, min_n, visit, &r);
	*threads = 0;
	for (size_t i = 0; !bad && i < n; i++) {
		bad |= r.seen[i] != 1;
		size_t k = 0;
		while (k < i && !pthread_equal(r.by[k], r.by[i]))
			k++;
		*threads += k == i; /* first item of its thread */
	}
	free(r.seen);
	free(r.by);
	return bad;
}

/* A context on this case's (empty) directory as its root, nothing read from
 * it, scan_threads as given; NULL (a failed check) when it cannot be made. */
static struct stune_ctx *ctx_with(unsigned scan_threads)
{
	struct stune_ctx *ctx = NULL;
	CHECK(stune_ctx_new(tap_tmpdir(), &ctx) == 0 && ctx);
	if (ctx)
		ctx->scan_threads = scan_threads;
	return ctx;
}

CASE(four_threads, "4 threads asked: every item once, on 2 to 4 threads, the caller's included")
{
	struct stune_ctx *ctx = ctx_with(4);
	size_t threads = 0;
	if (!ctx)
		return;
	CHECK(once_each(ctx, 1000, 128, 1, &threads) == 0);
	CHECK(threads >= 2 && threads <= 4); /* the caller and up to 3 workers */
	stune_ctx_free(ctx);
}

CASE(few_items, "4 threads asked, 3 items or none: every item once, never more threads than items")
{
	struct stune_ctx *ctx = ctx_with(4);
	size_t threads = 0;
	if (!ctx)
		return;
	CHECK(once_each(ctx, 3, 128, 0, &threads) == 0);
	CHECK(threads >= 1 && threads <= 3); /* never more threads than items */
	CHECK(once_each(ctx, 0, 128, 0, &threads) == 0 && threads == 0);
	stune_ctx_free(ctx);
}

CASE(one_thread, "1 thread asked: every item once, on the calling thread alone")
{
	struct stune_ctx *ctx = ctx_with(1);
	size_t threads = 0;
	if (!ctx)
		return;
	CHECK(once_each(ctx, 1000, 128, 0, &threads) == 0 && threads == 1);
	stune_ctx_free(ctx);
}

CASE(unset, "unset: below min_n on the calling thread alone; above it every item once")
{
	struct stune_ctx *ctx = ctx_with(0);
	size_t threads = 0;
	if (!ctx)
		return;
	CHECK(once_each(ctx, 100, 128, 0, &threads) == 0 && threads == 1);
	CHECK(once_each(ctx, 1000, 128, 0, &threads) == 0 && threads >= 1);
	stune_ctx_free(ctx);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
