// SPDX-License-Identifier: MIT
/*
 * tcp_pool.c - ring memory that stays warm: a stack's pool of ring buffers,
 * the buffers queued segments may still point into, and the borrow rule
 *
 * Theory of operation
 *
 * A connection's rings (tcp_buf.c) used to come from malloc() and go back
 * with free(): glibc serves those sizes (16 KiB to several MiB) with fresh
 * mmap()s, whose pages the kernel faults in and zeroes on first touch and
 * takes back at munmap(). For short flows that was the cost itself, not the
 * bytes (issue 19: 27 % of a loaded datapath's time in the page-fault path,
 * 200 faults per 1 MiB request). Now a ring's memory comes from its stack's
 * pool and goes back to it:
 *
 *   - one free list per power-of-two size (16 KiB .. 16 MiB); a buffer put
 *     back keeps its pages, and the next ring of that size gets them warm;
 *   - a miss maps a new buffer (anonymous mmap, so that a trim really gives
 *     the memory back, whatever the heap around it);
 *   - a slow trim gives back what stayed unused: at most once a second (the
 *     stack's next deadline asks for it while the pool holds anything), every
 *     buffer idle for TCP_POOL_IDLE_US is unmapped. The pool grows with use
 *     and shrinks when the use goes;
 *   - the same pass, when buffers went or many connections ended since the
 *     last, asks glibc to give back the free pages inside its heap
 *     (malloc_trim()): connection structures freed between others still
 *     live would otherwise keep the heap at its peak (10 000 pairs come and
 *     gone left 58 MB held for 10 MB in use);
 *   - tcp_buf.c parks a ring whose last byte went (a receive ring read empty,
 *     a send ring acknowledged empty): its memory goes back to the pool, its
 *     capacity stays, and the next byte takes a buffer again. An idle
 *     connection holds no ring memory at all, only its structure.
 *
 * The borrow rule, the one place it is written and enforced. A segment the
 * engine emits points into its connection's send ring (struct
 * tcp_seg_out's iovecs: no copy), and the link may queue it until it
 * flushes; tcp_stack_tx_done() says that every segment emitted so far has
 * left (one "generation" of loans ends). Until then:
 *   - the memory stays: a send ring that grows, parks or is freed meanwhile
 *     is "retired" here with its size and goes to the pool only then;
 *   - the bytes stay: the ring space of acknowledged bytes is where
 *     tcp_send() writes next, and a queued segment may still carry them (a
 *     retransmission the ACK made spurious, a segment the same turn's ACK
 *     covered). The engine records, per connection, the lowest sequence a
 *     segment of this generation lent from its ring (tcp_snd_lend()), and
 *     tcp_send() and tcp_send_space() leave the acknowledged bytes from
 *     there on alone (tcp_snd_lent()): a send they cut short for it gets its
 *     TCP_EV_WRITABLE when the loans end, from the next tcp_timers_run().
 * So a queued segment never leaves with bytes other than those it was
 * emitted with, and a checksum computed at emit time stays true, whatever
 * its caller does and whether or not the link is blocked.
 *
 * The pool is the stack's own, like everything of a stack: one thread owns
 * it (a shard's engines each have theirs).
 */
#include <malloc.h>
#include <sys/mman.h>

#include "datapath/tcp/tcp_int.h"

#define TCP_POOL_MIN_SHIFT	14	/* 16 KiB: the smallest ring */
#define TCP_POOL_IDLE_US	(10 * 1000000ULL)
#define TCP_POOL_TRIM_EVERY_US	(1000000ULL)
#define TCP_POOL_HEAP_TRIM_CONNS 256	/* ended connections worth a heap trim */

/* What a free buffer holds in its first bytes while it waits in the pool. */
struct tcp_pool_free {
	struct tcp_pool_free *next;
	uint64_t idle_since_us;
};

static int tcp_pool_class(uint32_t cap)
{
	int c = 0;

	while ((1u << (c + TCP_POOL_MIN_SHIFT)) < cap)
		c++;
	return (1u << (c + TCP_POOL_MIN_SHIFT)) == cap && c < TCP_POOL_CLASSES ? c : -1;
}

