// SPDX-License-Identifier: MIT
/*
 * neigh.c - the neighbour cache shared by ARP (IPv4) and NDP (IPv6)
 *
 * Theory of operation
 *
 * One table maps (family, address) to (link, MAC): NEIGH_MAX slots, of which
 * the first neigh_limit() are used (the --max-neigh cap). The
 * states follow RFC 4861 7.3.2, simplified:
 *
 *   (none) --output--> INCOMPLETE --answer--> REACHABLE --30 s--> STALE
 *   INCOMPLETE --3 unanswered solicitations, 1 s apart--> removed, its
 *       queued packets dropped as no_neighbour
 *   STALE: still used; each use at most once a second sends a unicast
 *       solicitation; 3 unanswered -> removed. Any answer -> REACHABLE.
 *   PERMANENT: from netsetup's configuration, never changes.
 *
 * While an entry is INCOMPLETE, packets for it wait in a FIFO of at most
 * NEIGH_PENDING_MAX packets (RFC 1122 2.3.2.2 asks for at least one), and
 * all queues together hold at most NEIGH_PENDING_BYTES; beyond either bound
 * the new packet is dropped as neigh_queue_full. The answer sends the queue
 * in order. A full table (counted as neigh_table_full) evicts the oldest
 * non-permanent entry that has nothing queued; when there is none, the new
 * neighbour is not learned and a packet for it is dropped as no_neighbour.
 * Lookups are linear: the table is small and a container talks to a
 * handful of neighbours (its gateway, mostly). Slots are taken lowest
 * first, and lookups and the timer stop at st->neigh_hi, the end of the
 * slots ever used: with three neighbours a lookup reads three entries, not
 * NEIGH_MAX (it runs for every frame sent).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "datapath/net/net.h"

#define NEIGH_REACHABLE_MS	30000
#define NEIGH_RETRANS_MS	1000
#define NEIGH_MAX_PROBES	3
#define NEIGH_PENDING_BYTES	(4u << 20)

/**
 * neigh_limit() - entries the table may hold (--max-neigh, at most NEIGH_MAX)
 */
unsigned int neigh_limit(const struct stack *st)
{
	unsigned int n = st->limits.neigh_max;

	return n && n < NEIGH_MAX ? n : NEIGH_MAX;
}

/**
 * neigh_count() - entries in use (stats)
 */
unsigned int neigh_count(const struct stack *st)
{
	unsigned int i, n = 0;

	for (i = 0; i < st->neigh_hi; i++)
		n += st->neigh[i].used;
	return n;
}

static size_t neigh_addr_len(uint8_t family)
{
	return family == AF_INET ? 4 : 16;
}

/**
 * neigh_lookup() - the entry for an address, or NULL
 */
struct neigh *neigh_lookup(struct stack *st, uint8_t family, const union proto_inaddr *addr)
{
	unsigned int i;

	for (i = 0; i < st->neigh_hi; i++) {
		struct neigh *n = &st->neigh[i];

		if (n->used && n->family == family &&
		    !memcmp(&n->addr, addr, neigh_addr_len(family)))
			return n;
	}
	return NULL;
}

static void neigh_drop_pending(struct stack *st, struct neigh *n, enum dp_drop why)
{
	while (n->pending) {
		struct pkt *p = n->pending;

		n->pending = p->next;
		st->neigh_pending_bytes -= pkt_total_len(p);
		stack_drop(st, why);
		pkt_free(p);
	}
	n->pending_tail = NULL;
	n->n_pending = 0;
}

static void neigh_remove(struct stack *st, struct neigh *n, enum dp_drop why)
{
	neigh_drop_pending(st, n, why);
	memset(n, 0, sizeof(*n));
}

static struct neigh *neigh_alloc(struct stack *st)
{
	unsigned int i, lim = neigh_limit(st);
	struct neigh *victim = NULL;

	stack_housekeeping_kick(st);	/* a new entry to retry or age */
	for (i = 0; i < lim; i++) {
		if (!st->neigh[i].used) {
			/* slots are taken lowest first: lookups scan only up to here */
			if (i >= st->neigh_hi)
				st->neigh_hi = i + 1;
			return &st->neigh[i];
		}
	}
	stack_count(st, CTR_NEIGH_TABLE_FULL);
	for (i = 0; i < lim; i++) {
		struct neigh *n = &st->neigh[i];

		if (n->state == NEIGH_PERMANENT || n->n_pending)
			continue;
		if (!victim || n->confirmed_ms < victim->confirmed_ms)
			victim = n;
	}
	if (victim)
		neigh_remove(st, victim, DROP_NO_NEIGHBOUR);
	return victim;
}

