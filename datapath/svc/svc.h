/* SPDX-License-Identifier: MIT */
/*
 * svc.h - services: the endpoints that give the stack something to serve
 *
 *   --publish PROTO:[ADDR:]PORT=TARGET	stack port -> TARGET in our netns
 *   --forward PROTO:LISTEN=REMOTE		local socket -> REMOTE through the stack
 *
 * svc_spec.c parses the SPEC grammar (docs/datapath.md), svc_udp.c runs UDP
 * services (svc_udp_flow.c their flows, svc_udp_pump.c their datagrams;
 * svc_udp_int.h what those three share), svc_tcp.c TCP ones; svc.c is the one handle the process keeps for
 * either (struct svc). A bad SPEC is refused by svc_spec_parse() with the
 * reason.
 */
#ifndef SANDNET_DATAPATH_SVC_H
#define SANDNET_DATAPATH_SVC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "datapath/net/net.h"

enum svc_kind {
	SVC_PUBLISH,
	SVC_FORWARD,
	SVC_KIND_MAX
};

/**
 * struct svc_endpoint - a socket address in the datapath's own netns
 * @is_unix:	a unix datagram socket at @sa (sun_path)
 * @sa:		the address (sockaddr_in, sockaddr_in6 or sockaddr_un)
 * @sa_len:	its length
 */
struct svc_endpoint {
	bool is_unix;
	struct sockaddr_storage sa;
	socklen_t sa_len;
};

/**
 * struct svc_spec - one parsed --publish or --forward
 * @kind:	publish or forward
 * @proto:	IPPROTO_UDP or IPPROTO_TCP (whose services are svc_tcp.c's)
 * @addr:	publish: the stack address to listen on, AF_UNSPEC for all
 * @port:	publish: the stack port
 * @target:	publish: where datagrams go
 * @listen:	forward: the local socket
 * @remote:	forward: the address reached through the stack
 * @remote_port: forward: its port
 * @text:	the SPEC as given (stats, messages)
 */
struct svc_spec {
	enum svc_kind kind;
	int proto;
	struct net_addr addr;
	uint16_t port;
	struct svc_endpoint target;
	struct svc_endpoint listen;
	struct net_addr remote;
	uint16_t remote_port;
	char text[256];
};

/* UDP flow caps (svc_udp_flow.c, docs/security.md); stack_limits holds the options */
#define SVC_UDP_MAX_FLOWS_DEFAULT		4096
#define SVC_UDP_FLOWS_PER_SOURCE_DEFAULT	256
#define SVC_UDP_NO_CAP				UINT32_MAX	/* --max-udp-flows-per-source 0 */

/**
 * struct svc_udp_usage - the UDP flow caps, as `datapath stats` shows them
 * @flows_max:		total flows allowed (all UDP services)
 * @flows_used:		flows open
 * @flows_hits:		new flows that found the total cap reached
 * @per_source_max:	flows per source address per publish service, 0 = no cap
 * @per_source_used:	the most one source holds in one service now
 * @per_source_hits:	new flows that recycled their source's oldest one
 */
struct svc_udp_usage {
	uint64_t flows_max, flows_used, flows_hits;
	uint64_t per_source_max, per_source_used, per_source_hits;
};

struct svc_udp;
struct svc_udp_table;
struct svc_tcp;
struct out;

/* Instances of one service: one per shard (datapath/proc/shard.h SHARD_MAX) */
#define SVC_MAX_INSTANCES	64

/**
 * struct svc - one service of either protocol, as the process keeps it
 * @proto:	IPPROTO_UDP or IPPROTO_TCP: which of @udp and @tcp it is
 */
struct svc {
	int proto;
	union {
		struct svc_udp *udp;
		struct svc_tcp *tcp;
	};
};

/* A forward's local listener: how many connections wait while no datapath accepts. */
#define SVC_LISTEN_BACKLOG	128

struct svc *svc_new(struct stack *st, struct svc_udp_table *udp, const struct svc_spec *spec, int listen_fd,
		    char *err, size_t err_len);
int svc_start(struct svc *s);
void svc_free(struct svc *s);
void svc_stats(struct svc *const *v, unsigned int n, struct out *o);

int svc_spec_parse(const char *text, enum svc_kind kind, struct svc_spec *spec, char *err,
		   size_t err_len);
int svc_listen_open(const struct svc_spec *spec, char *err, size_t err_len);
const char *svc_opt(const struct svc_spec *spec);
void *svc_new_alloc(size_t size, const struct svc_spec *spec, int listen_fd, char *err, size_t err_len);
int svc_listen_check(const struct svc_spec *spec, int listen_fd, char *err, size_t err_len);
int svc_listen_ready(const struct svc_spec *spec, int *listen_fd, char *err, size_t err_len);
void svc_stats_row(struct out *o, const struct svc_spec *spec, const char *const *names, const uint64_t *sum,
		   unsigned int n);
void svc_listen_close(struct loop *loop, struct loop_fd *lfd, int fd, const struct svc_spec *spec, bool owned);
int svc_endpoint_parse(const char *s, struct svc_endpoint *ep, char *err, size_t err_len);

struct svc_udp_table *svc_udp_table_new(struct stack *st);
void svc_udp_table_free(struct svc_udp_table *t);
struct svc_udp *svc_udp_new(struct svc_udp_table *tbl, const struct svc_spec *spec, int listen_fd, char *err,
			    size_t err_len);
int svc_udp_start(struct svc_udp *s);
void svc_udp_free(struct svc_udp *s);
void svc_udp_stats(const struct svc_udp *const *v, unsigned int n, struct out *o);
void svc_udp_flush(struct svc_udp_table *t);
void svc_udp_usage(const struct svc_udp_table *t, struct svc *const *svcs, unsigned int n,
		   struct svc_udp_usage *u);

#endif /* SANDNET_DATAPATH_SVC_H */
