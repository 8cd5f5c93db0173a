/* SPDX-License-Identifier: MIT */
/*
 * tcp_glue_int.h - inside an instance of tcp_glue.h: the instance itself,
 * the TCP header on the wire, the pseudo-header sum; shared by tcp_glue.c
 * (the instance, time, timers), tcp_emit.c (output) and tcp_rx.c (input)
 */
#ifndef SANDNET_DATAPATH_NET_TCP_GLUE_INT_H
#define SANDNET_DATAPATH_NET_TCP_GLUE_INT_H

#include "datapath/net/net.h"
#include "datapath/net/tcp_glue.h"

/**
 * struct tcp_glue - one engine and what joins it to its IP layer
 * @st:		the stack: loop, drops, counters
 * @ops, @ctx:	where segments go
 * @tcp:	the engine
 * @timer:	fires at the engine's next deadline
 * @armed_us:	deadline @timer is armed for, UINT64_MAX if none
 * @c:		counters
 */
struct tcp_glue {
	struct stack *st;
	const struct tcp_glue_ops *ops;
	void *ctx;
	struct tcp_stack *tcp;
	struct loop_timer timer;
	uint64_t armed_us;
	struct tcp_glue_counters c;
	struct tcp_trace_queue *trace;	/* tcp_trace_queue.c, NULL: no trace */
};

/* The TCP header on the wire (RFC 9293 3.1), network order. */
struct tcp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t doff;		/* data offset in the high 4 bits */
	uint8_t flags;
	uint16_t wnd;
	uint16_t csum;
	uint16_t urg;
} __attribute__((packed));

/* The pseudo-header accumulator of a segment of @l4_len bytes. */
static inline uint32_t tcp_glue_pseudo(const struct net_addr *s, const struct net_addr *d, uint32_t l4_len)
{
	return s->family == AF_INET ? csum_pseudo4(s->a.v4, d->a.v4, IPPROTO_TCP, l4_len) :
				      csum_pseudo6(&s->a.v6, &d->a.v6, IPPROTO_TCP, l4_len);
}

/* tcp_emit.c */
int tcp_glue_emit(void *ctx, const struct tcp_seg_out *seg);

#endif /* SANDNET_DATAPATH_NET_TCP_GLUE_INT_H */
