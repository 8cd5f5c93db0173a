// SPDX-License-Identifier: MIT
/*
 * tcp_cc_hystart.c - HyStart++ (RFC 9406): leave slow start before the loss
 *
 * Theory of operation
 *
 * Slow start doubles cwnd every round trip until a loss, which at a
 * bottleneck means a queue's worth of losses at once. HyStart++ watches the
 * RTT instead: per round (a round ends with the first ACK beyond what was
 * outstanding when it began) it keeps the minimum of the RTT samples, and
 * once a round has N_RTT_SAMPLE (8) samples and its minimum exceeds the
 * last round's by RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms), the
 * queue is building: Conservative Slow Start (CSS) follows, growing cwnd a
 * quarter as fast, for CSS_ROUNDS (5) rounds, after which ssthresh = cwnd
 * (congestion avoidance). If a CSS round sees an RTT below the one that
 * started CSS, the increase was spurious and slow start resumes.
 *
 * Only the first slow start of a connection uses it (ssthresh still at its
 * initial value), as RFC 9406 4.3 recommends; after a loss or an RTO slow
 * start runs up to ssthresh as before. The controllers share it through
 * tcp_cc_slow_start(). The L limit on the increase per ACK is not applied
 * (GSO-sized ACKs are normal here, see tcp_cc_reno.c).
 */
#include "datapath/tcp/tcp_int.h"

#define HS_MIN_RTT_THRESH_US	4000u
#define HS_MAX_RTT_THRESH_US	16000u
#define HS_MIN_RTT_DIVISOR	8u
#define HS_N_RTT_SAMPLE		8u
#define HS_CSS_GROWTH_DIVISOR	4u
#define HS_CSS_ROUNDS		5u

static bool tcp_hystart_active(const struct tcp_conn *c)
{
	return !c->cc->cong_control && c->ssthresh == TCP_SSTHRESH_INIT && c->cwnd < c->ssthresh;
}

/**
 * tcp_hystart_rtt() - feed one RTT sample to HyStart++ (RFC 9406 4.2)
 * @c: the connection (snd_una already advanced by the ACK)
 * @rtt_us: the sample
 */
void tcp_hystart_rtt(struct tcp_conn *c, uint32_t rtt_us)
{
	if (!tcp_hystart_active(c))
		return;
	if (!c->hs_round_on || seq_gt(c->snd_una, c->hs_round_end)) {
		/* a new round */
		if (c->hs_round_on && c->hs_css) {
			if (c->hs_cur_min_us && c->hs_cur_min_us < c->hs_css_base_us) {
				c->hs_css = false;	/* spurious: back to slow start */
			} else if (++c->hs_css_rounds >= HS_CSS_ROUNDS) {
				c->hs_css = false;
				c->ssthresh = c->cwnd;	/* congestion avoidance */
				return;
			}
		}
		c->hs_round_on = true;
		c->hs_round_end = c->snd_max;
		c->hs_last_min_us = c->hs_cur_min_us;
		c->hs_cur_min_us = 0;
		c->hs_samples = 0;
	}
	if (!c->hs_cur_min_us || rtt_us < c->hs_cur_min_us)
		c->hs_cur_min_us = rtt_us;
	c->hs_samples++;
	if (!c->hs_css && c->hs_samples >= HS_N_RTT_SAMPLE && c->hs_last_min_us) {
		uint32_t thresh = c->hs_last_min_us / HS_MIN_RTT_DIVISOR;

		if (thresh < HS_MIN_RTT_THRESH_US)
			thresh = HS_MIN_RTT_THRESH_US;
		if (thresh > HS_MAX_RTT_THRESH_US)
			thresh = HS_MAX_RTT_THRESH_US;
		if (c->hs_cur_min_us >= c->hs_last_min_us + thresh) {
			c->hs_css = true;
			c->hs_css_base_us = c->hs_cur_min_us;
			c->hs_css_rounds = 0;
			c->hs_css_entries++;
		}
	}
}

/**
 * tcp_hystart_growth() - what slow start may add for @acked bytes
 * @c: the connection
 * @acked: bytes newly acknowledged
 *
 * Return: @acked, or a quarter of it during Conservative Slow Start.
 */
uint32_t tcp_hystart_growth(const struct tcp_conn *c, uint32_t acked)
{
	return c->hs_css && tcp_hystart_active(c) ? acked / HS_CSS_GROWTH_DIVISOR : acked;
}
