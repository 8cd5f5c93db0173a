// SPDX-License-Identifier: MIT
/*
 * tcp_timer.c - retransmission, persist, delayed ACK, keepalive, TIME-WAIT
 *
 * Theory of operation
 *
 * Each connection keeps absolute deadlines (microseconds, TCP_NO_DEADLINE
 * when off) for its five timers; its earliest one is its key in a binary
 * min-heap of the stack, so tcp_next_deadline() is O(1) and
 * tcp_timers_run() touches only connections that are due. Any code that
 * changes a deadline calls tcp_timer_update().
 *
 * A TIME-WAIT connection whose one timer is its close stays out of the
 * heap: the TIME-WAIT FIFO (tcp_conn.c) is in the order of those
 * deadlines, all TCP_TIMEWAIT_US after a start, and tcp_timers_run()
 * expires them from its head. A server's closes would otherwise fill the
 * heap with thousands of connections that wait 60 s, and every insertion
 * and removal of a busy connection would walk them, cold, at each level.
 *
 * Retransmission (RFC 6298): RTO from tcp_ack_rtt_sample(), at least 200 ms,
 * at most 120 s, 1 s before the first sample; restarted when an ACK advances
 * snd_una, stopped when all is acknowledged. On expiry: the controller's
 * on_rto() (ssthresh, cwnd = 1), every outstanding segment counts as lost
 * (after_rto: go-back-N from snd_una, skipping SACKed ranges), the first one
 * is resent and the RTO doubles (5.5). SYNs give up after 6 tries, SYN-ACKs
 * after 5, data after 15 (ETIMEDOUT).
 *
 * Persist (RFC 9293 3.8.6.1): data waits and nothing is in flight. If the
 * window is still zero a probe with SEG.SEQ = SND.UNA - 1 elicits an ACK;
 * if the window is open but too small for SWS avoidance, up to one MSS is
 * forced out. Backs off from the RTO up to 60 s.
 *
 * Tail loss probe (RFC 8985 7): when no ACK came 2 SRTT after the last
 * send, one new segment or the last one again goes out, so a lost tail
 * shows up as a SACK (or a cumulative ACK) instead of waiting for the RTO;
 * RACK (tcp_rack.c) then marks what was sent before the probe lost once
 * its time is up (without RACK: every hole below a SACKed probe is lost).
 * A probe that resent the last segment and is answered by an ACK beyond it
 * without a D-SACK repaired a real loss: one cwnd reduction (7.4,
 * tcp_recovery_tlp_on_ack()). Beyond RFC 8985, which arms no probe in
 * recovery: with RACK the probe timer also runs during a fast recovery, and
 * after an RTO once an ACK has advanced, restarted by every send and every
 * ACK that delivers something. When it fires there, nothing in flight was
 * delivered for 2 SRTT: the first unSACKed segment is resent, which repairs
 * a retransmission lost again with nothing sent after it (no delivery
 * could tell RACK) 200 ms or more before the RTO would, with no cwnd cut.
 *
 * RACK's reordering timer (t_rack_us, 0 = off) runs RACK's detection again
 * when a segment sent before the last delivered one reaches its deadline.
 * An RTO marks every unSACKed segment lost for RACK and opens an undo
 * episode (tcp_undo.c) unless one is running.
 *
 * Delayed ACK: 40 ms. Keepalive: idle / interval / count from the options,
 * probes of the same form as persist. TIME-WAIT: 60 s. An orphaned
 * FIN-WAIT-2 (the service closed) also ends after 60 s.
 */
#include <sys/socket.h>

#include "datapath/tcp/tcp_int.h"

static bool tcp_heap_less(const struct tcp_conn *a, const struct tcp_conn *b)
{
	return a->deadline_us < b->deadline_us;
}

static void tcp_heap_set(struct tcp_stack *s, uint32_t i, struct tcp_conn *c)
{
	s->heap[i] = c;
	c->heap_idx = i;
}

