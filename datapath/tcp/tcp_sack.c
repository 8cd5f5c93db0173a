// SPDX-License-Identifier: MIT
/*
 * tcp_sack.c - the SACK scoreboard: what is SACKed, lost, in the pipe, next
 * to resend (RFC 6675, RFC 6582)
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
 * anything is marked (tcp_recovery.c). Without SACK, or when RACK's records
 * could not be kept (rack_off), the rules below apply.
 *
 * Loss, fallback: RFC 6675 IsLost() says a byte is lost once more than
 * (DupThresh - 1) * SMSS bytes above it are SACKed. That defines a "lost
 * edge": every hole below it is lost. After an RTO every hole below the
 * RecoveryPoint is lost. Without SACK (NewReno, RFC 6582) only the first
 * unacknowledged segment is lost, and each duplicate ACK stands for one
 * segment that left the network (like Linux's Reno emulation of SACK).
 * Pipe (RFC 6675 4): bytes outstanding, minus SACKed bytes, minus lost bytes
 * not yet retransmitted (holes between HighRxt and the lost edge).
 *
 * Reneging (RFC 2018 8: a receiver may throw away data it SACKed): an ACK
 * whose first unacknowledged byte the scoreboard holds SACKed says so (a
 * receiver that had that byte would acknowledge it, as Linux's
 * tcp_check_sack_reneging() reads it), and so does a second RTO in a row.
 * Then the scoreboard is forgotten (tcp_sack_renege()): what was SACKed is
 * in flight again, RACK times it like the rest, and an RTO resends it. A
 * peer that reneges cannot stall the connection behind data we believe it
 * has. Segments
 * are retransmitted in order from HighRxt (NextSeg() rule 1), at most one
 * MSS each, whenever cwnd * MSS - pipe allows; new data follows in
 * tcp_out.c when no lost hole remains.
 */
#include "datapath/tcp/tcp_int.h"

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

/**
 * tcp_sack_holes() - bytes in holes (not SACKed) of [@from, @to)
 * @c: the connection
 * @from: start
 * @to: end
 *
 * Return: the byte count; 0 for an empty range.
 */
uint32_t tcp_sack_holes(const struct tcp_conn *c, uint32_t from, uint32_t to)
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

/**
 * tcp_sack_renege() - forget the scoreboard: the receiver may not have it
 * @c: the connection
 */
void tcp_sack_renege(struct tcp_conn *c)
{
	if (!c->sacked.n)
		return;
	c->sacked.n = 0;
	tcp_rack_unsack_all(c);
	c->sack_reneges++;
	c->stack->st.sack_reneges++;
}

/**
 * tcp_sack_check_renege() - after an ACK: did the receiver renege?
 * @c: the connection (snd_una advanced, the ACK's blocks added)
 *
 * Return: true when it did (the scoreboard was forgotten).
 */
bool tcp_sack_check_renege(struct tcp_conn *c)
{
	if (!c->sack_ok || !c->sacked.n || c->sacked.r[0].start != c->snd_una)
		return false;
	tcp_sack_renege(c);
	return true;
}
