// SPDX-License-Identifier: MIT
/*
 * tcp_buf.c - send and receive buffers, the receive window and its tuning
 *
 * Theory of operation
 *
 * Both buffers are byte rings (struct tcp_ring) with a power-of-two capacity
 * that only grows. Their memory comes from the stack's pool (tcp_pool.c) on
 * the first byte and goes back to it whenever a ring is empty (a receive
 * ring read empty, a send ring acknowledged empty): the ring is "parked",
 * its capacity kept, and the next byte takes a warm buffer again. So an idle
 * connection holds no ring memory, and a new one reuses pages an old one
 * already faulted in.
 *
 * Send ring: offset 0 is the byte at sequence c->snd_buf_seq (the oldest
 * unacknowledged data byte); it holds unacked and unsent data. Emitted
 * segments point into it. When it grows or parks, the old memory is not put
 * back at once but retired to the stack until tcp_stack_tx_done(), since
 * queued segments may still point into it. It grows while the service fills it, up to
 * min(sndbuf_max, 2 * max(cwnd * mss, peer window)) (at least 256 KiB): the
 * buffer follows the bandwidth-delay product and backpressure starts there.
 * Beyond that it holds what the peer SACKed above a hole, up to sndbuf_max
 * more (tcp_buf_snd_limit()): those bytes cannot leave the ring until the
 * hole is repaired, a round trip or more later, and a window's worth of
 * them at 1-2 % loss (where a hole is always open) left no room for new
 * data: at 40 ms and 2 % loss a BBR sender moved 0.85x its kernel's rate
 * with a flat 4 MiB, 1.2x with room for the SACKed data.
 *
 * Both rings round their capacity up to a power of two; the usable part is
 * capped at the send limit / rcvbuf_max, so the limits hold exactly.
 *
 * Receive ring: offset 0 is the oldest unread byte; rcv.len in-order bytes
 * follow, then out-of-order data stored at its own offset (tcp_ooo.c keeps
 * the list of those ranges). The window offered is the free space of the
 * ring, so everything inside the window always fits and the right edge
 * (read point + capacity) never moves left. Auto-tuning (like Linux's
 * dynamic right-sizing): each RTT, if the service consumed more than a
 * quarter of the ring's capacity during that RTT, the ring doubles (up to
 * rcvbuf_max), so a reader that keeps up lets the window open up to 2x the
 * bytes it drains per RTT.
 *
 * Memory cap (cfg.max_buf_mem, the datapath's --tcp-mem; like the kernel's
 * tcp_mem "pressure"): every ring counts its capacity in st.buf_mem, and
 * no ring grows past the cap:
 * - a ring grows (send buffer growth, receive auto-tuning) only as far as
 *   the cap leaves room, to the largest power of two that fits
 *   (tcp_ring_fit()): a doubling that would cross the cap stops below it;
 *   a new ring is made as large as fits (tcp_buf_new_fit(), also for the
 *   receive ring a new connection announces);
 * - a parked ring (its memory back in the pool, its capacity kept) comes
 *   back only as large as the cap leaves room for, and a receive ring not
 *   made yet is made only as large (tcp_buf_rcv_fit()): a send ring holds
 *   nothing then, and a receive ring offers only what fits while it holds
 *   no memory.
 * While the total is at or above the cap, the stack is under pressure:
 * - a ring that exists does not grow: its connection goes on at the speed
 *   its buffers allow, the sender sees backpressure earlier, the receiver
 *   offers less window;
 * - a connection created under pressure announces and gets a receive ring
 *   of TCP_BUF_PRESSURE_MIN (16 KiB) instead of rcvbuf_init, and a send ring
 *   allocated under pressure is 16 KiB: every connection can still move
 *   data, so the cap is soft by at most 32 KiB per connection, and
 *   max_conns bounds that;
 * - a receive ring that comes back, or is made, under pressure is 16 KiB
 *   even when the window it announced while the cap had room was larger:
 *   a window is a promise the room does not keep for it, so the cap is
 *   hard on the receive side, as the kernel's tcp_mem[2]: the in-window
 *   bytes that do not fit are dropped and counted (drop_rcv_mem, the
 *   kernel's TCPRcvQDrop), and the peer sends them again when the reader
 *   has made room. The announced right edge is not moved back (the kernel
 *   does not shrink a window either): what the peer sends up to it is
 *   accepted as the ring drains. (Given the window it had announced, one
 *   parked ring took 2 MiB of a 1 MiB share.) The 16 KiB is the kernel's
 *   rule that a socket with nothing queued takes one packet at any
 *   pressure: every connection still moves data;
 * - no connection is refused for memory.
 * Each ring kept smaller than asked counts one buf_pressure. Freed and
 * parked rings bring the total back down and growth resumes (st.buf_mem
 * counts the memory rings hold, not the capacity parked rings would take
 * again). Rings are freed when the connection
 * is, and earlier in TIME-WAIT once the service let go of the connection
 * (tcp_buf_release(), like the kernel's TIME-WAIT minisocks): everything
 * was sent and acknowledged and nobody will read any more.
 */
