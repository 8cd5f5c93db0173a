// SPDX-License-Identifier: MIT
/*
 * tcp_sack.c - the SACK scoreboard and loss recovery (RFC 6675, RFC 6582)
 *
 * Theory of operation
 *
 * Scoreboard: c->sacked holds the ranges above snd_una the peer reported in
 * SACK blocks (RFC 2018), merged, at most TCP_SACK_MAX_RANGES (a block that
 * would need more is ignored: that only makes us retransmit more).
 *
 * Loss, with SACK: RACK (RFC 8985, tcp_rack.c) marks segments lost by
 * time; pipe is outstanding - SACKed - marked lost and not resent, the next
 * segment to resend is the first one marked, and recovery starts when
 * anything is marked. Without SACK, or when RACK's records could not be
 * kept (rack_off), the rules below apply.
 *
 * Loss, fallback: RFC 6675 IsLost() says a byte is lost once more than
 * (DupThresh - 1) * SMSS bytes above it are SACKed. That defines a "lost
 * edge": every hole below it is lost. After an RTO every hole below the
 * RecoveryPoint is lost. Without SACK (NewReno, RFC 6582) only the first
 * unacknowledged segment is lost, and each duplicate ACK stands for one
 * segment that left the network (like Linux's Reno emulation of SACK).
 * Pipe (RFC 6675 4): bytes outstanding, minus SACKed bytes, minus lost bytes
 * not yet retransmitted (holes between HighRxt and the lost edge). Segments
 * are retransmitted in order from HighRxt (NextSeg() rule 1), at most one
 * MSS each, whenever cwnd * MSS - pipe allows; new data follows in
 * tcp_out.c when no lost hole remains.
 *
 * How much recovery sends per ACK follows PRR (RFC 6937, with SSRB): the
 * flight shrinks smoothly from RecoverFS to ssthresh as ACKs report
 * delivered data, instead of stopping until pipe falls below ssthresh.
 *
 * Recovery is entered when RACK marks a loss (fallback: on the third
 * duplicate ACK, when IsLost(snd_una), or by Early Retransmit, RFC 5827,
 * when fewer than 4 segments are out) with ssthresh from the controller
 * and cwnd = ssthresh, and left when the cumulative ACK reaches the
 * RecoveryPoint. In the fallback a retransmission lost again shows when
 * data sent after it is SACKed while its hole stays open; the holes are
 * then resent. Not done: rule 3 of NextSeg() (retransmitting holes not yet
 * deemed lost), the rescue retransmission.
 *
 * Undo (RFC 3708 with RFC 2883 D-SACKs, and Eifel, RFC 3522 / RFC 4015):
 * a fast recovery or an RTO opens an episode that remembers cwnd, ssthresh
 * and CUBIC's W_max and counts its retransmissions (and their ranges). A
 * D-SACK (the first block below the ACK or inside the second block) for a
 * range it retransmitted counts one off; when none is left every
 * retransmission was a duplicate and the reduction is undone. After an RTO
 * the first ACK past the first retransmission that echoes an older TSval
 * proves the RTO spurious (Eifel detection, RFC 4015 response: restore,
 * resume with new data instead of go-back-N). Eifel is not applied to fast
 * recovery: with reordering it undid too eagerly (the simulated link's
 * reordering runs resent 5-10 times more). An undo also widens RACK's
 * reordering window.
 *
 * The tail loss probe's answer (tcp_recovery_tlp_on_ack(), the probe itself
 * is in tcp_timer.c): RFC 8985 7.4, a probe that resent the last segment
 * and is followed by an ACK beyond it without a D-SACK for it repaired a
 * real loss, which costs one cwnd reduction like a recovery would have.
 */
#include "datapath/tcp/tcp_int.h"

/**
 * tcp_ranges_init() - an empty range set
 * @rs: the set
 * @max: most ranges it may hold (at most TCP_SACK_MAX_RANGES)
 */
void tcp_ranges_init(struct tcp_ranges *rs, unsigned int max)
{
	rs->n = 0;
	rs->max = max > TCP_SACK_MAX_RANGES ? TCP_SACK_MAX_RANGES : max;
}

