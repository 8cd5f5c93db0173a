// SPDX-License-Identifier: MIT
/*
 * tcp_cc_bbr.c - BBR congestion control: a model of the path's bandwidth
 * and round trip, not a reaction to loss (draft-cardwell-iccrg-bbr-
 * congestion-control-00, the algorithm of Linux's tcp_bbr.c)
 *
 * Theory of operation
 *
 * BBR estimates two things and sends at what they allow:
 *   BtlBw    the bottleneck's bandwidth: the largest delivery rate sample
 *            (tcp_rate.c) of the last BBR_BW_RTTS round trips, a windowed
 *            maximum; samples of an application-limited sender count only
 *            when they raise it;
 *   RTprop   the path's round trip without queueing: the smallest RTT
 *            sample of the last 10 seconds.
 * Their product is the bandwidth-delay product (BDP). The pacing rate is
 * pacing_gain x BtlBw (1 % below, to leave the queue room to drain), cwnd is
 * cwnd_gain x BDP plus what ACK aggregation needs, and the gains come from
 * the phase:
 *   STARTUP    2/ln 2 (2.885) for both: doubles the rate each round trip,
 *              until three rounds in a row raise BtlBw by less than 25 %
 *              (the pipe is full);
 *   DRAIN      pacing at its inverse until what is in flight is one BDP
 *              (the queue STARTUP built is gone);
 *   PROBE_BW   cwnd gain 2, pacing gain cycling through 1.25 (probe for
 *              more), 0.75 (drain what that queued) and six rounds of 1,
 *              starting at a random phase;
 *   PROBE_RTT  every 10 s without a lower RTT sample: cwnd 4 segments for
 *              200 ms and a round trip, so the queue empties and RTprop
 *              is measured again, then back.
 * Loss does not lower the model (random loss is not congestion): in the
 * first round of a recovery cwnd follows packet conservation (what was
 * delivered leaves), what RACK marks lost comes off cwnd, and the cwnd from
 * before the recovery comes back when it ends. A policer is recognised by
 * its loss (long-term sampling, "lt"): when two intervals of 4 to 16 round
 * trips with 20 % loss deliver the same rate, BBR sends at that rate for
 * 48 round trips.
 *
 * Rounds are counted by delivery: a round ends when the segment sent at
 * its start is delivered (C.delivered reaching next_rtt_delivered).
 * Bandwidth is in bytes per second, cwnd in segments of snd_mss; the
 * engine paces whatever rate this sets (tcp_pace.c), also when the
 * connection's options turned pacing off: BBR does not work unpaced.
 *
 * What it does not do: ECN (an ECN echo does not change the model, as in
 * Linux's BBR), and BBRv2/v3's loss and ECN bounds on inflight.
 */
#include "datapath/tcp/tcp_int.h"

#define BBR_UNIT		256u	/* gains are in units of 1/256 */
#define BBR_HIGH_GAIN		(BBR_UNIT * 2885 / 1000 + 1)	/* 2/ln 2 */
#define BBR_DRAIN_GAIN		(BBR_UNIT * 1000 / 2885)
#define BBR_CWND_GAIN		(BBR_UNIT * 2)
#define BBR_CYCLE_LEN		8
#define BBR_CYCLE_RAND		7	/* PROBE_BW starts at a random phase but the 0.75 one */
#define BBR_BW_RTTS		(BBR_CYCLE_LEN + 2)	/* the bandwidth filter's window, rounds */
#define BBR_MIN_RTT_WIN_US	10000000ull
#define BBR_PROBE_RTT_US	200000ull
#define BBR_CWND_MIN_SEGS	4u
#define BBR_FULL_BW_THRESH	(BBR_UNIT * 5 / 4)
#define BBR_FULL_BW_CNT		3
#define BBR_PACING_MARGIN_PCT	1
#define BBR_LT_INTVL_MIN_RTTS	4
#define BBR_LT_LOSS_THRESH	50u	/* / 256: about 20 % */
#define BBR_LT_BW_RATIO		(BBR_UNIT / 8)
#define BBR_LT_BW_DIFF		(4000 / 8)	/* bytes/s */
#define BBR_LT_BW_MAX_RTTS	48
#define BBR_EXTRA_ACKED_WIN_RTTS 5
#define BBR_EXTRA_ACKED_MAX_US	100000ull
#define BBR_ACK_EPOCH_RESET_SEGS (1ull << 20)

