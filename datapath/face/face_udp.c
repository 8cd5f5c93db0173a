// SPDX-License-Identifier: MIT
/*
 * face_udp.c - the container's UDP: datagrams received on one side and sent
 * anew from the other, by flow
 *
 * Theory of operation
 *
 * A flow is the 4-tuple of a conversation between a container's port and a
 * remote one, seen the same on both sides (the outer stack sends from the
 * container's address and port, the face sends to the container from the
 * remote's). No socket is held for it: a datagram from the container goes
 * out through the outer stack's UDP output (udp_output_burst()), and one
 * from the network to a container's port that no --publish socket holds
 * reaches face_udp_from_outer() instead of being answered with port
 * unreachable: every datagram to the container's addresses goes to its own
 * sockets, with the sender's real address and port. A closed port there
 * gets the container kernel's port unreachable, which face_icmp.c maps back
 * to the flow and sends to the sender.
 *
 * So a flow records what the two directions need to agree on: that a
 * conversation exists (an ICMP error is passed on only for one that does:
 * nobody can make the face send errors for datagrams it never carried),
 * who opened it (the container, or the network), when it was last used,
 * and what it carried. Flows live in the stack's flow table (flow.c: a
 * keyed SipHash, so a peer cannot pick colliding tuples, and a list from
 * least to most recently used), the remote sources of inbound flows in an
 * index of their own here, hashed with the same key. They
 * age out after FACE_UDP_IDLE_MS without a datagram, and they are bounded
 * by the datapath's UDP caps (docs/security.md): --max-udp-flows in all
 * (the least recently used flow goes) and, for flows the network opens,
 * --max-udp-flows-per-source per remote address (that source's own least
 * recently used flow goes, so one sender cannot push others out). No
 * datagram is dropped for a cap.
 *
 * UDP GSO: a UDP_L4 frame from the container (a program using UDP_SEGMENT;
 * the TUN hands it up whole) goes to udp_output_burst() with its segment
 * size: in hw mode it leaves the outer link as UDP GSO frames again, in sw
 * and off mode as separate datagrams. Datagrams to the container carry a
 * partial checksum; one larger than the TUN's MTU is written whole (the
 * container's kernel does not hold received datagrams to its device's MTU),
 * so nothing is fragmented on the inner link.
 *
 * Trains: consecutive datagrams of one flow, in one direction, within one
 * loop turn, travel as one frame. A train holds datagrams of the size of
 * its first (the last may be shorter, and closes it), up to
 * FACE_UDP_TRAIN_SEGS of them, 64 KiB, and what arrived within
 * FACE_UDP_TRAIN_SPAN_US of its first; another flow's datagram, a longer
 * one, a later one, or the end of the turn (face_pump()) closes it and
 * hands it to its direction's pacer (face_pace.c), which sends it when the
 * gaps between arrivals say: at once while the datapath keeps up, spread
 * out as it came after the datapath was kept from the CPU. Arrival times
 * come from the outer link's receive ring, and for the container's
 * datagrams from face_pace_arrival() (the TUN has no timestamps).
 *   - Toward the container: one write to the TUN, a UDP_L4 GSO frame (the
 *     TUN takes USO4/USO6). The container's kernel splits it on receive, or
 *     hands it whole to a socket with UDP_GRO. One datagram alone is
 *     written as before. Per datagram that is one system call instead of
 *     one each, and one pass through the container's receive path.
 *   - Toward the network: udp_output_burst() with the train's segment size,
 *     as for a UDP_SEGMENT frame: in hw mode one UDP GSO frame on the link,
 *     so a burst reaches the peer as a few large skbs that its backlog
 *     takes, not as many small ones it drops. A datagram whose destination
 *     has no route goes alone, so that its ICMP error quotes it.
 * A UDP_SEGMENT frame from the container behind trains still held becomes a
 * train of its own, copied, so that it does not overtake them. A train
 * keeps no pointer to its flow (a flow may be evicted meanwhile), only the
 * 4-tuple; the flow counted each datagram as it joined.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "datapath/face/face_int.h"
#include "datapath/link/vnet.h"
#include "datapath/wire/proto_hdr.h"
#include "common/out.h"
#include "datapath/flow.h"
#include "datapath/policy.h"
#include "datapath/svc/svc.h"

#define FACE_UDP_TRAIN_SEGS	64	/* datagrams in one train, at most */
#define FACE_UDP_TRAIN_SPAN_US	250	/* from its first datagram's arrival to its last's, at most */
/* a train's UDP payload: what an IPv6 packet of 64 KiB carries */
#define FACE_UDP_TRAIN_BYTES	(65535 - IPV6_HLEN - UDP_HLEN)
#define FACE_UDP_SRC_BUCKETS	1024
#define FACE_UDP_IDLE_MS	60000