/**
 * tcp_ranges_add() - add [start, end), merging with what it touches
 * @rs: the set
 * @start: first sequence number
 * @end: one past the last
 *
 * Return: 0, -EINVAL for an empty range, -ENOSPC when a new range would be
 * needed and the set is full (the set is then unchanged).
 */
int tcp_ranges_add(struct tcp_ranges *rs, uint32_t start, uint32_t end)
{
	unsigned int i = 0, j;

	if (!seq_lt(start, end))
		return -EINVAL;
	while (i < rs->n && seq_lt(rs->r[i].end, start))
		i++;
	/* i: first range that ends at or after start */
	if (i == rs->n || seq_lt(end, rs->r[i].start)) {
		if (rs->n >= rs->max)
			return -ENOSPC;
		memmove(&rs->r[i + 1], &rs->r[i], (rs->n - i) * sizeof(rs->r[0]));
		rs->r[i].start = start;
		rs->r[i].end = end;
		rs->n++;
		return 0;
	}
	rs->r[i].start = seq_min(rs->r[i].start, start);
	rs->r[i].end = seq_max(rs->r[i].end, end);
	j = i + 1;
	while (j < rs->n && seq_leq(rs->r[j].start, rs->r[i].end)) {
		rs->r[i].end = seq_max(rs->r[i].end, rs->r[j].end);
		j++;
	}
	memmove(&rs->r[i + 1], &rs->r[j], (rs->n - j) * sizeof(rs->r[0]));
	rs->n -= j - i - 1;
	return 0;
}

/**
 * tcp_ranges_trim_below() - forget everything below @seq
 * @rs: the set
 * @seq: the new lower bound
 */
void tcp_ranges_trim_below(struct tcp_ranges *rs, uint32_t seq)
{
	unsigned int i = 0;

	while (i < rs->n && seq_leq(rs->r[i].end, seq))
		i++;
	memmove(&rs->r[0], &rs->r[i], (rs->n - i) * sizeof(rs->r[0]));
	rs->n -= i;
	if (rs->n && seq_lt(rs->r[0].start, seq))
		rs->r[0].start = seq;
}

/**
 * tcp_ranges_bytes() - bytes of the set inside [from, to)
 * @rs: the set
 * @from: lower bound
 * @to: upper bound
 *
 * Return: the byte count.
 */
uint32_t tcp_ranges_bytes(const struct tcp_ranges *rs, uint32_t from, uint32_t to)
{
	uint32_t n = 0;
	unsigned int i;

	for (i = 0; i < rs->n; i++) {
		uint32_t a = seq_max(rs->r[i].start, from), b = seq_min(rs->r[i].end, to);

		if (seq_lt(a, b))
			n += b - a;
	}
	return n;
}

/**
 * tcp_sack_update() - add an ACK's SACK blocks to the scoreboard
 * @c: the connection
 * @o: the ACK's options
 *
 * Blocks are clipped to [snd_una, snd_max); D-SACKs and blocks outside are
 * ignored.
 */
void tcp_sack_update(struct tcp_conn *c, const struct tcp_opts *o)
{
	unsigned int i;

	if (!c->sack_ok)
		return;
	for (i = 0; i < o->nsack && i < TCP_SACK_MAX_BLOCKS; i++) {
		uint32_t a = o->sack[i].start, b = o->sack[i].end;

		if (!seq_lt(a, b) || seq_leq(b, c->snd_una) || seq_gt(b, c->snd_max))
			continue;
		a = seq_max(a, c->snd_una);
		tcp_ranges_add(&c->sacked, a, b);
	}
}

/**
 * tcp_sack_highest() - one past the highest SACKed byte
 * @c: the connection
 *
 * Return: that sequence number, or snd_una when nothing is SACKed.
 */
uint32_t tcp_sack_highest(const struct tcp_conn *c)
{
	return c->sacked.n ? c->sacked.r[c->sacked.n - 1].end : c->snd_una;
}

