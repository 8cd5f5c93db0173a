// SPDX-License-Identifier: MIT
/*
 * frag.c - IP fragment reassembly and fragmentation, IPv4 (RFC 791, RFC 815)
 * and IPv6 (RFC 8200 4.5, RFC 5722)
 *
 * Theory of operation
 *
 * Reassembly keeps at most REASM_MAX_QUEUES datagrams in progress, both
 * families together, keyed by (family, source, destination, protocol or
 * next header, id), holding at most the stack's reasm_mem bytes (the
 * --reasm-mem cap, default REASM_MEM_DEFAULT; each fragment counts its data
 * and its list node) in all and REASM_MAX_FRAGS fragments per datagram. Each
 * fragment's payload is copied into its own node of a list sorted by offset.
 * Rules, each breach counted by its reason:
 * - a fragment with MF set must carry a multiple of 8 bytes, and no fragment
 *   may reach past 65535 bytes of datagram (frag_too_big);
 * - overlapping fragments drop the whole datagram (frag_overlap): RFC 5722
 *   made this the rule for IPv6, and Linux applies it to IPv4 since
 *   CVE-2018-5391; an exact duplicate is dropped alone;
 * - IPv6 keeps only the fixed header of the first fragment: extension
 *   headers before the fragment header were already walked by ipv6.c, and
 *   the whole datagram is handed up as fixed header + upper-layer data;
 * - the last fragment fixes the total length; a fragment beyond it, or a
 *   second different end, drops the datagram (bad_length);
 * - a datagram not complete REASM_TIMEOUT_MS after its first fragment is
 *   dropped (frag_timeout, checked by the housekeeping timer);
 * - when memory or queues run out, the oldest datagram is dropped to make
 *   room (frag_no_memory), so an endless stream of fragments that never
 *   completes cannot hold more than the bounds.
 * Since fragments never overlap, "bytes held == total length" means the
 * datagram is complete; it is then copied into one new packet behind the
 * first fragment's header, which is given back to the caller.
 *
 * Fragmentation (for our own datagrams larger than the MTU; DF clear over
 * IPv4) cuts the payload into pieces of (MTU - header) rounded down to 8
 * bytes, each a new packet with a copy of the header and its offset and MF:
 * over IPv4 with a new header checksum, over IPv6 with a fragment header
 * (next header 44) carrying a per-stack 32-bit identification.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"

#define REASM_MAX_QUEUES	64
#define REASM_MAX_FRAGS		256
#define REASM_MEM_DEFAULT	(4u << 20)
#define REASM_TIMEOUT_MS	30000

struct reasm_frag {
	struct reasm_frag *next;
	uint32_t off;
	uint32_t len;
	uint8_t data[];
};

/* Zero-filled before use, so it compares with memcmp(). */
struct reasm_key {
	uint8_t family;
	uint8_t proto;
	uint32_t id;
	union proto_inaddr src, dst;
};

struct reasm_q {
	bool used;
	struct reasm_key key;
	uint8_t hlen;			/* of the first fragment's header, 0 until seen */
	uint8_t hdr[60];
	uint64_t created_ms;
	uint32_t total;			/* payload bytes, 0 until the last fragment */
	uint32_t have;
	unsigned int n_frags;
	struct reasm_frag *frags;
};

struct ip_reasm {
	size_t mem;
	unsigned int n_queues;
	struct reasm_q q[REASM_MAX_QUEUES];
};

/**
 * ip_reasm_init() - empty reassembly state
 * Return: 0 or -ENOMEM.
 */
int ip_reasm_init(struct stack *st)
{
	st->reasm = calloc(1, sizeof(*st->reasm));
	return st->reasm ? 0 : -ENOMEM;
}

static void reasm_q_free(struct stack *st, struct reasm_q *q, int why)
{
	while (q->frags) {
		struct reasm_frag *f = q->frags;

		q->frags = f->next;
		st->reasm->mem -= sizeof(*f) + f->len;
		free(f);
	}
	if (why >= 0)
		stack_drop(st, why);
	memset(q, 0, sizeof(*q));
	st->reasm->n_queues--;
}

