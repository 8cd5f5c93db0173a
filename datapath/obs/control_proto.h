/* SPDX-License-Identifier: MIT */
/*
 * control_proto.h - the words of the control socket, for both its ends:
 * control.c and control_tcp.c answer them, control_client.c and
 * metrics_scrape.c ask (docs/datapath.md, "Statistics")
 */
#ifndef SANDNET_DATAPATH_CONTROL_PROTO_H
#define SANDNET_DATAPATH_CONTROL_PROTO_H

#include <sys/socket.h>
#include <sys/time.h>

#define CONTROL_REQ_STATS		"stats\n"
#define CONTROL_REQ_STATS_JSON		"stats json\n"
#define CONTROL_REQ_SUMMARY		"summary\n"
#define CONTROL_REQ_SUMMARY_JSON	"summary json\n"
/* `datapath ss` (control_tcp.c); these are the lines without their newline */
#define CONTROL_REQ_CONNS		"conns"
#define CONTROL_REQ_CONNS_JSON		"conns json"
#define CONTROL_REQ_TRACE_START		"trace start"	/* then " FILTER" */
#define CONTROL_REQ_TRACE_READ		"trace read"
#define CONTROL_REQ_TRACE_STOP		"trace stop"
/* `datapath flows --follow`: the connection stays, and gets a record a line as each conversation ends */
#define CONTROL_REQ_FLOWS_FOLLOW	"flows follow"

/* The longest request line, its newline included. */
#define CONTROL_REQ_LINE_MAX		128

/* An answer that is not the document asked for starts with this. */
#define CONTROL_ERROR			"error:"
/* ...and with this when a shard did not stop to be read in time: ask again. */
#define CONTROL_BUSY			"error: busy:"

/*
 * How long an asker waits for an answer, in ms. A datapath answers once its
 * shards stop to be read, or busy after SHARD_PARK_MS; a request queued
 * behind another's pause can wait that twice. Waiting less turns a busy
 * answer into a timeout of our own (control.c asserts the margin).
 */
#define CONTROL_ANSWER_WAIT_MS		3000

/* `datapath ss --trace` reads this often; a trace nobody read for the second stops by itself. */
#define CONTROL_TRACE_POLL_MS		50u
#define CONTROL_TRACE_IDLE_MS		10000u

/* Either end's socket: sending gives up after a second, receiving after @rcv_s. */
static inline void control_sock_timeouts(int fd, time_t rcv_s)
{
	struct timeval tv = { .tv_sec = 1 }, rcv = { .tv_sec = rcv_s };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

#endif /* SANDNET_DATAPATH_CONTROL_PROTO_H */
