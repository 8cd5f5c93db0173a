// SPDX-License-Identifier: MIT
/*
 * pkt.c - allocation of packet buffers and shared payloads
 *
 * The layout and the rules are described in pkt.h. This file owns the free
 * list of small packets (bounded, so a burst does not pin memory forever) and
 * the live-packet count the unit tests check for leaks, both per thread: a
 * shard (issue 20) takes and returns packets without a lock.
 */
#include <stdlib.h>
#include <string.h>

#include "datapath/pkt.h"

#define PKT_POOL_MAX	4096

static __thread struct pkt *pkt_pool;	/* per thread: a shard's own */
static __thread unsigned int pkt_pool_len;
static __thread long pkt_live_count;

/**
 * pkt_alloc() - a packet with PKT_HEADROOM bytes of headroom
 * @data_bytes:	linear bytes the caller may pkt_put() after the headroom
 *
 * Return: the packet (len 0), or NULL when memory is short.
 */
struct pkt *pkt_alloc(size_t data_bytes)
{
	size_t cap = PKT_HEADROOM + data_bytes;
	struct pkt *p;
	bool pooled = data_bytes <= PKT_SMALL_BYTES;

	if (pooled) {
		cap = PKT_HEADROOM + PKT_SMALL_BYTES;
		if (pkt_pool) {
			p = pkt_pool;
			pkt_pool = p->next;
			pkt_pool_len--;
			goto init;
		}
	}
	if (cap > UINT32_MAX)
		return NULL;
	p = malloc(sizeof(*p) + cap);
	if (!p)
		return NULL;
init:
	memset(p, 0, sizeof(*p));
	p->buf = (uint8_t *)(p + 1);
	p->cap = cap;
	p->off = PKT_HEADROOM;
	p->pooled = pooled;
	pkt_live_count++;
	return p;
}

/**
 * pkt_reset() - empty a packet for reuse (a receive buffer after its batch)
 * @p:	packet; its tail reference is released
 */
void pkt_reset(struct pkt *p)
{
	pkt_set_payload(p, NULL, 0, 0);
	p->next = NULL;
	p->off = PKT_HEADROOM;
	p->len = 0;
	memset(&p->vnet, 0, sizeof(p->vnet));
	p->ifindex = 0;
	p->l3_off = 0;
	p->rx_us = 0;
	p->rx_after_us = 0;
	p->tos = 0;
	p->csum_ok = false;
}

/**
 * pkt_free() - release a packet and its reference on the shared tail
 * @p:	packet or NULL
 */
void pkt_free(struct pkt *p)
{
	if (!p)
		return;
	pkt_set_payload(p, NULL, 0, 0);
	pkt_live_count--;
	if (p->pooled && pkt_pool_len < PKT_POOL_MAX) {
		p->next = pkt_pool;
		pkt_pool = p;
		pkt_pool_len++;
		return;
	}
	free(p);
}

/**
 * pkt_clone() - a private copy of the linear bytes, the same tail reference
 * @p:	packet to copy
 *
 * Return: the copy, or NULL when memory is short.
 */
struct pkt *pkt_clone(const struct pkt *p)
{
	struct pkt *c = pkt_alloc(p->len);

	if (!c)
		return NULL;
	memcpy(pkt_put(c, p->len), pkt_data(p), p->len);
	c->vnet = p->vnet;
	c->ifindex = p->ifindex;
	c->tos = p->tos;
	c->csum_ok = p->csum_ok;
	c->l3_off = p->l3_off >= p->off ? PKT_HEADROOM + (p->l3_off - p->off) : 0;
	if (p->pl)
		pkt_set_payload(c, p->pl, p->tail - p->pl->data, p->tail_len);
	else
		pkt_set_tail(c, p->tail, p->tail_len);
	return c;
}

/**
 * pkt_live() - packets allocated and not yet freed (leak checks)
 * Return: the count.
 */
long pkt_live(void)
{
	return pkt_live_count;
}

/**
 * pkt_pool_drain() - give the free list back to malloc (at exit)
 */
void pkt_pool_drain(void)
{
	while (pkt_pool) {
		struct pkt *p = pkt_pool;

		pkt_pool = p->next;
		free(p);
	}
	pkt_pool_len = 0;
}

/**
 * pkt_payload_new() - a shared payload block holding a copy of @data
 * @data:	bytes, or NULL to leave them uninitialised for the caller to fill
 * @len:	byte count
 *
 * Return: the block with one reference, or NULL when memory is short.
 */
struct pkt_payload *pkt_payload_new(const void *data, size_t len)
{
	struct pkt_payload *pl;

	if (len > UINT32_MAX)
		return NULL;
	pl = malloc(sizeof(*pl) + len);
	if (!pl)
		return NULL;
	pl->refs = 1;
	pl->len = len;
	if (data)
		memcpy(pl->data, data, len);
	pkt_live_count++;
	return pl;
}

/**
 * pkt_payload_get() - take one more reference
 * Return: @pl.
 */
struct pkt_payload *pkt_payload_get(struct pkt_payload *pl)
{
	if (pl)
		pl->refs++;
	return pl;
}

/**
 * pkt_payload_put() - drop one reference; the last one frees the block
 * @pl:	block or NULL
 */
void pkt_payload_put(struct pkt_payload *pl)
{
	if (pl && --pl->refs == 0) {
		pkt_live_count--;
		free(pl);
	}
}

/**
 * pkt_set_payload() - make a slice of @pl the packet's tail
 * @p:		packet; a previous tail is released
 * @pl:		block (a reference is taken) or NULL for none
 * @off:	first byte of the slice; the caller checked off + len <= pl->len
 * @len:	bytes of the slice
 */
void pkt_set_payload(struct pkt *p, struct pkt_payload *pl, uint32_t off, uint32_t len)
{
	struct pkt_payload *old = p->pl;

	p->pl = pkt_payload_get(pl);
	p->tail = pl ? pl->data + off : NULL;
	p->tail_len = pl ? len : 0;
	pkt_payload_put(old);
}

/**
 * pkt_set_tail() - make borrowed memory the packet's tail (no reference)
 * @p:		packet; a previous tail is released
 * @data:	bytes that stay valid until the link has sent the frame: the
 *		owner (TCP's send buffer) releases them only when
 *		link_tx_borrowed() of every link is 0 after a flush
 * @len:	bytes
 */
void pkt_set_tail(struct pkt *p, const void *data, uint32_t len)
{
	pkt_set_payload(p, NULL, 0, 0);
	p->tail = data;
	p->tail_len = data ? len : 0;
}
