/* SPDX-License-Identifier: MIT */
/*
 * svc_udp_int.h - what the files of the UDP services share and nobody else
 * sees: svc_udp.c (the services), svc_udp_flow.c (their flows and caps),
 * svc_udp_pump.c (datagrams in batches); theory of operation in each
 */
#ifndef SANDNET_DATAPATH_SVC_UDP_INT_H
#define SANDNET_DATAPATH_SVC_UDP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "datapath/flow.h"
#include "datapath/svc/svc.h"

#define SVC_UDP_SWEEP_MS	1000
#define SVC_UDP_BATCH		64
#define SVC_UDP_BUF		65536

/**
 * struct svc_flow - one remote party of a service (svc_udp_flow.c)
 * @fd, @lfd:	publish: the host socket connected to TARGET
 * @peer, @peer_port, @local: publish: who sent, to which container address
 * @us:		forward: its own stack socket
 * @client, @client_len: forward: the local client
 */
struct svc_flow {
	struct svc_flow *next;
	struct loop_defer defer;		/* freed at the end of the turn */
	struct flow flow;			/* in its stack's flow table, FLOW_SVC_UDP */
	struct svc_udp *svc;
	/* publish */
	int fd;
	struct loop_fd lfd;
	struct net_addr peer;
	uint16_t peer_port;
	struct net_addr local;
	/* forward */
	struct udp_sock *us;
	struct sockaddr_storage client;
	socklen_t client_len;
};

/* One UDP service (svc_udp.c), its flows and its counters. */
struct svc_udp {
	struct svc_spec spec;
	struct svc_udp_table *tbl;
	struct stack *st;
	struct udp_sock *us;		/* publish */
	int listen_fd;			/* forward */
	bool listen_owned;		/* bound here, not by the supervisor */
	struct loop_fd lfd;
	bool started;
	struct svc_flow *flows;
	unsigned int n_flows;
	struct loop_timer sweep;
	uint64_t to_target, from_target, errors, flows_created;
	uint64_t host_syscalls_in, host_syscalls_out;
	uint64_t gso_sends, gso_datagrams;	/* runs handed to udp_sendto_gso() */
	uint64_t host_gso_sends, host_gso_datagrams;	/* UDP_SEGMENT sends to the backend */
	bool host_gso_off;		/* the host refused UDP GSO once: one by one */
	uint64_t source_cap_hits;	/* new flows that recycled their source's oldest */
	uint64_t flows_evicted;		/* flows closed at the total cap */
};

/* A datagram on its way to a host socket, flushed by svc_udp_flush(). */
struct svc_txq_entry {
	struct svc_flow *flow;
	struct pkt *p;
};

/**
 * struct svc_udp_table - what the UDP services of one stack share
 * @st:		the stack
 * @cap_hits:	new flows that found the total cap reached
 * @rxbuf:	receive buffers for recvmmsg() (SVC_UDP_BATCH of SVC_UDP_BUF;
 *		only the pages datagrams touch are ever faulted in)
 * @txq:	datagrams on their way to host sockets, @txq_len of them
 * @from:	the senders of a forward's recvmmsg() batch
 */
struct svc_udp_table {
	struct stack *st;
	uint64_t cap_hits;
	uint8_t (*rxbuf)[SVC_UDP_BUF];
	struct svc_txq_entry txq[SVC_UDP_BATCH];
	unsigned int txq_len;
	struct sockaddr_storage from[SVC_UDP_BATCH];
};

/* svc_udp_flow.c */
struct svc_flow *svc_flow_find_pub(struct svc_udp *s, const struct net_addr *src, uint16_t sport,
				   const struct net_addr *dst, uint64_t *hash);
struct svc_flow *svc_flow_find_fwd(struct svc_udp *s, const struct sockaddr_storage *client, socklen_t len,
				   uint64_t *hash);
void svc_flow_touch(struct svc_flow *f);
void svc_flow_link(struct svc_udp *s, struct svc_flow *f, uint64_t hash);
void svc_flow_free(struct svc_flow *f);
void svc_flow_make_room(struct svc_udp *s);
void svc_flow_source_room(struct svc_udp *s, const struct net_addr *src);
void svc_flow_sweep(struct loop_timer *t);

/* svc_udp_pump.c */
void svc_pump_rx_prepare(struct svc_udp_table *t, struct mmsghdr *m, struct iovec *iov,
			 struct sockaddr_storage *from);
void svc_pump_to_host(struct svc_udp *s, struct svc_flow *f, const uint8_t *data, size_t len);
int svc_pump_run(const struct mmsghdr *m, int i, int n, const struct sockaddr_storage *from);
unsigned int svc_pump_to_stack(struct svc_udp *s, struct udp_sock *us, const struct net_addr *src,
			       const struct net_addr *dst, uint16_t dport, const struct mmsghdr *m, int i,
			       int end);

#endif /* SANDNET_DATAPATH_SVC_UDP_INT_H */