enum bbr_mode {
	BBR_STARTUP,
	BBR_DRAIN,
	BBR_PROBE_BW,
	BBR_PROBE_RTT,
	BBR_MODE_MAX
};

static const char *const bbr_mode_names[] = {
	[BBR_STARTUP] = "startup",
	[BBR_DRAIN] = "drain",
	[BBR_PROBE_BW] = "probe_bw",
	[BBR_PROBE_RTT] = "probe_rtt",
};
_Static_assert(sizeof(bbr_mode_names) / sizeof(bbr_mode_names[0]) == BBR_MODE_MAX, "bbr mode names");

static const uint32_t bbr_pacing_gain[BBR_CYCLE_LEN] = {
	BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT,
};

/* The windowed maximum (Kathleen Nichols' algorithm): three samples, the
 * best, the best since it, and the best since that, each within @win. */
static void bbr_minmax_reset(struct tcp_minmax *m, uint32_t t, uint64_t v)
{
	m->s[0].t = m->s[1].t = m->s[2].t = t;
	m->s[0].v = m->s[1].v = m->s[2].v = v;
}

static void bbr_minmax_max(struct tcp_minmax *m, uint32_t win, uint32_t t, uint64_t v)
{
	uint32_t dt;

	if (v >= m->s[0].v || t - m->s[2].t > win) {
		bbr_minmax_reset(m, t, v);	/* a new best, or nothing in the window */
		return;
	}
	if (v >= m->s[1].v) {
		m->s[1].t = m->s[2].t = t;
		m->s[1].v = m->s[2].v = v;
	} else if (v >= m->s[2].v) {
		m->s[2].t = t;
		m->s[2].v = v;
	}
	/* the best aged out: the next ones move up */
	dt = t - m->s[0].t;
	if (dt > win) {
		m->s[0] = m->s[1];
		m->s[1] = m->s[2];
		m->s[2].t = t;
		m->s[2].v = v;
		if (t - m->s[0].t > win) {
			m->s[0] = m->s[1];
			m->s[1] = m->s[2];
		}
	} else if (m->s[1].t == m->s[0].t && dt > win / 4) {
		m->s[2].t = m->s[1].t = t;
		m->s[2].v = m->s[1].v = v;
	} else if (m->s[2].t == m->s[1].t && dt > win / 2) {
		m->s[2].t = t;
		m->s[2].v = v;
	}
}

static uint64_t bbr_max_bw(const struct tcp_conn *c)
{
	return c->bbr.bw.s[0].v;
}

/* The bandwidth the model uses: the policer's rate while one is seen. */
static uint64_t bbr_bw(const struct tcp_conn *c)
{
	return c->bbr.lt_use_bw ? c->bbr.lt_bw : bbr_max_bw(c);
}