/* Every hole below the returned sequence number is lost. */
static uint32_t tcp_sack_lost_edge(const struct tcp_conn *c)
{
	uint32_t need = (TCP_DUPTHRESH - 1) * c->snd_mss + 1, acc = 0;
	unsigned int i;

	if (c->after_rto)
		return c->recover;
	if (!c->sack_ok) {
		if (!c->in_recovery)
			return c->snd_una;
		return seq_min(c->snd_una + c->snd_mss, c->snd_max);
	}
	/*
	 * RFC 8985 7.4 in its simplest form: when the tail loss probe (sent
	 * at least 2 SRTT after the segments below it) is SACKed, every hole
	 * below it is lost, whatever DupThresh says.
	 */
	if (c->tlp_active && c->sacked.n && seq_geq(tcp_sack_highest(c), c->tlp_high_seq))
		return c->sacked.r[c->sacked.n - 1].start;
	for (i = c->sacked.n; i-- > 0;) {
		uint32_t len = c->sacked.r[i].end - c->sacked.r[i].start;

		if (acc + len >= need)
			return c->sacked.r[i].end - (need - acc);
		acc += len;
	}
	return c->snd_una;
}

/**
 * tcp_sack_is_lost() - RFC 6675 IsLost() for one sequence number
 * @c: the connection
 * @seq: the sequence number
 *
 * Return: true when @seq is below the lost edge and not SACKed.
 */
bool tcp_sack_is_lost(const struct tcp_conn *c, uint32_t seq)
{
	if (tcp_rack_on(c)) {
		uint32_t s, l;

		return tcp_rack_next_lost(c, &s, &l) && s == seq;
	}
	return seq_lt(seq, tcp_sack_lost_edge(c)) && !tcp_ranges_bytes(&c->sacked, seq, seq + 1);
}

/* Bytes in holes (not SACKed) of [from, to). */
static uint32_t tcp_sack_holes(const struct tcp_conn *c, uint32_t from, uint32_t to)
{
	if (!seq_lt(from, to))
		return 0;
	return (to - from) - tcp_ranges_bytes(&c->sacked, from, to);
}

/**
 * tcp_sack_pipe() - RFC 6675 pipe: bytes believed in the network
 * @c: the connection
 *
 * Return: outstanding - SACKed - lost not yet retransmitted.
 */
uint32_t tcp_sack_pipe(const struct tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una, sacked, lost;

	if (tcp_rack_on(c)) {
		/* RFC 8985: lost means marked by RACK (or the RTO) and not resent */
		sacked = tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max);
		lost = c->rack_lost_bytes;
		return out - sacked > lost ? out - sacked - lost : 0;
	}
	if (c->sack_ok) {
		sacked = tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max);
	} else {
		uint64_t d = (uint64_t)c->dupacks * c->snd_mss;

		sacked = d < out ? (uint32_t)d : (out ? out - 1 : 0);
	}
	lost = tcp_sack_holes(c, seq_max(c->high_rxt, c->snd_una), tcp_sack_lost_edge(c));
	if (!c->sack_ok && !c->after_rto && lost > out - sacked)
		lost = out - sacked;
	return out - sacked - (lost < out - sacked ? lost : out - sacked);
}

/**
 * tcp_sack_next_lost() - NextSeg() rule 1: the next lost hole to resend
 * @c: the connection
 * @seq: its start (at or above HighRxt)
 * @len: its length up to the next SACKed range or the lost edge
 *
 * Return: true when there is one.
 */
bool tcp_sack_next_lost(const struct tcp_conn *c, uint32_t *seq, uint32_t *len)
{
	uint32_t edge, s = seq_max(c->high_rxt, c->snd_una);
	unsigned int i;

	if (tcp_rack_on(c))
		return tcp_rack_next_lost(c, seq, len);
	if (!c->in_recovery && !c->after_rto)
		return false;
	edge = tcp_sack_lost_edge(c);
	for (i = 0; i < c->sacked.n && seq_lt(s, edge); i++) {
		if (seq_leq(c->sacked.r[i].end, s))
			continue;
		if (seq_geq(s, c->sacked.r[i].start)) {
			s = c->sacked.r[i].end;
			continue;
		}
		*seq = s;
		*len = seq_min(c->sacked.r[i].start, edge) - s;
		return true;
	}
	if (!seq_lt(s, edge))
		return false;
	*seq = s;
	*len = edge - s;
	return true;
}