struct face_src;

/**
 * struct face_flow - one UDP conversation of the container
 * @c, @cport:	the container's end
 * @r, @rport:	the remote end
 * @inbound:	the network opened it (it counts against its source's cap)
 * @src:	inbound: its source's entry
 * @to_outer, @to_inner: datagrams the container sent, and was given
 * @bytes_out, @bytes_in: their payload bytes
 * @log:	its flow log record (face_log.c), or NULL
 */
struct face_flow {
	struct flow flow;	/* in the stack's flow table, FLOW_FACE_UDP */
	struct face_flow *s_older, *s_newer;
	struct face_src *src;
	struct net_addr c, r;
	uint16_t cport, rport;
	bool inbound;
	uint64_t to_outer, to_inner;
	uint64_t bytes_out, bytes_in;
	struct flowlog_record *log;
};

/* A remote address with inbound flows, and those flows by age. */
struct face_src {
	struct face_src *next;
	struct net_addr addr;
	unsigned int n;
	struct face_flow *oldest, *newest;
};

/*
 * Consecutive datagrams of one flow and one size, one frame (theory above).
 * @item:	in its direction's pacer: when its first datagram arrived
 * @p:		the room of a UDP header, then the datagrams' payloads
 */
struct face_udp_train {
	struct face_pace_item item;
	struct net_addr src, dst;
	uint16_t sport, dport;
	uint16_t seg;		/* bytes of each datagram but the last */
	unsigned int n;
	size_t len;		/* payload bytes so far */
	bool closed;		/* the last was shorter: nothing may follow */
	struct pkt *p;
};

/*
 * @to_inner, @to_outer: the trains being filled (NULL: none)
 * @last: the flow found last (a run of datagrams is one flow's: no hash)
 */
struct face_flows {
	struct face_udp_train *to_inner, *to_outer;
	struct face_flow *last;
	struct face_pacer pace_inner, pace_outer;
	struct face_src *src_hash[FACE_UDP_SRC_BUCKETS];
	unsigned int max, per_source_max, n_inbound;
	uint64_t cap_hits, per_source_hits;
};

struct face_flow_key {
	uint8_t family;
	uint8_t c[16], r[16];
	uint16_t cport, rport;
};

static size_t face_addr_len(const struct net_addr *a)
{
	return a->family == AF_INET ? 4 : 16;
}

static uint64_t face_flow_hash(const struct face *f, const struct net_addr *c, uint16_t cport,
			       const struct net_addr *r, uint16_t rport)
{
	struct face_flow_key k;

	memset(&k, 0, sizeof(k));
	k.family = c->family;
	memcpy(k.c, &c->a, face_addr_len(c));
	memcpy(k.r, &r->a, face_addr_len(r));
	k.cport = cport;
	k.rport = rport;
	return flow_hash(f->st->flows, &k, sizeof(k));
}

static struct face_flow *face_flow_of(struct flow *fl)
{
	return fl ? flow_entry(fl, struct face_flow, flow) : NULL;
}

static bool face_flow_is(const struct face_flow *fw, const struct net_addr *c, uint16_t cport,
			 const struct net_addr *r, uint16_t rport)
{
	return fw->cport == cport && fw->rport == rport && net_addr_eq(&fw->c, c) && net_addr_eq(&fw->r, r);
}

static struct face_flow *face_flow_find(const struct face *f, const struct net_addr *c, uint16_t cport,
					const struct net_addr *r, uint16_t rport)
{
	struct face_flow *last = f->flows->last;
	uint64_t hash;
	struct flow *fl;

	if (last && face_flow_is(last, c, cport, r, rport))
		return last;
	hash = face_flow_hash(f, c, cport, r, rport);
	for (fl = flow_first(f->st->flows, FLOW_FACE_UDP, hash); fl; fl = flow_next(fl)) {
		struct face_flow *fw = face_flow_of(fl);

		if (face_flow_is(fw, c, cport, r, rport)) {
			f->flows->last = fw;
			return fw;
		}
	}
	return NULL;
}

