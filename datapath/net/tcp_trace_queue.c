// SPDX-License-Identifier: MIT
/*
 * tcp_trace_queue.c - the samples of a traced TCP engine, queued for the
 * control socket (`datapath ss --trace`)
 *
 * Theory of operation
 *
 * The engine hands each sample of a traced connection to a callback on its
 * own thread (datapath/tcp/tcp_trace.c). Here that callback puts it in a
 * ring of fixed size, one per engine, and the control socket's thread
 * (shard 0's) takes what is there whenever a client asks: one producer,
 * one consumer, no lock. The producer publishes a slot by storing the tail
 * with release order after writing it; the consumer reads up to the tail it
 * loaded with acquire order and gives the slots back by storing the head.
 * A full ring drops the new sample and counts it: the engine never waits
 * for a slow reader.
 *
 * Starting and stopping (the ring's allocation and freeing, the engine's
 * filter) happen while the engine's thread cannot run: its own thread, or
 * a shard parked by shards_pause().
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "datapath/net/tcp_glue_int.h"

struct tcp_trace_queue {
	struct tcp_trace_sample *slot;
	uint32_t cap;
	_Atomic uint32_t head;	/* the consumer's */
	_Atomic uint32_t tail;	/* the producer's */
	_Atomic uint64_t dropped;
};

static void tcp_trace_queue_put(void *ctx, const struct tcp_trace_sample *s)
{
	struct tcp_trace_queue *q = ctx;
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);

	if (tail - atomic_load_explicit(&q->head, memory_order_acquire) >= q->cap) {
		atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
		return;
	}
	q->slot[tail % q->cap] = *s;
	atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
}

/**
 * tcp_glue_trace_start() - follow the connections @f matches
 * @g:		the instance (its thread parked, or the caller's own)
 * @f:		the filter
 * @cap:	samples the queue holds between two reads
 *
 * A trace already running is replaced (its queued samples are lost).
 *
 * Return: 0, -ENOMEM.
 */
int tcp_glue_trace_start(struct tcp_glue *g, const struct tcp_trace_filter *f, uint32_t cap)
{
	struct tcp_trace_queue *q = calloc(1, sizeof(*q));

	if (!q || !cap || !(q->slot = calloc(cap, sizeof(*q->slot)))) {
		free(q);
		return -ENOMEM;
	}
	q->cap = cap;
	tcp_glue_trace_stop(g);
	g->trace = q;
	return tcp_stack_set_trace(g->tcp, f, tcp_trace_queue_put, q);
}

/**
 * tcp_glue_trace_stop() - stop following, free the queue
 * @g:		the instance (its thread parked, or the caller's own)
 */
void tcp_glue_trace_stop(struct tcp_glue *g)
{
	if (!g->trace)
		return;
	tcp_stack_set_trace(g->tcp, NULL, NULL, NULL);
	free(g->trace->slot);
	free(g->trace);
	g->trace = NULL;
}

/**
 * tcp_glue_trace_drain() - take every queued sample
 * @g:		the instance (any one thread, while its own runs)
 * @fn:		called for each, oldest first
 * @arg:	for @fn
 * @dropped:	the samples lost to a full queue so far (may be NULL)
 *
 * Return: the number of samples taken, -ENOENT when no trace runs.
 */
long tcp_glue_trace_drain(struct tcp_glue *g, void (*fn)(void *arg, const struct tcp_trace_sample *s), void *arg,
			  uint64_t *dropped)
{
	struct tcp_trace_queue *q = g->trace;
	uint32_t head, tail;
	long n = 0;

	if (!q)
		return -ENOENT;
	head = atomic_load_explicit(&q->head, memory_order_relaxed);
	tail = atomic_load_explicit(&q->tail, memory_order_acquire);
	for (; head != tail; head++, n++)
		fn(arg, &q->slot[head % q->cap]);
	atomic_store_explicit(&q->head, head, memory_order_release);
	if (dropped)
		*dropped = atomic_load_explicit(&q->dropped, memory_order_relaxed);
	return n;
}