/*
 * RFC 5827 Early Retransmit: with fewer than 4 segments outstanding and no
 * new data to send, three duplicate ACKs can never come; oseg - 1 SACKed
 * segments (or duplicate ACKs) are enough.
 */
static bool tcp_sack_early_retransmit(const struct tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una, oseg = (out + c->snd_mss - 1) / c->snd_mss, got;

	if (oseg < 2 || oseg >= 4 || seq_lt(c->snd_nxt, c->snd_buf_seq + c->snd.len))
		return false;
	if (c->sack_ok)
		got = (tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max) + c->snd_mss - 1) / c->snd_mss;
	else
		got = c->dupacks;
	return got >= oseg - 1;
}

static void tcp_recovery_enter(struct tcp_conn *c, uint64_t now_us)
{
	uint32_t seq = c->snd_una, len = c->snd_mss;

	if (!c->after_rto)
		tcp_undo_start(c);
	c->cc->on_loss(c, now_us);
	c->cwnd = c->ssthresh;
	c->cwnd_acc = 0;
	c->in_recovery = true;
	c->recover = c->snd_max;
	c->high_rxt = c->snd_una;
	c->rxt_mark = c->snd_max;
	c->prr_delivered = 0;
	c->prr_out = 0;
	c->prr_budget = 0;
	c->prr_recover_fs = c->snd_max - c->snd_una;
	c->fast_recoveries++;
	c->stack->st.fast_recoveries++;
	if (c->sack_ok) {
		c->sack_recoveries++;
		c->stack->st.sack_recoveries++;
	}
	/* RFC 6675 5 (4.3) / RFC 6582 3.2 (2): resend the first (lost) segment now */
	if (tcp_rack_on(c) && !tcp_rack_next_lost(c, &seq, &len))
		return;
	tcp_recovery_sent(c, (uint32_t)tcp_out_retransmit(c, seq, len < c->snd_mss ? len : c->snd_mss, now_us));
	c->high_rxt = seq_max(c->high_rxt, seq_min(c->snd_una + c->snd_mss, c->snd_max));
}


/**
 * tcp_recovery_sent() - count bytes sent during recovery against PRR's budget
 * @c: the connection
 * @bytes: sequence space just sent (new data or retransmitted)
 */
void tcp_recovery_sent(struct tcp_conn *c, uint32_t bytes)
{
	if (!c->in_recovery || (int32_t)bytes <= 0)
		return;
	c->prr_out += bytes;
	c->prr_budget = c->prr_budget > bytes ? c->prr_budget - bytes : 0;
}

/*
 * RFC 6937 3: how much recovery may send for this ACK. Above ssthresh the
 * sending rate follows the delivery rate scaled by ssthresh / RecoverFS
 * (proportional); at or below it, slow start back up to ssthresh with at
 * most one extra MSS per ACK (PRR-SSRB).
 */
static void tcp_recovery_prr(struct tcp_conn *c, uint32_t delivered)
{
	uint64_t ssthresh = (uint64_t)c->ssthresh * c->snd_mss, pipe = tcp_sack_pipe(c);
	int64_t sndcnt;

	c->prr_delivered += delivered;
	if (pipe > ssthresh) {
		uint64_t fs = c->prr_recover_fs ? c->prr_recover_fs : 1;

		sndcnt = (int64_t)(((uint64_t)c->prr_delivered * ssthresh + fs - 1) / fs) - c->prr_out;
	} else {
		int64_t limit = (int64_t)c->prr_delivered - c->prr_out;

		if (limit < (int64_t)delivered)
			limit = delivered;
		limit += c->snd_mss;
		sndcnt = (int64_t)(ssthresh - pipe) < limit ? (int64_t)(ssthresh - pipe) : limit;
	}
	c->prr_budget = sndcnt > 0 ? (uint32_t)sndcnt : 0;
}