/**
 * ip_reasm_fini() - drop everything in progress
 */
void ip_reasm_fini(struct stack *st)
{
	unsigned int i;

	if (!st->reasm)
		return;
	for (i = 0; i < REASM_MAX_QUEUES; i++)
		if (st->reasm->q[i].used)
			reasm_q_free(st, &st->reasm->q[i], -1);
	free(st->reasm);
	st->reasm = NULL;
}

/**
 * ip_reasm_queues() - datagrams in progress (stats, tests)
 */
unsigned int ip_reasm_queues(const struct stack *st)
{
	return st->reasm ? st->reasm->n_queues : 0;
}

/**
 * ip_reasm_limit() - the reassembly memory cap in bytes (--reasm-mem)
 */
size_t ip_reasm_limit(const struct stack *st)
{
	return st->limits.reasm_mem ? (size_t)st->limits.reasm_mem : REASM_MEM_DEFAULT;
}

/**
 * ip_reasm_bytes() - bytes held: fragment data and list nodes (stats, tests)
 */
size_t ip_reasm_bytes(const struct stack *st)
{
	return st->reasm ? st->reasm->mem : 0;
}

static struct reasm_q *reasm_oldest(struct ip_reasm *r, const struct reasm_q *except)
{
	struct reasm_q *old = NULL;
	unsigned int i;

	for (i = 0; i < REASM_MAX_QUEUES; i++) {
		struct reasm_q *q = &r->q[i];

		if (q->used && q != except && (!old || q->created_ms < old->created_ms))
			old = q;
	}
	return old;
}

static struct reasm_q *reasm_find(struct stack *st, const struct reasm_key *k, bool create)
{
	struct ip_reasm *r = st->reasm;
	struct reasm_q *free_q = NULL;
	unsigned int i;

	for (i = 0; i < REASM_MAX_QUEUES; i++) {
		struct reasm_q *q = &r->q[i];

		if (!q->used) {
			if (!free_q)
				free_q = q;
			continue;
		}
		if (!memcmp(&q->key, k, sizeof(*k)))
			return q;
	}
	if (!create)
		return NULL;
	if (!free_q) {
		free_q = reasm_oldest(r, NULL);
		reasm_q_free(st, free_q, DROP_FRAG_NO_MEMORY);
	}
	free_q->used = true;
	free_q->key = *k;
	free_q->created_ms = stack_now_ms(st);
	r->n_queues++;
	stack_housekeeping_kick(st);	/* its timeout */
	return free_q;
}

static struct pkt *reasm_complete(struct stack *st, struct reasm_q *q)
{
	struct pkt *p = pkt_alloc(q->hlen + q->total);
	struct reasm_frag *f;

	if (!p) {
		reasm_q_free(st, q, DROP_NO_MEMORY);
		return NULL;
	}
	if (q->key.family == AF_INET) {
		struct ipv4_hdr *ih = pkt_put(p, q->hlen);

		memcpy(ih, q->hdr, q->hlen);
		ih->tot_len = htons(q->hlen + q->total);
		ih->frag_off = 0;
		ih->csum = 0;
		ih->csum = htons(csum_fold(csum_partial(ih, q->hlen, 0)));
		stack_count(st, CTR_IPV4_REASM_OK);
	} else {
		struct ipv6_hdr *h = pkt_put(p, q->hlen);

		memcpy(h, q->hdr, q->hlen);
		h->payload_len = htons((uint16_t)q->total);
		h->nexthdr = q->key.proto;
		stack_count(st, CTR_IPV6_REASM_OK);
	}
	for (f = q->frags; f; f = f->next)
		memcpy(pkt_put(p, f->len), f->data, f->len);
	p->l3_off = p->off;
	pkt_pull(p, q->hlen);
	reasm_q_free(st, q, -1);
	return p;
}

