// SPDX-License-Identifier: MIT
/*
 * tcp_cc_cubic.c - CUBIC congestion control (RFC 9438), the default
 *
 * Theory of operation
 *
 * cwnd (MSS units) follows W_cubic(t) = C * (t - K)^3 + W_max after each
 * congestion event, t the time since the congestion avoidance epoch began,
 * K = cbrt((W_max - cwnd_epoch) / C), C = 0.4, beta = 0.7 (4.2). Each ACK
 * moves cwnd toward the target W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd]
 * (4.4), increasing by (target - cwnd) / cwnd per MSS acknowledged. The
 * Reno-friendly estimate W_est (4.3) grows by alpha_cubic per cwnd of
 * acknowledged data (alpha = 3(1 - beta)/(1 + beta) below W_max, 1 above)
 * and wins when larger. On loss: fast convergence (4.7) lowers W_max when
 * cwnd never got back to it, ssthresh = max(beta * cwnd, 2). Slow start is
 * Reno's, with HyStart++ (tcp_cc_hystart.c). Floating point is fine here
 * (user space); the cube root is a few Newton steps so we need no libm.
 */
#include "datapath/tcp/tcp_int.h"

#define CUBIC_C		0.4
#define CUBIC_BETA	0.7


static double tcp_cubic_cbrt(double x)
{
	double y = x > 1 ? x / 3 : 1;
	int i;

	if (x <= 0)
		return 0;
	for (i = 0; i < 60; i++) {
		double n = y - (y * y * y - x) / (3 * y * y);

		if (n == y)
			break;
		y = n;
	}
	return y;
}

static void tcp_cubic_init(struct tcp_conn *c)
{
	c->cwnd_acc = 0;
	c->cubic_wmax = 0;
	c->cubic_k = 0;
	c->cubic_west = 0;
	c->cubic_acc = 0;
	c->cubic_epoch_us = 0;
}

static void tcp_cubic_on_ack(struct tcp_conn *c, uint32_t acked, uint64_t now_us)
{
	double t, target, segs, alpha;

	acked = tcp_cc_slow_start(c, acked);
	if (!acked)
		return;
	segs = (double)acked / c->snd_mss;
	if (!c->cubic_epoch_us) {
		c->cubic_epoch_us = now_us ? now_us : 1;
		if (c->cubic_wmax < c->cwnd)
			c->cubic_wmax = c->cwnd;
		c->cubic_k = tcp_cubic_cbrt((c->cubic_wmax - c->cwnd) / CUBIC_C);
		c->cubic_west = c->cwnd;
		c->cubic_acc = 0;
	}
	t = (double)(now_us - c->cubic_epoch_us + c->srtt_us) / 1e6 - c->cubic_k;
	target = CUBIC_C * t * t * t + c->cubic_wmax;
	if (target < c->cwnd)
		target = c->cwnd;
	if (target > 1.5 * c->cwnd)
		target = 1.5 * c->cwnd;
	alpha = c->cubic_west < c->cubic_wmax ? 3 * (1 - CUBIC_BETA) / (1 + CUBIC_BETA) : 1;
	c->cubic_west += alpha * segs / c->cwnd;
	if (c->cubic_west > target)
		target = c->cubic_west;
	c->cubic_acc += (target - c->cwnd) / c->cwnd * segs;
	while (c->cubic_acc >= 1 && c->cwnd < (1u << 20)) {
		c->cubic_acc -= 1;
		c->cwnd++;
	}
}

static void tcp_cubic_on_loss(struct tcp_conn *c, uint64_t now_us)
{
	double w = c->cwnd;

	(void)now_us;
	c->cubic_epoch_us = 0;
	c->cubic_wmax = w < c->cubic_wmax ? w * (1 + CUBIC_BETA) / 2 : w;
	c->ssthresh = (uint32_t)(w * CUBIC_BETA);
	if (c->ssthresh < 2)
		c->ssthresh = 2;
}

static void tcp_cubic_on_rto(struct tcp_conn *c, uint64_t now_us)
{
	tcp_cubic_on_loss(c, now_us);
	c->cwnd = 1;
	c->cwnd_acc = 0;
}

const struct tcp_cc_ops tcp_cc_cubic_ops = {
	.name = "cubic",
	.init = tcp_cubic_init,
	.on_ack = tcp_cubic_on_ack,
	.on_loss = tcp_cubic_on_loss,
	.on_rto = tcp_cubic_on_rto,
};