static uint32_t bbr_segs(const struct tcp_conn *c, uint64_t bytes)
{
	uint64_t n = (bytes + c->snd_mss - 1) / c->snd_mss;

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static bool bbr_full_bw_reached(const struct tcp_conn *c)
{
	return c->bbr.full_bw_reached;
}

/* The pacing rate for @bw at @gain, 1 % below (BBR_PACING_MARGIN_PCT). */
static uint64_t bbr_rate(uint64_t bw, uint32_t gain)
{
	return bw * gain / BBR_UNIT * (100 - BBR_PACING_MARGIN_PCT) / 100;
}

/* Segments one send carries at the pacing rate (tcp_pace.c), at most 127. */
static uint32_t bbr_tso_segs_goal(const struct tcp_conn *c)
{
	uint32_t n = tcp_pace_quantum(c) / c->snd_mss;

	return n > 127 ? 127 : n ? n : 1;
}

/* cwnd_gain x BDP in segments; before any RTT sample, the initial window. */
static uint32_t bbr_bdp(const struct tcp_conn *c, uint64_t bw, uint32_t gain)
{
	uint64_t bytes;

	if (c->bbr.min_rtt_us == UINT32_MAX)
		return TCP_INIT_CWND;
	bytes = bw * c->bbr.min_rtt_us / 1000000 * gain / BBR_UNIT;
	return bbr_segs(c, bytes);
}

/* Room for the segments a TSO/GSO send and the pacing phases hold. */
static uint32_t bbr_quantization_budget(const struct tcp_conn *c, uint32_t cwnd)
{
	cwnd += 3 * bbr_tso_segs_goal(c);
	cwnd = (cwnd + 1) & ~1u;
	if (c->bbr.mode == BBR_PROBE_BW && c->bbr.cycle_idx == 0)
		cwnd += 2;	/* the probing phase: more in flight than the BDP */
	return cwnd;
}

static uint32_t bbr_inflight(const struct tcp_conn *c, uint64_t bw, uint32_t gain)
{
	return bbr_quantization_budget(c, bbr_bdp(c, bw, gain));
}

/*
 * What will be in the network when the next segment leaves at its pacing
 * time (segments): sends queued behind the pacer are not in it yet, and
 * what the path delivers meanwhile leaves it.
 */
static uint32_t bbr_inflight_at_edt(const struct tcp_conn *c, uint32_t inflight_segs, uint64_t now_us)
{
	uint64_t interval, delivered;

	if (c->pace_next_us <= now_us)
		return inflight_segs;
	if (c->bbr.pacing_gain > BBR_UNIT)
		inflight_segs += bbr_tso_segs_goal(c);
	interval = c->pace_next_us - now_us;
	delivered = bbr_segs(c, bbr_bw(c) * interval / 1000000);
	return delivered >= inflight_segs ? 0 : inflight_segs - (uint32_t)delivered;
}

static void bbr_init_pacing_rate_from_rtt(struct tcp_conn *c)
{
	uint64_t rtt_us = 1000, bw;

	if (c->srtt_us) {
		rtt_us = c->srtt_us;
		c->bbr.has_seen_rtt = true;
	}
	bw = (uint64_t)c->cwnd * c->snd_mss * 1000000 / rtt_us;
	c->pacing_rate = bbr_rate(bw, BBR_HIGH_GAIN);
}

static void bbr_set_pacing_rate(struct tcp_conn *c, uint64_t bw, uint32_t gain)
{
	uint64_t rate = bbr_rate(bw, gain);

	if (!c->bbr.has_seen_rtt && c->srtt_us)
		bbr_init_pacing_rate_from_rtt(c);
	/* in STARTUP the rate only grows: an early low sample must not hold it back */
	if (bbr_full_bw_reached(c) || rate > c->pacing_rate)
		c->pacing_rate = rate ? rate : 1;
}

static void bbr_save_cwnd(struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	if (b->prev_cong_state == TCP_CONG_OPEN && b->mode != BBR_PROBE_RTT)
		b->prior_cwnd = c->cwnd;
	else if (c->cwnd > b->prior_cwnd)
		b->prior_cwnd = c->cwnd;	/* in a recovery already: keep the larger */
}

static void bbr_reset_startup_mode(struct tcp_conn *c)
{
	c->bbr.mode = BBR_STARTUP;
}

static void bbr_advance_cycle_phase(struct tcp_conn *c)
{
	c->bbr.cycle_idx = (uint8_t)((c->bbr.cycle_idx + 1) & (BBR_CYCLE_LEN - 1));
	c->bbr.cycle_stamp_us = c->delivered_us;
}

static uint32_t bbr_random(struct tcp_conn *c, uint32_t n)
{
	/* xorshift32: which phase PROBE_BW starts in need not be secret */
	c->bbr.rng ^= c->bbr.rng << 13;
	c->bbr.rng ^= c->bbr.rng >> 17;
	c->bbr.rng ^= c->bbr.rng << 5;
	return c->bbr.rng % n;
}

static void bbr_reset_probe_bw_mode(struct tcp_conn *c)
{
	c->bbr.mode = BBR_PROBE_BW;
	c->bbr.cycle_idx = (uint8_t)(BBR_CYCLE_LEN - 1 - bbr_random(c, BBR_CYCLE_RAND));
	bbr_advance_cycle_phase(c);
}

static void bbr_reset_mode(struct tcp_conn *c)
{
	if (!bbr_full_bw_reached(c))
		bbr_reset_startup_mode(c);
	else
		bbr_reset_probe_bw_mode(c);
}

/* Policer detection: the sampling interval starts again. */
static void bbr_reset_lt_interval(struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	b->lt_last_stamp_us = c->delivered_us;
	b->lt_last_delivered = c->delivered;
	b->lt_last_lost = c->lost_total;
	b->lt_rtt_cnt = 0;
}

static void bbr_reset_lt(struct tcp_conn *c)
{
	c->bbr.lt_bw = 0;
	c->bbr.lt_use_bw = false;
	c->bbr.lt_is_sampling = false;
	bbr_reset_lt_interval(c);
}

/* An interval of policer sampling ended at @bw: the same rate twice is a policer. */
static void bbr_lt_interval_done(struct tcp_conn *c, uint64_t bw)
{
	struct tcp_bbr *b = &c->bbr;

	if (b->lt_bw) {
		uint64_t diff = bw > b->lt_bw ? bw - b->lt_bw : b->lt_bw - bw;

		if (diff * BBR_UNIT <= BBR_LT_BW_RATIO * b->lt_bw || diff <= BBR_LT_BW_DIFF) {
			b->lt_bw = (bw + b->lt_bw) / 2;
			b->lt_use_bw = true;
			b->pacing_gain = BBR_UNIT;	/* at the policer's rate, no probing */
			b->lt_rtt_cnt = 0;
			return;
		}
	}
	b->lt_bw = bw;
	bbr_reset_lt_interval(c);
}

static void bbr_lt_sampling(struct tcp_conn *c, const struct tcp_rate_sample *rs)
{
	struct tcp_bbr *b = &c->bbr;
	uint64_t lost, delivered, t;

	if (b->lt_use_bw) {
		/* a policer's rate is used for a while, then probed past again */
		if (b->mode == BBR_PROBE_BW && b->round_start && ++b->lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS) {
			bbr_reset_lt(c);
			bbr_reset_probe_bw_mode(c);
		}
		return;
	}
	/* the first loss starts an interval: the policer's tokens are spent */
	if (!b->lt_is_sampling) {
		if (!rs->losses)
			return;
		bbr_reset_lt_interval(c);
		b->lt_is_sampling = true;
	}
	if (rs->is_app_limited) {
		bbr_reset_lt(c);	/* it would underestimate */
		return;
	}
	if (b->round_start)
		b->lt_rtt_cnt++;
	if (b->lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS)
		return;
	if (b->lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS) {
		bbr_reset_lt(c);	/* too long to say anything */
		return;
	}
	/* the interval ends at a loss, with 20 % of what was delivered lost */
	if (!rs->losses)
		return;
	lost = c->lost_total - b->lt_last_lost;
	delivered = c->delivered - b->lt_last_delivered;
	if (!delivered || lost * BBR_UNIT < BBR_LT_LOSS_THRESH * delivered)
		return;
	t = c->delivered_us - b->lt_last_stamp_us;
	if (t < 1000)
		return;	/* under a millisecond: wait */
	bbr_lt_interval_done(c, delivered * 1000000 / t);
}

/* A new round trip? And the sample into the bandwidth filter. */
static void bbr_update_bw(struct tcp_conn *c, const struct tcp_rate_sample *rs)
{
	struct tcp_bbr *b = &c->bbr;
	uint64_t bw;

	b->round_start = false;
	if (rs->interval_us <= 0)
		return;	/* no sample */
	if (rs->prior_delivered >= b->next_rtt_delivered) {
		b->next_rtt_delivered = c->delivered;
		b->rtt_cnt++;
		b->round_start = true;
		b->packet_conservation = false;
	}
	bbr_lt_sampling(c, rs);
	bw = rs->delivered * 1000000 / (uint64_t)rs->interval_us;
	/* an application-limited sample counts only when it is the best so far */
	if (!rs->is_app_limited || bw >= bbr_max_bw(c))
		bbr_minmax_max(&b->bw, BBR_BW_RTTS, b->rtt_cnt, bw);
}

/*
 * ACK aggregation: bytes ACKed beyond what the model expected since the
 * epoch began, the larger of two windows of BBR_EXTRA_ACKED_WIN_RTTS rounds
 * kept: cwnd gets that much more so that bursts of ACKs (Wi-Fi, GRO, a
 * receiver's delayed ACKs) do not starve the pipe.
 */
static void bbr_update_ack_aggregation(struct tcp_conn *c, const struct tcp_rate_sample *rs)
{
	struct tcp_bbr *b = &c->bbr;
	uint64_t expected, extra;

	if (!rs->acked_sacked || rs->interval_us <= 0)
		return;
	if (b->round_start) {
		if (b->extra_acked_win_rtts < 31)
			b->extra_acked_win_rtts++;
		if (b->extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS) {
			b->extra_acked_win_rtts = 0;
			b->extra_acked_win_idx = !b->extra_acked_win_idx;
			b->extra_acked[b->extra_acked_win_idx] = 0;
		}
	}
	expected = bbr_bw(c) * (c->delivered_us - b->ack_epoch_stamp_us) / 1000000;
	/* a slower ACK rate, or an old epoch: start a new one */
	if (b->ack_epoch_acked <= expected ||
	    b->ack_epoch_acked + rs->acked_sacked >= BBR_ACK_EPOCH_RESET_SEGS * c->snd_mss) {
		b->ack_epoch_acked = 0;
		b->ack_epoch_stamp_us = c->delivered_us;
		expected = 0;
	}
	b->ack_epoch_acked += rs->acked_sacked;
	extra = b->ack_epoch_acked - expected;
	if (extra > (uint64_t)c->cwnd * c->snd_mss)
		extra = (uint64_t)c->cwnd * c->snd_mss;
	if (extra > b->extra_acked[b->extra_acked_win_idx])
		b->extra_acked[b->extra_acked_win_idx] = extra;
}

static uint32_t bbr_ack_aggregation_cwnd(const struct tcp_conn *c)
{
	uint64_t extra, cap;

	if (!bbr_full_bw_reached(c))
		return 0;
	extra = c->bbr.extra_acked[0] > c->bbr.extra_acked[1] ? c->bbr.extra_acked[0] : c->bbr.extra_acked[1];
	cap = bbr_bw(c) * BBR_EXTRA_ACKED_MAX_US / 1000000;
	return bbr_segs(c, extra < cap ? extra : cap);
}

static bool bbr_is_next_cycle_phase(struct tcp_conn *c, const struct tcp_rate_sample *rs, uint64_t now_us)
{
	struct tcp_bbr *b = &c->bbr;
	bool full_length = c->delivered_us - b->cycle_stamp_us > b->min_rtt_us;
	uint32_t inflight;

	if (b->pacing_gain == BBR_UNIT)
		return full_length;
	inflight = bbr_inflight_at_edt(c, bbr_segs(c, rs->prior_in_flight), now_us);
	/* probing ends after a round trip once the queue holds 1.25 BDP, or at a loss */
	if (b->pacing_gain > BBR_UNIT)
		return full_length && (rs->losses || inflight >= bbr_inflight(c, bbr_max_bw(c), b->pacing_gain));
	/* draining ends after a round trip, or as soon as the queue is gone */
	return full_length || inflight <= bbr_inflight(c, bbr_max_bw(c), BBR_UNIT);
}

static void bbr_check_full_bw_reached(struct tcp_conn *c, const struct tcp_rate_sample *rs)
{
	struct tcp_bbr *b = &c->bbr;

	if (bbr_full_bw_reached(c) || !b->round_start || rs->is_app_limited)
		return;
	if (bbr_max_bw(c) >= b->full_bw * BBR_FULL_BW_THRESH / BBR_UNIT) {
		b->full_bw = bbr_max_bw(c);
		b->full_bw_cnt = 0;
		return;
	}
	if (++b->full_bw_cnt >= BBR_FULL_BW_CNT)
		b->full_bw_reached = true;
}

static void bbr_check_drain(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_bbr *b = &c->bbr;

	if (b->mode == BBR_STARTUP && bbr_full_bw_reached(c)) {
		b->mode = BBR_DRAIN;	/* drain the queue STARTUP built */
		c->ssthresh = bbr_inflight(c, bbr_max_bw(c), BBR_UNIT);
	}
	if (b->mode == BBR_DRAIN &&
	    bbr_inflight_at_edt(c, bbr_segs(c, tcp_sack_pipe(c)), now_us) <= bbr_inflight(c, bbr_max_bw(c), BBR_UNIT))
		bbr_reset_probe_bw_mode(c);	/* drained */
}

static void bbr_check_probe_rtt_done(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_bbr *b = &c->bbr;

	if (!b->probe_rtt_done_us || now_us < b->probe_rtt_done_us)
		return;
	b->min_rtt_stamp_us = now_us;	/* the next PROBE_RTT in 10 s */
	if (c->cwnd < b->prior_cwnd)
		c->cwnd = b->prior_cwnd;
	bbr_reset_mode(c);
}

static void bbr_update_min_rtt(struct tcp_conn *c, const struct tcp_rate_sample *rs, uint64_t now_us)
{
	struct tcp_bbr *b = &c->bbr;
	bool expired = now_us > b->min_rtt_stamp_us + BBR_MIN_RTT_WIN_US;
	uint32_t pipe;

	if (rs->rtt_us >= 0 && ((uint64_t)rs->rtt_us < b->min_rtt_us || expired)) {
		b->min_rtt_us = rs->rtt_us > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)rs->rtt_us;
		b->min_rtt_stamp_us = now_us;
	}
	if (expired && !b->idle_restart && b->mode != BBR_PROBE_RTT) {
		b->mode = BBR_PROBE_RTT;	/* empty the queue, measure RTprop again */
		bbr_save_cwnd(c);
		b->probe_rtt_done_us = 0;
	}
	if (b->mode == BBR_PROBE_RTT) {
		pipe = tcp_sack_pipe(c);
		/* its low rate samples must not enter the bandwidth filter */
		c->app_limited = c->delivered + pipe ? c->delivered + pipe : 1;
		if (!b->probe_rtt_done_us && bbr_segs(c, pipe) <= BBR_CWND_MIN_SEGS) {
			b->probe_rtt_done_us = now_us + BBR_PROBE_RTT_US;
			b->probe_rtt_round_done = false;
			b->next_rtt_delivered = c->delivered;
		} else if (b->probe_rtt_done_us) {
			if (b->round_start)
				b->probe_rtt_round_done = true;
			if (b->probe_rtt_round_done)
				bbr_check_probe_rtt_done(c, now_us);
		}
	}
	if (rs->delivered > 0)
		b->idle_restart = false;
}