/*
 * Add [off, off+len) of a datagram; @hdr (@hlen bytes) is the header kept
 * from the first fragment; @max_end bounds off+len.
 */
static struct pkt *reasm_add(struct stack *st, const struct reasm_key *k, uint32_t off,
			     uint32_t len, bool mf, const uint8_t *data, const void *hdr,
			     unsigned int hlen, uint32_t max_end)
{
	struct reasm_frag *f, **pos;
	struct reasm_q *q;

	if (len == 0 || (mf && (len % 8))) {
		stack_drop(st, DROP_BAD_LENGTH);
		return NULL;
	}
	if (off + len > max_end) {
		q = reasm_find(st, k, false);
		if (q)
			reasm_q_free(st, q, -1);
		stack_drop(st, DROP_FRAG_TOO_BIG);
		return NULL;
	}
	q = reasm_find(st, k, true);
	if (!mf) {
		if (q->total && q->total != off + len) {
			reasm_q_free(st, q, DROP_BAD_LENGTH);
			return NULL;
		}
		q->total = off + len;
	}
	/* Find the insertion point; refuse overlaps. */
	for (pos = &q->frags; *pos; pos = &(*pos)->next) {
		f = *pos;
		if (f->off == off && f->len == len) {
			stack_drop(st, DROP_FRAG_OVERLAP);	/* duplicate */
			return NULL;
		}
		if (off < f->off + f->len && f->off < off + len) {
			reasm_q_free(st, q, DROP_FRAG_OVERLAP);
			return NULL;
		}
		if (f->off > off)
			break;
	}
	if (q->total && off + len > q->total) {
		reasm_q_free(st, q, DROP_BAD_LENGTH);
		return NULL;
	}
	if (q->total) {
		for (f = q->frags; f; f = f->next) {
			if (f->off + f->len > q->total) {
				reasm_q_free(st, q, DROP_BAD_LENGTH);
				return NULL;
			}
		}
	}
	if (q->n_frags >= REASM_MAX_FRAGS) {
		reasm_q_free(st, q, DROP_FRAG_NO_MEMORY);
		return NULL;
	}
	while (st->reasm->mem + sizeof(*f) + len > ip_reasm_limit(st)) {
		struct reasm_q *old = reasm_oldest(st->reasm, q);

		if (!old) {
			reasm_q_free(st, q, DROP_FRAG_NO_MEMORY);
			return NULL;
		}
		reasm_q_free(st, old, DROP_FRAG_NO_MEMORY);
	}
	f = malloc(sizeof(*f) + len);
	if (!f) {
		stack_drop(st, DROP_NO_MEMORY);
		return NULL;
	}
	f->off = off;
	f->len = len;
	memcpy(f->data, data, len);
	f->next = *pos;
	*pos = f;
	q->n_frags++;
	q->have += len;
	st->reasm->mem += sizeof(*f) + len;
	if (off == 0) {
		q->hlen = hlen;
		memcpy(q->hdr, hdr, hlen);
	}
	if (q->total && q->have == q->total && q->hlen)
		return reasm_complete(st, q);
	return NULL;
}

/**
 * ipv4_reasm_input() - add one IPv4 fragment
 * @st:	stack
 * @p:	fragment payload at pkt_data() (header pulled, trimmed to its length)
 * @iph: the fragment's IPv4 header (struct ipv4_hdr), already validated
 *
 * Return: the whole datagram (transport header at pkt_data(), IP header at
 * l3_off, to be freed by the caller) when this fragment completed it, else NULL.
 */
struct pkt *ipv4_reasm_input(struct stack *st, struct pkt *p, const void *iph)
{
	const struct ipv4_hdr *ih = iph;
	uint16_t fo = ntohs(ih->frag_off);
	unsigned int hlen = (ih->ver_ihl & 0xf) * 4;
	struct reasm_key k;

