// SPDX-License-Identifier: MIT
/*
 * tcp_ecn.c - Explicit Congestion Notification (RFC 3168 6.1)
 *
 * Theory of operation
 *
 * Negotiation: an active open asks with ECE and CWR on its SYN (mode "on",
 * --tcp-ecn on); a passive one answers a SYN that asked with ECE on its
 * SYN-ACK unless the mode is "off"; the connection then uses ECN
 * (c->ecn_ok) when the SYN-ACK it got has ECE without CWR, or when it
 * answered so. A SYN answered with a SYN cookie gets no ECN (the cookie
 * has no room for it), nor does a simultaneous open.
 *
 * Sender: new data leaves ECN-capable (ECT(0) in the IP header, which the
 * IP layer writes from the segment's ecn); retransmissions, pure ACKs,
 * probes and SYNs do not (RFC 3168 6.1.5, 6.1.4). An ACK with ECE means a
 * router marked our data CE instead of dropping it: the sender reduces as
 * for a loss (the controller's ssthresh, cwnd down to it), at most once per
 * window of data (until an ACK covers the first segment sent after it
 * reduced, which carries the CWR: the echoes on ACKs before it are all of
 * the marks it reduced for), not while a recovery already reduced, and sets
 * CWR on its next new segment,
 * which leaves alone (never inside a GSO frame, whose other segments would
 * repeat it). A controller with a model of the path (BBR) keeps its cwnd, as
 * Linux's BBR does, but sends the CWR that ends the echo.
 *
 * Receiver: a data segment that arrives CE starts the echo: ECE on every
 * ACK (and an ACK at once), until a segment with CWR arrives that is not
 * itself CE.
 *
 * What a misbehaving peer can do with it: ECE on every ACK costs one
 * reduction per window, never below two segments; ECE on a SYN-ACK to a SYN
 * that did not ask, or CE on a connection without ECN, is ignored.
 *
 * Not done: AccECN (RFC 9768: counting the CE-marked bytes instead of a
 * single bit per round trip, as DCTCP and L4S need), and ECN++ (ECT on
 * SYNs and pure ACKs).
 */
#include "datapath/tcp/tcp_int.h"

/**
 * tcp_ecn_negotiate() - what the peer's SYN or SYN-ACK says about ECN
 * @c: the connection
 * @syn: the SYN (passive open) or SYN-ACK (active)
 */
void tcp_ecn_negotiate(struct tcp_conn *c, const struct tcp_seg_in *syn)
{
	uint8_t ecn = syn->flags & (TCP_ECE | TCP_CWR);

	if (c->passive) {
		c->ecn_peer_asked = ecn == (TCP_ECE | TCP_CWR);
		c->ecn_ok = c->opts.ecn != TCP_ECN_OFF && c->ecn_peer_asked;
	} else	/* RFC 3168 6.1.1: ECE without CWR; a simultaneous open (no ACK) gets none */
		c->ecn_ok = c->opts.ecn == TCP_ECN_ON && (syn->flags & TCP_ACK) && ecn == TCP_ECE;
}

/**
 * tcp_ecn_syn_flags() - the ECN flags of our SYN or SYN-ACK
 * @c: the connection
 *
 * Return: ECE | CWR on an active open that asks, ECE on a SYN-ACK that
 * accepts, else 0.
 */
uint8_t tcp_ecn_syn_flags(const struct tcp_conn *c)
{
	if (c->passive)
		return c->ecn_ok ? TCP_ECE : 0;
	return c->state == TCPS_SYN_SENT && c->opts.ecn == TCP_ECN_ON ? TCP_ECE | TCP_CWR : 0;
}

/**
 * tcp_ecn_out() - ECN of a segment we send (not a SYN)
 * @c: the connection
 * @flags: its header flags; ECE and CWR are added here
 * @new_data: it carries data never sent before
 *
 * Return: the IP ECN codepoint to send it with.
 */
uint8_t tcp_ecn_out(struct tcp_conn *c, uint8_t *flags, bool new_data)
{
	if (!c->ecn_ok || (*flags & (TCP_SYN | TCP_RST)))
		return TCP_ECN_NOT_ECT;
	if (c->ecn_ece && (*flags & TCP_ACK))
		*flags |= TCP_ECE;
	if (!new_data)
		return TCP_ECN_NOT_ECT;
	if (c->ecn_cwr_pending) {
		*flags |= TCP_CWR;
		c->ecn_cwr_pending = false;
	}
	return TCP_ECN_ECT0;
}

/**
 * tcp_ecn_in() - a segment arrived in the window: the receiver's side
 * @c: the connection
 * @seg: the segment
 */
void tcp_ecn_in(struct tcp_conn *c, const struct tcp_seg_in *seg)
{
	if (!c->ecn_ok)
		return;
	/* RFC 3168 6.1.3: CWR ends the echo, unless the CWR segment is itself marked */
	if (seg->flags & TCP_CWR)
		c->ecn_ece = false;
	if (seg->ecn != TCP_ECN_CE)
		return;
	c->ce_rcvd++;
	c->stack->st.ecn_ce_rcvd++;
	if (seg->len && !c->ecn_ece) {
		c->ecn_ece = true;
		c->ack_now = true;	/* tell the sender now, not after the delayed-ACK timer */
	}
}

/**
 * tcp_ecn_ack() - an ACK arrived: the sender's side
 * @c: the connection (recovery already decided for this ACK)
 * @seg: the ACK
 * @now_us: the time
 */
void tcp_ecn_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	if (!c->ecn_ok || !(seg->flags & TCP_ECE))
		return;
	c->ece_rcvd++;
	/*
	 * Once per window of data (RFC 3168 6.1.2), and not again before our
	 * CWR left: with nothing new to send the echo goes on (the peer's data
	 * carries it too), and it is all about the marks we reduced for. A
	 * recovery reduced already.
	 */
	if (c->ecn_cwr_pending || (c->ecn_reacted && seq_leq(c->snd_una, c->ecn_high)) || c->in_recovery ||
	    c->after_rto)
		return;
	c->ecn_reacted = true;
	c->ecn_high = c->snd_max;
	c->ecn_cwr_pending = true;
	c->ecn_reductions++;
	c->stack->st.ecn_reductions++;
	if (!c->cc->cong_control) {
		c->cc->on_loss(c, now_us);
		if (c->cwnd > c->ssthresh)
			c->cwnd = c->ssthresh;
		if (c->cwnd < 2)
			c->cwnd = 2;
		c->cwnd_acc = 0;
	}
	tcp_trace_emit(c, TCP_TRACE_ECE, now_us);
}