static void bbr_update_gains(struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	switch (b->mode) {
	case BBR_STARTUP:
		b->pacing_gain = BBR_HIGH_GAIN;
		b->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case BBR_DRAIN:
		b->pacing_gain = BBR_DRAIN_GAIN;
		b->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case BBR_PROBE_BW:
		b->pacing_gain = b->lt_use_bw ? BBR_UNIT : bbr_pacing_gain[b->cycle_idx];
		b->cwnd_gain = BBR_CWND_GAIN;
		break;
	default:
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = BBR_UNIT;
		break;
	}
}

/*
 * In a recovery: what RACK found lost comes off cwnd; its first round sends
 * only what was delivered (packet conservation); its end brings back the
 * cwnd of before. Return: true when packet conservation decided cwnd.
 */
static bool bbr_set_cwnd_to_recover_or_restore(struct tcp_conn *c, const struct tcp_rate_sample *rs,
					       uint32_t acked_segs, uint32_t *cwnd_out)
{
	struct tcp_bbr *b = &c->bbr;
	uint8_t prev = b->prev_cong_state, state = (uint8_t)tcp_cong_state(c);
	uint32_t cwnd = c->cwnd, pipe_segs = bbr_segs(c, tcp_sack_pipe(c)), lost = bbr_segs(c, rs->losses);

	if (lost)
		cwnd = cwnd > lost ? cwnd - lost : 1;
	if (state == TCP_CONG_RECOVERY && prev != TCP_CONG_RECOVERY) {
		b->packet_conservation = true;
		b->next_rtt_delivered = c->delivered;	/* its first round starts now */
		cwnd = pipe_segs + acked_segs;
	} else if (prev != TCP_CONG_OPEN && state == TCP_CONG_OPEN) {
		if (cwnd < b->prior_cwnd)
			cwnd = b->prior_cwnd;	/* the recovery ended */
		b->packet_conservation = false;
	}
	b->prev_cong_state = state;
	if (b->packet_conservation) {
		*cwnd_out = cwnd > pipe_segs + acked_segs ? cwnd : pipe_segs + acked_segs;
		return true;
	}
	*cwnd_out = cwnd;
	return false;
}