#include "datapath/tcp/tcp_int.h"

static uint32_t tcp_pow2_ceil(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

/* Ring bytes the stack may still take before its cap (0 at or above it). */
static uint64_t tcp_buf_room(const struct tcp_stack *s)
{
	return s->st.buf_mem < s->cfg.max_buf_mem ? s->cfg.max_buf_mem - s->st.buf_mem : 0;
}

/* The most ring memory held at once, for `limits` (the cap's promise) */
static void tcp_buf_mem_peak(struct tcp_stack *s)
{
	if (s->st.buf_mem > s->st.buf_mem_peak)
		s->st.buf_mem_peak = s->st.buf_mem;
}

/*
 * The capacity a ring may take: @ncap, or the largest power of two below
 * it that fits in @room, never below @floor (a power of two too).
 */
static uint32_t tcp_ring_fit(uint32_t ncap, uint64_t room, uint32_t floor)
{
	while (ncap > floor && ncap > room)
		ncap >>= 1;
	return ncap > floor ? ncap : floor;
}

/*
 * The capacity a receive ring that holds no memory (parked, or not made
 * yet) may take, and so offers: @cap where the memory cap has room for it,
 * else the largest power of two that fits, at least TCP_BUF_PRESSURE_MIN.
 * Not the window it announced: under pressure the in-window bytes that do
 * not fit are dropped (the top comment), so that the cap holds.
 */
static uint32_t tcp_buf_rcv_fit(const struct tcp_conn *c, uint32_t cap)
{
	uint64_t room = tcp_buf_room(c->stack);

	if (room >= cap || cap <= TCP_BUF_PRESSURE_MIN)
		return cap;	/* the usual case: no pressure */
	return tcp_ring_fit(cap, room, TCP_BUF_PRESSURE_MIN);
}

/**
 * tcp_ring_reserve() - grow a ring to at least @cap bytes
 * @r: the ring
 * @cap: wanted capacity (rounded up to a power of two)
 * @retire: the old memory may still be pointed into by queued segments (a
 *	send ring): it goes to the stack's retired list, else to the pool
 *
 * The whole old capacity (not just @r->len) is kept at the same offsets, so
 * out-of-order data stored past @r->len survives. A parked ring only gets
 * the larger capacity: it holds nothing. A ring that exists grows less, or
 * not at all, where the memory cap has no room for @cap (see the top
 * comment); a new ring's size is its caller's to choose.
 *
 * Return: 0 or -ENOMEM.
 */
int tcp_ring_reserve(struct tcp_ring *r, uint32_t cap, bool retire)
{
	uint32_t ncap = tcp_pow2_ceil(cap), first;
	uint8_t *nb;

	if (ncap <= r->cap)
		return 0;
	if (r->cap) {
		/* what it holds is counted already; a parked ring holds nothing */
		ncap = tcp_ring_fit(ncap, tcp_buf_room(r->acct) + (r->buf ? r->cap : 0), r->cap);
		if (ncap <= r->cap) {
			r->acct->st.buf_pressure++;
			return 0;	/* keep the ring as it is */
		}
	}
	if (!r->buf && r->cap) {
		r->cap = ncap;	/* parked: the next byte takes a buffer of this size */
		return 0;
	}
	nb = tcp_pool_get(r->acct, ncap);
	if (!nb)
		return -ENOMEM;
	if (r->buf) {
		first = r->cap - r->head;
		memcpy(nb, r->buf + r->head, first);
		memcpy(nb + first, r->buf, r->head);
		if (!retire)
			tcp_pool_put(r->acct, r->buf, r->cap);
		else if (tcp_stack_retire(r->acct, r->buf, r->cap) < 0) {
			tcp_pool_put(r->acct, nb, ncap);
			return -ENOMEM;
		}
		r->acct->st.buf_mem -= r->cap;
	}
	r->acct->st.buf_mem += ncap;
	tcp_buf_mem_peak(r->acct);
	r->buf = nb;
	r->cap = ncap;
	r->head = 0;
	return 0;
}

/**
 * tcp_ring_unpark() - give a parked ring its memory back (warm, from the pool)
 * @r: the ring
 *
 * Return: 0 (also for a ring that holds memory, or has no capacity yet),
 * -ENOMEM.
 */
int tcp_ring_unpark(struct tcp_ring *r)
{
	if (r->buf || !r->cap)
		return 0;
	r->buf = tcp_pool_get(r->acct, r->cap);
	if (!r->buf)
		return -ENOMEM;
	r->acct->st.buf_mem += r->cap;
	tcp_buf_mem_peak(r->acct);
	r->head = 0;
	return 0;
}

/**
 * tcp_ring_park() - an empty ring gives its memory to the pool, keeping its
 * capacity (tcp_pool.c): an idle connection holds no ring memory
 * @r: the ring, empty
 * @retire: queued segments may still point into it (a send ring)
 */
void tcp_ring_park(struct tcp_ring *r, bool retire)
{
	if (!r->buf || r->len)
		return;
	if (!retire)
		tcp_pool_put(r->acct, r->buf, r->cap);
	else if (tcp_stack_retire(r->acct, r->buf, r->cap) < 0)
		return;	/* out of memory: it stays */
	r->acct->st.buf_mem -= r->cap;
	r->buf = NULL;
	r->head = 0;
}

/**
 * tcp_buf_new_fit() - the size of a ring made now
 * @s: the stack
 * @size: the size asked for (a new connection's rcvbuf_init, a first send)
 *
 * Return: @size, or where the memory cap has no room for it the largest
 * power of two that fits, at least TCP_BUF_PRESSURE_MIN.
 */
uint32_t tcp_buf_new_fit(const struct tcp_stack *s, uint32_t size)
{
	uint64_t room = tcp_buf_room(s);
	uint32_t ring = tcp_pow2_ceil(size), fit;

	if (size <= TCP_BUF_PRESSURE_MIN || room >= ring)
		return size;
	fit = tcp_ring_fit(ring, room, TCP_BUF_PRESSURE_MIN);
	return fit < size ? fit : size;
}

/**
 * tcp_ring_free() - release a ring's memory and its capacity
 * @r: the ring
 * @retire: queued segments may still point into it (a send ring)
 */
void tcp_ring_free(struct tcp_ring *r, bool retire)
{
	struct tcp_stack *acct = r->acct;

	r->len = 0;
	tcp_ring_park(r, retire);
	if (r->buf) {	/* the retired list had no room: the pool takes it now */
		acct->st.buf_mem -= r->cap;
		tcp_pool_put(acct, r->buf, r->cap);
	}
	memset(r, 0, sizeof(*r));
	r->acct = acct;
}

/**
 * tcp_buf_release() - free the rings of a TIME-WAIT connection nobody holds
 * @c: the connection, in TIME-WAIT, let go of by the service
 *
 * The send ring is empty (our FIN was acknowledged) but queued segments may
 * point into it: it is retired to the stack. Unread received bytes, if any,
 * nobody will read. The RACK records (tcp_rack.c) go too.
 */
void tcp_buf_release(struct tcp_conn *c)
{
	tcp_ring_free(&c->snd, true);
	tcp_ring_free(&c->rcv, false);
	tcp_ranges_free(&c->ooo);
	tcp_ranges_free(&c->sacked);
	tcp_ranges_free(&c->undo_rxt);
	tcp_rack_free(c);	/* nothing is in flight either */
}

/**
 * tcp_buf_rcv_ready() - the receive ring holds memory, before bytes are
 * written into it: the initial capacity on the first data, or a parked
 * ring's buffer again
 * @c: the connection
 *
 * Return: 0 or -ENOMEM.
 */
int tcp_buf_rcv_ready(struct tcp_conn *c)
{
	uint32_t want, fit;

	if (c->rcv.buf)
		return 0;
	want = c->rcv.cap ? c->rcv.cap : tcp_pow2_ceil(c->opts.rcvbuf_init);
	fit = tcp_buf_rcv_fit(c, want);
	if (fit < want)
		c->stack->st.buf_pressure++;
	if (!c->rcv.cap)
		return tcp_ring_reserve(&c->rcv, fit, false);
	c->rcv.cap = fit;
	return tcp_ring_unpark(&c->rcv);
}

/**
 * tcp_ring_write_at() - copy bytes to offset @off from the head
 * @r: the ring
 * @off: offset from the head
 * @data: the bytes
 * @len: how many; clipped to the capacity
 *
 * Return: bytes written.
 */
uint32_t tcp_ring_write_at(struct tcp_ring *r, uint32_t off, const void *data, uint32_t len)
{
	uint32_t pos, first;

	if (off >= r->cap)
		return 0;
	if (len > r->cap - off)
		len = r->cap - off;
	pos = (r->head + off) & (r->cap - 1);
	first = r->cap - pos < len ? r->cap - pos : len;
	memcpy(r->buf + pos, data, first);
	memcpy(r->buf, (const uint8_t *)data + first, len - first);
	return len;
}

/**
 * tcp_ring_iov() - describe @len bytes at @off as at most two iovecs
 * @r: the ring
 * @off: offset from the head
 * @len: length; @off + @len must be within the capacity
 * @iov: the result
 *
 * Return: the number of iovecs used (0 when @len is 0), -EINVAL when out of
 * range.
 */
int tcp_ring_iov(const struct tcp_ring *r, uint32_t off, uint32_t len, struct iovec iov[2])
{
	uint32_t pos, first;

	if (!len)
		return 0;
	if (off > r->cap || len > r->cap - off)
		return -EINVAL;
	pos = (r->head + off) & (r->cap - 1);
	first = r->cap - pos < len ? r->cap - pos : len;
	iov[0].iov_base = r->buf + pos;
	iov[0].iov_len = first;
	if (first == len)
		return 1;
	iov[1].iov_base = r->buf;
	iov[1].iov_len = len - first;
	return 2;
}

/**
 * tcp_ring_read() - copy bytes out without consuming them
 * @r: the ring
 * @off: offset from the head
 * @dst: destination
 * @len: bytes (within the capacity)
 */
void tcp_ring_read(const struct tcp_ring *r, uint32_t off, void *dst, uint32_t len)
{
	struct iovec iov[2];
	int n = tcp_ring_iov(r, off, len, iov);

	if (n > 0)
		memcpy(dst, iov[0].iov_base, iov[0].iov_len);
	if (n > 1)
		memcpy((uint8_t *)dst + iov[0].iov_len, iov[1].iov_base, iov[1].iov_len);
}

/**
 * tcp_ring_drop() - consume bytes at the head
 * @r: the ring
 * @len: bytes, at most @r->len
 */
void tcp_ring_drop(struct tcp_ring *r, uint32_t len)
{
	if (len > r->len)
		len = r->len;
	if (!len)
		return;
	r->head = (r->head + len) & (r->cap - 1);
	r->len -= len;
}

/**
 * tcp_buf_wscale_for() - the window scale needed to offer @max_bytes
 * @max_bytes: the largest receive buffer
 *
 * Return: the smallest shift with (@max_bytes >> shift) <= 65535, at most 14.
 */
uint8_t tcp_buf_wscale_for(uint32_t max_bytes)
{
	uint8_t s = 0;

	while (s < TCP_MAX_WSCALE && (max_bytes >> s) > 65535)
		s++;
	return s;
}

/* Usable receive capacity: the ring, but never more than rcvbuf_max. */
static uint32_t tcp_buf_rcv_cap(const struct tcp_conn *c)
{
	uint32_t cap = c->rcv.cap ? c->rcv.cap : tcp_pow2_ceil(c->opts.rcvbuf_init);

	if (!c->rcv.buf)
		cap = tcp_buf_rcv_fit(c, cap);
	return cap < c->rcvbuf_max ? cap : c->rcvbuf_max;
}

/**
 * tcp_buf_rcv_space() - free bytes of the receive ring (from rcv_nxt)
 * @c: the connection
 *
 * Return: capacity minus unread in-order bytes.
 */
uint32_t tcp_buf_rcv_space(const struct tcp_conn *c)
{
	uint32_t cap = tcp_buf_rcv_cap(c);

	return cap > c->rcv.len ? cap - c->rcv.len : 0;
}

/**
 * tcp_buf_rcv_wnd() - the receive window to offer, unscaled bytes
 * @c: the connection
 *
 * Return: the free space, limited to what the window field can say.
 */
uint32_t tcp_buf_rcv_wnd(const struct tcp_conn *c)
{
	uint32_t w = tcp_buf_rcv_space(c);
	uint32_t lim = 65535u << c->rcv_wscale;

	return w > lim ? lim : w;
}

/**
 * tcp_buf_rcv_sunk() - @len in-order bytes went to the sink, not the ring
 * @c: the connection
 * @len: bytes the sink took
 * @now_us: the time
 *
 * The window offered is the ring's room whether the ring is used or not:
 * a ring with no capacity yet gets its initial one, parked (no memory until
 * a byte is stored), and auto-tuning counts the bytes as read from it.
 */
void tcp_buf_rcv_sunk(struct tcp_conn *c, uint32_t len, uint64_t now_us)
{
	if (!c->rcv.cap)
		c->rcv.cap = tcp_pow2_ceil(c->opts.rcvbuf_init);
	tcp_buf_rcv_autotune(c, len, now_us);
}

/**
 * tcp_buf_rcv_autotune() - grow the receive ring after a fast-reading RTT
 * @c: the connection
 * @delivered: bytes the service just consumed
 * @now_us: the time
 */
void tcp_buf_rcv_autotune(struct tcp_conn *c, uint32_t delivered, uint64_t now_us)
{
	uint64_t rtt = c->srtt_us ? c->srtt_us : 100000;

	c->rcv_space_bytes += delivered;
	if (!c->rcv_space_time_us) {
		c->rcv_space_time_us = now_us;
		return;
	}
	if (now_us - c->rcv_space_time_us < rtt)
		return;
	if (c->rcv.cap && c->rcv.cap < c->rcvbuf_max && c->rcv_space_bytes > c->rcv.cap / 4)
		tcp_ring_reserve(&c->rcv, c->rcv.cap * 2 > c->rcvbuf_max ? c->rcvbuf_max : c->rcv.cap * 2, false);
	c->rcv_space_bytes = 0;
	c->rcv_space_time_us = now_us;
}

/* sndbuf_max, and room for the data SACKed above a hole, up to sndbuf_max more */
static uint32_t tcp_buf_snd_limit(const struct tcp_conn *c)
{
	uint32_t sacked = c->sacked.n ? tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max) : 0;

	return c->sndbuf_max + (sacked < c->sndbuf_max ? sacked : c->sndbuf_max);
}

