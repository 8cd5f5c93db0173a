// SPDX-License-Identifier: MIT
/*
 * tcp_synq.c - passive opens: the SYN backlog and SYN cookies
 *
 * Theory of operation
 *
 * A SYN to a listener becomes a SYN-RECEIVED connection (no buffers yet)
 * while the listener has fewer than `backlog` of them and the stack fewer
 * than cfg.max_half_open (all listeners; the datapath's --max-half-open);
 * it retransmits its
 * SYN-ACK itself (tcp_timer.c) and is handed to the service by the accept
 * callback when the handshake's ACK arrives (tcp_open.c).
 *
 * When the backlog is full, the SYN is answered statelessly with a SYN
 * cookie as ISS (RFC 4987 3.6):
 *
 *   bits 31..27  t = (now >> 26) mod 32   a 67-second tick
 *   bits 26..24  index of the MSS in tcp_synq_mss[]
 *   bits 23..0   SipHash(secret, 4-tuple, t, peer ISN) mod 2^24
 *
 * The final ACK is accepted when ACK - 1 is such a cookie of this or the
 * previous tick, and only for a listener that overflowed in the last 128 s.
 * Window scale and SACK cannot live in the cookie; when the peer sends
 * timestamps they ride in the low 6 bits of our TSval (echoed in TSecr):
 * bit 5 SACK, bit 4 window scale present, bits 3..0 the peer's shift. That
 * TSval is stepped back 64 ms when the bits would put it ahead of our clock
 * (else the peer's PAWS drops what the connection sends first).
 * Without timestamps a cookie connection has no window scaling and no SACK.
 *
 * A catch-all listener (tcp_listen_any(), the container face) answers
 * nothing by itself: its SYN becomes a SYN-RECEIVED connection marked
 * deferred, which the listener's syn callback owns from that moment and
 * answers once the connection it stands for is up (tcp_conn_answer()), or
 * refuses (tcp_conn_refuse()). It counts as half-open; at max_half_open, or
 * at max_conns, the SYN is dropped, not cookied: a cookie would complete a
 * handshake the other side may still refuse. The peer retransmits it.
 *
 * The hash covers the peer's ISN, which only a segment at ISN + 1 reveals
 * (its seq - 1): the handshake's ACK and the peer's first flight of data.
 * When all of those are lost, the next segment to arrive (a tail loss probe
 * with new data, say) fails the check although the peer is ESTABLISHED. A
 * RST there would kill the connection (Linux does send one), so an ACK that
 * fails only the hash while it carries a valid tick and, when the peer
 * uses timestamps, echoes a TSval our cookie clock gave this 4-tuple within
 * the cookie lifetime, is dropped silently instead: the peer's RTO resends
 * from ISN + 1 and that segment completes the handshake. Any other bad ACK
 * is answered with a RST (RFC 9293 3.10.7.2).
 */
#include "datapath/tcp/tcp_int.h"

#define TCP_COOKIE_TICK_SHIFT	26
#define TCP_COOKIE_VALID_US	(128ULL * 1000000)

static const uint16_t tcp_synq_mss[8] = { 536, 1220, 1380, 1440, 1460, 4036, 8940, 65495 };

struct tcp_cookie_key {
	struct tcp_endpoint l;
	struct tcp_endpoint r;
	uint32_t t;
	uint32_t irs;
	uint8_t tag;
};

static uint32_t tcp_synq_cookie_hash(struct tcp_stack *s, const struct tcp_endpoint *l,
				     const struct tcp_endpoint *r, uint32_t t, uint32_t irs)
{
	struct tcp_cookie_key k;

	memset(&k, 0, sizeof(k));
	k.l = *l;
	k.r = *r;
	k.t = t;
	k.irs = irs;
	k.tag = 'C';
	return (uint32_t)tcp_siphash(s, &k, sizeof(k)) & 0xffffff;
}