static void bbr_set_cwnd(struct tcp_conn *c, const struct tcp_rate_sample *rs, uint64_t bw, uint32_t gain)
{
	uint32_t acked = bbr_segs(c, rs->acked_sacked), cwnd = c->cwnd, target;

	if (acked) {
		if (!bbr_set_cwnd_to_recover_or_restore(c, rs, acked, &cwnd)) {
			target = bbr_bdp(c, bw, gain) + bbr_ack_aggregation_cwnd(c);
			target = bbr_quantization_budget(c, target);
			/* up toward the target as delivery allows; down only once the pipe was full */
			if (bbr_full_bw_reached(c))
				cwnd = cwnd + acked < target ? cwnd + acked : target;
			else if (cwnd < target || c->delivered < TCP_INIT_CWND * (uint64_t)c->snd_mss)
				cwnd += acked;
			if (cwnd < BBR_CWND_MIN_SEGS)
				cwnd = BBR_CWND_MIN_SEGS;
		}
	}
	if (cwnd > (1u << 20))
		cwnd = 1u << 20;
	if (c->bbr.mode == BBR_PROBE_RTT && cwnd > BBR_CWND_MIN_SEGS)
		cwnd = BBR_CWND_MIN_SEGS;
	c->cwnd = cwnd;
}