static uint32_t tcp_buf_snd_target(const struct tcp_conn *c)
{
	uint64_t t = (uint64_t)c->cwnd * c->snd_mss;

	if (t < c->max_snd_wnd)
		t = c->max_snd_wnd;
	t *= 2;
	if (t < TCP_SNDBUF_INIT)
		t = TCP_SNDBUF_INIT;
	if (t > c->sndbuf_max)
		t = c->sndbuf_max;
	return (uint32_t)t + (tcp_buf_snd_limit(c) - c->sndbuf_max);
}

/*
 * The capacity the send ring has, or, parked, comes back with: it holds
 * nothing then, so only as much as the memory cap leaves room for.
 */
static uint32_t tcp_buf_snd_parked_fit(const struct tcp_conn *c)
{
	if (c->snd.buf || c->snd.cap <= TCP_BUF_PRESSURE_MIN)
		return c->snd.cap;
	return tcp_ring_fit(c->snd.cap, tcp_buf_room(c->stack), TCP_BUF_PRESSURE_MIN);
}

/**
 * tcp_buf_snd_grow() - make room for @want more bytes in the send ring
 * @c: the connection
 * @want: bytes the service offers
 *
 * Return: bytes of free space after growing (may be less than @want).
 */
int tcp_buf_snd_grow(struct tcp_conn *c, uint32_t want)
{
	uint32_t target = tcp_buf_snd_target(c), parked = tcp_buf_snd_parked_fit(c);
	uint64_t need = (uint64_t)c->snd.len + want;

	if (parked < c->snd.cap) {
		c->stack->st.buf_pressure++;
		c->snd.cap = parked;
	}
	if (need > c->snd.cap && c->snd.cap < target) {
		uint32_t cap = need < target ? (uint32_t)need : target;

		if (cap < 16384)
			cap = 16384;
		if (!c->snd.cap && tcp_buf_new_fit(c->stack, cap) < cap) {
			c->stack->st.buf_pressure++;	/* a new ring: what fits */
			cap = tcp_buf_new_fit(c->stack, cap);
		}
		if (tcp_ring_reserve(&c->snd, cap, true) < 0 && !c->snd.cap)
			return -ENOMEM;
	}
	/* the ring is a power of two; the limit need not be; and what a
	 * queued segment still carries is not free (tcp_pool.c) */
	target = tcp_buf_snd_limit(c);
	if (c->snd.cap < target)
		target = c->snd.cap;
	need = (uint64_t)c->snd.len + tcp_snd_lent(c);
	return target > need ? (int)(target - need) : 0;
}