static void tcp_synq_eps(const struct tcp_seg_in *seg, struct tcp_endpoint *l, struct tcp_endpoint *r)
{
	memset(l, 0, sizeof(*l));
	memset(r, 0, sizeof(*r));
	l->addr = seg->dst;
	l->port = seg->dport;
	r->addr = seg->src;
	r->port = seg->sport;
}

static void tcp_synq_send_cookie(struct tcp_listener *l, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = l->stack;
	struct tcp_endpoint le, re;
	struct tcp_opts o;
	uint32_t t = (uint32_t)(now_us >> TCP_COOKIE_TICK_SHIFT) & 0x1f, idx = 0, cookie, mss, wnd;
	unsigned int i;

	tcp_synq_eps(seg, &le, &re);
	mss = seg->opts.has_mss ? seg->opts.mss : 536;
	if (mss > l->opts.mss)
		mss = l->opts.mss;
	for (i = 0; i < 8; i++)
		if (tcp_synq_mss[i] <= mss)
			idx = i;
	cookie = t << 27 | idx << 24 | tcp_synq_cookie_hash(s, &le, &re, t, seg->seq);
	memset(&o, 0, sizeof(o));
	o.has_mss = true;
	o.mss = l->opts.mss;
	if (seg->opts.has_ts && !l->opts.no_ts) {
		bool sack = seg->opts.sack_perm && !l->opts.no_sack;
		bool ws = seg->opts.has_wscale && !l->opts.no_wscale;
		uint32_t now_ts = (uint32_t)(now_us / 1000) + (uint32_t)tcp_conn_hash(s, &re, &le);

		o.has_ts = true;
		o.ts_val = (now_ts & ~0x3fu) | (uint32_t)sack << 5 | (uint32_t)ws << 4 |
			   (ws ? seg->opts.wscale & 0xf : 0);
		/*
		 * Never ahead of the connection's clock (now_ts): the peer's
		 * PAWS would drop our first segments until it caught up, and
		 * they would wait for an RTO (Linux's cookie_init_timestamp()
		 * steps back the same way).
		 */
		if ((int32_t)(o.ts_val - now_ts) > 0)
			o.ts_val -= 0x40;
		o.ts_ecr = seg->opts.ts_val;
		o.sack_perm = sack;
		o.has_wscale = ws;
		o.wscale = tcp_buf_wscale_for(l->opts.rcvbuf_max);
	}
	s->st.syncookies_sent++;
	wnd = tcp_buf_new_fit(s, l->opts.rcvbuf_init);
	tcp_out_synack_raw(s, seg, &o, cookie, wnd > 65535 ? 65535 : (uint16_t)wnd);
}

/* A new SYN-RECEIVED connection for @l from @seg, nothing sent yet. */
static void tcp_synq_half_open(struct tcp_listener *l, struct tcp_conn *c, const struct tcp_seg_in *seg,
			       uint64_t now_us)
{
	struct tcp_stack *s = l->stack;

	c->passive = true;
	c->ev = l->ev;
	c->user = l->user;
	c->sack_ok = !c->opts.no_sack;
	c->ts_ok = !c->opts.no_ts;
	c->ws_ok = !c->opts.no_wscale;
	c->rcv_wscale = c->ws_ok ? tcp_buf_wscale_for(c->rcvbuf_max) : 0;
	tcp_open_negotiate(c, seg);
	c->iss = tcp_conn_isn(s, &c->local, &c->remote, now_us);
	c->snd_una = c->snd_nxt = c->snd_max = c->iss;
	c->last_rcv_us = now_us;
	tcp_conn_set_state(c, TCPS_SYN_RECEIVED, now_us);
	c->listener = l;
	l->synq_len++;
	s->st.half_open++;
}

