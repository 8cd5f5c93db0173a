// SPDX-License-Identifier: MIT
/*
 * face_icmp.c - the container's ICMP and ICMPv6: echo proxied, errors passed
 * on to the side they are about
 *
 * Theory of operation
 *
 * Echo. An echo request from the container to X leaves the outer stack as a
 * new request from the container's address to X with the same identifier,
 * sequence number and data; an echo flow (family, container, X, identifier)
 * remembers it, and X's reply comes back to the container as a reply the
 * face builds. Echo flows live in the stack's flow table (flow.c), age out
 * after FACE_ECHO_IDLE_MS and are at most FACE_ECHO_MAX (the least recently
 * used goes). An echo request from the
 * network to the container's address is answered by the outer stack itself,
 * as before: the sender sees the same answer a kernel gives, unless an
 * ingress rule refuses it (face_icmp_echo_refused()).
 *
 * Errors from the network (face_icmp_from_outer()) quote a packet the outer
 * stack sent for the container: for a UDP flow or an echo flow that exists,
 * the container gets the same type and code from the same source, quoting
 * what the face had handed it (the same addresses and ports: its kernel
 * finds the socket by them). Errors about TCP end a connection attempt in
 * the outer engine (tcp_glue.c) and face_tcp.c answers the container's SYN
 * with an error of its own (face_icmp_unreach_for()). Fragmentation needed
 * and packet too big are the outer stack's business (its TCP lowers the
 * MSS, its UDP fragments): they are not passed on.
 *
 * Errors from the container quote a packet the face wrote to it: UDP of a
 * flow (its port unreachable for a closed port) goes to the sender as the
 * same error from the container's address; TCP (a firewall's reject of an
 * inbound SYN) ends the inner engine's connection attempt, and face_tcp.c
 * answers the client. Nothing is passed on for a conversation the face does
 * not carry (no_flow), and every error shares the stack's token bucket.
 * Other messages from the container (echo replies nobody asked for,
 * timestamps, ...) are dropped (icmp_ignored).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/face/face_int.h"
#include "datapath/wire/proto_hdr.h"
#include "common/out.h"
#include "datapath/flow.h"
#include "datapath/policy.h"

#define FACE_ECHO_MAX		1024
#define FACE_ECHO_IDLE_MS	30000

/*
 * One ping of the container: (family, container, remote, identifier); the
 * requests and replies it carried and their bytes (ICMP header on), its flow
 * log record or NULL.
 */
struct face_echo {
	struct flow flow;	/* in the stack's flow table, FLOW_FACE_ECHO */
	struct net_addr c, r;
	uint16_t id;
	uint64_t requests, replies, bytes_out, bytes_in;
	struct flowlog_record *log;
};

static uint64_t face_echo_hash(const struct face *f, const struct net_addr *c, const struct net_addr *r,
			       uint16_t id)
{
	struct {
		uint8_t family;
		uint8_t c[16], r[16];
		uint16_t id;
	} k;

	memset(&k, 0, sizeof(k));
	k.family = c->family;
	memcpy(k.c, &c->a, c->family == AF_INET ? 4 : 16);
	memcpy(k.r, &r->a, r->family == AF_INET ? 4 : 16);
	k.id = id;
	return flow_hash(f->st->flows, &k, sizeof(k));
}

static struct face_echo *face_echo_of(struct flow *fl)
{
	return fl ? flow_entry(fl, struct face_echo, flow) : NULL;
}

static struct face_echo *face_echo_find(const struct face *f, const struct net_addr *c, const struct net_addr *r,
					uint16_t id)
{
	struct flow *fl;

	for (fl = flow_first(f->st->flows, FLOW_FACE_ECHO, face_echo_hash(f, c, r, id)); fl; fl = flow_next(fl)) {
		struct face_echo *x = face_echo_of(fl);

		if (x->id == id && net_addr_eq(&x->c, c) && net_addr_eq(&x->r, r))
			return x;
	}
	return NULL;
}