static struct face_src **face_src_slot(const struct face *f, const struct net_addr *a)
{
	struct face_src **pp;
	uint8_t k[17] = { a->family };

	memcpy(k + 1, &a->a, face_addr_len(a));
	pp = &f->flows->src_hash[flow_hash(f->st->flows, k, sizeof(k)) % FACE_UDP_SRC_BUCKETS];
	for (; *pp; pp = &(*pp)->next)
		if (net_addr_eq(&(*pp)->addr, a))
			break;
	return pp;
}

/* Out of the table and its source's list, its record to the flow log (@how); free it. */
static void face_flow_free(struct face *f, struct face_flow *fw, enum flowlog_end how)
{
	struct face_flows *fl = f->flows;

	if (fw->log) {
		fw->log->bytes_out = fw->bytes_out;
		fw->log->packets_out = fw->to_outer;
		fw->log->bytes_in = fw->bytes_in;
		fw->log->packets_in = fw->to_inner;
		face_log_end(f, fw->log, how);
	}

	if (fl->last == fw)
		fl->last = NULL;
	flow_del(f->st->flows, &fw->flow);
	if (fw->src) {
		struct face_src *s = fw->src;

		if (fw->s_older)
			fw->s_older->s_newer = fw->s_newer;
		else
			s->oldest = fw->s_newer;
		if (fw->s_newer)
			fw->s_newer->s_older = fw->s_older;
		else
			s->newest = fw->s_older;
		fl->n_inbound--;
		if (--s->n == 0) {
			struct face_src **sp = face_src_slot(f, &s->addr);

			*sp = s->next;
			free(s);
		}
	}
	free(fw);
}

/* Most recently used now, in the table and among its source's flows. */
static void face_flow_touch(struct face *f, struct face_flow *fw)
{
	flow_touch(f->st->flows, &fw->flow, loop_now_ms(f->st->loop));
	if (fw->src && fw->src->newest != fw) {
		struct face_src *s = fw->src;

		if (fw->s_older)
			fw->s_older->s_newer = fw->s_newer;
		else
			s->oldest = fw->s_newer;
		fw->s_newer->s_older = fw->s_older;
		fw->s_older = s->newest;
		fw->s_newer = NULL;
		s->newest->s_newer = fw;
		s->newest = fw;
	}
}

/*
 * The flow of this 4-tuple, made when new and the policy allows it.
 * @inbound: the network sends the first datagram (its source's cap applies,
 * and the ingress rules). @decided: the policy was asked already (a DNS
 * query, face_dns.c). Return: the flow, or NULL: out of memory, or refused
 * by the policy (*@refused set; the caller answers). @len: the first
 * datagram's payload, for the flow log's record of a refusal.
 */