	memset(&k, 0, sizeof(k));
	k.family = AF_INET;
	k.proto = ih->proto;
	k.id = ih->id;
	k.src.v4.s_addr = ih->saddr;
	k.dst.v4.s_addr = ih->daddr;
	return reasm_add(st, &k, (uint32_t)(fo & IPV4_OFFMASK) * 8, p->len, fo & IPV4_MF,
			 pkt_data(p), ih, hlen, IPV4_MAX_LEN - hlen);
}

/**
 * ipv6_reasm_input() - add one IPv6 fragment
 * @st:		stack
 * @p:		fragmentable part at pkt_data() (fragment header pulled)
 * @ip6h:	the packet's fixed header (struct ipv6_hdr)
 * @nh:		next header from the fragment header
 * @frag_off:	host-order offset/flags word of the fragment header
 * @id:		identification from the fragment header (as on the wire)
 *
 * Return: the whole datagram (upper-layer header at pkt_data(), a fixed
 * IPv6 header with next header @nh at l3_off, to be freed by the caller)
 * when this fragment completed it, else NULL.
 */
struct pkt *ipv6_reasm_input(struct stack *st, struct pkt *p, const void *ip6h, uint8_t nh,
			     uint16_t frag_off, uint32_t id)
{
	const struct ipv6_hdr *h = ip6h;
	struct reasm_key k;

	memset(&k, 0, sizeof(k));
	k.family = AF_INET6;
	k.proto = nh;
	k.id = id;
	memcpy(&k.src.v6, &h->saddr, 16);
	memcpy(&k.dst.v6, &h->daddr, 16);
	return reasm_add(st, &k, frag_off & 0xfff8, p->len, frag_off & 1, pkt_data(p), h,
			 sizeof(*h), 0xffff);
}

/**
 * ip_reasm_timer() - drop datagrams older than the timeout
 *
 * Return: true while datagrams are still being reassembled.
 */
bool ip_reasm_timer(struct stack *st)
{
	uint64_t now = stack_now_ms(st);
	unsigned int i;

	if (!st->reasm->n_queues)
		return false;
	for (i = 0; i < REASM_MAX_QUEUES; i++) {
		struct reasm_q *q = &st->reasm->q[i];

		if (q->used && now - q->created_ms >= REASM_TIMEOUT_MS)
			reasm_q_free(st, q, DROP_FRAG_TIMEOUT);
	}
	return st->reasm->n_queues != 0;
}

/**
 * pkt_copy_out() - copy bytes from a packet's linear part and tail
 * @p:		packet
 * @off:	offset from pkt_data()
 * @dst:	destination
 * @len:	bytes
 *
 * Return: 0, or -EINVAL when the packet is shorter than @off + @len.
 */
int pkt_copy_out(const struct pkt *p, size_t off, void *dst, size_t len)
{
	uint8_t *d = dst;

	if (off + len > pkt_total_len(p))
		return -EINVAL;
	if (off < p->len) {
		size_t n = p->len - off < len ? p->len - off : len;

		memcpy(d, pkt_data(p) + off, n);
		d += n;
		len -= n;
		off = 0;
	} else {
		off -= p->len;
	}
	if (len)
		memcpy(d, p->tail + off, len);
	return 0;
}

/**
 * ipv4_fragment_output() - send an oversize datagram as fragments
 * @st:		stack
 * @l:		outgoing link
 * @nexthop:	next hop
 * @p:		whole datagram at its 20-byte IP header; given
 * @mtu:	link MTU
 *
 * Return: 0, or -ENOBUFS when a fragment could not be allocated (the rest
 * is not sent; what was sent cannot complete and times out at the peer).
 */
int ipv4_fragment_output(struct stack *st, struct link *l, struct in_addr nexthop,
			 struct pkt *p, uint32_t mtu)
{
	struct ipv4_hdr hdr;
	size_t payload, chunk, off;
	uint16_t base_fo;

