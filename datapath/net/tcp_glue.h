/* SPDX-License-Identifier: MIT */
/*
 * tcp_glue.h - the TCP engine (datapath/tcp/) joined to the stack: IP input
 * and output, time, timers, MSS from the route (theory of operation in
 * tcp_glue.c)
 */
#ifndef SANDNET_DATAPATH_NET_TCP_GLUE_H
#define SANDNET_DATAPATH_NET_TCP_GLUE_H

#include <stdbool.h>
#include <stdint.h>

#include "datapath/net/net.h"
#include "datapath/tcp/tcp.h"

struct out;

int tcp_glue_init(struct stack *st);
void tcp_glue_fini(struct stack *st);
void tcp_glue_input(struct stack *st, struct link *l, struct pkt *p, const struct net_addr *src,
		    const struct net_addr *dst, bool to_bcast);
struct tcp_stack *tcp_glue_stack(const struct stack *st);
uint64_t tcp_glue_now_us(const struct stack *st);
void tcp_glue_conn_opts(const struct stack *st, uint8_t family, const struct net_addr *remote,
			struct tcp_conn_opts *o);
uint32_t tcp_glue_gso_bytes(const struct link *l, uint8_t family, uint32_t mss);
int tcp_glue_pick_src(const struct stack *st, const struct net_addr *dst, struct tcp_addr *src);
void tcp_glue_addr_from(struct tcp_addr *t, const struct net_addr *a);
const char *tcp_glue_endpoint_str(const struct tcp_endpoint *e, char *buf, size_t len);
void tcp_glue_print_stats(struct stack *st, struct out *o);
bool tcp_glue_tx_quiet(struct stack *st);
void tcp_glue_icmp_error(struct stack *st, uint8_t family, const struct pkt *p);

#endif /* SANDNET_DATAPATH_NET_TCP_GLUE_H */