static struct face_flow *face_flow_get(struct face *f, const struct net_addr *c, uint16_t cport,
				       const struct net_addr *r, uint16_t rport, bool inbound, bool decided,
				       size_t len, bool *refused)
{
	const struct policy_rule *by = NULL;
	struct face_flows *fl = f->flows;
	struct face_flow *fw = face_flow_find(f, c, cport, r, rport);
	struct face_src *s = NULL, **sp;
	struct face_flow *oldest;

	*refused = false;
	if (fw) {
		face_flow_touch(f, fw);
		return fw;
	}
	/* a new conversation: the policy decides (the destination port is the remote's, or ours) */
	if (!decided && policy_decide(f->st->policy, inbound ? POLICY_INGRESS : POLICY_EGRESS, r, IPPROTO_UDP,
				      inbound ? cport : rport, &by)) {
		face_drop(f, FACE_DROP_POLICY);
		if (inbound)
			face_log_refused(f, IPPROTO_UDP, true, r, rport, c, cport, by, NULL, 0);
		else
			face_log_refused(f, IPPROTO_UDP, false, c, cport, r, rport, by, NULL, len);
		*refused = true;
		return NULL;
	}
	/* the caps first (either may free a source entry), then the source */
	if (inbound && fl->per_source_max) {
		s = *face_src_slot(f, r);
		if (s && s->n >= fl->per_source_max) {
			fl->per_source_hits++;
			face_count(f, FACE_CTR_UDP_FLOWS_EVICTED);
			face_flow_free(f, s->oldest, FLOWLOG_END_EVICTED);	/* the source's own oldest goes */
		}
	}
	oldest = face_flow_of(flow_oldest(f->st->flows, FLOW_FACE_UDP));
	if (flow_count(f->st->flows, FLOW_FACE_UDP) >= fl->max && oldest) {
		fl->cap_hits++;
		face_count(f, FACE_CTR_UDP_FLOWS_EVICTED);
		face_flow_free(f, oldest, FLOWLOG_END_EVICTED);
	}
	fw = calloc(1, sizeof(*fw));
	if (!fw) {
		face_drop(f, FACE_DROP_NO_MEMORY);
		return NULL;
	}
	if (inbound) {
		sp = face_src_slot(f, r);
		s = *sp;
		if (!s) {
			s = calloc(1, sizeof(*s));
			if (!s) {
				free(fw);
				face_drop(f, FACE_DROP_NO_MEMORY);
				return NULL;
			}
			s->addr = *r;
			*sp = s;
		}
	}
	fw->c = *c;
	fw->r = *r;
	fw->cport = cport;
	fw->rport = rport;
	fw->inbound = inbound;
	fw->log = inbound ? face_log_begin(f, IPPROTO_UDP, true, r, rport, c, cport, by) :
			    face_log_begin(f, IPPROTO_UDP, false, c, cport, r, rport, by);
	flow_add(f->st->flows, &fw->flow, FLOW_FACE_UDP, face_flow_hash(f, c, cport, r, rport),
		 loop_now_ms(f->st->loop));
	if (s) {
		fw->src = s;
		fw->s_older = s->newest;
		if (s->newest)
			s->newest->s_newer = fw;
		else
			s->oldest = fw;
		s->newest = fw;
		s->n++;
		fl->n_inbound++;
	}
	face_count(f, FACE_CTR_UDP_FLOWS_NEW);
	return fw;
}

/**
 * face_udp_flow_known() - does the face carry this conversation?
 * @f:		the face
 * @c:		the container's address
 * @cport:	its port
 * @r:		the remote address
 * @rport:	its port
 * @touch:	count it as used
 *
 * Return: true when a flow exists.
 */
bool face_udp_flow_known(struct face *f, const struct net_addr *c, uint16_t cport, const struct net_addr *r,
			 uint16_t rport, bool touch)
{
	struct face_flow *fw = face_flow_find(f, c, cport, r, rport);

	if (fw && touch)
		face_flow_touch(f, fw);
	return fw != NULL;
}

/* Can a datagram of @len bytes on this 4-tuple, arrived at @at_us, join @t? */
static bool face_udp_train_fits(const struct face_udp_train *t, const struct net_addr *src, uint16_t sport,
				const struct net_addr *dst, uint16_t dport, size_t len, uint64_t at_us)
{
	return !t->closed && len <= t->seg && t->n < FACE_UDP_TRAIN_SEGS && t->len + len <= FACE_UDP_TRAIN_BYTES &&
	       at_us - t->item.arrived_us <= FACE_UDP_TRAIN_SPAN_US && t->sport == sport && t->dport == dport &&
	       net_addr_eq(&t->src, src) && net_addr_eq(&t->dst, dst);
}

/* A new train for datagrams of @len bytes (an empty one is closed at once), arrived at @at_us. */
static struct face_udp_train *face_udp_train_new(const struct net_addr *src, uint16_t sport,
						 const struct net_addr *dst, uint16_t dport, size_t len, uint64_t at_us)
{
	struct face_udp_train *t = malloc(sizeof(*t));

	if (!t)
		return NULL;
	t->p = pkt_alloc(UDP_HLEN + len);
	if (!t->p) {
		free(t);
		return NULL;
	}
	pkt_put(t->p, UDP_HLEN);
	t->item.arrived_us = at_us;
	t->item.bytes = 0;
	t->src = *src;
	t->dst = *dst;
	t->sport = sport;
	t->dport = dport;
	t->seg = (uint16_t)len;
	t->n = 0;
	t->len = 0;
	t->closed = len == 0;
	return t;
}

static struct face_udp_train *face_udp_train_of(struct face_pace_item *it)
{
	return (struct face_udp_train *)((char *)it - offsetof(struct face_udp_train, item));
}

static void face_udp_train_free(struct face_udp_train *t)
{
	pkt_free(t->p);
	free(t);
}

static void face_udp_train_drop(struct face_pace_item *it)
{
	face_udp_train_free(face_udp_train_of(it));
}

