// SPDX-License-Identifier: MIT
/*
 * tcp_pace.c - pacing: a connection's segments leave spread over the round
 * trip at its pacing rate, not as one burst per ACK
 *
 * Theory of operation
 *
 * A window sent at once lands in the bottleneck's queue at once: a shallow
 * queue drops its tail, a deep one adds a round trip of delay. Pacing
 * spreads it: every connection has a pacing rate (bytes/s) and an earliest
 * departure time for its next segment (pace_next_us, the "earliest
 * departure time" model of Linux's internal pacing and its fq qdisc). A
 * send of N bytes moves that time N / rate further; a send may go when the
 * time has come, give or take TCP_PACE_SLACK_US; otherwise the connection
 * waits for its pacing timer (t_pace_us, tcp_timer.c), to the microsecond
 * (the datapath's engine timer is precise, loop.c). Time not used does not
 * accumulate: after an idle period the next segment leaves at once, not a
 * burst of credit.
 *
 * How much one send may carry (tcp_pace_quantum()): about a millisecond
 * at the pacing rate, at least two segments, at most the link's GSO size,
 * as Linux sizes its TSO frames (tcp_tso_autosize()). A GSO frame leaves
 * back to back on the wire, so this bounds every burst to a millisecond of
 * data. The slack lets a turn of the loop send what fell due while it ran
 * (the engine's clock is read once per turn): the burst after a late turn
 * is at most TCP_PACE_SLACK_US more.
 *
 * The rate: a congestion controller that models the path (BBR) sets it
 * itself. For the others it follows Linux's tcp_update_pacing_rate():
 * cwnd * MSS / SRTT, times 2 in slow start (cwnd below half of ssthresh: the
 * window doubles each round trip, the rate must lead it) and 1.2 after.
 * Without an RTT sample there is no rate, and nothing is paced (the
 * handshake and the first window leave as they come, as in Linux). On a
 * path whose round trip is microseconds (a veth) the rate is so high that
 * pacing never holds a segment back.
 *
 * Retransmissions are paced like new data; pure ACKs, probes (tail loss,
 * zero window, keepalive) and SYNs are not.
 */
#include "datapath/tcp/tcp_int.h"

#define TCP_PACE_SLACK_US	1000u	/* a send may go this early */
#define TCP_PACE_QUANTUM_US	1000u	/* one send carries this much time at the rate */
#define TCP_PACE_SS_PCT		200u	/* the rate over cwnd / SRTT in slow start */
#define TCP_PACE_CA_PCT		120u	/* ... and after it */

/**
 * tcp_pace_update_rate() - the pacing rate from cwnd and SRTT
 * @c: the connection, its controller not one that sets the rate itself
 */
void tcp_pace_update_rate(struct tcp_conn *c)
{
	uint64_t rate;

	if (c->opts.no_pacing || !c->srtt_us) {
		c->pacing_rate = 0;
		return;
	}
	rate = (uint64_t)c->snd_mss * 1000000 / c->srtt_us;
	rate *= c->cwnd < c->ssthresh / 2 ? TCP_PACE_SS_PCT : TCP_PACE_CA_PCT;
	rate = rate / 100 * c->cwnd;
	c->pacing_rate = rate ? rate : 1;
}

/**
 * tcp_pace_quantum() - the most one send may carry
 * @c: the connection
 *
 * Return: bytes: the link's GSO size when not paced, else about
 * TCP_PACE_QUANTUM_US at the pacing rate in whole segments, at least two.
 */
uint32_t tcp_pace_quantum(const struct tcp_conn *c)
{
	uint64_t q;

	if (!c->pacing_rate)
		return c->gso_max_bytes;
	q = c->pacing_rate * TCP_PACE_QUANTUM_US / 1000000;
	if (q < 2 * (uint64_t)c->snd_mss)
		q = 2 * (uint64_t)c->snd_mss;
	if (q > c->gso_max_bytes)
		q = c->gso_max_bytes;
	return (uint32_t)(q - q % c->snd_mss);	/* gso_max_bytes >= snd_mss: never 0 */
}

/**
 * tcp_pace_wait() - must the next send wait for its departure time?
 * @c: the connection
 * @now_us: the time
 *
 * Arms the pacing timer for when it may go.
 *
 * Return: true when it must wait.
 */
bool tcp_pace_wait(struct tcp_conn *c, uint64_t now_us)
{
	if (!c->pacing_rate || c->pace_next_us <= now_us + TCP_PACE_SLACK_US)
		return false;
	if (c->t_pace_us != c->pace_next_us - TCP_PACE_SLACK_US) {
		c->t_pace_us = c->pace_next_us - TCP_PACE_SLACK_US;
		tcp_timer_update(c);
	}
	return true;
}

/**
 * tcp_pace_sent() - @bytes left now: the next may leave that much later
 * @c: the connection
 * @bytes: sequence space just sent
 * @now_us: the time
 */
void tcp_pace_sent(struct tcp_conn *c, uint32_t bytes, uint64_t now_us)
{
	if (!c->pacing_rate || !bytes)
		return;
	if (c->pace_next_us < now_us)
		c->pace_next_us = now_us;	/* idle time gives no credit */
	c->pace_next_us += (uint64_t)bytes * 1000000 / c->pacing_rate;
}

/**
 * tcp_pace_timer() - the pacing timer fired: send what is due
 * @c: the connection
 * @now_us: the time
 */
void tcp_pace_timer(struct tcp_conn *c, uint64_t now_us)
{
	c->t_pace_us = TCP_NO_DEADLINE;
	tcp_out_push(c, now_us);
}