static void tcp_heap_up(struct tcp_stack *s, uint32_t i)
{
	struct tcp_conn *c = s->heap[i];

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (!tcp_heap_less(c, s->heap[p]))
			break;
		tcp_heap_set(s, i, s->heap[p]);
		i = p;
	}
	tcp_heap_set(s, i, c);
}

static void tcp_heap_down(struct tcp_stack *s, uint32_t i)
{
	struct tcp_conn *c = s->heap[i];

	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		struct tcp_conn *best = c;

		if (l < s->heap_len && tcp_heap_less(s->heap[l], best)) {
			m = l;
			best = s->heap[l];
		}
		if (l + 1 < s->heap_len && tcp_heap_less(s->heap[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		tcp_heap_set(s, i, s->heap[m]);
		i = m;
	}
	tcp_heap_set(s, i, c);
}

/**
 * tcp_timer_heap_remove() - take a connection out of the timer heap
 * @c: the connection
 */
void tcp_timer_heap_remove(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;
	uint32_t i = c->heap_idx;

	if (i == UINT32_MAX)
		return;
	c->heap_idx = UINT32_MAX;
	if (--s->heap_len == i)
		return;
	tcp_heap_set(s, i, s->heap[s->heap_len]);
	tcp_heap_down(s, i);
	tcp_heap_up(s, s->heap[i]->heap_idx);
}

/**
 * tcp_timer_update() - recompute the connection's earliest deadline
 * @c: the connection
 */
void tcp_timer_update(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;
	uint64_t d = c->t_rtx_us;

	if (c->t_persist_us < d)
		d = c->t_persist_us;
	if (c->t_delack_us < d)
		d = c->t_delack_us;
	if (c->t_keep_us < d)
		d = c->t_keep_us;
	if (c->t_tlp_us < d)
		d = c->t_tlp_us;
	if (c->t_rack_us && c->t_rack_us < d)
		d = c->t_rack_us;
	if (c->t_pace_us < d)
		d = c->t_pace_us;
	if (c->state == TCPS_TIME_WAIT && d == TCP_NO_DEADLINE) {
		c->deadline_us = c->t_close_us;	/* on the FIFO, its timer */
		tcp_timer_heap_remove(c);
		return;
	}
	if (c->t_close_us < d)
		d = c->t_close_us;
	if (c->state == TCPS_CLOSED)
		d = TCP_NO_DEADLINE;
	c->deadline_us = d;
	if (d == TCP_NO_DEADLINE) {
		tcp_timer_heap_remove(c);
		return;
	}
	if (c->heap_idx == UINT32_MAX) {
		if (s->heap_len == s->heap_cap) {
			uint32_t n = s->heap_cap ? s->heap_cap * 2 : 64;
			struct tcp_conn **h = realloc(s->heap, n * sizeof(*h));

			if (!h)
				return;	/* the timer is lost; the next update retries */
			s->heap = h;
			s->heap_cap = n;
		}
		tcp_heap_set(s, s->heap_len++, c);
		tcp_heap_up(s, c->heap_idx);
		return;
	}
	tcp_heap_down(s, c->heap_idx);
	tcp_heap_up(s, c->heap_idx);
}

/**
 * tcp_next_deadline() - when tcp_timers_run() must run next
 * @s: the stack
 *
 * Return: absolute microseconds, UINT64_MAX when no timer is armed.
 */
uint64_t tcp_next_deadline(const struct tcp_stack *s)
{
	uint64_t d = s->heap_len ? s->heap[0]->deadline_us : TCP_NO_DEADLINE;

	if (s->tw_head && s->tw_head->t_close_us < d)
		d = s->tw_head->t_close_us;
	/* the pool's slow trim (tcp_pool.c), while it holds anything */
	if (s->pool.next_trim_us && s->pool.next_trim_us < d)
		d = s->pool.next_trim_us;
	/* loans ended with sends waiting for them: at once */
	if (s->lent_wake && s->clock_us < d)
		d = s->clock_us;
	return d;
}

/**
 * tcp_timer_rtx_arm() - start the retransmission timer with the current RTO
 * @c: the connection
 * @now_us: the time
 */
void tcp_timer_rtx_arm(struct tcp_conn *c, uint64_t now_us)
{
	c->t_rtx_us = now_us + c->rto_us;
	tcp_timer_tlp_arm(c, now_us);
}

/**
 * tcp_timer_tlp_arm() - arm the tail loss probe timer when it applies
 * @c: the connection (the retransmission timer already armed)
 * @now_us: the time
 *
 * RFC 8985 7.2: PTO = 2 * SRTT (+ 200 ms for a delayed ACK when a single
 * segment is out), at least 10 ms, and only when it fires before the RTO;
 * with SACK, one probe at a time. Outside RFC 8985 also during a recovery
 * or after an RTO when RACK runs (see the top comment): there the receiver
 * ACKs at once (it holds a hole or just filled one), so no delayed-ACK
 * allowance.
 */
void tcp_timer_tlp_arm(struct tcp_conn *c, uint64_t now_us)
{
	uint64_t pto = 2 * (uint64_t)c->srtt_us;
	bool recovering = c->in_recovery || c->after_rto;

	c->t_tlp_us = TCP_NO_DEADLINE;
	if (c->sack_ok && (!recovering || (tcp_rack_on(c) && !c->retries)) && !c->tlp_active && c->srtt_us &&
	    c->snd_una != c->snd_max && c->state >= TCPS_ESTABLISHED && c->state != TCPS_TIME_WAIT) {
		if (!recovering && c->snd_max - c->snd_una <= c->snd_mss)
			pto += 200000;
		if (pto < 10000)
			pto = 10000;
		if (now_us + pto < c->t_rtx_us)
			c->t_tlp_us = now_us + pto;
	}
	tcp_timer_update(c);
}

/*
 * RFC 8985 7.3: send one new segment if the window allows, else resend the
 * last one; the ACK or SACK it brings reveals the tail losses. During a
 * recovery (or after an RTO) no ACK for 2 SRTT means that everything in
 * flight was lost, the first unSACKed segment included: that one is resent,
 * and its ACK both repairs it and lets RACK mark the rest (a retransmission
 * sent later was delivered).
 */
static void tcp_timer_tlp_fire(struct tcp_conn *c, uint64_t now_us)
{
	uint32_t data_end = c->snd_buf_seq + c->snd.len, wnd_end = c->snd_una + c->snd_wnd, start, last;
	bool recovering = c->in_recovery || c->after_rto;
	int n;

	c->t_tlp_us = TCP_NO_DEADLINE;
	if (c->snd_una == c->snd_max || (recovering && !tcp_rack_on(c)))
		return;
	c->tlp_is_retrans = false;
	if (recovering) {
		start = c->sacked.n && c->sacked.r[0].start == c->snd_una ? c->sacked.r[0].end : c->snd_una;
		if (!seq_lt(start, c->snd_max))
			return;
		n = tcp_out_retransmit(c, start, c->snd_mss, now_us);
		if (n <= 0)
			return;
		tcp_recovery_sent(c, (uint32_t)n);
	} else if (seq_lt(c->snd_nxt, data_end) && seq_gt(wnd_end, c->snd_nxt)) {
		uint32_t len = seq_min(data_end, wnd_end) - c->snd_nxt;

		if (len > c->snd_mss)
			len = c->snd_mss;
		start = c->snd_nxt;
		tcp_out_emit(c, c->snd_nxt, c->snd_nxt + len == data_end ? TCP_PSH : 0, len, now_us);
		c->snd_nxt += len;
	} else {
		last = seq_min(c->snd_max, data_end);
		start = last - (last - c->snd_una < c->snd_mss ? last - c->snd_una : c->snd_mss);
		c->tlp_is_retrans = tcp_out_retransmit(c, start, c->snd_mss, now_us) > 0;
	}
	c->tlp_active = true;
	c->tlp_in_recovery = recovering;
	c->tlp_check = false;
	c->tlp_seq = start;
	c->tlp_high_seq = c->snd_max;
	c->tlp_episodes = c->stats.fast_recoveries + c->stats.rto_count;
	c->stats.tlp_probes++;
	tcp_timer_rtx_arm(c, now_us);
	tcp_trace_emit(c, TCP_TRACE_TLP, now_us);
}

/**
 * tcp_timer_rtx_restart() - RFC 6298 5.3: restart on new acknowledgments
 * @c: the connection
 * @now_us: the time
 */
void tcp_timer_rtx_restart(struct tcp_conn *c, uint64_t now_us)
{
	tcp_timer_rtx_arm(c, now_us);
}

/**
 * tcp_timer_persist_arm() - start the persist timer unless running
 * @c: the connection
 * @now_us: the time
 */
void tcp_timer_persist_arm(struct tcp_conn *c, uint64_t now_us)
{
	uint64_t t = (uint64_t)(c->rto_us > TCP_RTO_MIN_US ? c->rto_us : TCP_RTO_MIN_US) << c->persist_backoff;

	if (c->t_persist_us != TCP_NO_DEADLINE)
		return;
	if (t > TCP_PERSIST_MAX_US)
		t = TCP_PERSIST_MAX_US;
	c->t_persist_us = now_us + t;
	tcp_timer_update(c);
}

/**
 * tcp_timer_keep_arm() - (re)start keepalive from now, when enabled
 * @c: the connection
 * @now_us: the time
 */
void tcp_timer_keep_arm(struct tcp_conn *c, uint64_t now_us)
{
	if (!c->opts.keepalive_idle_ms)
		return;
	c->t_keep_us = now_us + (uint64_t)c->opts.keepalive_idle_ms * 1000;
	tcp_timer_update(c);
}

/**
 * tcp_timer_delack() - start the delayed ACK timer unless running
 * @c: the connection
 * @now_us: the time
 */
void tcp_timer_delack(struct tcp_conn *c, uint64_t now_us)
{
	if (c->t_delack_us != TCP_NO_DEADLINE)
		return;
	c->t_delack_us = now_us + TCP_DELACK_US;
	tcp_timer_update(c);
}

/**
 * tcp_timer_delack_within() - have the delayed ACK leave within @delay_us
 * @c: the connection
 * @now_us: the time
 * @delay_us: at most this long from now (an earlier deadline stays)
 */
void tcp_timer_delack_within(struct tcp_conn *c, uint64_t now_us, uint64_t delay_us)
{
	if (c->t_delack_us <= now_us + delay_us)
		return;
	c->t_delack_us = now_us + delay_us;
	tcp_timer_update(c);
}

/**
 * tcp_timer_timewait() - (re)start the 2*MSL TIME-WAIT timer
 * @c: the connection
 * @now_us: the time
 */
void tcp_timer_timewait(struct tcp_conn *c, uint64_t now_us)
{
	c->t_close_us = now_us + TCP_TIMEWAIT_US;
	if (c->state == TCPS_TIME_WAIT)
		tcp_conn_tw_requeue(c);
	tcp_timer_update(c);
}

static void tcp_timer_rtx_fire(struct tcp_conn *c, uint64_t now_us)
{
	unsigned int limit;

	c->t_rtx_us = TCP_NO_DEADLINE;
	c->t_tlp_us = TCP_NO_DEADLINE;
	c->tlp_active = false;
	c->tlp_check = false;
	if (c->snd_una == c->snd_max && c->state != TCPS_SYN_SENT && c->state != TCPS_SYN_RECEIVED)
		return;
	limit = c->state == TCPS_SYN_SENT ? TCP_SYN_RETRIES
		: c->state == TCPS_SYN_RECEIVED ? TCP_SYNACK_RETRIES : TCP_DATA_RETRIES;
	if (++c->retries > limit) {
		if (c->state == TCPS_SYN_RECEIVED && c->passive && !c->user_holds)
			tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		else
			tcp_conn_drop(c, -ETIMEDOUT, now_us);
		return;
	}
	c->stats.rto_count++;
	c->stack->st.rtos++;
	c->backoff++;
	c->rto_us = c->rto_us * 2 > TCP_RTO_MAX_US ? TCP_RTO_MAX_US : c->rto_us * 2;
	if (c->state == TCPS_SYN_SENT || c->state == TCPS_SYN_RECEIVED) {
		tcp_out_retransmit(c, c->iss, 0, now_us);
		tcp_timer_rtx_arm(c, now_us);
		return;
	}
	if (!c->in_recovery && !c->after_rto)
		tcp_undo_start(c);
	c->cc->on_rto(c, now_us);
	c->in_recovery = false;
	c->after_rto = true;
	if (c->retries >= 2)
		tcp_sack_renege(c);	/* RFC 2018 8: the receiver may have thrown away what it SACKed */
	tcp_rack_mark_all_lost(c);
	c->recover = c->snd_max;
	c->high_rxt = c->snd_una;
	c->dupacks = 0;
	c->cwnd_acc = 0;
	if (tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_una + 1) == 0) {
		int n = tcp_out_retransmit(c, c->snd_una, c->snd_mss, now_us);

		if (n > 0)
			c->high_rxt = c->snd_una + (uint32_t)n;
	}
	tcp_timer_rtx_arm(c, now_us);
	tcp_trace_emit(c, TCP_TRACE_RTO, now_us);
	tcp_out_push(c, now_us);
}

static void tcp_timer_persist_fire(struct tcp_conn *c, uint64_t now_us)
{
	uint32_t data_end = c->snd_buf_seq + c->snd.len, wnd_end = c->snd_una + c->snd_wnd;

	c->t_persist_us = TCP_NO_DEADLINE;
	if (c->snd_una != c->snd_max || !seq_lt(c->snd_nxt, data_end))
		return;
	if (++c->persist_backoff > TCP_DATA_RETRIES) {
		tcp_conn_drop(c, -ETIMEDOUT, now_us);
		return;
	}
	if (seq_gt(wnd_end, c->snd_nxt)) {
		/* the window is open but SWS avoidance held the data back */
		uint32_t len = seq_min(wnd_end, data_end) - c->snd_nxt;

		if (len > c->snd_mss)
			len = c->snd_mss;
		tcp_out_emit(c, c->snd_nxt, seq_geq(c->snd_nxt + len, data_end) ? TCP_PSH : 0, len, now_us);
		c->snd_nxt += len;
		return;
	}
	tcp_out_probe(c, now_us);
	tcp_timer_persist_arm(c, now_us);
}

static void tcp_timer_keep_fire(struct tcp_conn *c, uint64_t now_us)
{
	uint64_t idle = (uint64_t)c->opts.keepalive_idle_ms * 1000;

	c->t_keep_us = TCP_NO_DEADLINE;
	if (c->state != TCPS_ESTABLISHED && c->state != TCPS_CLOSE_WAIT)
		return;
	if (now_us - c->last_rcv_us < idle && !c->keep_probes) {
		c->t_keep_us = c->last_rcv_us + idle;
		return;
	}
	if (c->keep_probes >= c->opts.keepalive_cnt) {
		tcp_conn_drop(c, -ETIMEDOUT, now_us);
		return;
	}
	c->keep_probes++;
	tcp_out_probe(c, now_us);
	c->t_keep_us = now_us + (uint64_t)c->opts.keepalive_intvl_ms * 1000;
}

static void tcp_timer_fire(struct tcp_conn *c, uint64_t now_us)
{
	if (c->t_close_us <= now_us) {
		c->t_close_us = TCP_NO_DEADLINE;
		tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		return;
	}
	if (c->t_delack_us <= now_us) {
		c->t_delack_us = TCP_NO_DEADLINE;
		tcp_out_ack(c, now_us);
	}
	if (c->state != TCPS_CLOSED && c->t_rtx_us <= now_us)
		tcp_timer_rtx_fire(c, now_us);
	if (c->state != TCPS_CLOSED && c->t_rack_us && c->t_rack_us <= now_us)
		tcp_recovery_rack_timer(c, now_us);
	if (c->state != TCPS_CLOSED && c->t_tlp_us <= now_us)
		tcp_timer_tlp_fire(c, now_us);
	if (c->state != TCPS_CLOSED && c->t_persist_us <= now_us)
		tcp_timer_persist_fire(c, now_us);
	if (c->state != TCPS_CLOSED && c->t_pace_us <= now_us)
		tcp_pace_timer(c, now_us);
	if (c->state != TCPS_CLOSED && c->t_keep_us <= now_us)
		tcp_timer_keep_fire(c, now_us);
}

/**
 * tcp_timers_run() - run every timer due at @now_us
 * @s: the stack
 * @now_us: the time
 */
void tcp_timers_run(struct tcp_stack *s, uint64_t now_us)
{
	s->clock_us = now_us;
	tcp_conn_enter(s);
	if (s->lent_wake)
		tcp_snd_lent_wake(s);
	while (s->heap_len && s->heap[0]->deadline_us <= now_us) {
		struct tcp_conn *c = s->heap[0];

		tcp_timer_fire(c, now_us);
		tcp_timer_update(c);
	}
	/* each ends in CLOSED, which takes it off the FIFO */
	while (s->tw_head && s->tw_head->t_close_us <= now_us)
		tcp_timer_fire(s->tw_head, now_us);
	tcp_conn_leave(s);
	if (s->pool.next_trim_us && s->pool.next_trim_us <= now_us)
		tcp_pool_trim(s, now_us, false);
}

/**
 * tcp_pmtu_update() - ICMP said the path MTU to @remote is @mtu
 * @s: the stack
 * @local: our address of the connections concerned
 * @remote: the peer address
 * @mtu: the new path MTU (bytes of IP packet)
 * @now_us: the time
 *
 * Lowers the MSS of every connection between the two addresses and resends
 * what is in flight in the new size (RFC 1191 / RFC 8201). Values below
 * the protocol minimum (68 for IPv4, 1280 for IPv6) are ignored.
 */
void tcp_pmtu_update(struct tcp_stack *s, const struct net_addr *local, const struct net_addr *remote,
		     uint32_t mtu, uint64_t now_us)
{
	struct tcp_conn *c;

	if (mtu < (remote->family == AF_INET6 ? 1280u : 68u))
		return;
	tcp_conn_enter(s);
	for (c = s->all; c; c = c->all_next) {
		uint32_t hdr = c->remote.addr.family == AF_INET6 ? 60 : 40, mss;

		if (c->dead || c->state == TCPS_CLOSED || !tcp_addr_eq(&c->local.addr, local) ||
		    !tcp_addr_eq(&c->remote.addr, remote) || mtu <= hdr)
			continue;
		mss = mtu - hdr;
		if (mss < TCP_MIN_MSS)
			mss = TCP_MIN_MSS;
		if (mss >= c->opts.mss)
			continue;
		c->opts.mss = (uint16_t)mss;
		if (c->state < TCPS_ESTABLISHED)
			continue;
		mss = mss < c->peer_mss ? mss : c->peer_mss;
		if (c->ts_ok)
			mss -= TCP_TS_OPT_BYTES;
		if (mss >= c->snd_mss)
			continue;
		c->snd_mss = (uint16_t)mss;
		if (c->snd_una != c->snd_max) {
			/* RFC 8201 5.4: resend in the smaller size, no cwnd cut */
			c->after_rto = true;
			c->in_recovery = false;
			c->recover = c->snd_max;
			c->high_rxt = c->snd_una;
			tcp_rack_mark_all_lost(c);
			tcp_out_push(c, now_us);
		}
	}
	tcp_conn_leave(s);
}
