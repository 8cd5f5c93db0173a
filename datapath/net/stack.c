// SPDX-License-Identifier: MIT
/*
 * stack.c - the stack object: links, housekeeping timer, address helpers
 *
 * Theory of operation: struct stack (net.h) holds every table of the network
 * layer; the protocol files keep no globals. stack_start() announces the
 * links (gratuitous ARP, DAD) and arms one housekeeping timer every
 * STACK_TICK_MS that drives the neighbour cache (retries, ageing),
 * reassembly timeouts and DAD completion. One coarse timer is enough at
 * these resolutions (RFC 4861 RetransTimer 1 s, RFC 791 reassembly 15+ s)
 * and keeps per-entry timers out of the tables. It ticks only while one of
 * them has work, and a new neighbour entry or reassembly queue wakes it
 * (stack_housekeeping_kick()): an idle stack is not woken five times a
 * second.
 *
 * ICMP errors of both families share a token bucket (stack_icmp_allow(),
 * like the kernel's icmp_ratelimit) so that a flood of bad packets cannot be
 * turned into a flood of answers.
 *
 * The end of a loop turn has one owner, stack_turn_end(), the only turn-end
 * hook the stack registers. Its phases (enum stack_turn_phase), in order:
 *   1. STACK_TURN_HAND_DOWN: the layers above hand down what they batched
 *      during the turn, in the order they registered (stack_on_turn_end()):
 *      the UDP services' datagram runs, then the inner side moving the bytes
 *      its connection pairs received to their other connection;
 *   2. every link, outer and inner, is flushed: what the turn produced
 *      leaves in one sendmmsg() per link (a TUN: one write a packet);
 *   3. the stack's own TCP engine frees retired send memory if no link
 *      holds a borrowed frame any more, and arms its timer;
 *   4. STACK_TURN_FLUSHED: the layers above do the same for their engines.
 * The loop then frees what was deferred during the turn (loop_defer()).
 *
 * Layers above register; the stack names none of them. What is addressed to
 * us but not the stack's own (a datagram no socket holds, an echo reply, an
 * ICMP error, an echo request the layer may refuse) goes to the one layer
 * that registered for it with stack_set_upper().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sodium.h>

#include "common/flowhash.h"
#include "datapath/flow.h"
#include "datapath/net/net.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/tcp/tcp.h"

#define STACK_TICK_MS		200
#define ICMP_BURST_PER_RATE	0.1	/* a tenth of a second's worth at once */

/* Ticks while a table has work, then sleeps until stack_housekeeping_kick(). */
static void stack_housekeeping(struct loop_timer *t)
{
	struct stack *st = t->ctx;
	bool busy = neigh_timer(st);

	busy |= ip_reasm_timer(st);
	busy |= ndp_dad_timer(st);
	if (busy)
		loop_timer_arm(st->loop, &st->housekeeping, STACK_TICK_MS);
}

/**
 * stack_housekeeping_kick() - a table got work for the housekeeping timer
 * @st:		stack (a new neighbour entry, a new reassembly queue)
 *
 * An idle stack's housekeeping timer sleeps: nothing wakes the loop every
 * STACK_TICK_MS when no neighbour is resolving or ageing, no datagram is
 * being reassembled and no address is tentative.
 */
void stack_housekeeping_kick(struct stack *st)
{
	if (st->started && !loop_timer_armed(&st->housekeeping))
		loop_timer_arm(st->loop, &st->housekeeping, STACK_TICK_MS);
}

/**
 * stack_links_flush() - flush every link, outer and inner
 * @st:			stack
 *
 * Return: frames with a borrowed tail still queued (a link blocked by EAGAIN).
 */
unsigned int stack_links_flush(struct stack *st)
{
	unsigned int i, borrowed = 0;

	for (i = 0; i < st->n_links + st->n_inner; i++) {
		struct link *l = i < st->n_links ? st->links[i] : st->inner[i - st->n_links];

		link_tx_flush(l);
		borrowed += link_tx_borrowed(l);
	}
	return borrowed;
}

/* The registered work of one phase, in the order registered. */
static void stack_turn_phase(struct stack *st, enum stack_turn_phase phase, bool links_idle)
{
	unsigned int i;

	for (i = 0; i < st->n_turn_fns; i++)
		if (st->turn_fns[i].phase == phase)
			st->turn_fns[i].fn(st->turn_fns[i].ctx, links_idle);
}

/* The one turn-end hook (see the theory of operation). */
static void stack_turn_end(void *ctx)
{
	struct stack *st = ctx;
	unsigned int borrowed;

	stack_turn_phase(st, STACK_TURN_HAND_DOWN, false);
	borrowed = stack_links_flush(st);
	if (st->tcp)
		tcp_glue_turn_end(st->tcp, !borrowed);
	stack_turn_phase(st, STACK_TURN_FLUSHED, !borrowed);
}

