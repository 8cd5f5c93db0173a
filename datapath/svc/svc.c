// SPDX-License-Identifier: MIT
/*
 * svc.c - one handle for a service of either protocol
 *
 * Theory of operation: UDP services (svc_udp.c; their flows in
 * svc_udp_flow.c, their datagrams in batches in svc_udp_pump.c) and TCP
 * services (svc_tcp.c: joined connections) share nothing but their SPEC and
 * their life cycle: made before the privilege drop (a forward binds its
 * local socket), started once the stack runs, shown in stats, freed. struct
 * svc carries that life cycle, so the process keeps one array of services
 * and one loop at each step, whatever the protocol.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#include "datapath/svc/svc.h"
#include "datapath/svc/svc_tcp.h"

/**
 * svc_new() - make the service @spec describes (not started)
 * @st:		the stack
 * @udp:	the table its UDP services share (svc_udp_table_new() on @st)
 * @spec:	a parsed --publish or --forward
 * @listen_fd:	a forward's local listener as the supervisor bound it
 *		(svc_listen_open()), taken over here; -1: bind it here
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: the service, or NULL with @err set (@listen_fd closed).
 */
struct svc *svc_new(struct stack *st, struct svc_udp_table *udp, const struct svc_spec *spec, int listen_fd,
		    char *err, size_t err_len)
{
	struct svc *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, err_len, "%s: out of memory", spec->text);
		if (listen_fd >= 0)
			close(listen_fd);
		return NULL;
	}
	s->proto = spec->proto;
	if (spec->proto == IPPROTO_TCP)
		s->tcp = svc_tcp_new(st, spec, listen_fd, err, err_len);
	else
		s->udp = svc_udp_new(udp, spec, listen_fd, err, err_len);
	if (!s->tcp && !s->udp) {
		free(s);
		return NULL;
	}
	return s;
}

/**
 * svc_start() - start serving, once the stack runs
 * @s:	the service
 *
 * Return: 0 or negative errno.
 */
int svc_start(struct svc *s)
{
	return s->proto == IPPROTO_TCP ? svc_tcp_start(s->tcp) : svc_udp_start(s->udp);
}

/**
 * svc_free() - stop and free a service
 * @s:	the service, or NULL
 */
void svc_free(struct svc *s)
{
	if (!s)
		return;
	if (s->proto == IPPROTO_TCP)
		svc_tcp_free(s->tcp);
	else
		svc_udp_free(s->udp);
	free(s);
}

/**
 * svc_stats() - the service's row of "services" in `datapath stats`
 * @v:	its instances, one per shard (NULL: a shard that does not run it),
 *	whose counters the row sums
 * @n:	how many, at most SVC_MAX_INSTANCES
 * @o:	the printer
 */
void svc_stats(struct svc *const *v, unsigned int n, struct out *o)
{
	const struct svc_tcp *tcp[SVC_MAX_INSTANCES] = { NULL };
	const struct svc_udp *udp[SVC_MAX_INSTANCES] = { NULL };
	unsigned int i;
	int proto = 0;

	for (i = 0; i < n && i < SVC_MAX_INSTANCES; i++) {
		if (!v[i])
			continue;
		proto = v[i]->proto;
		if (proto == IPPROTO_TCP)
			tcp[i] = v[i]->tcp;
		else
			udp[i] = v[i]->udp;
	}
	if (proto == IPPROTO_TCP)
		svc_tcp_stats(tcp, i, o);
	else if (proto == IPPROTO_UDP)
		svc_udp_stats(udp, i, o);
}