static void face_echo_free(struct face *f, struct face_echo *x, enum flowlog_end how)
{
	if (x->log) {
		x->log->packets_out = x->requests;
		x->log->bytes_out = x->bytes_out;
		x->log->packets_in = x->replies;
		x->log->bytes_in = x->bytes_in;
		face_log_end(f, x->log, how);
	}
	flow_del(f->st->flows, &x->flow);
	free(x);
}

static struct face_echo *face_echo_get(struct face *f, const struct net_addr *c, const struct net_addr *r,
				       uint16_t id, const struct policy_rule *by)
{
	struct face_echo *x = face_echo_find(f, c, r, id);

	if (x) {
		flow_touch(f->st->flows, &x->flow, loop_now_ms(f->st->loop));
		return x;
	}
	if (flow_count(f->st->flows, FLOW_FACE_ECHO) >= FACE_ECHO_MAX)
		face_echo_free(f, face_echo_of(flow_oldest(f->st->flows, FLOW_FACE_ECHO)), FLOWLOG_END_EVICTED);
	x = calloc(1, sizeof(*x));
	if (!x) {
		face_drop(f, FACE_DROP_NO_MEMORY);
		return NULL;
	}
	x->c = *c;
	x->r = *r;
	x->id = id;
	x->log = face_log_begin(f, c->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6, false, c, id, r, 0, by);
	flow_add(f->st->flows, &x->flow, FLOW_FACE_ECHO, face_echo_hash(f, c, r, id), loop_now_ms(f->st->loop));
	return x;
}

static bool face_icmp_is_error(uint8_t family, uint8_t type)
{
	if (family == AF_INET)
		return type == ICMP_DEST_UNREACH || type == ICMP_TIME_EXCEEDED || type == ICMP_PARAMETERPROB;
	return type == ICMP6_DST_UNREACH || type == ICMP6_TIME_EXCEEDED || type == ICMP6_PARAM_PROB;
}

static bool face_icmp_is_pmtu(uint8_t family, uint8_t type, uint8_t code)
{
	return family == AF_INET ? type == ICMP_DEST_UNREACH && code == ICMP_FRAG_NEEDED :
				   type == ICMP6_PACKET_TOO_BIG;
}