/**
 * tcp_pool_get() - a ring buffer of @cap bytes, warm when the pool has one
 * @s: the stack
 * @cap: a power of two, 16 KiB .. 16 MiB (other sizes: malloc)
 *
 * Return: the buffer, or NULL when out of memory.
 */
void *tcp_pool_get(struct tcp_stack *s, uint32_t cap)
{
	int c = tcp_pool_class(cap);
	struct tcp_pool_free *f;
	void *p;

	if (c < 0)
		return malloc(cap);
	f = s->pool.free[c];
	if (f) {
		s->pool.free[c] = f->next;
		s->pool.cached -= cap;
		s->st.pool_hits++;
		return f;
	}
	p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	s->st.pool_maps++;
	return p;
}

/**
 * tcp_pool_put() - give a ring buffer back to the pool
 * @s: the stack
 * @buf: from tcp_pool_get() with the same @cap
 * @cap: its size
 */
void tcp_pool_put(struct tcp_stack *s, void *buf, uint32_t cap)
{
	int c = tcp_pool_class(cap);
	struct tcp_pool_free *f = buf;

	if (c < 0) {
		free(buf);
		return;
	}
	f->next = s->pool.free[c];
	f->idle_since_us = s->clock_us;
	s->pool.free[c] = f;
	s->pool.cached += cap;
	if (!s->pool.next_trim_us)
		s->pool.next_trim_us = s->clock_us + TCP_POOL_TRIM_EVERY_US;
}

/**
 * tcp_pool_conn_freed() - a connection structure went back to the heap
 * @s: the stack
 *
 * Asks for the slow pass, which trims the heap once enough went.
 */
void tcp_pool_conn_freed(struct tcp_stack *s)
{
	if (++s->pool.conns_freed == TCP_POOL_HEAP_TRIM_CONNS && !s->pool.next_trim_us)
		s->pool.next_trim_us = s->clock_us + TCP_POOL_TRIM_EVERY_US;
}

/**
 * tcp_pool_trim() - give back to the kernel what stayed unused
 * @s: the stack
 * @now_us: the time
 * @all: every cached buffer (the stack goes), not only the idle ones
 */
void tcp_pool_trim(struct tcp_stack *s, uint64_t now_us, bool all)
{
	uint64_t trimmed = s->st.pool_trimmed;
	unsigned int c;

	for (c = 0; c < TCP_POOL_CLASSES; c++) {
		uint32_t cap = 1u << (c + TCP_POOL_MIN_SHIFT);
		struct tcp_pool_free **pp = &s->pool.free[c];

		while (*pp) {
			struct tcp_pool_free *f = *pp;

			if (!all && now_us - f->idle_since_us < TCP_POOL_IDLE_US) {
				pp = &f->next;
				continue;
			}
			*pp = f->next;
			s->pool.cached -= cap;
			s->st.pool_trimmed += cap;
			munmap(f, cap);
		}
	}
	s->pool.next_trim_us = s->pool.cached ? now_us + TCP_POOL_TRIM_EVERY_US : 0;
	if (!all && (s->st.pool_trimmed != trimmed ||
		     s->pool.conns_freed >= TCP_POOL_HEAP_TRIM_CONNS)) {
		malloc_trim(0);
		s->pool.conns_freed = 0;
	}
}

/**
 * tcp_stack_retire() - keep send memory until tcp_stack_tx_done()
 * @s: the stack
 * @buf: memory queued segments may still point into
 * @cap: its size (it goes back to the pool)
 *
 * Return: 0, or -ENOMEM (then @buf is still the caller's).
 */