/* Append a datagram's payload (room was checked). Return: false when out of memory. */
static bool face_udp_train_add(struct face_udp_train *t, const void *data, size_t len)
{
	if (t->p->cap - t->p->off - t->p->len < len) {
		/* the first pkt is full: one for the whole train (or the UDP_SEGMENT frame) */
		struct pkt *big = pkt_alloc(UDP_HLEN + (t->len + len > FACE_UDP_TRAIN_BYTES ? t->len + len :
									       FACE_UDP_TRAIN_BYTES));

		if (!big)
			return false;
		memcpy(pkt_put(big, t->p->len), pkt_data(t->p), t->p->len);
		pkt_free(t->p);
		t->p = big;
	}
	memcpy(pkt_put(t->p, len), data, len);
	t->len += len;
	t->item.bytes = t->len;
	t->n++;
	if (len < t->seg)
		t->closed = true;
	return true;
}

/* Its time has come: the train toward the network (udp_output_burst(), one GSO burst). */
static void face_udp_send_outer(struct face_pace_item *it, void *ctx)
{
	struct face_udp_train *t = face_udp_train_of(it);
	struct iovec iov = { .iov_base = pkt_data(t->p) + UDP_HLEN, .iov_len = t->len };
	struct face *f = ctx;
	struct udp_sent sent;
	int ret;

	ret = udp_output_burst(f->st, &t->src, t->sport, &t->dst, t->dport, &iov, 1, t->n > 1 ? t->seg : 0, &sent);
	f->ctr[FACE_CTR_UDP_TO_OUTER] += sent.datagrams;
	if (t->n > 1)
		f->ctr[FACE_CTR_UDP_TRAINED_TO_OUTER] += sent.datagrams;
	if (ret < 0)
		f->drop[FACE_DROP_OUTER_ERROR] += t->n - sent.datagrams;
	face_udp_train_free(t);
}

/* Its time has come: the train to the container, one datagram or one UDP_L4 GSO frame. */
static void face_udp_send_inner(struct face_pace_item *it, void *ctx)
{
	struct face_udp_train *t = face_udp_train_of(it);
	struct face *f = ctx;
	unsigned int n = t->n, l3 = t->dst.family == AF_INET ? IPV4_HLEN : IPV6_HLEN;
	struct pkt *p = t->p;
	struct udp_hdr *uh;
	uint32_t sum, ulen = (uint32_t)(UDP_HLEN + t->len);

	t->p = NULL;
	uh = (struct udp_hdr *)pkt_data(p);
	uh->sport = htons(t->sport);
	uh->dport = htons(t->dport);
	uh->len = htons((uint16_t)ulen);	/* the whole L4 length, also in GSO */
	sum = t->dst.family == AF_INET ? csum_pseudo4(t->src.a.v4, t->dst.a.v4, IPPROTO_UDP, ulen) :
					 csum_pseudo6(&t->src.a.v6, &t->dst.a.v6, IPPROTO_UDP, ulen);
	/* partial, as a veth would hand it over: the container's kernel trusts it */
	if (n > 1)
		vnet_set_udp_gso(&p->vnet, l3, t->seg);
	else
		vnet_set_csum(&p->vnet, l3, VNET_UDP_CSUM_OFF);
	uh->csum = htons((uint16_t)~csum_fold(sum));
	if (face_ip_output(f, p, &t->src, &t->dst, IPPROTO_UDP) == 0) {
		f->ctr[FACE_CTR_UDP_TO_INNER] += n;
		if (n > 1)
			face_count(f, FACE_CTR_UDP_GSO_TO_INNER);
	} else if (n > 1) {
		f->drop[FACE_DROP_NO_ROUTE] += n - 1;	/* face_ip_output() counted one */
	}
	face_udp_train_free(t);
}

/* What a pacer let go after holding it leaves now (face_pace.c), both ways. */
static void face_udp_paced_flush(void *ctx)
{
	struct face *f = ctx;

	stack_links_flush(f->st);
}

/* The train being filled in one direction is complete: to its pacer. */
static void face_udp_train_close(struct face_pacer *pc, struct face_udp_train **tp)
{
	struct face_udp_train *t = *tp;

	if (!t)
		return;
	*tp = NULL;
	face_pace_submit(pc, &t->item);
}

/*
 * A datagram, arrived at @at_us, joins the train being filled in one
 * direction (@tp, paced by @pc), which goes first when it cannot. Return:
 * false when out of memory (counted).
 */
