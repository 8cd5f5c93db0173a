/* SPDX-License-Identifier: MIT */
/*
 * tcp_glue.h - a TCP engine (datapath/tcp/) joined to an IP layer: the
 * instance, time and timers (tcp_glue.c), input and ICMP errors
 * (tcp_rx.c), segment output with GSO (tcp_emit.c). Two instances run: the
 * outer stack's (st->tcp, tcp_outer.c: the network side) and the inner
 * side's, above it (the container side).
 */
#ifndef SANDNET_DATAPATH_NET_TCP_GLUE_H
#define SANDNET_DATAPATH_NET_TCP_GLUE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "datapath/net/net.h"
#include "datapath/tcp/tcp.h"

struct out;
struct tcp_glue;

/**
 * struct tcp_glue_counters - what one instance counts (`datapath stats`)
 * @copied:	segments whose payload was copied (ring wrap, unresolved hop)
 * @borrowed:	segments sent with a borrowed tail
 * @split:	on-wire segments cut from a larger one here (sw mode, or MSS pieces)
 * @gso_frames:	GSO frames emitted (the kernel segments them)
 * @csum_offloaded: segments sent with a partial checksum (NEEDS_CSUM, the TUN)
 * @emit_errors: segments the IP layer refused (no route, ...)
 * @rx_bad:	segments dropped before the engine (short, bad offset, options, checksum)
 * @pmtu_updates: ICMP errors about our TCP segments that lowered an MSS
 * @icmp_aborts: connection attempts ended by an ICMP error
 */
struct tcp_glue_counters {
	uint64_t copied, borrowed, split, gso_frames, csum_offloaded, emit_errors, rx_bad;
	uint64_t pmtu_updates, icmp_aborts;
};

/**
 * struct tcp_glue_ops - where an engine's segments go
 * @link_for:	the link a segment to @dst leaves by (its MTU and GSO mode
 *		decide the segment sizes), or NULL when none
 * @hop_ready:	will a frame to @dst leave with this turn's flush? (else its
 *		payload is copied: a neighbour queue may hold it longer)
 * @output:	a finished TCP segment (header at pkt_data()) to the IP layer;
 *		given. Return: as ipv4_output().
 */
struct tcp_glue_ops {
	struct link *(*link_for)(void *ctx, const struct net_addr *dst);
	bool (*hop_ready)(void *ctx, const struct net_addr *dst);
	int (*output)(void *ctx, struct pkt *p, const struct net_addr *src, const struct net_addr *dst);
};

/* One instance */
struct tcp_glue *tcp_glue_new(struct stack *st, const struct tcp_glue_ops *ops, void *ctx);
void tcp_glue_free(struct tcp_glue *g);
struct tcp_stack *tcp_glue_engine(const struct tcp_glue *g);
void tcp_glue_segment(struct tcp_glue *g, struct pkt *p, const struct net_addr *src,
		      const struct net_addr *dst);
void tcp_glue_turn_end(struct tcp_glue *g, bool quiet);
void tcp_glue_icmp(struct tcp_glue *g, uint8_t family, const struct pkt *p);
struct tcp_glue_counters *tcp_glue_counters(struct tcp_glue *g);
int tcp_icmp_errno(uint8_t family, uint8_t type, uint8_t code);

/* tcp_trace_queue.c: samples of traced connections for the control socket */
int tcp_glue_trace_start(struct tcp_glue *g, const struct tcp_trace_filter *f, uint32_t cap);
void tcp_glue_trace_stop(struct tcp_glue *g);
long tcp_glue_trace_drain(struct tcp_glue *g, void (*fn)(void *arg, const struct tcp_trace_sample *s), void *arg,
			  uint64_t *dropped);

/* tcp_stats.c: one instance's counters and connection table */
void tcp_glue_print(struct tcp_glue *g, struct out *o, const char *counters, const char *conns);
void tcp_glue_print_ss(struct tcp_glue *g, struct out *o, unsigned int shard, const char *engine);
void tcp_glue_trace_print(FILE *f, const struct tcp_trace_sample *s, unsigned int shard, const char *engine);

/* The outer stack's instance (st->tcp) */
int tcp_glue_init(struct stack *st);
void tcp_glue_fini(struct stack *st);
void tcp_glue_input(struct stack *st, struct link *l, struct pkt *p, const struct net_addr *src,
		    const struct net_addr *dst, bool to_bcast);
struct tcp_stack *tcp_glue_stack(const struct stack *st);
uint64_t tcp_glue_now_us(const struct stack *st);
void tcp_glue_conn_opts(const struct stack *st, uint8_t family, const struct net_addr *remote,
			struct tcp_conn_opts *o);
void tcp_glue_conn_opts_link(const struct link *l, uint8_t family, struct tcp_conn_opts *o);
int tcp_glue_pick_src(const struct stack *st, const struct net_addr *dst, struct net_addr *src);
void tcp_glue_icmp_error(struct stack *st, uint8_t family, const struct pkt *p);
void tcp_glue_print_stats(struct stack *st, struct out *o);

/* Address helpers */
const char *tcp_glue_endpoint_str(const struct tcp_endpoint *e, char *buf, size_t len);

#endif /* SANDNET_DATAPATH_NET_TCP_GLUE_H */