/**
 * tcp_recovery_on_ack() - loss detection and recovery for one ACK
 * @c: the connection (snd_una already advanced by @acked)
 * @acked: bytes newly acknowledged
 * @dupack: the ACK is a duplicate (RFC 5681 2 definition)
 * @delivered: bytes newly acknowledged or SACKed (RFC 6937 DeliveredData)
 * @now_us: the time
 */
void tcp_recovery_on_ack(struct tcp_conn *c, uint32_t acked, bool dupack, uint32_t delivered, uint64_t now_us)
{
	c->high_rxt = seq_max(c->high_rxt, c->snd_una);
	if (acked) {
		if (c->sack_ok) {
			c->dupacks = 0;
		} else {
			uint32_t segs = (acked + c->snd_mss - 1) / c->snd_mss;

			c->dupacks = c->dupacks > segs ? c->dupacks - segs : 0;
		}
	} else if (dupack) {
		c->dupacks++;
	}
	if (c->after_rto && seq_geq(c->snd_una, c->recover)) {
		c->after_rto = false;
		tcp_rack_recovery_done(c);
	}
	if (c->in_recovery) {
		if (seq_geq(c->snd_una, c->recover)) {
			/* RFC 6582 3.2 (3) full ACK / RFC 6675 5: leave */
			uint32_t flight = (tcp_sack_pipe(c) + c->snd_mss - 1) / c->snd_mss + 1;

			c->in_recovery = false;
			c->dupacks = 0;
			tcp_rack_recovery_done(c);
			c->cwnd = c->ssthresh < flight ? c->ssthresh : flight;
			if (c->cwnd < 2)
				c->cwnd = 2;
		} else if (c->sack_ok && !tcp_rack_on(c) && seq_gt(tcp_sack_highest(c), c->rxt_mark) &&
			   tcp_sack_holes(c, c->snd_una, c->high_rxt)) {
			/*
			 * Data sent after our latest retransmission was SACKed
			 * while holes we retransmitted are still open: those
			 * retransmissions were lost too (Linux's lost-retransmit
			 * detection, a step toward RACK). Resend from snd_una.
			 */
			c->high_rxt = c->snd_una;
			c->rxt_mark = c->snd_max;
		} else if (acked && !c->sack_ok) {
			/* RFC 6582 3.2 (3): a partial ACK resends the next segment now */
			int n = tcp_out_retransmit(c, c->snd_una, c->snd_mss, now_us);

			if (n > 0)
				c->high_rxt = seq_max(c->high_rxt, c->snd_una + (uint32_t)n);
			tcp_recovery_sent(c, (uint32_t)n);
		}
		if (c->in_recovery)
			tcp_recovery_prr(c, delivered);
		return;
	}
	if (acked && c->cwnd_limited)
		c->cc->on_ack(c, acked, now_us);
	if (c->after_rto || c->snd_una == c->snd_max)
		return;
	if (tcp_rack_on(c) ? c->rack_lost_bytes > 0
			   : c->dupacks >= TCP_DUPTHRESH || (c->sack_ok && tcp_sack_is_lost(c, c->snd_una)) ||
			     tcp_sack_early_retransmit(c)) {
		/* RFC 6582 4.1: not again for losses of the same window */
		if (seq_lt(c->snd_una, c->recover) && c->fast_recoveries + c->rto_count)
			return;
		tcp_recovery_enter(c, now_us);
		tcp_recovery_prr(c, delivered);
	}
}

/**
 * tcp_recovery_rack_timer() - RACK's reordering timer expired
 * @c: the connection
 * @now_us: the time
 *
 * Runs RACK's loss detection again; what it marks lost is resent, entering
 * recovery first when not in one (RFC 8985 6.3).
 */
void tcp_recovery_rack_timer(struct tcp_conn *c, uint64_t now_us)
{
	c->t_rack_us = 0;
	if (c->snd_una == c->snd_max || !tcp_rack_detect(c, now_us))
		return;
	/* not again for losses of the same window (RFC 6582 4.1), as on ACKs */
	if (!c->in_recovery && !c->after_rto &&
	    !(seq_lt(c->snd_una, c->recover) && c->fast_recoveries + c->rto_count))
		tcp_recovery_enter(c, now_us);
	if (c->in_recovery) {
		/* PRR gives little for no delivery: let the lost segments out now */
		tcp_recovery_prr(c, 0);
		if (c->prr_budget < c->snd_mss)
			c->prr_budget = c->snd_mss;
	}
	tcp_out_push(c, now_us);
}

