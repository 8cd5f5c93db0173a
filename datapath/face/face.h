/* SPDX-License-Identifier: MIT */
/*
 * face.h - the container face: the container's own programs get their whole
 * network from the stack (theory of operation in face.c)
 */
#ifndef SANDNET_DATAPATH_FACE_H
#define SANDNET_DATAPATH_FACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datapath/net/net.h"

struct face;
struct out;
struct tcp_glue;
struct tcp_stack;

/**
 * struct face_totals - what an operator sees of one container (`datapath stats --all`)
 * @tcp_outbound:	connections the container opened; @tcp_inbound: the network did
 * @udp_flows:		UDP flows either side opened
 * @drops:		packets dropped, every reason (the policy's refusals included)
 * @tcp_open:		connection pairs open now; @udp_flows_open: UDP flows open now
 * @udp_held_to_container, @udp_held_to_network: UDP datagrams (or GSO
 *			frames) the pacer held for their time, each way
 * @udp_overruns_to_container, @udp_overruns_to_network: of those, sent
 *			before their time (held too long, or too much held)
 * @dns_passed, @dns_refused: the container's DNS queries the names policy let
 *			go to their resolver, and refused (docs/face.md "Names")
 * @dns_bound:		addresses the answers bound to allowed names
 * @names_passed, @names_refused: TCP connections whose first bytes were read
 *			for the name they give, let through and reset
 */
struct face_totals {
	uint64_t tcp_outbound, tcp_inbound, udp_flows, drops;
	uint64_t tcp_open, udp_flows_open;
	uint64_t udp_held_to_container, udp_held_to_network;
	uint64_t udp_overruns_to_container, udp_overruns_to_network;
	uint64_t dns_passed, dns_refused, dns_bound;
	uint64_t names_passed, names_refused;
};

/**
 * struct face_netstat - what the container's own kernel dropped (face_netstat.c)
 * @udp_in_errors:	its UDP sockets' InErrors, IPv4 and IPv6 (a full
 *			receive buffer among them)
 * @udp_rcvbuf_errors:	of those, for a full receive buffer
 * @udp_sndbuf_errors:	datagrams its sockets could not send for buffer space
 * @tun_tx_dropped:	packets its face TUNs' queues toward the datapath dropped
 * @tun_rx_dropped:	packets from the datapath its TUNs' backlog dropped
 */
struct face_netstat {
	uint64_t udp_in_errors, udp_rcvbuf_errors, udp_sndbuf_errors;
	uint64_t tun_tx_dropped, tun_rx_dropped;
};

extern const struct stat_table face_totals_table;	/* its rows, described (counters.h) */
extern const struct stat_table face_netstat_table;
void face_totals(const struct face *f, struct face_totals *t);
int face_netstat_read_all(const struct face *f, struct face_netstat *k);
void face_netstat_parse(const char *snmp, const char *snmp6, const char *dev, const char *ifname,
			struct face_netstat *k);
void face_drops_foreach(const struct face *f, void (*fn)(const char *reason, uint64_t n, void *arg), void *arg);
int face_add(struct stack *st, struct link *outer, struct proto_face *cfg, char *err, size_t err_len);
struct face *face_of(const struct stack *st);
int face_start(struct face *f);
void face_print_stats(struct face *f, struct out *o);
struct tcp_stack *face_tcp_engine(const struct face *f);
struct tcp_glue *face_tcp_glue(const struct face *f);
unsigned int face_tcp_reset_orphans(struct face *f);
void face_tcp_stop(struct face *f);

#endif /* SANDNET_DATAPATH_FACE_H */