static uint16_t neigh_ethertype(uint8_t family)
{
	return family == AF_INET ? ETHERTYPE_IPV4 : ETHERTYPE_IPV6;
}

static void neigh_solicit(struct stack *st, struct neigh *n, bool unicast)
{
	n->probe_ms = stack_now_ms(st);
	n->probes++;
	if (n->family == AF_INET)
		arp_solicit(st, n->link, n->addr.v4, unicast ? n->mac : NULL);
	else
		ndp_solicit(st, n->link, &n->addr.v6, unicast, n->mac);
}

static bool neigh_learn(struct stack *st, struct link *l, uint8_t family, const union proto_inaddr *addr,
			const uint8_t *mac, bool create, bool confirmed);

/**
 * neigh_update() - learn or confirm a neighbour's MAC
 * @st:		stack
 * @l:		link it was seen on
 * @family:	AF_INET or AF_INET6
 * @addr:	its address
 * @mac:	its MAC
 * @create:	make an entry if there is none (it is talking to us)
 * @confirmed:	the answer proves reachability (else the entry stays STALE)
 *
 * Packets waiting for this neighbour are sent now, in order; the stack's
 * neigh_learned handler, if one is registered, hears of every MAC seen.
 */
void neigh_update(struct stack *st, struct link *l, uint8_t family, const union proto_inaddr *addr,
		  const uint8_t *mac, bool create, bool confirmed)
{
	neigh_learn(st, l, family, addr, mac, create, confirmed);
	/* whether or not this stack keeps it: the answer may be to another's
	 * question (shards: an NDP answer reaches the shard of its addresses) */
	if (st->neigh_learned)
		st->neigh_learned(st->neigh_learned_ctx, l, family, addr, mac, confirmed);
}

/**
 * neigh_adopt() - what another stack on the same link heard (shards)
 * @st, @l, @family, @addr, @mac, @confirmed: as for neigh_update()
 *
 * Only an entry this stack has is updated (one it asked for, or knew): a
 * stream of answers nobody asked for fills no table. Not passed on again:
 * the stack that heard it told every other one.
 */
void neigh_adopt(struct stack *st, struct link *l, uint8_t family, const union proto_inaddr *addr,
		 const uint8_t *mac, bool confirmed)
{
	neigh_learn(st, l, family, addr, mac, false, confirmed);
}

/* neigh_update() without telling anyone; true when an entry took @mac. */
static bool neigh_learn(struct stack *st, struct link *l, uint8_t family, const union proto_inaddr *addr,
			const uint8_t *mac, bool create, bool confirmed)
{
	struct neigh *n = neigh_lookup(st, family, addr);

	if (!n) {
		if (!create)
			return false;
		n = neigh_alloc(st);
		if (!n)
			return false;
		n->used = true;
		n->family = family;
		memcpy(&n->addr, addr, neigh_addr_len(family));
	}
	if (n->state == NEIGH_PERMANENT)
		return false;
	if (n->state == NEIGH_INCOMPLETE || confirmed)
		stack_count(st, CTR_NEIGH_RESOLVED);
	memcpy(n->mac, mac, 6);
	n->link = l;
	n->state = confirmed ? NEIGH_REACHABLE : NEIGH_STALE;
	n->confirmed_ms = stack_now_ms(st);
	n->probes = 0;
	while (n->pending) {
		struct pkt *p = n->pending;

		n->pending = p->next;
		p->next = NULL;
		st->neigh_pending_bytes -= pkt_total_len(p);
		eth_output(l, n->mac, neigh_ethertype(family), p);
	}
	n->pending_tail = NULL;
	n->n_pending = 0;
	return true;
}

/**
 * neigh_add_permanent() - a static entry from the configuration
 * Return: 0, -EINVAL for a bad family, -ENOSPC when the table is full.
 */