/**
 * tcp_recovery_tlp_on_ack() - what an ACK says about the tail loss probe
 * @c: the connection (the ACK processed: snd_una, scoreboard, recovery)
 * @seg: the ACK
 * @acked: bytes it newly acknowledged
 * @delivered: bytes it newly acknowledged or SACKed
 * @dsack: its first SACK block is a D-SACK
 * @now_us: the time
 *
 * A probe is answered once snd_una reaches what was sent before it (a
 * probe sent during a recovery: by any ACK that delivers something). RFC
 * 8985 7.4 for a probe that resent the last segment outside recovery: if
 * the original arrived as well, a D-SACK for the probe follows (or, from a
 * peer without D-SACK, a pure duplicate ACK); if instead an ACK beyond the
 * probe comes first, only the probe arrived: the loss it repaired costs
 * one cwnd reduction (unless a recovery since then made it). During a
 * recovery, every ACK that delivers something restarts the probe timer: it
 * fires only after 2 SRTT without any ACK.
 */
void tcp_recovery_tlp_on_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t acked, uint32_t delivered,
			     bool dsack, uint64_t now_us)
{
	const struct tcp_opts *o = &seg->opts;

	if (c->tlp_active) {
		if (seq_geq(c->snd_una, c->tlp_high_seq)) {
			c->tlp_active = false;
			c->tlp_check = c->tlp_is_retrans && !c->tlp_in_recovery;
		} else if (c->tlp_in_recovery && (delivered || dsack)) {
			c->tlp_active = false;
		}
	}
	if (c->tlp_check) {
		if (dsack && seq_lt(o->sack[0].start, c->tlp_high_seq) && seq_gt(o->sack[0].end, c->tlp_seq)) {
			c->tlp_check = false;	/* both copies arrived: no loss */
		} else if (seq_gt(seg->ack, c->tlp_high_seq)) {
			c->tlp_check = false;
			if (!c->in_recovery && !c->after_rto && c->fast_recoveries + c->rto_count == c->tlp_episodes) {
				c->cc->on_loss(c, now_us);
				if (c->cwnd > c->ssthresh)
					c->cwnd = c->ssthresh;
				c->cwnd_acc = 0;
				c->tlp_recoveries++;
			}
		} else if (!acked && !dsack && !seg->len && !(seg->flags & (TCP_SYN | TCP_FIN)) &&
			   seg->ack == c->snd_una) {
			c->tlp_check = false;	/* a duplicate ACK without D-SACK: the same */
		}
	}
	if (!acked && (delivered || dsack) && (c->in_recovery || c->after_rto) && c->snd_una != c->snd_max &&
	    c->t_rtx_us != TCP_NO_DEADLINE)
		tcp_timer_tlp_arm(c, now_us);
}

/**
 * tcp_sack_dsack() - RFC 2883 4: is the ACK's first SACK block a D-SACK?
 * @c: the connection
 * @o: the ACK's options
 * @ack: its acknowledgment number
 *
 * A D-SACK lies below the cumulative ACK or inside the second block.
 *
 * Return: true when it is one (counted in dsacks_rx).
 */
bool tcp_sack_dsack(struct tcp_conn *c, const struct tcp_opts *o, uint32_t ack)
{
	uint32_t a, b;

	if (!c->sack_ok || !o->nsack)
		return false;
	a = o->sack[0].start;
	b = o->sack[0].end;
	if (!seq_lt(a, b) || b - a > c->max_snd_wnd + 65535u)
		return false;
	if (!seq_leq(b, ack) &&
	    !(o->nsack > 1 && seq_geq(a, o->sack[1].start) && seq_leq(b, o->sack[1].end)))
		return false;
	c->dsacks_rx++;
	c->stack->st.dsacks_rx++;
	return true;
}