/**
 * tcp_send_space() - bytes tcp_send() would accept now
 * @c: the connection
 *
 * Return: free space, counting the growth the buffer is allowed.
 */
size_t tcp_send_space(const struct tcp_conn *c)
{
	uint32_t cap = tcp_buf_snd_parked_fit(c), t = tcp_buf_snd_target(c), fit;
	uint64_t room = tcp_buf_room(c->stack) + (c->snd.buf ? c->snd.cap : 0);

	if (t > cap) {	/* growth, as far as the memory cap leaves room */
		fit = tcp_ring_fit(tcp_pow2_ceil(t), room, cap ? cap : TCP_BUF_PRESSURE_MIN);
		if (fit < t)
			t = fit;
	}
	if (cap < t)	/* t <= tcp_buf_snd_limit(): tcp_buf_snd_target() holds to it */
		cap = t;
	else	/* no growth: what a queued segment still carries is not free */
		cap -= tcp_snd_lent(c) < cap ? tcp_snd_lent(c) : cap;
	return cap > c->snd.len ? cap - c->snd.len : 0;
}

/* tcp_send() and tcp_send_more(): queue what fits; send it now when @push. */
static ssize_t tcp_send_queue(struct tcp_conn *c, const void *buf, size_t len, uint64_t now_us, bool push)
{
	struct tcp_stack *s = c->stack;
	int space;
	uint32_t n;

	switch (c->state) {
	case TCPS_SYN_SENT:
	case TCPS_SYN_RECEIVED:
	case TCPS_ESTABLISHED:
	case TCPS_CLOSE_WAIT:
		if (c->fin_queued)
			return -EPIPE;
		break;
	case TCPS_CLOSED:
		return -ENOTCONN;
	default:
		return -EPIPE;
	}
	if (len > UINT32_MAX / 2)
		len = UINT32_MAX / 2;
	space = tcp_buf_snd_grow(c, (uint32_t)len);
	if (space < 0)
		return space;
	n = (uint32_t)len < (uint32_t)space ? (uint32_t)len : (uint32_t)space;
	if (n < len) {
		c->writable_wanted = true;
		if (tcp_snd_lent(c))	/* the space a loan holds frees without an ACK */
			tcp_snd_lent_wait(c);
	}
	if (!n)
		return 0;
	if (tcp_ring_unpark(&c->snd) < 0)
		return -ENOMEM;
	s->clock_us = now_us;
	tcp_conn_enter(s);
	tcp_ring_write_at(&c->snd, c->snd.len, buf, n);
	c->snd.len += n;
	if (push && (c->state == TCPS_ESTABLISHED || c->state == TCPS_CLOSE_WAIT))
		tcp_out_push(c, now_us);
	tcp_conn_leave(s);
	return n;
}