/**
 * stack_on_turn_end() - have @fn run in @phase of the end of each turn
 * @st:		stack
 * @phase:	STACK_TURN_HAND_DOWN (before the links are flushed) or
 *		STACK_TURN_FLUSHED (after)
 * @fn:		the work; within a phase, in the order registered
 * @ctx:	for @fn
 *
 * Return: 0, -EINVAL for an unknown phase, or -ENOSPC beyond
 * STACK_MAX_TURN_FNS.
 */
int stack_on_turn_end(struct stack *st, enum stack_turn_phase phase, stack_turn_fn fn, void *ctx)
{
	if ((unsigned int)phase >= STACK_TURN_PHASES)
		return -EINVAL;
	if (st->n_turn_fns >= STACK_MAX_TURN_FNS)
		return -ENOSPC;
	st->turn_fns[st->n_turn_fns].phase = phase;
	st->turn_fns[st->n_turn_fns].fn = fn;
	st->turn_fns[st->n_turn_fns].ctx = ctx;
	st->n_turn_fns++;
	return 0;
}

/**
 * stack_off_turn_end() - undo stack_on_turn_end() for @fn with @ctx (if there)
 * @st:		stack
 * @fn:		as registered
 * @ctx:	as registered
 */
void stack_off_turn_end(struct stack *st, stack_turn_fn fn, void *ctx)
{
	unsigned int i;

	for (i = 0; i < st->n_turn_fns; i++) {
		if (st->turn_fns[i].fn != fn || st->turn_fns[i].ctx != ctx)
			continue;
		memmove(&st->turn_fns[i], &st->turn_fns[i + 1],
			(st->n_turn_fns - i - 1) * sizeof(st->turn_fns[0]));
		st->n_turn_fns--;
		return;
	}
}

/**
 * stack_set_upper() - the layer above that takes what is not the stack's own
 * @st:		stack
 * @ops:	its handlers (struct stack_upper_ops), or NULL to remove it
 * @ctx:	for @ops
 *
 * Return: 0, or -EBUSY when another layer is registered already.
 */
int stack_set_upper(struct stack *st, const struct stack_upper_ops *ops, void *ctx)
{
	if (ops && st->upper)
		return -EBUSY;
	st->upper = ops;
	st->upper_ctx = ops ? ctx : NULL;
	return 0;
}

/**
 * stack_init() - an empty stack on @loop
 * Return: 0, -ENOMEM, or -ENOSPC when the loop has no room for its hook.
 */
int stack_init(struct stack *st, struct loop *loop)
{
	int ret;

	memset(st, 0, sizeof(*st));
	st->loop = loop;
	stack_set_icmp_rate(st, STACK_ICMP_RATE_DEFAULT);
	st->ipv4_id = (uint16_t)(loop_now_ms(loop) * 2654435761u);
	st->ipv6_frag_id = (uint32_t)(loop_now_ms(loop) * 2246822519u);
	loop_timer_init(&st->housekeeping, stack_housekeeping, st);
	st->flows = flow_table_new();
	if (!st->flows)
		return -ENOMEM;
	ret = udp_table_init(st);
	if (ret < 0)
		goto err_flows;
	ret = ip_reasm_init(st);
	if (ret < 0)
		goto err_udp;
	ret = tcp_glue_init(st);
	if (ret < 0)
		goto err_reasm;
	ret = loop_on_turn_end(loop, stack_turn_end, st);
	if (ret < 0)
		goto err_tcp;
	return 0;
err_tcp:
	tcp_glue_fini(st);
err_reasm:
	ip_reasm_fini(st);
err_udp:
	udp_table_fini(st);
err_flows:
	flow_table_free(st->flows);
	st->flows = NULL;
	return ret;
}

/**
 * stack_fini() - free every table and link
 */
void stack_fini(struct stack *st)
{
	unsigned int i;

	loop_timer_cancel(st->loop, &st->housekeeping);
	loop_off_turn_end(st->loop, stack_turn_end, st);
	if (st->upper && st->upper->free)
		st->upper->free(st->upper_ctx);
	st->upper = NULL;
	st->upper_ctx = NULL;
	tcp_glue_fini(st);
	neigh_flush(st);
	ip_reasm_fini(st);
	udp_table_fini(st);
	flow_table_free(st->flows);
	st->flows = NULL;
	for (i = 0; i < st->n_links; i++)
		link_free(st->links[i]);
	for (i = 0; i < st->n_inner; i++)
		link_free(st->inner[i]);
	st->n_links = 0;
	st->n_inner = 0;
}