/**
 * tcp_undo_start() - a loss episode begins: remember what to restore
 * @c: the connection
 *
 * RFC 3708 / Linux's undo: the episode counts its retransmissions; when
 * D-SACKs report every one of them as a duplicate, or the first ACK after
 * its first retransmission echoes an older timestamp (Eifel, RFC 3522),
 * the loss was spurious and cwnd/ssthresh are put back (RFC 4015's
 * response). The episode stays open after recovery ends (D-SACKs come an
 * RTT after the retransmissions) until the next one begins or it is undone.
 */
void tcp_undo_start(struct tcp_conn *c)
{
	c->undo_on = true;
	c->undo_eifel = false;
	c->undo_ts_set = false;
	c->undo_cwnd = c->cwnd;
	c->undo_ssthresh = c->ssthresh;
	c->undo_wmax = c->cubic_wmax;
	c->undo_marker = c->snd_una;
	c->undo_retrans = 0;
	tcp_ranges_init(&c->undo_rxt, TCP_SACK_MAX_RANGES);
}

/**
 * tcp_undo_retransmitted() - count a retransmission in the open episode
 * @c: the connection
 * @seq: its first sequence number
 * @end: one past its last
 * @now_us: the time
 */
void tcp_undo_retransmitted(struct tcp_conn *c, uint32_t seq, uint32_t end, uint64_t now_us)
{
	if (!c->undo_on || !seq_lt(seq, end))
		return;
	if (tcp_ranges_add(&c->undo_rxt, seq, end) < 0) {
		c->undo_on = false;	/* cannot tell them apart: no undo */
		return;
	}
	c->undo_retrans += (end - seq + c->snd_mss - 1) / c->snd_mss;
	if (!c->undo_ts_set && c->ts_ok) {
		c->undo_ts_set = true;
		c->undo_tsval = tcp_out_ts_now(c, now_us);
		c->undo_eifel_end = end;
		c->undo_eifel = c->after_rto;	/* Eifel for RTOs; D-SACKs for fast retransmits */
	}
}

/* The episode's losses were spurious: restore what it cut. */
static void tcp_undo(struct tcp_conn *c)
{
	if (c->cwnd < c->undo_cwnd)
		c->cwnd = c->undo_cwnd;
	if (c->ssthresh < c->undo_ssthresh)
		c->ssthresh = c->undo_ssthresh;
	if (c->cubic_wmax < c->undo_wmax)
		c->cubic_wmax = c->undo_wmax;
	c->cubic_epoch_us = 0;
	c->cwnd_acc = 0;
	if (c->in_recovery || c->after_rto) {
		c->in_recovery = false;
		c->after_rto = false;
		c->recover = c->snd_una;
		c->high_rxt = c->snd_una;
		c->dupacks = 0;
		tcp_rack_unmark_lost(c);
		tcp_rack_recovery_done(c);
	}
	c->undo_on = false;
	c->undo_eifel = false;
	tcp_rack_spurious(c);
	c->undos++;
	c->stack->st.undos++;
}

/**
 * tcp_undo_on_ack() - undo a spurious episode on D-SACK or timestamp proof
 * @c: the connection
 * @seg: the ACK
 * @advanced: it advanced snd_una
 * @dsack: its first SACK block is a D-SACK
 */
void tcp_undo_on_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, bool advanced, bool dsack)
{
	const struct tcp_opts *o = &seg->opts;

	if (!c->undo_on)
		return;
	if (dsack && c->undo_retrans && seq_geq(o->sack[0].start, c->undo_marker)) {
		uint32_t covered = tcp_ranges_bytes(&c->undo_rxt, o->sack[0].start, o->sack[0].end);
		uint32_t segs = (covered + c->snd_mss - 1) / c->snd_mss;

		if (segs) {
			c->undo_retrans = c->undo_retrans > segs ? c->undo_retrans - segs : 0;
			if (!c->undo_retrans) {
				tcp_undo(c);
				return;
			}
		}
	}
	if (advanced && c->undo_eifel && seq_geq(c->snd_una, c->undo_eifel_end)) {
		c->undo_eifel = false;
		if (o->has_ts && o->ts_ecr && (int32_t)(o->ts_ecr - c->undo_tsval) < 0)
			tcp_undo(c);
	}
}