/**
 * tcp_send() - queue bytes for sending; accepts what fits (backpressure)
 * @c: the connection
 * @buf: the bytes
 * @len: how many
 * @now_us: the time
 *
 * When less than @len was taken, TCP_EV_WRITABLE follows once space frees.
 * Data queued before the handshake completes goes out right after it.
 *
 * Return: bytes accepted (0 when full), -EPIPE after shutdown/close of the
 * sending side, -ENOTCONN when the connection is closed, -ENOMEM.
 */
ssize_t tcp_send(struct tcp_conn *c, const void *buf, size_t len, uint64_t now_us)
{
	return tcp_send_queue(c, buf, len, now_us, true);
}

/**
 * tcp_send_more() - tcp_send(), but more is coming: queue without sending
 * @c: the connection
 * @buf: the bytes
 * @len: how many
 * @now_us: the time
 *
 * Like MSG_MORE: the bytes wait in the send ring for tcp_push() (or for
 * whatever sends on @c first: an ACK that opens the window, a timer), so
 * that several calls leave as large segments. It sends nothing and raises
 * no event, so another stack's sink may call it (tcp_sink_fn).
 *
 * Return: as tcp_send().
 */
ssize_t tcp_send_more(struct tcp_conn *c, const void *buf, size_t len, uint64_t now_us)
{
	return tcp_send_queue(c, buf, len, now_us, false);
}