/* What a link registers with us: its drops are the stack's, its frames Ethernet's. */
static void stack_link_drop(void *ctx, enum dp_drop why)
{
	stack_drop(ctx, why);
}

static void stack_link_input(void *ctx, struct link *l, struct pkt *p)
{
	eth_input(ctx, l, p);
}

/**
 * stack_add_link() - take a link, its routes come separately (route_add())
 * @st:		stack
 * @l:		a packet link; its frames go to eth_input(), its drops to @st
 * Return: 0 or -ENOSPC.
 */
int stack_add_link(struct stack *st, struct link *l)
{
	if (st->n_links >= PROTO_MAX_LINKS)
		return -ENOSPC;
	st->links[st->n_links++] = l;
	l->rx_fn = stack_link_input;
	l->rx_ctx = st;
	l->drop_fn = stack_link_drop;
	l->drop_ctx = st;
	route_add_connected(st, l);
	return 0;
}

/**
 * stack_add_inner_link() - take a layer above's inner link (flushed, freed with the rest)
 * @st:		stack
 * @l:		a TUN; its drops are counted in @st, its frames go where the
 *		layer that made it registers them (rx_fn)
 * Return: 0 or -ENOSPC.
 */
int stack_add_inner_link(struct stack *st, struct link *l)
{
	if (st->n_inner >= PROTO_MAX_LINKS)
		return -ENOSPC;
	st->inner[st->n_inner++] = l;
	l->drop_fn = stack_link_drop;
	l->drop_ctx = st;
	return 0;
}

/**
 * stack_start() - watch the channels, announce the addresses, start timers
 * Return: 0 or negative errno.
 */
int stack_start(struct stack *st)
{
	unsigned int i, j;
	int ret;

	for (i = 0; i < st->n_links; i++) {
		struct link *l = st->links[i];

		ret = link_start(l);
		if (ret < 0)
			return ret;
		for (j = 0; j < l->n_addr4; j++)
			arp_announce(st, l, l->addr4[j].addr);
		ndp_dad_start(st, l);
	}
	for (i = 0; i < st->n_inner; i++) {
		ret = link_start(st->inner[i]);
		if (ret < 0)
			return ret;
	}
	st->started = true;
	loop_timer_arm(st->loop, &st->housekeeping, STACK_TICK_MS);
	return 0;
}

/**
 * stack_link_by_ifindex() - the link with that index, or NULL
 */
struct link *stack_link_by_ifindex(struct stack *st, uint32_t ifindex)
{
	unsigned int i;

	for (i = 0; i < st->n_links; i++)
		if (st->links[i]->ifindex == ifindex)
			return st->links[i];
	return NULL;
}

/**
 * stack_set_icmp_rate() - how many ICMP errors a second this stack sends
 * @st:		the stack
 * @per_s:	the rate (--icmp-ratelimit; with shards, this stack's share:
 *		limits_share()), at least 1; the bucket holds a tenth of a
 *		second's worth, at least one
 */
void stack_set_icmp_rate(struct stack *st, uint32_t per_s)
{
	st->icmp_rate = per_s ? per_s : 1;
	st->icmp_burst = st->icmp_rate * ICMP_BURST_PER_RATE >= 1.0 ? st->icmp_rate * ICMP_BURST_PER_RATE : 1.0;
	st->icmp_tokens = st->icmp_burst;
}

/**
 * stack_icmp_allow() - take one token for an ICMP error
 * Return: true if an error may be sent now.
 */
bool stack_icmp_allow(struct stack *st)
{
	uint64_t now = stack_now_ms(st);

	st->icmp_tokens += (now - st->icmp_tokens_ms) * st->icmp_rate / 1000.0;
	st->icmp_tokens_ms = now;
	if (st->icmp_tokens > st->icmp_burst)
		st->icmp_tokens = st->icmp_burst;
	if (st->icmp_tokens < 1.0) {
		stack_count(st, CTR_ICMP_RATE_LIMITED);
		return false;
	}
	st->icmp_tokens -= 1.0;
	return true;
}

/**
 * net_addr_eq() - same family and address
 */
bool net_addr_eq(const struct net_addr *a, const struct net_addr *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == AF_INET)
		return a->a.v4.s_addr == b->a.v4.s_addr;
	if (a->family == AF_INET6)
		return !memcmp(&a->a.v6, &b->a.v6, 16);
	return true;
}

/**
 * net_addr_parse() - a numeric IPv4 or IPv6 address (no brackets)
 * Return: 0, or -EINVAL when @s is neither.
 */
