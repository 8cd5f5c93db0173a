// SPDX-License-Identifier: MIT
/*
 * tcp_rate.c - delivery rate: how fast the path delivers this connection's
 * data, one sample per ACK (draft-cheng-iccrg-delivery-rate-estimation)
 *
 * Theory of operation
 *
 * The connection counts the bytes the peer acknowledged or SACKed
 * (C.delivered) and when that count last grew (C.delivered_time). Every
 * segment, when it leaves (again), takes a copy of that state into its
 * RACK record (tcp_rack.c keeps one record per MSS of what is in flight):
 * C.delivered, C.delivered_time, and C.first_sent_time, the send time of
 * the segment whose delivery began the current sampling interval. When the
 * flight is empty, a send starts a new interval (first_sent = delivered
 * time = now).
 *
 * On an ACK every newly delivered record adds its bytes to C.delivered;
 * the one sent last among them becomes the sample's segment P. The sample
 * is then the bytes delivered since P left, over the longer of
 *   send_elapsed = P.sent - P.first_sent   (how fast the data went out)
 *   ack_elapsed  = now - P.delivered_time  (how fast the ACKs came back),
 * the longer of the two because ACK compression or a burst can make either
 * one short. A sample over less than the minimum RTT is no sample (it
 * cannot be right). C.first_sent_time moves to P's send time, so the next
 * interval starts where this one ended.
 *
 * Application-limited: when the sender had less than a segment to send,
 * with room in cwnd and every lost segment resent (tcp_out.c calls
 * tcp_rate_check_app_limited() when it stops for want of data), the
 * connection is application-limited until what is in flight now is
 * delivered (C.app_limited holds that mark). Samples of segments sent in
 * that time are flagged: they measure the application, not the path, and
 * a bandwidth model (BBR) takes them only if they raise its estimate.
 *
 * What comes out: struct tcp_rate_sample in c->rs after each ACK (for the
 * congestion controller and the trace), the RTT sample of the ACK (the
 * earliest never-retransmitted segment it acknowledged, else the earliest
 * it SACKed: microseconds, where TCP timestamps tick in milliseconds), and
 * the connection's delivery rate as `ss -ti` shows it (the latest sample
 * not application-limited, or a larger one).
 *
 * Needs the RACK records; a connection whose records could not be kept
 * (rack_off) has no samples.
 */
#include "datapath/tcp/tcp_int.h"

/**
 * tcp_rate_stamp() - a segment leaves (again): copy the delivery state into
 * its record
 * @c: the connection (snd_max not yet advanced past the segment)
 * @r: its record, with xmit_us just set
 */
void tcp_rate_stamp(struct tcp_conn *c, struct tcp_rack_seg *r)
{
	if (c->snd_una == c->snd_max) {
		/* nothing in flight: a new sampling interval starts now */
		c->first_tx_us = r->xmit_us;
		c->delivered_us = r->xmit_us;
	}
	r->tx_delivered = c->delivered;
	r->tx_delivered_us = c->delivered_us;
	r->tx_first_us = c->first_tx_us;
	if (c->app_limited)
		r->flags |= TCP_RACK_APP_LIMITED;
	else
		r->flags &= ~TCP_RACK_APP_LIMITED;
}

/* Was record @r sent after the sample's segment so far? (by its send time) */
static bool tcp_rate_sent_later(const struct tcp_conn *c, const struct tcp_rack_seg *r)
{
	const struct tcp_rate_sample *rs = &c->rs;

	if (!rs->prior_us)
		return true;
	return r->xmit_us > c->first_tx_us || (r->xmit_us == c->first_tx_us && r->tx_delivered > rs->prior_delivered);
}

/**
 * tcp_rate_delivered() - a record was newly acknowledged or SACKed
 * @c: the connection
 * @r: the record (its bytes count once: the caller passes it only when it
 *     was not delivered before)
 * @now_us: the time
 */