/* An echo message (the same id, seq and data as @p) from @src to @dst, to either side. */
static void face_echo_send(struct face *f, const struct pkt *p, uint8_t family, uint8_t type,
			   const struct net_addr *src, const struct net_addr *dst, bool to_inner)
{
	struct pkt *q = icmp_reply_new(f->st, p, type);
	struct icmp_hdr *ic;

	if (!q)
		return;
	ic = (struct icmp_hdr *)pkt_data(q);
	ic->csum = family == AF_INET ? htons(csum_fold(csum_partial(ic, q->len, 0))) :
		   htons(csum_pkt_l4(q, csum_pseudo6(&src->a.v6, &dst->a.v6, IPPROTO_ICMPV6, q->len)));
	if (to_inner) {
		face_count(f, FACE_CTR_ECHO_TO_INNER);
		face_ip_output(f, q, src, dst, family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
		return;
	}
	face_count(f, FACE_CTR_ECHO_TO_OUTER);
	if (family == AF_INET)
		ipv4_output(f->st, q, src->a.v4, dst->a.v4, IPPROTO_ICMP, 64, false);
	else
		ipv6_output(f->st, NULL, q, &src->a.v6, &dst->a.v6, IPPROTO_ICMPV6, 64);
}

/*
 * The packet an error quotes: its addresses, protocol, ports (or echo id),
 * and where the quote starts and ends in @p. Return: 0, or -EINVAL when the
 * quote is too short to say.
 */
struct face_quote {
	struct net_addr src, dst;
	uint8_t proto;
	uint16_t sport, dport;		/* UDP, TCP; the echo id in sport */
	uint8_t echo_type;
	const uint8_t *ip;
	size_t len;
};

static int face_quote_parse(const struct pkt *p, uint8_t family, struct face_quote *q)
{
	size_t l3 = family == AF_INET ? IPV4_HLEN : IPV6_HLEN;
	const uint8_t *ip = pkt_peek(p, 8, l3), *t;

	memset(q, 0, sizeof(q[0]));
	if (!ip)
		return -EINVAL;
	q->src.family = q->dst.family = family;
	if (family == AF_INET) {
		if ((ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5)
			return -EINVAL;
		l3 = (ip[0] & 0xfu) * 4;
		q->proto = ip[9];
		memcpy(&q->src.a.v4, ip + 12, 4);
		memcpy(&q->dst.a.v4, ip + 16, 4);
	} else {
		if ((ip[0] >> 4) != 6)
			return -EINVAL;
		q->proto = ip[6];
		memcpy(&q->src.a.v6, ip + 8, 16);
		memcpy(&q->dst.a.v6, ip + 24, 16);
	}
	t = pkt_peek(p, 8 + l3, 8);	/* RFC 792: at least 8 bytes of the transport */
	if (!t)
		return -EINVAL;
	q->sport = (uint16_t)(t[0] << 8 | t[1]);
	q->dport = (uint16_t)(t[2] << 8 | t[3]);
	if (q->proto == IPPROTO_ICMP || q->proto == IPPROTO_ICMPV6) {
		q->echo_type = t[0];
		q->sport = (uint16_t)(t[4] << 8 | t[5]);
	}
	q->ip = ip;
	q->len = p->len - 8;
	return 0;
}

static bool face_is_echo_request(uint8_t family, uint8_t type)
{
	return family == AF_INET ? type == ICMP_ECHO : type == ICMP6_ECHO_REQUEST;
}

/**
 * face_icmp_from_inner() - an ICMP or ICMPv6 message the container sent
 * @f:		the face
 * @p:		the message at pkt_data(), IP header at @p->l3_off; borrowed
 * @family:	AF_INET or AF_INET6
 * @src:	the container's address
 * @dst:	where it goes
 */
void face_icmp_from_inner(struct face *f, struct pkt *p, uint8_t family, const struct net_addr *src,
			  const struct net_addr *dst)
{
	const struct icmp_hdr *ic = pkt_peek(p, 0, sizeof(*ic));
	const struct policy_rule *by = NULL;
	struct face_echo *x;
	struct face_quote q;
	uint32_t sum;

	if (!ic) {
		face_drop(f, FACE_DROP_BAD_LENGTH);
		return;
	}
	sum = family == AF_INET ? csum_partial(pkt_data(p), p->len, 0) :
	      csum_partial(pkt_data(p), p->len, csum_pseudo6(&src->a.v6, &dst->a.v6, IPPROTO_ICMPV6, p->len));
	if (!p->csum_ok && csum_fold(sum) != 0) {
		face_drop(f, FACE_DROP_BAD_CHECKSUM);
		return;
	}
	if (face_is_echo_request(family, ic->type) && ic->code == 0) {
		const uint8_t *id = pkt_peek(p, 4, 2);

		if (!id)
			return;
		/* a new echo flow is a new conversation: the policy decides */
		x = face_echo_find(f, src, dst, (uint16_t)(id[0] << 8 | id[1]));
		if (!x && policy_decide(f->st->policy, POLICY_EGRESS, dst, family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6,
					0, &by)) {
			face_drop(f, FACE_DROP_POLICY);
			face_log_refused(f, family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6, false, src,
					 (uint16_t)(id[0] << 8 | id[1]), dst, 0, by, NULL, p->len);
			face_icmp_prohibit(f, family, src, dst, pkt_data(p) - (p->off - p->l3_off),
					   p->len + (p->off - p->l3_off), true);
			return;
		}
		x = x ? x : face_echo_get(f, src, dst, (uint16_t)(id[0] << 8 | id[1]), by);
		if (x) {
			flow_touch(f->st->flows, &x->flow, loop_now_ms(f->st->loop));
			x->requests++;
			x->bytes_out += p->len;
			face_echo_send(f, p, family, ic->type, src, dst, false);
		}
		return;
	}
	if (!face_icmp_is_error(family, ic->type) || face_quote_parse(p, family, &q) < 0 ||
	    !net_addr_eq(&q.dst, src) || !net_addr_eq(&q.src, dst)) {
		face_drop(f, FACE_DROP_ICMP_IGNORED);
		return;
	}
	/* about a packet the face wrote: q.src is the remote end, q.dst the container */
	if (q.proto == IPPROTO_TCP) {
		tcp_glue_icmp(f->tcp, family, p);
		return;
	}
	if (q.proto != IPPROTO_UDP || !face_udp_flow_known(f, &q.dst, q.dport, &q.src, q.sport, false)) {
		face_drop(f, FACE_DROP_NO_FLOW);
		return;
	}
	face_send_icmp(f, family, src, dst, ic->type, ic->code, ntohl(ic->rest), q.ip, q.len, false);
}

/**
 * face_icmp_from_outer() - an echo reply or an error the outer stack received
 * @f:		the face, or NULL
 * @family:	AF_INET or AF_INET6
 * @p:		the message at pkt_data(), checksum verified; borrowed
 * @src:	its sender
 * @dst:	our address it came to
 */
void face_icmp_from_outer(struct face *f, uint8_t family, const struct pkt *p, const struct net_addr *src,
			  const struct net_addr *dst)
{
	const struct icmp_hdr *ic = pkt_peek(p, 0, sizeof(*ic));
	struct face_echo *x;
	struct face_quote q;

	if (!f || !ic || !face_is_container(f, dst))
		return;
	if (ic->type == (family == AF_INET ? ICMP_ECHOREPLY : ICMP6_ECHO_REPLY) && ic->code == 0) {
		const uint8_t *id = pkt_peek(p, 4, 2);

		x = id ? face_echo_find(f, dst, src, (uint16_t)(id[0] << 8 | id[1])) : NULL;
		if (!x) {
			face_drop(f, FACE_DROP_NO_FLOW);
			return;
		}
		x->replies++;
		x->bytes_in += p->len;
		face_echo_send(f, p, family, ic->type, src, dst, true);
		return;
	}
	if (!face_icmp_is_error(family, ic->type) || face_icmp_is_pmtu(family, ic->type, ic->code) ||
	    face_quote_parse(p, family, &q) < 0 || !net_addr_eq(&q.src, dst))
		return;
	/* about a packet the outer stack sent for the container: q.src is the container */
	switch (q.proto) {
	case IPPROTO_UDP:
		if (!face_udp_flow_known(f, &q.src, q.sport, &q.dst, q.dport, false)) {
			face_drop(f, FACE_DROP_NO_FLOW);
			return;
		}
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (!face_is_echo_request(family, q.echo_type) || !face_echo_find(f, &q.src, &q.dst, q.sport)) {
			face_drop(f, FACE_DROP_NO_FLOW);
			return;
		}
		break;
	default:
		return;		/* TCP: the outer engine's (tcp_glue.c) */
	}
	face_send_icmp(f, family, src, dst, ic->type, ic->code, ntohl(ic->rest), q.ip, q.len, true);
}

/*
 * The IP header of a quote made up for an error about a packet that is not
 * at hand (a held SYN, a datagram the outer stack gave without headers):
 * @src to @dst, @proto, @l4_len bytes behind it, into a zeroed @quote; the
 * caller writes the transport header behind it (at least 8 bytes, RFC 792).
 * Return: the header's length.
 */
static size_t face_quote_ip(uint8_t *quote, const struct net_addr *src, const struct net_addr *dst, uint8_t proto,
			    size_t l4_len)
{
	if (src->family == AF_INET) {
		struct ipv4_hdr *ih = (struct ipv4_hdr *)quote;

		ih->ver_ihl = 0x45;
		ih->tot_len = htons((uint16_t)(IPV4_HLEN + l4_len));
		ih->ttl = 64;
		ih->proto = proto;
		ih->saddr = src->a.v4.s_addr;
		ih->daddr = dst->a.v4.s_addr;
		ih->csum = htons(csum_fold(csum_partial(ih, sizeof(*ih), 0)));
		return IPV4_HLEN;
	}
	{
		struct ipv6_hdr *ih = (struct ipv6_hdr *)quote;

		ih->ver_tc_flow = htonl(6u << 28);
		ih->payload_len = htons((uint16_t)l4_len);
		ih->nexthdr = proto;
		ih->hop_limit = 64;
		ih->saddr = src->a.v6;
		ih->daddr = dst->a.v6;
		return IPV6_HLEN;
	}
}

/**
 * face_icmp_unreach_for() - answer a held SYN with the ICMP error its far side got
 * @f:		the face
 * @err:	the errno the far side's attempt ended with (tcp_icmp_errno())
 * @family:	AF_INET or AF_INET6
 * @from:	the SYN's sender
 * @to:		where it went; the error comes from there
 * @seq:	the SYN's sequence number, which the error quotes
 * @to_inner:	the sender is the container (else the network)
 */
void face_icmp_unreach_for(struct face *f, int err, uint8_t family, const struct tcp_endpoint *from,
			   const struct tcp_endpoint *to, uint32_t seq, bool to_inner)
{
	uint8_t quote[IPV6_HLEN + TCP_HLEN] = { 0 };
	size_t l3 = face_quote_ip(quote, &from->addr, &to->addr, IPPROTO_TCP, TCP_HLEN);
	uint8_t *t = quote + l3;
	uint8_t type, code;

	if (family == AF_INET) {
		type = ICMP_DEST_UNREACH;
		code = err == -ENETUNREACH ? 0 : err == -ECONNREFUSED ? ICMP_PORT_UNREACH :
		       err == -ENOPROTOOPT ? ICMP_PROT_UNREACH : err == -EACCES ? ICMP_PKT_FILTERED : 1;
	} else {
		type = ICMP6_DST_UNREACH;
		code = err == -ENETUNREACH ? 0 : err == -EACCES ? ICMP6_DST_UNREACH_ADMIN :
		       err == -ECONNREFUSED ? ICMP6_DST_UNREACH_NOPORT : 3;
	}
	t[0] = (uint8_t)(from->port >> 8);
	t[1] = (uint8_t)from->port;
	t[2] = (uint8_t)(to->port >> 8);
	t[3] = (uint8_t)to->port;
	t[4] = (uint8_t)(seq >> 24);
	t[5] = (uint8_t)(seq >> 16);
	t[6] = (uint8_t)(seq >> 8);
	t[7] = (uint8_t)seq;
	t[12] = (TCP_HLEN / 4) << 4;
	t[13] = TCP_SYN;
	face_send_icmp(f, family, &to->addr, &from->addr, type, code, 0, quote, l3 + TCP_HLEN, to_inner);
}

/**
 * face_icmp_echo_refused() - does the policy refuse this echo request to the container?
 * @f:		the face, or NULL
 * @family:	AF_INET or AF_INET6
 * @p:		the request, ICMP header at pkt_data(), IP header at @p->l3_off
 * @src:	its sender
 * @dst:	our address it came to
 *
 * The outer stack answers echo requests to the container's addresses itself
 * (the container's kernel never sees them); an ingress rule for ICMP still
 * decides whether it may. A refused request is answered with ICMP
 * administratively prohibited instead of a reply.
 *
 * Return: true when refused (answered here: the caller sends no reply).
 */
bool face_icmp_echo_refused(struct face *f, uint8_t family, const struct pkt *p, const struct net_addr *src,
			    const struct net_addr *dst)
{
	if (!f || !f->st->policy || !face_is_container(f, dst) ||
	    !policy_refuses(f->st->policy, POLICY_INGRESS, src, family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6, 0))
		return false;
	face_drop(f, FACE_DROP_POLICY);
	face_icmp_prohibit(f, family, src, dst, pkt_data(p) - (p->off - p->l3_off), p->len + (p->off - p->l3_off),
			   false);
	return true;
}

/**
 * face_icmp_prohibit() - refuse what the policy denies (policy.c)
 * @f:		the face
 * @family:	AF_INET or AF_INET6
 * @sender:	who sent what is refused; the error goes to it
 * @target:	where it went; the error comes from it
 * @quote:	the refused packet from its IP header on (at least 8 bytes of
 *		what the header carries, as RFC 792 asks)
 * @quote_len:	its length
 * @to_inner:	@sender is the container
 *
 * Destination unreachable, administratively prohibited: the sender's
 * kernel ends the attempt at once (connect() and a connected UDP socket see
 * EHOSTUNREACH over IPv4, EACCES over IPv6; ping says "Packet filtered").
 */
void face_icmp_prohibit(struct face *f, uint8_t family, const struct net_addr *sender,
			const struct net_addr *target, const void *quote, size_t quote_len, bool to_inner)
{
	if (family == AF_INET)
		face_send_icmp(f, family, target, sender, ICMP_DEST_UNREACH, ICMP_PKT_FILTERED, 0, quote,
			       quote_len, to_inner);
	else
		face_send_icmp(f, family, target, sender, ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_ADMIN, 0, quote,
			       quote_len, to_inner);
}

/**
 * face_icmp_prohibit_udp() - face_icmp_prohibit() for a datagram from the
 * network, which the outer stack handed over without its headers
 * @f:		the face
 * @src:	its sender, and @sport
 * @sport:	its source port
 * @dst:	the container's address it went to, and @dport
 * @dport:	its destination port
 * @len:	its payload length
 */
void face_icmp_prohibit_udp(struct face *f, const struct net_addr *src, uint16_t sport,
			    const struct net_addr *dst, uint16_t dport, size_t len)
{
	uint8_t quote[IPV6_HLEN + UDP_HLEN] = { 0 };
	size_t l3 = face_quote_ip(quote, src, dst, IPPROTO_UDP, UDP_HLEN + len);
	struct udp_hdr *uh = (struct udp_hdr *)(quote + l3);

	uh->sport = htons(sport);
	uh->dport = htons(dport);
	uh->len = htons((uint16_t)(UDP_HLEN + len));
	face_icmp_prohibit(f, src->family, src, dst, quote, l3 + UDP_HLEN, false);
}

/**
 * face_icmp_sweep() - age idle echo flows out
 * @f:		the face
 * @now_ms:	the loop's time
 */
void face_icmp_sweep(struct face *f, uint64_t now_ms)
{
	struct face_echo *x;

	while ((x = face_echo_of(flow_oldest(f->st->flows, FLOW_FACE_ECHO))) &&
	       now_ms - x->flow.last_ms >= FACE_ECHO_IDLE_MS)
		face_echo_free(f, x, FLOWLOG_END_IDLE);
}

/**
 * face_icmp_fini() - free every echo flow
 */
void face_icmp_fini(struct face *f)
{
	struct face_echo *x;

	while ((x = face_echo_of(flow_oldest(f->st->flows, FLOW_FACE_ECHO))))
		face_echo_free(f, x, FLOWLOG_END_STOP);
}

/**
 * face_icmp_print() - the "echo" object of the face's stats
 */
void face_icmp_print(struct face *f, struct out *o)
{
	out_obj_begin(o, "echo");
	out_u64(o, "flows", flow_count(f->st->flows, FLOW_FACE_ECHO));
	out_u64(o, "flows_max", FACE_ECHO_MAX);
	out_obj_end(o);
}