int net_addr_parse(const char *s, struct net_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, &out->a.v4) == 1) {
		out->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &out->a.v6) == 1) {
		out->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

/**
 * net_addr_str() - text form ("*" for any)
 * Return: @buf.
 */
const char *net_addr_str(const struct net_addr *a, char *buf, size_t len)
{
	if (a->family != AF_INET && a->family != AF_INET6) {
		snprintf(buf, len, "*");
		return buf;
	}
	if (!inet_ntop(a->family, &a->a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/**
 * stack_key_engine() - key a TCP engine of this stack from its secret
 * @st:		the stack
 * @engine:	one of its engines, before its first connection
 * @label:	which one ("outer", or the layer above's name): each gets its own key
 *
 * Without a secret (no supervisor: tests, fuzzers) the engine keeps its
 * random key.
 *
 * Return: 0 or -EBUSY (tcp_stack_set_secret()).
 */
int stack_key_engine(const struct stack *st, struct tcp_stack *engine, const char *label)
{
	uint8_t key[16];

	if (!st->has_secret)
		return 0;
	crypto_generichash(key, sizeof(key), (const uint8_t *)label, strlen(label), st->secret, sizeof(st->secret));
	return tcp_stack_set_secret(engine, key);
}

/**
 * stack_on_neigh_learned() - hear of every neighbour this stack learns
 * @st:		the stack
 * @fn:		called after neigh_update() took a MAC, or NULL
 * @ctx:	its argument
 */
void stack_on_neigh_learned(struct stack *st, stack_neigh_fn fn, void *ctx)
{
	st->neigh_learned = fn;
	st->neigh_learned_ctx = ctx;
}

/**
 * stack_steer_set() - this stack is one of @n the kernel steers packets among
 * @st:		the stack
 * @seed:	the steering program's secret (netsetup's, in the LINK)
 * @n:		how many stacks (shards)
 * @index:	which one this is
 *
 * The ports the stack picks itself must land here (stack_owns_flow()): a
 * connection whose answers the program sent to another stack would never
 * see them.
 */
void stack_steer_set(struct stack *st, uint32_t seed, unsigned int n, unsigned int index)
{
	st->steer_seed = seed;
	st->steer_n = n;
	st->steer_index = index;
}

/**
 * stack_owns_flow() - whether the kernel steers a flow's packets to @st
 * @st:		the stack
 * @protocol:	IPPROTO_TCP (its ports count), or another (they do not)
 * @a, @a_port:	one end
 * @b, @b_port:	the other (the hash is symmetric)
 *
 * Return: true, also for a stack that is not steered.
 */
bool stack_owns_flow(const struct stack *st, int protocol, const struct net_addr *a, uint16_t a_port,
		     const struct net_addr *b, uint16_t b_port)
{
	if (st->steer_n < 2)
		return true;
	if (a->family != b->family)
		return false;
	return flowhash_flow(a->family, protocol, &a->a, &b->a, a_port, b_port, st->steer_seed, st->steer_n) ==
	       st->steer_index;
}

/**
 * stack_owner_of_remote() - which stack the answers from @remote reach, for
 * a flow that goes by its address pair (anything but TCP) from the source
 * address a stack would pick for it
 * @st:		any of the stacks (they share addresses and routes)
 * @remote:	where the flow goes
 *
 * Return: the index of the stack (0 when not steered), or -ENETUNREACH.
 */
int stack_owner_of_remote(const struct stack *st, const struct net_addr *remote)
{
	struct net_addr src = { .family = remote->family };
	int ret;

	if (st->steer_n < 2)
		return 0;
	ret = remote->family == AF_INET ? ipv4_pick_src(st, remote->a.v4, &src.a.v4) :
	      remote->family == AF_INET6 ? ipv6_pick_src(st, NULL, &remote->a.v6, &src.a.v6) : -EAFNOSUPPORT;
	if (ret < 0)
		return -ENETUNREACH;
	return (int)flowhash_flow(remote->family, IPPROTO_UDP, &src.a, &remote->a, 0, 0, st->steer_seed,
				  st->steer_n);
}

/**
 * stack_set_secret() - the secret the supervisor keeps across restarts
 * (datapath/ledger.c): ISNs and timestamps of every engine of this stack
 * continue those of the datapath before
 * @st:		the stack, before its first connection
 * @secret:	32 bytes
 *
 * Return: 0 or -EBUSY.
 */
int stack_set_secret(struct stack *st, const uint8_t secret[32])
{
	memcpy(st->secret, secret, sizeof(st->secret));
	st->has_secret = true;
	return stack_key_engine(st, tcp_glue_stack(st), "outer");
}