static void tcp_bbr_cong_control(struct tcp_conn *c, const struct tcp_rate_sample *rs, uint64_t now_us)
{
	struct tcp_bbr *b = &c->bbr;
	uint64_t bw;

	bbr_update_bw(c, rs);
	bbr_update_ack_aggregation(c, rs);
	if (b->mode == BBR_PROBE_BW && bbr_is_next_cycle_phase(c, rs, now_us))
		bbr_advance_cycle_phase(c);
	bbr_check_full_bw_reached(c, rs);
	bbr_check_drain(c, now_us);
	bbr_update_min_rtt(c, rs, now_us);
	bbr_update_gains(c);
	bw = bbr_bw(c);
	bbr_set_pacing_rate(c, bw, b->pacing_gain);
	bbr_set_cwnd(c, rs, bw, b->cwnd_gain);
}

static void tcp_bbr_init(struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;
	uint64_t now = c->stack->clock_us;

	memset(b, 0, sizeof(*b));
	c->ssthresh = TCP_SSTHRESH_INIT;
	b->next_rtt_delivered = c->delivered;
	b->prev_cong_state = TCP_CONG_OPEN;
	b->min_rtt_us = c->rack_min_rtt_us ? c->rack_min_rtt_us : c->srtt_us ? c->srtt_us : UINT32_MAX;
	b->min_rtt_stamp_us = now;
	bbr_minmax_reset(&b->bw, 0, 0);
	b->rng = c->iss ^ 0x9e3779b9u;
	if (!b->rng)
		b->rng = 1;
	bbr_init_pacing_rate_from_rtt(c);
	bbr_reset_lt(c);
	bbr_reset_startup_mode(c);
	bbr_update_gains(c);
	b->ack_epoch_stamp_us = now;
}

