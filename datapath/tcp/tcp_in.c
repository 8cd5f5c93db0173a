// SPDX-License-Identifier: MIT
/*
 * tcp_in.c - segment arrival: RFC 9293 3.10.7 with RFC 5961 and RFC 7323
 *
 * Theory of operation
 *
 * tcp_input() checks the segment (family, lengths, flag combinations),
 * finds its connection (or listener) and runs the "SEGMENT ARRIVES" steps:
 *
 *   LISTEN         3.10.7.2: a SYN to tcp_synq.c (backlog or cookie), an
 *                  ACK to its cookie check, anything else a RST.
 *   SYN-SENT       3.10.7.3: tcp_open.c (ACK check, RST, SYN -> ESTABLISHED
 *                  or SYN-RECEIVED for a simultaneous open).
 *   other states   3.10.7.4: PAWS (RFC 7323 5; a reordered pure duplicate
 *                  ACK passes, as in Linux), sequence acceptability
 *                  (a bad segment is answered with an ACK), RST with the
 *                  RFC 5961 3 rule (exact rcv_nxt resets, else a challenge
 *                  ACK), SYN -> challenge ACK (RFC 5961 4), the ACK field
 *                  (step 5: tcp_open.c in SYN-RECEIVED, which ends the
 *                  handshake; tcp_ack.c after it, the sending side's half),
 *                  then text (step 7: in order into the receive ring, or to
 *                  the owner's sink, out of order via tcp_ooo.c), then FIN.
 *
 * This file keeps the receiving side: what is acceptable, what is read,
 * and when it is ACKed. What an ACK does to what we sent is tcp_ack.c's.
 *
 * ACKs for received data are delayed (one every two full segments, 40 ms at
 * most) except in quick-ACK mode (the first TCP_QUICKACK_SEGS segments) and
 * for out-of-order data or data that fills a hole, which are ACKed at once
 * (RFC 5681 4.2). Data carried on a SYN is dropped (the peer resends it).
 *
 * Callbacks (readable, peer FIN, closed) run last; since a callback may
 * close or abort the connection, every step after one re-checks the state.
 */
#include <sys/socket.h>

#include "datapath/tcp/tcp_int.h"

/**
 * tcp_opts_parse() - parse the option bytes of a TCP header
 * @buf: the options (header bytes 20 .. data offset)
 * @len: their length, at most 40
 * @out: the result; unknown options are skipped
 *
 * Return: 0, or -EINVAL for a malformed option list (the options parsed
 * before the fault are kept, as Linux does).
 */
int tcp_opts_parse(const uint8_t *buf, size_t len, struct tcp_opts *out)
{
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (len > TCP_OPTS_MAX_BYTES)
		return -EINVAL;
	while (i < len) {
		uint8_t kind = buf[i], olen;

		if (kind == TCP_OPT_EOL)
			break;
		if (kind == TCP_OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return -EINVAL;
		olen = buf[i + 1];
		if (olen < 2 || olen > len - i)
			return -EINVAL;
		switch (kind) {
		case TCP_OPT_MSS:
			if (olen == TCP_OPTLEN_MSS) {
				out->has_mss = true;
				out->mss = (uint16_t)(buf[i + 2] << 8 | buf[i + 3]);
			}
			break;
		case TCP_OPT_WSCALE:
			if (olen == TCP_OPTLEN_WSCALE) {
				out->has_wscale = true;
				out->wscale = buf[i + 2] > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : buf[i + 2];
			}
			break;
		case TCP_OPT_SACK_PERM:
			if (olen == TCP_OPTLEN_SACK_PERM)
				out->sack_perm = true;
			break;
		case TCP_OPT_SACK:
			if (olen >= 2 + TCP_OPTLEN_SACK_BLOCK && (olen - 2) % TCP_OPTLEN_SACK_BLOCK == 0) {
				unsigned int n = (olen - 2) / TCP_OPTLEN_SACK_BLOCK, k;

				for (k = 0; k < n && k < TCP_SACK_MAX_BLOCKS; k++) {
					const uint8_t *p = buf + i + 2 + TCP_OPTLEN_SACK_BLOCK * k;

					out->sack[k].start = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
					out->sack[k].end = (uint32_t)p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7];
				}
				out->nsack = (uint8_t)k;
			}
			break;
		case TCP_OPT_TS:
			if (olen == TCP_OPTLEN_TS) {
				const uint8_t *p = buf + i + 2;

				out->has_ts = true;
				out->ts_val = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
				out->ts_ecr = (uint32_t)p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7];
			}
			break;
		default:
			break;
		}
		i += olen;
	}
	return 0;
}