	if (mtu < 68 || pkt_copy_out(p, 0, &hdr, sizeof(hdr)) < 0) {
		stack_drop(st, DROP_TOO_BIG);
		pkt_free(p);
		return -EMSGSIZE;
	}
	payload = pkt_total_len(p) - sizeof(hdr);
	chunk = (mtu - sizeof(hdr)) & ~7u;
	base_fo = ntohs(hdr.frag_off) & ~(IPV4_MF | IPV4_OFFMASK);
	for (off = 0; off < payload; off += chunk) {
		size_t n = payload - off < chunk ? payload - off : chunk;
		struct pkt *f = pkt_alloc(sizeof(hdr) + n);
		struct ipv4_hdr *fh;
		uint16_t fo = base_fo | (uint16_t)(off / 8);

		if (!f) {
			stack_drop(st, DROP_NO_MEMORY);
			pkt_free(p);
			return -ENOBUFS;
		}
		if (off + n < payload)
			fo |= IPV4_MF;
		fh = pkt_put(f, sizeof(hdr));
		*fh = hdr;
		fh->tot_len = htons(sizeof(hdr) + n);
		fh->frag_off = htons(fo);
		fh->csum = 0;
		fh->csum = htons(csum_fold(csum_partial(fh, sizeof(hdr), 0)));
		pkt_copy_out(p, sizeof(hdr) + off, pkt_put(f, n), n);
		stack_count(st, CTR_IPV4_FRAG_OUT);
		ipv4_send_l2(st, l, nexthop, f);
	}
	pkt_free(p);
	return 0;
}

/**
 * ipv6_fragment_output() - send an oversize IPv6 datagram as fragments
 * @st:		stack
 * @l:		outgoing link
 * @nexthop:	next hop for the neighbour layer, or NULL when @mac is given
 * @mac:	destination MAC (multicast), or NULL to resolve @nexthop
 * @p:		whole datagram at its 40-byte fixed header, no extension
 *		headers; given
 * @mtu:	link MTU
 *
 * Return: 0, or -ENOBUFS when a fragment could not be allocated.
 */
int ipv6_fragment_output(struct stack *st, struct link *l, const union proto_inaddr *nexthop,
			 const uint8_t *mac, struct pkt *p, uint32_t mtu)
{
	struct ipv6_hdr hdr;
	size_t payload, chunk, off;
	uint32_t id = htonl(st->ipv6_frag_id++);

	if (mtu < 1280 || pkt_copy_out(p, 0, &hdr, sizeof(hdr)) < 0) {
		stack_drop(st, DROP_TOO_BIG);
		pkt_free(p);
		return -EMSGSIZE;
	}
	payload = pkt_total_len(p) - sizeof(hdr);
	chunk = (mtu - sizeof(hdr) - 8) & ~7u;
	for (off = 0; off < payload; off += chunk) {
		size_t n = payload - off < chunk ? payload - off : chunk;
		struct pkt *f = pkt_alloc(sizeof(hdr) + 8 + n);
		uint16_t fo = (uint16_t)off | (off + n < payload ? 1 : 0);
		struct ipv6_hdr *fh;
		uint8_t *fr;

		if (!f) {
			stack_drop(st, DROP_NO_MEMORY);
			pkt_free(p);
			return -ENOBUFS;
		}
		fh = pkt_put(f, sizeof(hdr));
		*fh = hdr;
		fh->payload_len = htons((uint16_t)(8 + n));
		fh->nexthdr = IPPROTO_FRAGMENT;
		fr = pkt_put(f, 8);
		fr[0] = hdr.nexthdr;
		fr[1] = 0;
		fr[2] = fo >> 8;
		fr[3] = fo & 0xff;
		memcpy(fr + 4, &id, 4);
		pkt_copy_out(p, sizeof(hdr) + off, pkt_put(f, n), n);
		stack_count(st, CTR_IPV6_FRAG_OUT);
		stack_count(st, CTR_IPV6_OUT);
		if (mac)
			eth_output(l, mac, ETHERTYPE_IPV6, f);
		else
			neigh_output(st, l, AF_INET6, nexthop, f);
	}
	pkt_free(p);
	return 0;
}