static bool face_udp_train_join(struct face *f, struct face_pacer *pc, struct face_udp_train **tp,
				const struct net_addr *src, uint16_t sport, const struct net_addr *dst, uint16_t dport,
				const void *data, size_t len, uint64_t at_us)
{
	if (*tp && !face_udp_train_fits(*tp, src, sport, dst, dport, len, at_us))
		face_udp_train_close(pc, tp);
	if (!*tp)
		*tp = face_udp_train_new(src, sport, dst, dport, len, at_us);
	if (!*tp || !face_udp_train_add(*tp, data, len)) {
		face_drop(f, FACE_DROP_NO_MEMORY);
		return false;
	}
	return true;
}

/**
 * face_udp_flush() - send both trains: the turn ends (face_pump())
 * @f:		the face
 */
void face_udp_flush(struct face *f)
{
	face_udp_train_close(&f->flows->pace_inner, &f->flows->to_inner);
	face_udp_train_close(&f->flows->pace_outer, &f->flows->to_outer);
}

/**
 * face_udp_from_inner() - a datagram the container sent
 * @f:		the face
 * @p:		UDP header at pkt_data() (a UDP GSO frame: all its datagrams); borrowed
 * @src:	the container's address
 * @dst:	where it goes
 */
void face_udp_from_inner(struct face *f, struct pkt *p, const struct net_addr *src, const struct net_addr *dst)
{
	const struct udp_hdr *uh = pkt_peek(p, 0, sizeof(*uh));
	struct face_flows *fl = f->flows;
	struct face_flow *fw;
	uint16_t sport, dport;
	uint64_t at;
	struct udp_sent sent;
	struct iovec iov;
	size_t ulen, gso = 0;
	bool refused, decided = false;
	int ret;

	if (!uh) {
		face_drop(f, FACE_DROP_BAD_LENGTH);
		return;
	}
	ulen = ntohs(uh->len);
	if (vnet_is_gso(&p->vnet) && ulen == 0 && p->len > 65535)
		ulen = p->len;
	if (ulen < sizeof(*uh) || ulen > p->len) {
		face_drop(f, FACE_DROP_BAD_LENGTH);
		return;
	}
	pkt_trim(p, ulen);
	if (!uh->sport || !uh->dport) {
		face_drop(f, FACE_DROP_BAD_HEADER);
		return;
	}
	if ((uh->csum == 0 && src->family == AF_INET6) ||
	    (uh->csum != 0 && !p->csum_ok &&
	     csum_pkt_l4(p, src->family == AF_INET ? csum_pseudo4(src->a.v4, dst->a.v4, IPPROTO_UDP, ulen) :
			 csum_pseudo6(&src->a.v6, &dst->a.v6, IPPROTO_UDP, ulen)) != 0)) {
		face_drop(f, FACE_DROP_BAD_CHECKSUM);
		return;
	}
	/* with name rules, every query is read (face_dns.c) */
	ret = 0;
	if (uh->dport == htons(53) && policy_has_names(f->st->policy)) {
		if (vnet_is_gso(&p->vnet)) {	/* no resolver library sends one */
			face_drop(f, FACE_DROP_BAD_DNS);
			return;
		}
		ret = face_dns_query(f, src, ntohs(uh->sport), dst, pkt_data(p) + sizeof(*uh), ulen - sizeof(*uh));
		if (ret == -EACCES)	/* answered by the face, or dropped */
			return;
		decided = !ret;
	}
	refused = ret == -EPERM;
	if (refused)	/* a rule denies the resolver */
		face_log_refused(f, IPPROTO_UDP, false, src, ntohs(uh->sport), dst, 53, NULL, NULL, ulen - sizeof(*uh));
	fw = refused ? NULL : face_flow_get(f, src, ntohs(uh->sport), dst, ntohs(uh->dport), false, decided,
					    ulen - sizeof(*uh), &refused);
	if (!fw) {
		if (refused)	/* quote the datagram back */
			face_icmp_prohibit(f, src->family, src, dst, pkt_data(p) - (p->off - p->l3_off),
					   ulen + (p->off - p->l3_off), true);
		return;
	}
	if ((p->vnet.gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == VNET_GSO_UDP_L4) {
		gso = p->vnet.gso_size;
		face_count(f, FACE_CTR_UDP_GSO_FROM_INNER);
	}
	iov.iov_base = pkt_data(p) + sizeof(*uh);
	iov.iov_len = ulen - sizeof(*uh);
	/* the TUN has no timestamps: spread by the rate the container sends at */
	at = face_pace_arrival(&fl->pace_outer, loop_arrived_us(f->st->loop), p->rx_after_us, iov.iov_len);
	sport = ntohs(uh->sport);
	dport = ntohs(uh->dport);
	if (!gso && fl->to_outer && face_udp_train_fits(fl->to_outer, src, sport, dst, dport, iov.iov_len, at)) {
		if (face_udp_train_add(fl->to_outer, iov.iov_base, iov.iov_len)) {
			fw->to_outer++;
			fw->bytes_out += iov.iov_len;
		} else
			face_drop(f, FACE_DROP_NO_MEMORY);
		return;
	}
	face_udp_train_close(&fl->pace_outer, &fl->to_outer);	/* what came before goes first */
	/* a datagram with no route goes alone, at once: its ICMP error quotes it */
	if (route_lookup(f->st, dst->family, &dst->a) && (!gso || fl->pace_outer.head)) {
		/* a train of its own; a UDP_SEGMENT frame too, behind datagrams still held */
		struct face_udp_train *t = face_udp_train_new(src, sport, dst, dport, gso ? gso : iov.iov_len, at);

		if (!t || !face_udp_train_add(t, iov.iov_base, iov.iov_len)) {
			if (t)
				face_udp_train_free(t);
			face_drop(f, FACE_DROP_NO_MEMORY);
			return;
		}
		if (gso) {
			t->n = (unsigned int)((iov.iov_len + gso - 1) / gso);
			t->closed = true;
			face_pace_submit(&fl->pace_outer, &t->item);
		} else {
			fl->to_outer = t;
		}
		fw->to_outer += t->n;
		fw->bytes_out += iov.iov_len;
		return;
	}
	ret = udp_output_burst(f->st, src, sport, dst, dport, &iov, 1, gso, &sent);
	f->ctr[FACE_CTR_UDP_TO_OUTER] += sent.datagrams;
	fw->to_outer += sent.datagrams;
	fw->bytes_out += sent.bytes;
	if (ret < 0) {
		face_drop(f, FACE_DROP_OUTER_ERROR);
		if (ret == -ENETUNREACH)	/* as a router without a route answers */
			face_send_icmp(f, src->family, dst, src,
				       src->family == AF_INET ? ICMP_DEST_UNREACH : ICMP6_DST_UNREACH, 0, 0,
				       pkt_data(p) - (p->off - p->l3_off), ulen + (p->off - p->l3_off), true);
	}
}

/**
 * face_udp_from_outer() - a datagram from the network to a container's port
 * @f:		the face
 * @src:	the sender
 * @sport:	its port
 * @dst:	the container's address
 * @dport:	the port, one no stack socket holds
 * @data:	the payload
 * @len:	its bytes
 *
 * Return: true when the face took it (it goes to the container), false when
 * no face carries @dst (the stack answers as it did without one).
 */
bool face_udp_from_outer(struct face *f, const struct net_addr *src, uint16_t sport,
			 const struct net_addr *dst, uint16_t dport, const uint8_t *data, size_t len)
{
	struct face_flow *fw;
	bool refused;

	if (!f || !face_is_container(f, dst) || len > 65535 - UDP_HLEN - IPV6_HLEN)
		return false;
	fw = face_flow_get(f, dst, dport, src, sport, true, false, len, &refused);
	if (!fw) {
		if (refused)
			face_icmp_prohibit_udp(f, src, sport, dst, dport, len);
		return true;	/* counted: out of memory or the policy */
	}
	/* an answer to a query the container sent: what it binds (face_dns.c) */
	if (sport == 53 && !fw->inbound && policy_has_names(f->st->policy) &&
	    !face_dns_answer(f, data, len, FACE_DNS_ANSWER_MAX))
		return true;	/* counted */
	if (face_udp_train_join(f, &f->flows->pace_inner, &f->flows->to_inner, src, sport, dst, dport, data, len,
				loop_arrived_us(f->st->loop))) {
		fw->to_inner++;
		fw->bytes_in += len;
	}
	return true;
}

/**
 * face_udp_to_inner() - a datagram the face itself writes to the container
 * @f:		the face
 * @src:	the address it comes from (a remote's)
 * @sport:	its port
 * @dst:	the container's address
 * @dport:	its port
 * @data:	the payload
 * @len:	its length
 *
 * It joins the datagrams going in, with no flow (a DNS refusal, face_dns.c).
 */
void face_udp_to_inner(struct face *f, const struct net_addr *src, uint16_t sport, const struct net_addr *dst,
		       uint16_t dport, const void *data, size_t len)
{
	face_udp_train_join(f, &f->flows->pace_inner, &f->flows->to_inner, src, sport, dst, dport, data, len,
			    loop_arrived_us(f->st->loop));
}

/**
 * face_udp_sweep() - age idle flows out
 * @f:		the face
 * @now_ms:	the loop's time
 */
void face_udp_sweep(struct face *f, uint64_t now_ms)
{
	struct face_flow *fw;

	while ((fw = face_flow_of(flow_oldest(f->st->flows, FLOW_FACE_UDP))) &&
	       now_ms - fw->flow.last_ms >= FACE_UDP_IDLE_MS) {
		face_count(f, FACE_CTR_UDP_FLOWS_EXPIRED);
		face_flow_free(f, fw, FLOWLOG_END_IDLE);
	}
}

/**
 * face_udp_init() - the flow table, with the datapath's UDP caps
 * @f:	the face
 *
 * Return: 0 or -ENOMEM.
 */
int face_udp_init(struct face *f)
{
	const struct stack_limits *lim = &f->st->limits;
	struct face_flows *fl = calloc(1, sizeof(*fl));

	if (!fl)
		return -ENOMEM;
	face_pace_init(&fl->pace_inner, f->st->loop, face_udp_send_inner, face_udp_paced_flush, f);
	face_pace_init(&fl->pace_outer, f->st->loop, face_udp_send_outer, face_udp_paced_flush, f);
	fl->max = lim->udp_flows ? lim->udp_flows : SVC_UDP_MAX_FLOWS_DEFAULT;
	fl->per_source_max = lim->udp_flows_per_source == SVC_UDP_NO_CAP ? 0 :
			     lim->udp_flows_per_source ? lim->udp_flows_per_source :
							 SVC_UDP_FLOWS_PER_SOURCE_DEFAULT;
	f->flows = fl;
	return 0;
}

/**
 * face_udp_fini() - free every flow
 * @f:	the face
 */
void face_udp_fini(struct face *f)
{
	struct face_flow *fw;

	if (!f->flows)
		return;
	while ((fw = face_flow_of(flow_oldest(f->st->flows, FLOW_FACE_UDP))))
		face_flow_free(f, fw, FLOWLOG_END_STOP);
	if (f->flows->to_inner)
		face_udp_train_free(f->flows->to_inner);
	if (f->flows->to_outer)
		face_udp_train_free(f->flows->to_outer);
	face_pace_fini(&f->flows->pace_inner, face_udp_train_drop);
	face_pace_fini(&f->flows->pace_outer, face_udp_train_drop);
	free(f->flows);
	f->flows = NULL;
}

/**
 * face_udp_usage() - the flow table's figures
 * @f:	the face
 * @u:	filled
 */
void face_udp_usage(const struct face *f, struct face_udp_usage *u)
{
	const struct face_flows *fl = f->flows;

	u->flows = flow_count(f->st->flows, FLOW_FACE_UDP);
	u->inbound = fl->n_inbound;
	u->max = fl->max;
	u->per_source_max = fl->per_source_max;
	u->cap_hits = fl->cap_hits;
	u->per_source_hits = fl->per_source_hits;
	u->to_inner = fl->pace_inner.stats;
	u->to_outer = fl->pace_outer.stats;
}

/**
 * face_udp_print() - the "udp" object of the face's stats
 * @f:	the face
 * @o:	printer
 */
void face_udp_print(struct face *f, struct out *o)
{
	struct face_udp_usage u;

	face_udp_usage(f, &u);
	out_obj_begin(o, "udp");
	out_u64(o, "flows", u.flows);
	out_u64(o, "flows_inbound", u.inbound);
	out_u64(o, "flows_max", u.max);
	out_u64(o, "flows_per_source_max", u.per_source_max);
	out_u64(o, "cap_hits", u.cap_hits);
	out_u64(o, "per_source_hits", u.per_source_hits);
	face_pace_print(&f->flows->pace_inner, o, "to_inner");
	face_pace_print(&f->flows->pace_outer, o, "to_outer");
	out_obj_end(o);
}