/* A fast recovery starts (or a tail loss probe repaired a loss): keep cwnd for its end. */
static void tcp_bbr_on_loss(struct tcp_conn *c, uint64_t now_us)
{
	(void)now_us;
	bbr_save_cwnd(c);
}

/* An RTO: the model stays, what was in flight is lost, the bandwidth plateau is forgotten. */
static void tcp_bbr_on_rto(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_rate_sample rs = { .losses = 1, .interval_us = -1, .rtt_us = -1 };

	(void)now_us;
	bbr_save_cwnd(c);
	c->bbr.prev_cong_state = TCP_CONG_LOSS;
	c->bbr.full_bw = 0;
	c->bbr.round_start = true;
	bbr_lt_sampling(c, &rs);
	c->cwnd = 1;
	c->cwnd_acc = 0;
}

/* A spurious recovery was undone: cwnd stays as the model set it. */
static void tcp_bbr_undo(struct tcp_conn *c)
{
	c->bbr.full_bw = 0;
	c->bbr.full_bw_cnt = 0;
	bbr_reset_lt(c);
}

/* Sending after an application-limited idle period: at the estimated rate, no faster. */
static void tcp_bbr_on_tx_start(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_bbr *b = &c->bbr;

	if (!c->app_limited)
		return;
	b->idle_restart = true;
	b->ack_epoch_stamp_us = now_us;
	b->ack_epoch_acked = 0;
	if (b->mode == BBR_PROBE_BW)
		bbr_set_pacing_rate(c, bbr_bw(c), BBR_UNIT);
	else if (b->mode == BBR_PROBE_RTT)
		bbr_check_probe_rtt_done(c, now_us);
}