/*
 * A segment for a catch-all's connection whose SYN-ACK is not sent yet
 * (tcp_synq.c): the peer only knows its own SYN. A copy of it is dropped
 * (it is retransmitting while the answer waits), a RST for it ends the
 * connection (its owner hears TCP_EV_RESET), a SYN with another ISN replaces
 * it (the peer started over), anything else cannot be about this
 * connection and is dropped.
 */
static void tcp_in_deferred(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_listener *l = c->listener;

	if ((seg->flags & TCP_RST) && seg->seq == c->rcv_nxt) {
		tcp_conn_drop(c, -ECONNRESET, now_us);
		return;
	}
	if ((seg->flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN && seg->seq != c->irs && l) {
		/*
		 * A new SYN on the same 4-tuple: the peer gave up waiting and
		 * tries again (a new connect() from the same port). The old
		 * attempt ends (its owner hears TCP_EV_RESET) and the new SYN
		 * is taken as if it were the first.
		 */
		tcp_conn_drop(c, -ECONNRESET, now_us);
		tcp_synq_syn(l, seg, now_us);
		return;
	}
	if (!((seg->flags & TCP_SYN) && seg->seq == c->irs))
		c->stack->st.drop_out_of_window++;
}

static bool tcp_in_seq_ok(const struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t seg_len)
{
	uint32_t wnd = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0, space = tcp_buf_rcv_wnd(c);

	if (space > wnd)
		wnd = space;
	/* RFC 9293 3.10.7.4 table of the four cases */
	if (!seg_len)
		return wnd ? seq_leq(c->rcv_nxt, seg->seq) && seq_lt(seg->seq, c->rcv_nxt + wnd)
			   : seg->seq == c->rcv_nxt;
	if (!wnd)
		return false;
	return (seq_leq(c->rcv_nxt, seg->seq) && seq_lt(seg->seq, c->rcv_nxt + wnd)) ||
	       (seq_leq(c->rcv_nxt, seg->seq + seg_len - 1) && seq_lt(seg->seq + seg_len - 1, c->rcv_nxt + wnd));
}

/*
 * A pure duplicate ACK that merely arrived after a newer segment (the
 * network reordered the ACKs) fails PAWS although it is harmless, and
 * dropping it loses its SACK blocks: RACK would then take SACKed data for
 * lost. Accept it, like Linux's tcp_disordered_ack(): no data, no flags
 * but ACK, SEG.SEQ = RCV.NXT, SEG.ACK = SND.UNA, the same window, and a
 * TSval at most one RTO (read as milliseconds) behind TS.Recent.
 */
static bool tcp_in_disordered_ack(const struct tcp_conn *c, const struct tcp_seg_in *seg)
{
	if (c->ts_recent - seg->opts.ts_val > c->rto_us / 1000 || (seg->flags & (TCP_SYN | TCP_RST)))
		return false;
	return !seg->len && (seg->flags & (TCP_SYN | TCP_FIN | TCP_RST | TCP_ACK)) == TCP_ACK &&
	       seg->seq == c->rcv_nxt && seg->ack == c->snd_una &&
	       ((uint32_t)seg->wnd << c->snd_wscale) == c->snd_wnd;
}

/*
 * In-order bytes while nothing is unread: the sink may take them, copied
 * once (tcp_conn_set_sink()). What it takes counts as read.
 */
static uint32_t tcp_in_sink(struct tcp_conn *c, const uint8_t *data, uint32_t len, uint64_t now_us)
{
	size_t n = c->sink(c, c->user, data, len);

	if (!n)
		return 0;
	if (n > len)
		n = len;
	c->stack->st.rcv_sunk_bytes += n;
	tcp_buf_rcv_sunk(c, (uint32_t)n, now_us);
	c->sink_took = true;
	return (uint32_t)n;
}

/*
 * May the ACK for what the sink took wait for the owner's tcp_push() at the
 * end of its turn (tcp_conn_ack_at_push())? Then one ACK covers every
 * segment of the connection that the turn brought, where one per GSO frame
 * made the peer run its ACK processing and its next transmission once per
 * frame, on our time (a veth runs the peer's stack in the sender's system
 * call). It waits only where tcp_push() sends it (ESTABLISHED), with nothing
 * of ours to send that could carry it, and while the bytes it acknowledges
 * are under half the window last offered, so that the peer does not stall
 * for it. The delayed-ACK timer stays armed in case no push comes.
 */
static bool tcp_in_ack_waits(struct tcp_conn *c, uint64_t now_us)
{
	bool took = c->sink_took;

	c->sink_took = false;
	if (!took || !c->ack_at_push || c->state != TCPS_ESTABLISHED)
		return false;
	if (c->snd_buf_seq + c->snd.len != c->snd_nxt || c->fin_queued)
		return false;
	if (c->rcv_nxt - c->last_ack_sent >= (c->rcv_adv - c->last_ack_sent) / 2)
		return false;
	if (c->ack_now)
		c->stack->st.acks_at_push++;
	tcp_timer_delack(c, now_us);
	return true;
}

/*
 * An ACK for a segment out of order. RFC 5681 4.2 says at once, and the first
 * TCP_COMP_SACK_DUPS for one rcv_nxt do leave at once: they are the sender's
 * duplicate ACKs for fast retransmit. After them, while the hole stays, each
 * ACK only moves SACK blocks; on a fast path with a little loss a hole is
 * there most of the time, and an ACK per segment doubled the packets the
 * path and the sender carried (receiving at 10 ms and 0.1 % loss: 1.3
 * segments per ACK, the kernel's receiver 7.6). So the rest are compressed
 * as Linux does (tcp_comp_sack_*): one ACK for up to TCP_COMP_SACK_NR of
 * them, or after 1/20 of the RTT (at most TCP_COMP_SACK_DELAY_US), with the
 * most recent blocks (tcp_sack.c). A filled hole moves rcv_nxt and ACKs at
 * once again.
 */
static void tcp_in_ooo_ack(struct tcp_conn *c, uint64_t now_us)
{
	uint64_t delay_us;

	if (!c->sack_ok) {
		c->ack_now = true;
		return;
	}
	if (c->comp_rcv_nxt != c->rcv_nxt) {
		c->comp_rcv_nxt = c->rcv_nxt;
		c->comp_dups = 0;
	}
	if (c->comp_dups < TCP_COMP_SACK_DUPS) {
		c->comp_dups++;
		c->ack_now = true;
		return;
	}
	if (++c->comp_acks >= TCP_COMP_SACK_NR) {
		c->ack_now = true;
		return;
	}
	delay_us = c->srtt_us / 20;
	if (delay_us > TCP_COMP_SACK_DELAY_US)
		delay_us = TCP_COMP_SACK_DELAY_US;
	tcp_timer_delack_within(c, now_us, delay_us);
}

/*
 * Bytes of a segment that the receive ring has no room for are cut: for want
 * of memory (@mem: in the announced window, on a ring the memory cap kept
 * smaller than it, tcp_buf.c) or, never expected, of room in the window.
 */
static void tcp_in_rcv_cut(struct tcp_conn *c, bool mem)
{
	if (mem)
		c->stack->st.drop_rcv_mem++;
	else
		c->stack->st.drop_rcv_full++;
	c->ack_now = true;
}

/*
 * Step 7: the text. Returns true when new in-order bytes are readable in
 * the receive ring (not when the sink took them all).
 */
static bool tcp_in_text(struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t *seq_io, uint32_t *len_io,
			bool *fin_io, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	const uint8_t *data = seg->data;
	uint32_t seq = *seq_io, len = *len_io, room, promised, limit, segs, taken = 0, stored;
	bool had_ooo = c->ooo.n > 0, sink;

	if (seq_lt(seq, c->rcv_nxt)) {
		uint32_t skip = c->rcv_nxt - seq;

		/* RFC 2883: tell the sender what arrived twice */
		c->dsack = c->sack_ok;
		c->dsack_start = seq;
		c->dsack_end = seq + (skip < len ? skip : len);

		if (skip >= len) {
			*len_io = 0;
			*seq_io = c->rcv_nxt;
			if (skip > len)
				*fin_io = false;	/* an old FIN */
			c->ack_now = true;	/* a duplicate: ACK at once */
			return false;
		}
		data += skip;
		len -= skip;
		seq = c->rcv_nxt;
	}
	/*
	 * The room: what a ring of its capacity has, whether it holds memory
	 * yet or not (tcp_buf_rcv_ready() below gives it that capacity). Under
	 * memory pressure a ring with no memory may have less than the window
	 * it announced (tcp_buf.c): the bytes past it are dropped, counted
	 * apart. A sink takes in-order bytes without ring memory: for it the
	 * window is the room, and only what it leaves must fit the ring.
	 */
	room = tcp_buf_rcv_space(c);
	promised = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	sink = seq == c->rcv_nxt && !c->rcv.len && !had_ooo && c->sink;
	limit = sink && promised > room ? promised : room;
	if (seq - c->rcv_nxt >= limit) {
		tcp_in_rcv_cut(c, seq - c->rcv_nxt < promised);
		*len_io = 0;
		*fin_io = false;
		return false;
	}
	if (len > limit - (seq - c->rcv_nxt)) {
		tcp_in_rcv_cut(c, limit < promised);
		len = limit - (seq - c->rcv_nxt);
		*fin_io = false;	/* RFC 9293: trimmed, the FIN is gone too */
	}
	if (sink)
		taken = tcp_in_sink(c, data, len, now_us);
	if (taken < len && tcp_buf_rcv_ready(c) < 0) {
		*fin_io = false;
		if (!taken) {
			*len_io = 0;
			return false;
		}
		len = taken;	/* the sink's part is had; the rest comes again */
	}
	if (taken < len && seq == c->rcv_nxt) {
		/* what the sink left goes to the ring, which holds its memory now */
		room = tcp_buf_rcv_space(c);
		if (len - taken > room) {
			tcp_in_rcv_cut(c, true);
			len = taken + room;
			*fin_io = false;
			if (!len) {
				*len_io = 0;
				return false;
			}
		}
	}
	*seq_io = seq;
	*len_io = len;
	segs = len / c->opts.mss ? len / c->opts.mss : 1;
	if (len > c->rcv_mss)
		c->rcv_mss = len > 65535 ? 65535 : (uint16_t)len;
	if (seq != c->rcv_nxt) {
		/*
		 * A change to a range beyond the two newest would push one of
		 * them out of the held ACK's three blocks: what they gained
		 * would reach the sender only when they change again, as
		 * newly SACKed below newer data (reordering, to a Linux
		 * sender). Send the held ACK first, as Linux does.
		 */
		if (c->comp_acks && !tcp_ooo_extends_recent(c, seq, seq + len, TCP_COMP_SACK_BLOCKS))
			tcp_out_ack(c, now_us);
		if (c->sack_ok && tcp_ranges_bytes(&c->ooo, seq, seq + len) == len) {
			c->dsack = true;	/* all of it was already held */
			c->dsack_start = seq;
			c->dsack_end = seq + len;
		}
		if (tcp_ooo_insert(c, seq, data, len) < 0)
			s->st.drop_ooo_full++;
		else if (*fin_io) {
			c->ooo_fin = true;
			c->ooo_fin_seq = seq + len;
		}
		*fin_io = false;
		tcp_in_ooo_ack(c, now_us);
		return false;
	}
	stored = len - taken;
	if (stored) {	/* else the ring may hold no memory at all */
		tcp_ring_write_at(&c->rcv, c->rcv.len, data + taken, stored);
		c->rcv.len += stored;
	}
	c->rcv_nxt += len;
	c->stats.bytes_received += len;
	if (had_ooo) {
		uint32_t pulled = tcp_ooo_pull(c);

		c->stats.bytes_received += pulled;
		c->ack_now = true;	/* filled a hole */
		if (c->ooo_fin && c->ooo_fin_seq == c->rcv_nxt)
			*fin_io = true;
	}
	if (!c->ooo.n)
		c->ooo_fin = false;
	c->unacked_segs += segs;
	if (c->quickack) {
		c->quickack--;
		c->ack_now = true;
	}
	if (c->unacked_segs >= 2)
		c->ack_now = true;
	if (!c->ack_now)
		tcp_timer_delack(c, now_us);
	return c->rcv.len > 0;
}

static void tcp_in_fin(struct tcp_conn *c, uint64_t now_us)
{
	c->rcv_nxt++;
	c->fin_rcvd = true;
	c->ack_now = true;
	c->ooo_fin = false;
	switch (c->state) {
	case TCPS_ESTABLISHED:
		tcp_conn_set_state(c, TCPS_CLOSE_WAIT, now_us);
		break;
	case TCPS_FIN_WAIT_1:
		if (c->fin_sent && c->snd_una == c->snd_max) {
			tcp_conn_set_state(c, TCPS_TIME_WAIT, now_us);
		} else {
			tcp_conn_set_state(c, TCPS_CLOSING, now_us);
		}
		break;
	case TCPS_FIN_WAIT_2:
		tcp_conn_set_state(c, TCPS_TIME_WAIT, now_us);
		break;
	default:
		break;
	}
}

static void tcp_in_conn(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	uint32_t seg_len = (uint32_t)seg->len + !!(seg->flags & TCP_SYN) + !!(seg->flags & TCP_FIN);
	struct tcp_seg_in fixed;
	uint32_t seq, len;
	bool fin, readable = false;

	c->stats.segs_in++;
	if (c->state == TCPS_SYN_SENT) {
		tcp_open_syn_sent(c, seg, now_us);
		return;
	}
	if (c->deferred) {
		tcp_in_deferred(c, seg, now_us);
		return;
	}
	c->last_rcv_us = now_us;
	c->keep_probes = 0;
	if (c->state == TCPS_SYN_RECEIVED && (seg->flags & (TCP_SYN | TCP_RST)) == TCP_SYN && seg->seq == c->irs) {
		/* our SYN-ACK was lost (a SYN again), or the SYN-ACK of a simultaneous open */
		if (!(seg->flags & TCP_ACK) || !seq_gt(seg->ack, c->snd_una) || seq_gt(seg->ack, c->snd_max)) {
			tcp_out_emit(c, c->iss, TCP_SYN, 0, now_us);
			return;
		}
		fixed = *seg;
		fixed.flags &= ~TCP_SYN;
		fixed.seq = c->irs + 1;
		seg = &fixed;
		seg_len--;
	}
	/*
	 * RFC 7323 5.3: PAWS, with Linux's window of one tick
	 * (TCP_PAWS_WINDOW): a paced sender's segments a millisecond apart,
	 * reordered on the way, are not old duplicates.
	 */
	if (c->ts_ok && seg->opts.has_ts && !(seg->flags & TCP_RST) &&
	    (int32_t)(c->ts_recent - seg->opts.ts_val) > TCP_PAWS_WINDOW && !tcp_in_disordered_ack(c, seg)) {
		s->st.drop_paws++;
		tcp_out_ack(c, now_us);
		return;
	}
	/* RFC 6191-ish: a new SYN reopens a TIME-WAIT connection */
	if (c->state == TCPS_TIME_WAIT && (seg->flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN &&
	    (seq_gt(seg->seq, c->rcv_nxt) ||
	     (c->ts_ok && seg->opts.has_ts && seq_gt(seg->opts.ts_val, c->ts_recent)))) {
		struct tcp_endpoint l = c->local;
		struct tcp_listener *lis = tcp_listener_lookup(s, &l);

		tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		if (lis)
			tcp_synq_syn(lis, seg, now_us);
		return;
	}
	if (!tcp_in_seq_ok(c, seg, seg_len)) {
		s->st.drop_out_of_window++;
		if (seg->len && c->sack_ok && seq_leq(seg->seq + (uint32_t)seg->len, c->rcv_nxt)) {
			c->dsack = true;	/* RFC 2883: an old duplicate */
			c->dsack_start = seg->seq;
			c->dsack_end = seg->seq + (uint32_t)seg->len;
		}
		if (!(seg->flags & TCP_RST)) {
			if (c->state == TCPS_TIME_WAIT && (seg->flags & TCP_FIN))
				tcp_timer_timewait(c, now_us);
			tcp_out_ack(c, now_us);
		}
		return;
	}
	if (c->ts_ok && seg->opts.has_ts && seq_leq(seg->seq, c->last_ack_sent) &&
	    seq_geq(seg->opts.ts_val, c->ts_recent))
		c->ts_recent = seg->opts.ts_val;
	tcp_ecn_in(c, seg);
	/* RFC 5961 3.2 */
	if (seg->flags & TCP_RST) {
		if (seg->seq != c->rcv_nxt) {
			tcp_out_challenge_ack(c, now_us);
			return;
		}
		if (c->state == TCPS_TIME_WAIT || (c->state == TCPS_SYN_RECEIVED && c->passive && !c->user_holds))
			tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		else
			tcp_conn_drop(c, c->state == TCPS_SYN_RECEIVED ? -ECONNREFUSED : -ECONNRESET, now_us);
		return;
	}
	/* RFC 5961 4.2: any SYN here gets a challenge ACK */
	if (seg->flags & TCP_SYN) {
		if (c->state == TCPS_SYN_RECEIVED && seg->seq == c->irs) {
			tcp_out_emit(c, c->iss, TCP_SYN, 0, now_us);	/* our SYN-ACK was lost */
			return;
		}
		tcp_out_challenge_ack(c, now_us);
		return;
	}
	if (!(seg->flags & TCP_ACK))
		return;
	/* Step 5: the ACK field; in SYN-RECEIVED it ends the handshake */
	if (c->state == TCPS_SYN_RECEIVED) {
		if (!tcp_open_syn_rcvd_ack(c, seg, now_us))
			return;
	} else if (!tcp_ack_input(c, seg, now_us)) {
		return;
	}
	if (c->state == TCPS_TIME_WAIT) {
		if (seg->flags & TCP_FIN) {
			tcp_timer_timewait(c, now_us);
			tcp_out_ack(c, now_us);
		}
		return;
	}
	seq = seg->seq;
	len = (uint32_t)seg->len;
	fin = seg->flags & TCP_FIN;
	if (len || fin) {
		switch (c->state) {
		case TCPS_ESTABLISHED:
		case TCPS_FIN_WAIT_1:
		case TCPS_FIN_WAIT_2:
			if (len && !c->user_holds) {
				/* nobody will read it: reset like Linux does */
				tcp_out_rst(c, now_us);
				tcp_conn_set_state(c, TCPS_CLOSED, now_us);
				return;
			}
			if (len)
				readable = tcp_in_text(c, seg, &seq, &len, &fin, now_us);
			else if (seq != c->rcv_nxt) {
				if (seq_gt(seq, c->rcv_nxt) && c->rcv.cap) {
					c->ooo_fin = true;	/* a bare FIN beyond a hole */
					c->ooo_fin_seq = seq;
				}
				fin = false;
				c->ack_now = true;
			}
			break;
		default:
			fin = false;	/* CLOSE-WAIT, CLOSING, LAST-ACK: already had the FIN */
			if (seg->seq != c->rcv_nxt || len)
				c->ack_now = true;
			break;
		}
	}
	if (fin)
		tcp_in_fin(c, now_us);
	if (readable)
		tcp_conn_event(c, TCP_EV_READABLE, 0);
	if (c->state != TCPS_CLOSED && c->fin_rcvd && !c->peer_fin_told) {
		c->peer_fin_told = true;
		tcp_conn_event(c, TCP_EV_PEER_FIN, 0);
		if (c->state == TCPS_TIME_WAIT)
			tcp_conn_event(c, TCP_EV_CLOSED, 0);
	}
	if (c->state == TCPS_CLOSED || tcp_in_ack_waits(c, now_us))
		return;
	tcp_out_push(c, now_us);
}

static bool tcp_in_valid(struct tcp_stack *s, const struct tcp_seg_in *seg)
{
	if (seg->src.family != seg->dst.family ||
	    (seg->src.family != AF_INET && seg->src.family != AF_INET6) || !seg->sport || !seg->dport ||
	    seg->len > TCP_MAX_SEG_IN || (seg->len && !seg->data) || seg->opts.nsack > TCP_SACK_MAX_BLOCKS ||
	    (seg->flags & (TCP_SYN | TCP_FIN)) == (TCP_SYN | TCP_FIN) ||
	    (seg->flags & (TCP_SYN | TCP_RST)) == (TCP_SYN | TCP_RST)) {
		s->st.drop_malformed++;
		return false;
	}
	return true;
}

/**
 * tcp_input() - a segment arrived from the IP layer
 * @s: the stack
 * @seg: the parsed segment (its payload is copied if kept)
 * @now_us: the time
 *
 * Return: 0 when a connection or listener took it, -EINVAL for a malformed
 * segment, -ENOENT when nothing wanted it (a RST was sent when due).
 */
int tcp_input(struct tcp_stack *s, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_endpoint l, r;
	struct tcp_seg_in fixed;
	struct tcp_listener *lis;
	struct tcp_conn *c;
	int ret = 0;

	s->st.segs_in++;
	s->clock_us = now_us;
	if (!tcp_in_valid(s, seg))
		return -EINVAL;
	if (seg->opts.has_wscale && seg->opts.wscale > TCP_MAX_WSCALE) {
		fixed = *seg;
		fixed.opts.wscale = TCP_MAX_WSCALE;	/* RFC 7323 2.3 */
		seg = &fixed;
	}
	l.addr = seg->dst;
	l.port = seg->dport;
	r.addr = seg->src;
	r.port = seg->sport;
	tcp_conn_enter(s);
	c = tcp_conn_lookup(s, &l, &r);
	if (c && c->state == TCPS_SYN_RECEIVED && c->passive && c->listener &&
	    (seg->flags & (TCP_SYN | TCP_RST | TCP_ACK)) == TCP_ACK &&
	    (!seq_gt(seg->ack, c->snd_una) || seq_gt(seg->ack, c->snd_max))) {
		/*
		 * An ACK of another ISS: the peer may have completed a cookie
		 * handshake for an earlier copy of the SYN that made this
		 * half-open entry, and be ESTABLISHED with the cookie as our
		 * ISS. The RFC 9293 3.10.7.4 RST for an unacceptable ACK in
		 * SYN-RECEIVED would kill it: the cookie connection replaces
		 * the entry instead (or, when the segment only looks like a
		 * cookie ACK, see tcp_synq.c, it is dropped).
		 */
		int ck = tcp_synq_cookie_check(c->listener, seg, now_us);

		if (ck == -EAGAIN)
			goto out;
		if (ck == 0) {
			tcp_conn_set_state(c, TCPS_CLOSED, now_us);
			c = NULL;
		}
	}
	if (c) {
		tcp_in_conn(c, seg, now_us);
		goto out;
	}
	lis = tcp_listener_lookup(s, &l);
	if (lis) {
		/* RFC 9293 3.10.7.2 */
		if (seg->flags & TCP_RST)
			goto out;
		if (seg->flags & TCP_ACK) {
			int ck = (seg->flags & TCP_SYN) ? -ENOENT : tcp_synq_cookie_ack(lis, seg, now_us);

			if (ck == 0) {
				c = tcp_conn_lookup(s, &l, &r);
				if (c)
					tcp_in_conn(c, seg, now_us);
			} else if (ck != -EAGAIN) {
				tcp_out_rst_reply(s, seg);
			}
			goto out;
		}
		if (seg->flags & TCP_SYN)
			tcp_synq_syn(lis, seg, now_us);
		goto out;
	}
	s->st.drop_no_socket++;
	tcp_out_rst_reply(s, seg);
	ret = -ENOENT;
out:
	tcp_conn_leave(s);
	return ret;
}