/* A catch-all's SYN (see the top comment). */
static int tcp_synq_defer(struct tcp_listener *l, const struct tcp_seg_in *seg, const struct tcp_endpoint *le,
			  const struct tcp_endpoint *re, uint64_t now_us)
{
	struct tcp_stack *s = l->stack;
	struct tcp_conn *c = NULL;

	if (s->st.half_open < s->cfg.max_half_open)
		c = tcp_conn_new(s, le, re, &l->opts);
	if (!c) {
		s->st.synq_overflow++;
		s->st.syn_deferred_dropped++;
		return 0;
	}
	tcp_synq_half_open(l, c, seg, now_us);
	c->deferred = true;
	c->syn_owned = true;
	c->user_holds = true;
	s->st.syn_deferred++;
	if (l->syn(l, l->user, c, seg) < 0) {
		c->user_holds = false;
		tcp_conn_set_state(c, TCPS_CLOSED, now_us);
	}
	return 0;
}

/**
 * tcp_synq_syn() - a SYN for a listener: SYN-RECEIVED or a SYN cookie
 * @l: the listener
 * @seg: the SYN (no ACK, no RST)
 * @now_us: the time
 *
 * Return: 0.
 */
int tcp_synq_syn(struct tcp_listener *l, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = l->stack;
	struct tcp_endpoint le, re;
	struct tcp_conn *c;

	tcp_synq_eps(seg, &le, &re);
	if (l->syn)
		return tcp_synq_defer(l, seg, &le, &re, now_us);
	if (l->synq_len >= l->backlog || s->st.half_open >= s->cfg.max_half_open) {
		s->st.synq_overflow++;
		l->overflowed = true;
		l->last_overflow_us = now_us;
		tcp_synq_send_cookie(l, seg, now_us);
		return 0;
	}
	c = tcp_conn_new(s, &le, &re, &l->opts);
	if (!c) {
		/* out of connections or memory: a cookie costs nothing */
		s->st.synq_overflow++;
		l->overflowed = true;
		l->last_overflow_us = now_us;
		tcp_synq_send_cookie(l, seg, now_us);
		return 0;
	}
	tcp_synq_half_open(l, c, seg, now_us);
	tcp_out_emit(c, c->iss, TCP_SYN, 0, now_us);
	return 0;
}

/* Does a failed cookie ACK still look like our cookie (see the top comment)? */
static bool tcp_synq_cookie_plausible(struct tcp_listener *l, const struct tcp_seg_in *seg,
				      const struct tcp_endpoint *le, const struct tcp_endpoint *re, uint64_t now_us)
{
	uint32_t now_ts;

	if (!seg->opts.has_ts || l->opts.no_ts)
		return true;
	now_ts = (uint32_t)(now_us / 1000) + (uint32_t)tcp_conn_hash(l->stack, re, le);
	return now_ts - (seg->opts.ts_ecr & ~0x3fu) <= TCP_COOKIE_VALID_US / 1000 + 0x7f;
}

/* Check a cookie ACK without side effects: 0 valid (*idx = MSS index), -EAGAIN plausible, -ENOENT bad. */
static int tcp_synq_cookie_verify(struct tcp_listener *l, const struct tcp_seg_in *seg, uint64_t now_us,
				  uint32_t *idx)
{
	uint32_t cookie = seg->ack - 1, t, now_t;
	struct tcp_endpoint le, re;

	if (!l->overflowed || now_us - l->last_overflow_us > TCP_COOKIE_VALID_US)
		return -ENOENT;
	tcp_synq_eps(seg, &le, &re);
	t = cookie >> 27;
	now_t = (uint32_t)(now_us >> TCP_COOKIE_TICK_SHIFT) & 0x1f;
	if (((now_t - t) & 0x1f) > 1)
		return -ENOENT;
	if ((cookie & 0xffffff) != tcp_synq_cookie_hash(l->stack, &le, &re, t, seg->seq - 1))
		return tcp_synq_cookie_plausible(l, seg, &le, &re, now_us) ? -EAGAIN : -ENOENT;
	*idx = (cookie >> 24) & 7;
	return 0;
}