void tcp_rate_delivered(struct tcp_conn *c, const struct tcp_rack_seg *r, uint64_t now_us)
{
	struct tcp_rate_sample *rs = &c->rs;
	uint32_t len = r->end - r->start;

	if (!r->tx_delivered_us && !r->tx_first_us && !r->xmit_us)
		return;	/* never stamped (cannot happen: every record is) */
	c->delivered += len;
	c->delivered_us = now_us;
	rs->acked_sacked += len;
	if (tcp_rate_sent_later(c, r)) {
		rs->prior_delivered = r->tx_delivered;
		rs->prior_us = r->tx_delivered_us ? r->tx_delivered_us : 1;
		rs->is_app_limited = r->flags & TCP_RACK_APP_LIMITED;
		rs->send_elapsed_us = (int64_t)(r->xmit_us - r->tx_first_us);
		c->first_tx_us = r->xmit_us;
	}
}

/**
 * tcp_rate_ack_begin() - an ACK is about to be processed: a fresh sample
 * @c: the connection
 */
void tcp_rate_ack_begin(struct tcp_conn *c)
{
	memset(&c->rs, 0, sizeof(c->rs));
	c->rs.interval_us = -1;
	c->rs.rtt_us = -1;
	c->rs.prior_in_flight = tcp_sack_pipe(c);
	c->rs.losses = (uint32_t)c->lost_total;	/* the difference is taken at the end */
	c->ack_first_acked_us = 0;
	c->ack_first_sacked_us = 0;
	c->ack_karn = false;
}

/**
 * tcp_rate_ack_end() - the ACK was processed: finish its sample
 * @c: the connection
 * @now_us: the time
 */
void tcp_rate_ack_end(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_rate_sample *rs = &c->rs;
	int64_t ack_elapsed;

	rs->losses = (uint32_t)c->lost_total - rs->losses;
	if (c->ack_first_acked_us && !c->ack_karn)
		rs->rtt_us = (int64_t)(now_us - c->ack_first_acked_us);
	else if (c->ack_first_sacked_us)
		rs->rtt_us = (int64_t)(now_us - c->ack_first_sacked_us);	/* as tcp_in.c took it */
	/* the application-limited time ends once its flight is delivered */
	if (c->app_limited && c->delivered > c->app_limited)
		c->app_limited = 0;
	if (!rs->prior_us)
		return;
	rs->delivered = c->delivered - rs->prior_delivered;
	ack_elapsed = (int64_t)(c->delivered_us - rs->prior_us);
	rs->interval_us = rs->send_elapsed_us > ack_elapsed ? rs->send_elapsed_us : ack_elapsed;
	/* shorter than a round trip: an artefact of ACK compression, not the path */
	if (rs->interval_us <= 0 || (c->rack_min_rtt_us && rs->interval_us < (int64_t)c->rack_min_rtt_us) ||
	    !rs->delivered) {
		rs->interval_us = -1;
		return;
	}
	/* what `ss -ti` calls delivery_rate: the latest sample the application did not limit, or a larger one */
	if (!rs->is_app_limited ||
	    rs->delivered * c->rate_interval_us >= c->rate_delivered * (uint64_t)rs->interval_us) {
		c->rate_delivered = rs->delivered;
		c->rate_interval_us = (uint64_t)rs->interval_us;
	}
}

/**
 * tcp_rate_check_app_limited() - the sender stopped: was it for want of data?
 * @c: the connection
 * @unsent: bytes buffered but not sent yet
 * @pipe: bytes in flight (tcp_sack_pipe())
 *
 * With less than a segment unsent, room in cwnd, and every lost segment
 * resent, the flight is the application's doing: the samples of what is
 * sent until it is delivered are flagged application-limited.
 */
void tcp_rate_check_app_limited(struct tcp_conn *c, uint32_t unsent, uint32_t pipe)
{
	if (unsent >= c->snd_mss || (uint64_t)pipe >= (uint64_t)c->cwnd * c->snd_mss || c->rack_lost_bytes)
		return;
	c->app_limited = c->delivered + pipe ? c->delivered + pipe : 1;
}

/**
 * tcp_rate_delivery_bps() - the connection's delivery rate (`ss -ti`)
 * @c: the connection
 *
 * Return: bytes per second, 0 before the first sample.
 */
uint64_t tcp_rate_delivery_bps(const struct tcp_conn *c)
{
	if (!c->rate_interval_us)
		return 0;
	return c->rate_delivered * 1000000 / c->rate_interval_us;
}