/**
 * tcp_push() - send what tcp_send_more() queued, as far as the windows allow
 * @c: the connection
 * @now_us: the time
 */
void tcp_push(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;

	if (c->state != TCPS_ESTABLISHED && c->state != TCPS_CLOSE_WAIT)
		return;
	s->clock_us = now_us;
	tcp_conn_enter(s);
	tcp_out_push(c, now_us);
	tcp_conn_leave(s);
}

/**
 * tcp_peek() - the unread in-order bytes, without consuming them
 * @c: the connection
 * @iov: at most two iovecs into the receive ring, valid until the next
 *	call into the stack
 *
 * Return: the number of iovecs filled (0 when nothing is readable).
 */
int tcp_peek(struct tcp_conn *c, struct iovec iov[2])
{
	return tcp_ring_iov(&c->rcv, 0, c->rcv.len, iov);
}

/**
 * tcp_consume() - mark @len peeked bytes read; may open the window
 * @c: the connection
 * @len: bytes, at most what tcp_peek() showed
 * @now_us: the time
 *
 * Return: 0 or -EINVAL when @len exceeds the readable bytes.
 */
int tcp_consume(struct tcp_conn *c, size_t len, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	uint32_t before, after, thresh;

	if (len > c->rcv.len)
		return -EINVAL;
	if (!len)
		return 0;
	s->clock_us = now_us;
	tcp_conn_enter(s);
	tcp_ring_drop(&c->rcv, (uint32_t)len);
	tcp_buf_rcv_autotune(c, (uint32_t)len, now_us);
	/* read empty: the memory goes back to the pool until the next byte */
	if (!c->rcv.len && !c->ooo.n)
		tcp_ring_park(&c->rcv, false);
	/* RFC 9293 3.8.6.2.2: update the window when the edge moves enough */
	before = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	after = tcp_buf_rcv_wnd(c);
	thresh = tcp_buf_rcv_cap(c) / 2;
	if (thresh > 2u * c->rcv_mss)
		thresh = 2u * c->rcv_mss;
	if ((c->state == TCPS_ESTABLISHED || c->state == TCPS_FIN_WAIT_1 || c->state == TCPS_FIN_WAIT_2) &&
	    after > before && after - before >= thresh)
		tcp_out_ack(c, now_us);
	tcp_conn_leave(s);
	return 0;
}

/**
 * tcp_recv() - copy out and consume received bytes
 * @c: the connection
 * @buf: destination
 * @len: its size
 * @now_us: the time
 *
 * Return: bytes copied, 0 at end of stream (peer FIN, all read), -EAGAIN
 * when nothing is readable yet, -ENOTCONN when the connection was reset or
 * never established.
 */
ssize_t tcp_recv(struct tcp_conn *c, void *buf, size_t len, uint64_t now_us)
{
	uint32_t n = c->rcv.len;

	if (!n) {
		if (c->fin_rcvd)
			return 0;
		if (c->state == TCPS_CLOSED || c->state == TCPS_SYN_SENT)
			return -ENOTCONN;
		return -EAGAIN;
	}
	if (len < n)
		n = (uint32_t)len;
	tcp_ring_read(&c->rcv, 0, buf, n);
	tcp_consume(c, n, now_us);
	return n;
}