/**
 * tcp_synq_cookie_check() - does an ACK carry a cookie of @l? No side effects.
 * @l: the listener
 * @seg: the ACK (no SYN, no RST)
 * @now_us: the time
 *
 * For a SYN-RECEIVED connection whose SYN-ACK the peer never saw: it got a
 * cookie SYN-ACK for an earlier copy of the same SYN, answered while the
 * backlog was full, and completed that handshake (tcp_input() then replaces
 * the half-open entry, or drops a segment that only looks like a cookie ACK).
 *
 * Return: 0 when tcp_synq_cookie_ack() would accept @seg, -EAGAIN when it
 * would drop it silently, -ENOENT when a RST is due.
 */
int tcp_synq_cookie_check(struct tcp_listener *l, const struct tcp_seg_in *seg, uint64_t now_us)
{
	uint32_t idx;

	return tcp_synq_cookie_verify(l, seg, now_us, &idx);
}

/**
 * tcp_synq_cookie_ack() - an ACK for a listener: does it carry our cookie?
 * @l: the listener
 * @seg: the ACK (no SYN, no RST)
 * @now_us: the time
 *
 * On success the connection exists (ESTABLISHED, already accepted) and the
 * caller processes @seg on it for any data it carries.
 *
 * Return: 0 when it was a valid cookie, -EAGAIN when it looks like one whose
 * peer's first segments were lost (drop it, no RST), -ENOENT otherwise.
 */
int tcp_synq_cookie_ack(struct tcp_listener *l, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = l->stack;
	uint32_t cookie = seg->ack - 1, irs = seg->seq - 1, idx = 0;
	struct tcp_endpoint le, re;
	struct tcp_seg_in syn;
	struct tcp_conn *c;
	int ret;

	ret = tcp_synq_cookie_verify(l, seg, now_us, &idx);
	if (ret < 0) {
		if (l->overflowed && now_us - l->last_overflow_us <= TCP_COOKIE_VALID_US)
			s->st.syncookies_bad++;
		return ret;
	}
	tcp_synq_eps(seg, &le, &re);
	c = tcp_conn_new(s, &le, &re, &l->opts);
	if (!c)	/* at max_conns: drop, the peer's retransmission may get in */
		return errno == EAGAIN ? -EAGAIN : -ENOENT;
	memset(&syn, 0, sizeof(syn));
	syn.seq = irs;
	syn.ack = seg->ack;
	syn.wnd = seg->wnd;
	syn.opts.has_mss = true;
	syn.opts.mss = tcp_synq_mss[idx];
	c->ts_ok = !c->opts.no_ts && seg->opts.has_ts;
	c->sack_ok = false;
	c->ws_ok = false;
	if (c->ts_ok) {
		syn.opts.has_ts = true;
		syn.opts.ts_val = seg->opts.ts_val;
		syn.opts.sack_perm = seg->opts.ts_ecr >> 5 & 1;
		syn.opts.has_wscale = seg->opts.ts_ecr >> 4 & 1;
		syn.opts.wscale = seg->opts.ts_ecr & 0xf;
		c->sack_ok = !c->opts.no_sack;
		c->ws_ok = !c->opts.no_wscale;
	}
	c->rcv_wscale = c->ws_ok ? tcp_buf_wscale_for(c->rcvbuf_max) : 0;
	c->passive = true;
	tcp_open_negotiate(c, &syn);
	c->iss = cookie;
	c->snd_una = cookie + 1;
	tcp_open_established(c, now_us);
	c->snd_wnd = (uint32_t)seg->wnd << c->snd_wscale;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = seg->ack;
	/* what our SYN-ACK announced */
	c->rcv_adv = c->rcv_nxt + (c->opts.rcvbuf_init > 65535 ? 65535 : c->opts.rcvbuf_init);
	s->st.syncookies_ok++;
	tcp_open_accept(c, l, now_us);
	return 0;
}
