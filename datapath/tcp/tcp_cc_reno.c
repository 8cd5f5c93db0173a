// SPDX-License-Identifier: MIT
/*
 * tcp_cc_reno.c - Reno congestion control (RFC 5681), cwnd in MSS units
 *
 * Theory of operation
 *
 * Slow start adds one MSS per MSS acknowledged (byte counting, RFC 3465,
 * without the L limit: GSO-sized ACKs are normal here), a quarter of that
 * in HyStart++'s Conservative Slow Start (tcp_cc_hystart.c); congestion avoidance
 * adds one MSS per cwnd's worth of acknowledged bytes. A fast retransmit
 * sets ssthresh = max(FlightSize / 2, 2) (RFC 5681 (4)); an RTO does the
 * same and sets cwnd to one segment. Recovery itself (pipe, inflation)
 * lives in tcp_recovery.c; the controller is not called during it.
 */
#include "datapath/tcp/tcp_int.h"

#define TCP_CWND_MAX	(1u << 20)

static void tcp_reno_init(struct tcp_conn *c)
{
	c->cwnd_acc = 0;
}

/**
 * tcp_cc_slow_start() - slow-start growth shared by the controllers
 * @c: the connection
 * @acked: bytes newly acknowledged
 *
 * Return: bytes left over once cwnd reached ssthresh.
 */
uint32_t tcp_cc_slow_start(struct tcp_conn *c, uint32_t acked)
{
	if (c->cwnd < c->ssthresh && c->hs_css) {
		/* HyStart++ CSS (tcp_cc_hystart.c): a quarter of the growth */
		acked = tcp_hystart_growth(c, acked);
		if (!acked)
			return 0;
	}
	while (acked && c->cwnd < c->ssthresh && c->cwnd < TCP_CWND_MAX) {
		uint32_t need = c->snd_mss - c->cwnd_acc;

		if (acked < need) {
			c->cwnd_acc += acked;
			return 0;
		}
		acked -= need;
		c->cwnd_acc = 0;
		c->cwnd++;
	}
	return acked;
}

static void tcp_reno_on_ack(struct tcp_conn *c, uint32_t acked, uint64_t now_us)
{
	(void)now_us;
	acked = tcp_cc_slow_start(c, acked);
	if (!acked || c->cwnd >= TCP_CWND_MAX)
		return;
	c->cwnd_acc += acked;
	while (c->cwnd_acc >= c->cwnd * c->snd_mss) {
		c->cwnd_acc -= c->cwnd * c->snd_mss;
		c->cwnd++;
	}
}

static void tcp_reno_on_loss(struct tcp_conn *c, uint64_t now_us)
{
	uint32_t flight = (c->snd_max - c->snd_una) / c->snd_mss;

	(void)now_us;
	c->ssthresh = flight / 2 > 2 ? flight / 2 : 2;
}

static void tcp_reno_on_rto(struct tcp_conn *c, uint64_t now_us)
{
	tcp_reno_on_loss(c, now_us);
	c->cwnd = 1;
	c->cwnd_acc = 0;
}

const struct tcp_cc_ops tcp_cc_reno_ops = {
	.name = "reno",
	.init = tcp_reno_init,
	.on_ack = tcp_reno_on_ack,
	.on_loss = tcp_reno_on_loss,
	.on_rto = tcp_reno_on_rto,
};