int neigh_add_permanent(struct stack *st, struct link *l, const struct proto_neigh *pn)
{
	struct neigh *n;

	if (pn->family != AF_INET && pn->family != AF_INET6)
		return -EINVAL;
	n = neigh_lookup(st, pn->family, &pn->addr);
	if (!n)
		n = neigh_alloc(st);
	if (!n)
		return -ENOSPC;
	neigh_drop_pending(st, n, DROP_NO_NEIGHBOUR);
	memset(n, 0, sizeof(*n));
	n->used = true;
	n->family = pn->family;
	n->addr = pn->addr;
	memcpy(n->mac, pn->lladdr, 6);
	n->link = l;
	n->state = NEIGH_PERMANENT;
	return 0;
}

/**
 * neigh_output() - send a packet to a next hop, resolving it if needed
 * @st:		stack
 * @l:		outgoing link
 * @family:	AF_INET or AF_INET6
 * @nexthop:	gateway or final destination on the link
 * @p:		packet at the network header; given
 */
void neigh_output(struct stack *st, struct link *l, uint8_t family, const union proto_inaddr *nexthop,
		  struct pkt *p)
{
	struct neigh *n = neigh_lookup(st, family, nexthop);
	uint64_t now = stack_now_ms(st);

	if (n && n->state != NEIGH_INCOMPLETE) {
		if (n->state == NEIGH_STALE && n->probes < NEIGH_MAX_PROBES &&
		    now - n->probe_ms >= NEIGH_RETRANS_MS)
			neigh_solicit(st, n, true);
		eth_output(n->link, n->mac, neigh_ethertype(family), p);
		return;
	}
	if (!n) {
		n = neigh_alloc(st);
		if (!n) {
			stack_drop(st, DROP_NO_NEIGHBOUR);
			pkt_free(p);
			return;
		}
		n->used = true;
		n->family = family;
		memcpy(&n->addr, nexthop, neigh_addr_len(family));
		n->link = l;
		n->state = NEIGH_INCOMPLETE;
		neigh_solicit(st, n, false);
	}
	if (n->n_pending >= NEIGH_PENDING_MAX ||
	    st->neigh_pending_bytes + pkt_total_len(p) > NEIGH_PENDING_BYTES) {
		stack_drop(st, DROP_NEIGH_QUEUE_FULL);
		pkt_free(p);
		return;
	}
	p->next = NULL;
	if (n->pending_tail)
		n->pending_tail->next = p;
	else
		n->pending = p;
	n->pending_tail = p;
	n->n_pending++;
	st->neigh_pending_bytes += pkt_total_len(p);
	stack_count(st, CTR_NEIGH_QUEUED);
}

/**
 * neigh_timer() - retries and ageing; called by the housekeeping timer
 *
 * Return: true while an entry that is not permanent remains (the timer must
 * keep ticking for it).
 */
bool neigh_timer(struct stack *st)
{
	uint64_t now = stack_now_ms(st);
	unsigned int i;
	bool busy = false;

	for (i = 0; i < st->neigh_hi; i++) {
		struct neigh *n = &st->neigh[i];

		if (!n->used || n->state == NEIGH_PERMANENT)
			continue;
		busy = true;
		switch (n->state) {
		case NEIGH_INCOMPLETE:
			if (now - n->probe_ms < NEIGH_RETRANS_MS)
				break;
			if (n->probes >= NEIGH_MAX_PROBES)
				neigh_remove(st, n, DROP_NO_NEIGHBOUR);
			else
				neigh_solicit(st, n, false);
			break;
		case NEIGH_REACHABLE:
			if (now - n->confirmed_ms >= NEIGH_REACHABLE_MS) {
				n->state = NEIGH_STALE;
				n->probes = 0;
			}
			break;
		case NEIGH_STALE:
			if (n->probes >= NEIGH_MAX_PROBES && now - n->probe_ms >= NEIGH_RETRANS_MS)
				neigh_remove(st, n, DROP_NO_NEIGHBOUR);
			break;
		default:
			break;
		}
	}
	return busy;
}

/**
 * neigh_flush() - empty the table, dropping queued packets (exit)
 */
void neigh_flush(struct stack *st)
{
	unsigned int i;

	for (i = 0; i < NEIGH_MAX; i++)
		if (st->neigh[i].used)
			neigh_remove(st, &st->neigh[i], DROP_NO_NEIGHBOUR);
	st->neigh_hi = 0;
}