static void tcp_bbr_on_ack(struct tcp_conn *c, uint32_t acked, uint64_t now_us)
{
	(void)c;
	(void)acked;
	(void)now_us;	/* cong_control does it all */
}

static void tcp_bbr_get_info(const struct tcp_conn *c, struct tcp_cc_info *out)
{
	const struct tcp_bbr *b = &c->bbr;

	memset(out, 0, sizeof(*out));
	out->mode = b->mode < BBR_MODE_MAX ? bbr_mode_names[b->mode] : "?";
	out->bw = bbr_bw(c);
	out->min_rtt_us = b->min_rtt_us == UINT32_MAX ? 0 : b->min_rtt_us;
	out->pacing_gain = b->pacing_gain * 100 / BBR_UNIT;
	out->cwnd_gain = b->cwnd_gain * 100 / BBR_UNIT;
}

const struct tcp_cc_ops tcp_cc_bbr_ops = {
	.name = "bbr",
	.get_info = tcp_bbr_get_info,
	.cong_control = tcp_bbr_cong_control,
	.undo = tcp_bbr_undo,
	.on_tx_start = tcp_bbr_on_tx_start,
	.init = tcp_bbr_init,
	.on_ack = tcp_bbr_on_ack,
	.on_loss = tcp_bbr_on_loss,
	.on_rto = tcp_bbr_on_rto,
};