int tcp_stack_retire(struct tcp_stack *s, void *buf, uint32_t cap)
{
	if (s->nretired == s->cap_retired) {
		uint32_t n = s->cap_retired ? s->cap_retired * 2 : 8;
		struct tcp_retired *p = realloc(s->retired, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->retired = p;
		s->cap_retired = n;
	}
	s->retired[s->nretired].buf = buf;
	s->retired[s->nretired].cap = cap;
	s->nretired++;
	return 0;
}

/**
 * tcp_snd_lend() - a segment emitted now points into @c's send ring
 * @c: the connection
 * @seq: the sequence number of its first payload byte
 */
void tcp_snd_lend(struct tcp_conn *c, uint32_t seq)
{
	if (c->lent_gen != c->stack->tx_gen || c->lent_buf != c->snd.buf) {
		c->lent_gen = c->stack->tx_gen;
		c->lent_buf = c->snd.buf;
		c->lent_seq = seq;
	} else if (seq_lt(seq, c->lent_seq)) {
		c->lent_seq = seq;
	}
}

/**
 * tcp_snd_lent() - acknowledged bytes a queued segment may still carry
 * @c: the connection
 *
 * They sit in the ring space right before its oldest byte, where
 * tcp_send() would write last: that much of the free space is not free.
 * A loan from an earlier generation, or from a ring since replaced (grown,
 * parked: the old memory is retired), holds nothing.
 *
 * Return: the bytes tcp_send() must not write over.
 */
uint32_t tcp_snd_lent(const struct tcp_conn *c)
{
	if (!c->snd.buf || c->lent_buf != c->snd.buf || c->lent_gen != c->stack->tx_gen ||
	    !seq_lt(c->lent_seq, c->snd_buf_seq))
		return 0;
	return c->snd_buf_seq - c->lent_seq;
}

/**
 * tcp_snd_lent_wait() - tcp_send() was cut short by a loan: wake @c after it
 * @c: the connection (writable_wanted set)
 */
void tcp_snd_lent_wait(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;

	s->st.snd_lent_limited++;
	if (c->lent_waiting)
		return;
	c->lent_waiting = true;
	c->lent_prev = NULL;
	c->lent_next = s->lent_waiters;
	if (s->lent_waiters)
		s->lent_waiters->lent_prev = c;
	s->lent_waiters = c;
}

/**
 * tcp_snd_lent_unwait() - take @c off the waiters (woken, or freed)
 * @c: the connection
 */
void tcp_snd_lent_unwait(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;

	if (!c->lent_waiting)
		return;
	if (c->lent_prev)
		c->lent_prev->lent_next = c->lent_next;
	else
		s->lent_waiters = c->lent_next;
	if (c->lent_next)
		c->lent_next->lent_prev = c->lent_prev;
	c->lent_next = c->lent_prev = NULL;
	c->lent_waiting = false;
}

/**
 * tcp_snd_lent_wake() - the loans ended: TCP_EV_WRITABLE for those that waited
 * @s: the stack (tcp_timers_run(), inside an entry point)
 */
void tcp_snd_lent_wake(struct tcp_stack *s)
{
	s->lent_wake = false;
	while (s->lent_waiters) {
		struct tcp_conn *c = s->lent_waiters;

		tcp_snd_lent_unwait(c);
		if (c->writable_wanted && c->state != TCPS_CLOSED && !c->dead) {
			c->writable_wanted = false;
			tcp_conn_event(c, TCP_EV_WRITABLE, 0);
		}
	}
}

/**
 * tcp_stack_tx_done() - the links flushed every segment emitted so far
 * @s: the stack
 *
 * Retired send buffers go to the pool, and the loans end: the connections
 * whose tcp_send() a loan cut short are told TCP_EV_WRITABLE from the next
 * tcp_timers_run(), which tcp_next_deadline() asks for at once. Called from
 * outside the engine (no event is raised here: the caller has just flushed
 * and what a WRITABLE handler sends must reach the next flush).
 */
void tcp_stack_tx_done(struct tcp_stack *s)
{
	while (s->nretired) {
		s->nretired--;
		tcp_pool_put(s, s->retired[s->nretired].buf, s->retired[s->nretired].cap);
	}
	s->tx_gen++;
	if (s->lent_waiters)
		s->lent_wake = true;
}
