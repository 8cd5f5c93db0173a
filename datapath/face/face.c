// SPDX-License-Identifier: MIT
/*
 * face.c - the container face: the object, what it registers with the
 * outer stack, and its statistics
 *
 * Theory of operation
 *
 * Without a face the datapath serves a container's addresses: its own
 * programs have no network. With one, they keep their kernel's socket API
 * and get everything through the stack:
 *
 *   programs -> the container kernel's sockets -> the TUN (inner link, tun.c)
 *     -> here: TCP, UDP and ICMP terminated and re-originated
 *     -> the outer stack -> AF_PACKET on eth0 (the outer link) -> the network
 *
 * netsetup made the TUN in the container's netns, moved the container's
 * addresses and routes onto it, and stopped the container's kernel from
 * seeing the outer link (an nftables ingress drop, disable_ipv6). The
 * datapath therefore stands on both sides: towards the network it is the
 * container (the outer stack holds the container's addresses), towards the
 * container's kernel it is the whole network (every destination is "us" on
 * the TUN). Nothing is routed or forwarded: every connection and datagram is
 * received by one side and sent anew by the other, so the container's
 * kernel only ever receives packets the datapath built, and the network only
 * ever receives packets the outer stack built. The sender's TTL, IP options,
 * TCP sequence numbers and options do not cross (the isolation a
 * terminating proxy gives: a peer's crafted segments never reach a kernel's
 * TCP).
 *
 * The face's IP layer on the inner link, what the container sends and what
 * it is sent, is face_ip.c's.
 *
 * The outer stack hands over what is for the container through what the
 * face registered with it (the stack names no face): the outer engine's
 * catch-all listener (SYNs to ports no --publish takes), and, as the
 * stack's upper layer (face_upper_ops, stack_set_upper()), UDP for a port no
 * stack socket holds (face_udp_from_outer()), ICMP echo replies and errors
 * (face_icmp_from_outer()) and echo requests the policy may refuse.
 *
 * Time: one timer a second ages UDP and echo flows out. Everything else is
 * driven by packets and by the end of the loop turn, in the stack's phases
 * (stack_on_turn_end()): face_pump() before the links are flushed,
 * face_turn_end() after.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datapath/face/face_int.h"
#include "datapath/link/vnet.h"
#include "datapath/wire/proto_hdr.h"
#include "common/out.h"

#define FACE_SWEEP_MS		1000

#define FACE_X_NAME(name) #name,
static const char *const face_drop_names[] = { FACE_DROP_LIST(FACE_X_NAME) };
static const char *const face_ctr_names[] = { FACE_CTR_LIST(FACE_X_NAME) };
_Static_assert(sizeof(face_drop_names) / sizeof(face_drop_names[0]) == FACE_DROP_MAX, "drop names");
_Static_assert(sizeof(face_ctr_names) / sizeof(face_ctr_names[0]) == FACE_CTR_MAX, "counter names");

/* "BAD_HEADER" -> "bad_header", the JSON key */
static void face_key(const char *name, char *buf, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		buf[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	buf[i] = '\0';
}

/**
 * face_drop_name() - the name of a drop reason, as stats print it
 */
const char *face_drop_name(unsigned int d)
{
	return d < FACE_DROP_MAX ? face_drop_names[d] : "?";
}

/**
 * face_link_has() - is @a one of @outer's addresses (the container's)?
 */
bool face_link_has(const struct link *outer, const struct net_addr *a)
{
	unsigned int i;

	if (a->family == AF_INET) {
		for (i = 0; i < outer->n_addr4; i++)
			if (outer->addr4[i].addr.s_addr == a->a.v4.s_addr)
				return true;
	} else if (a->family == AF_INET6) {
		for (i = 0; i < outer->n_addr6; i++)
			if (!memcmp(&outer->addr6[i].addr, &a->a.v6, 16))
				return true;
	}
	return false;
}

/**
 * face_tun_for() - the TUN the container's address @container lives on
 * Return: the link, or NULL when no face carries that address.
 */
struct link *face_tun_for(const struct face *f, const struct net_addr *container)
{
	unsigned int i;

	for (i = 0; i < f->n_tuns; i++)
		if (face_link_has(f->tuns[i]->outer, container))
			return f->tuns[i];
	return NULL;
}

/**
 * face_is_container() - is @a one of the addresses a face carries?
 */
bool face_is_container(const struct face *f, const struct net_addr *a)
{
	return face_tun_for(f, a) != NULL;
}

static void face_sweep(struct loop_timer *t)
{
	struct face *f = t->ctx;
	uint64_t now = loop_now_ms(f->st->loop);

	face_udp_sweep(f, now);
	face_icmp_sweep(f, now);
	face_tcp_sweep(f, now);
	loop_timer_arm(f->st->loop, &f->sweep, FACE_SWEEP_MS);
}

/* The inner engine's segments go straight into the TUN of their destination. */
static struct link *face_tcp_link_for(void *ctx, const struct net_addr *dst)
{
	return face_tun_for(ctx, dst);
}

static bool face_tcp_hop_ready(void *ctx, const struct net_addr *dst)
{
	(void)ctx;
	(void)dst;
	return true;	/* a TUN write is at once: borrow, do not copy */
}

static int face_tcp_output(void *ctx, struct pkt *p, const struct net_addr *src, const struct net_addr *dst)
{
	return face_ip_output(ctx, p, src, dst, IPPROTO_TCP);
}

static const struct tcp_glue_ops face_tcp_ops = {
	.link_for = face_tcp_link_for,
	.hop_ready = face_tcp_hop_ready,
	.output = face_tcp_output,
};

/* STACK_TURN_HAND_DOWN: move what connection pairs received to their other
 * end, and send the UDP trains. */
static void face_pump(void *ctx, bool links_idle)
{
	(void)links_idle;
	face_tcp_pump(ctx);
	face_udp_flush(ctx);
}

/* STACK_TURN_FLUSHED: the inner engine's end of turn (timers, retired memory). */
static void face_turn_end(void *ctx, bool links_idle)
{
	struct face *f = ctx;

	tcp_glue_turn_end(f->tcp, links_idle);
}

static bool face_upper_udp(void *ctx, const struct net_addr *src, uint16_t sport, const struct net_addr *dst,
			   uint16_t dport, const uint8_t *data, size_t len)
{
	return face_udp_from_outer(ctx, src, sport, dst, dport, data, len);
}

static void face_upper_icmp(void *ctx, uint8_t family, const struct pkt *p, const struct net_addr *src,
			    const struct net_addr *dst)
{
	face_icmp_from_outer(ctx, family, p, src, dst);
}

static bool face_upper_echo(void *ctx, uint8_t family, const struct pkt *p, const struct net_addr *src,
			    const struct net_addr *dst)
{
	return face_icmp_echo_refused(ctx, family, p, src, dst);
}

static void face_free(struct face *f);

static void face_upper_free(void *ctx)
{
	face_free(ctx);
}

/* What the outer stack hands up that is not its own (stack_set_upper()). */
static const struct stack_upper_ops face_upper_ops = {
	.udp_input = face_upper_udp,
	.icmp_input = face_upper_icmp,
	.echo_refused = face_upper_echo,
	.free = face_upper_free,
};

/**
 * face_of() - the container face of @st, or NULL when it has none
 */
struct face *face_of(const struct stack *st)
{
	return st->upper == &face_upper_ops ? st->upper_ctx : NULL;
}

static struct face *face_new(struct stack *st)
{
	struct face *f = calloc(1, sizeof(*f));
	const struct stack_limits *lim = &st->limits;

	if (!f)
		return NULL;
	f->st = st;
	f->ipv4_id = (uint16_t)(loop_now_ms(st->loop) * 40503u);
	loop_timer_init(&f->sweep, face_sweep, f);
	f->tcp = tcp_glue_new(st, &face_tcp_ops, f);
	if (!f->tcp || stack_key_engine(st, tcp_glue_engine(f->tcp), "face") < 0)
		goto err;
	/* the container side gets the same caps as the network side */
	if (tcp_stack_set_limits(tcp_glue_engine(f->tcp), lim->max_conns, lim->max_half_open,
				 lim->max_timewait, lim->tcp_mem) < 0)
		goto err;
	if (face_udp_init(f) < 0 || face_tcp_init(f) < 0)
		goto err;
	return f;
err:
	face_free(f);
	return NULL;
}

/*
 * The stack's first face: made, and registered as the stack's upper layer
 * and in both phases of its turn end; on failure nothing stays registered.
 */
static int face_register(struct stack *st, struct face **fp)
{
	struct face *f = face_new(st);
	int ret;

	if (!f)
		return -ENOMEM;
	ret = stack_set_upper(st, &face_upper_ops, f);
	if (ret < 0)
		goto err;
	ret = stack_on_turn_end(st, STACK_TURN_HAND_DOWN, face_pump, f);
	if (ret < 0)
		goto err_upper;
	ret = stack_on_turn_end(st, STACK_TURN_FLUSHED, face_turn_end, f);
	if (ret < 0)
		goto err_pump;
	*fp = f;
	return 0;
err_pump:
	stack_off_turn_end(st, face_pump, f);
err_upper:
	stack_set_upper(st, NULL, NULL);
err:
	face_free(f);
	return ret;
}

/**
 * face_add() - give the outer link @outer its container face
 * @st:		the stack; its face is made with the first call
 * @outer:	the packet link whose addresses the TUN carries
 * @cfg:	the FACE netsetup sent; its fds (a queue each) move to the TUN link
 * @err:	on failure, why, in words
 * @err_len:	size of @err
 *
 * Return: 0, or negative errno with @err filled.
 */
int face_add(struct stack *st, struct link *outer, struct proto_face *cfg, char *err, size_t err_len)
{
	struct face *f = face_of(st);
	struct link *tun;
	int ret;

	if (!f) {
		ret = face_register(st, &f);
		if (ret < 0) {
			proto_fds_close(cfg->fds, cfg->n_fds);
			cfg->n_fds = 0;
			snprintf(err, err_len, "face %s: %s", cfg->ifname,
				 ret == -ENOMEM ? "out of memory" : "the stack has no room for its hooks");
			return ret;
		}
	}
	if (f->n_tuns >= PROTO_MAX_LINKS) {
		snprintf(err, err_len, "face %s: too many faces", cfg->ifname);
		return -ENOSPC;
	}
	tun = link_tun_new(st->loop, cfg, outer, err, err_len);
	if (!tun)
		return -ENOMEM;
	ret = stack_add_inner_link(st, tun);
	if (ret < 0) {
		snprintf(err, err_len, "face %s: too many inner links", cfg->ifname);
		link_free(tun);
		return ret;
	}
	tun->rx_fn = face_ip_rx;
	tun->rx_ctx = f;
	f->tuns[f->n_tuns++] = tun;
	face_netstat_take(f, cfg);
	return 0;
}

/**
 * face_start() - start ageing flows (the TUNs start with the stack's links)
 * Return: 0.
 */
int face_start(struct face *f)
{
	if (!f)
		return 0;
	f->started = true;
	loop_timer_arm(f->st->loop, &f->sweep, FACE_SWEEP_MS);
	return 0;
}

/**
 * face_free() - end every connection pair, free the flows and the engine
 * (the stack calls it through face_upper_ops when it goes)
 * @f:	the face, or NULL
 *
 * The TUN links belong to the stack (stack_fini() frees them after this).
 */
static void face_free(struct face *f)
{
	if (!f)
		return;
	loop_timer_cancel(f->st->loop, &f->sweep);
	face_tcp_fini(f);
	face_udp_fini(f);
	face_icmp_fini(f);
	face_netstat_close(f);
	tcp_glue_free(f->tcp);
	free(f);
}

/**
 * face_tcp_engine() - the face's TCP engine (the container side), for the
 * limits of `datapath stats`
 */
struct tcp_stack *face_tcp_engine(const struct face *f)
{
	return tcp_glue_engine(f->tcp);
}

/**
 * face_tcp_glue() - the face's TCP instance, for `datapath ss` and its traces
 * @f:	the face, or NULL
 *
 * Return: the instance, NULL without a face.
 */
struct tcp_glue *face_tcp_glue(const struct face *f)
{
	return f ? f->tcp : NULL;
}

/* The rows of struct face_totals: the summary's "totals" that are the face's. */
static const struct stat_desc face_totals_rows[] = {
	{ .key = "tcp_outbound", .offset = STAT_AT(struct face_totals, tcp_outbound), .kind = STAT_COUNTER,
	  .family = "sandnet_tcp_connections_opened_total",
	  .help = "TCP connections through the container face, by who opened them (outbound: the container).",
	  .label = "direction", .value = "outbound" },
	{ .key = "tcp_inbound", .offset = STAT_AT(struct face_totals, tcp_inbound), .kind = STAT_COUNTER,
	  .label = "direction", .value = "inbound" },
	{ .key = "udp_flows", .offset = STAT_AT(struct face_totals, udp_flows), .kind = STAT_COUNTER,
	  .family = "sandnet_udp_flows_opened_total",
	  .help = "UDP flows through the container face, either side opened." },
	{ .key = "tcp_open", .offset = STAT_AT(struct face_totals, tcp_open), .kind = STAT_GAUGE,
	  .family = "sandnet_tcp_connections_open", .help = "TCP connections of the container open now." },
	{ .key = "udp_flows_open", .offset = STAT_AT(struct face_totals, udp_flows_open), .kind = STAT_GAUGE,
	  .family = "sandnet_udp_flows_open", .help = "UDP flows of the container open now." },
	/* sandnet_drops_total{layer="face"} has them by reason */
	{ .key = "face_drops", .offset = STAT_AT(struct face_totals, drops), .kind = STAT_COUNTER,
	  .family = STAT_NOT_EXPORTED, .help = "Packets the container face dropped, every reason." },
	/* the face's UDP pacer, each way (docs/face.md, "A UDP flow's timing through the face") */
	{ .key = "udp_held_to_container", .offset = STAT_AT(struct face_totals, udp_held_to_container),
	  .kind = STAT_COUNTER, .family = "sandnet_face_udp_paced_total",
	  .help = "UDP datagrams (or GSO frames) the container face held to space them as they arrived, by direction.",
	  .label = "direction", .value = "to_container" },
	{ .key = "udp_held_to_network", .offset = STAT_AT(struct face_totals, udp_held_to_network),
	  .kind = STAT_COUNTER, .label = "direction", .value = "to_network" },
	{ .key = "udp_pace_overruns_to_container", .offset = STAT_AT(struct face_totals, udp_overruns_to_container),
	  .kind = STAT_COUNTER, .family = "sandnet_face_udp_pace_overruns_total",
	  .help = "Of those, sent before their time: held too long or too much held, by direction.",
	  .label = "direction", .value = "to_container" },
	{ .key = "udp_pace_overruns_to_network", .offset = STAT_AT(struct face_totals, udp_overruns_to_network),
	  .kind = STAT_COUNTER, .label = "direction", .value = "to_network" },
	/* the names policy (docs/face.md, "Names"): zero without name rules */
	{ .key = "dns_queries_passed", .offset = STAT_AT(struct face_totals, dns_passed), .kind = STAT_COUNTER,
	  .family = "sandnet_dns_queries_total",
	  .help = "The container's DNS queries read by the names policy, by verdict (passed: sent to the resolver).",
	  .label = "verdict", .value = "passed" },
	{ .key = "dns_queries_refused", .offset = STAT_AT(struct face_totals, dns_refused), .kind = STAT_COUNTER,
	  .label = "verdict", .value = "refused" },
	{ .key = "dns_addresses_bound", .offset = STAT_AT(struct face_totals, dns_bound), .kind = STAT_COUNTER,
	  .family = "sandnet_dns_addresses_bound_total",
	  .help = "Addresses the answers to passed queries bound to their names (renewals included)." },
	{ .key = "tcp_names_passed", .offset = STAT_AT(struct face_totals, names_passed), .kind = STAT_COUNTER,
	  .family = "sandnet_tcp_names_read_total",
	  .help = "TCP connections held until their first bytes gave their name (TLS server_name, HTTP Host), "
		  "by verdict (refused: reset before a byte left).",
	  .label = "verdict", .value = "passed" },
	{ .key = "tcp_names_refused", .offset = STAT_AT(struct face_totals, names_refused), .kind = STAT_COUNTER,
	  .label = "verdict", .value = "refused" },
};

const struct stat_table face_totals_table = STAT_TABLE(face_totals_rows);

/**
 * face_totals() - the few figures per container (face_totals_table)
 * @f:	the face, or NULL (all zero)
 * @t:	receives them
 */
void face_totals(const struct face *f, struct face_totals *t)
{
	struct face_udp_usage u;
	unsigned int i;

	memset(t, 0, sizeof(*t));
	if (!f)
		return;
	t->tcp_outbound = f->ctr[FACE_CTR_TCP_OUTBOUND];
	t->tcp_inbound = f->ctr[FACE_CTR_TCP_INBOUND];
	t->udp_flows = f->ctr[FACE_CTR_UDP_FLOWS_NEW];
	for (i = 0; i < FACE_DROP_MAX; i++)
		t->drops += f->drop[i];
	t->tcp_open = f->n_pairs;
	face_udp_usage(f, &u);
	t->udp_flows_open = u.flows;
	t->udp_held_to_container = u.to_inner.held;
	t->udp_held_to_network = u.to_outer.held;
	t->udp_overruns_to_container = u.to_inner.overruns;
	t->udp_overruns_to_network = u.to_outer.overruns;
	t->dns_refused = f->ctr[FACE_CTR_DNS_REFUSED];
	t->dns_passed = f->ctr[FACE_CTR_DNS_QUERIES] - t->dns_refused;
	t->dns_bound = f->ctr[FACE_CTR_DNS_BOUND];
	t->names_refused = f->ctr[FACE_CTR_TCP_NAMES_REFUSED];
	t->names_passed = f->ctr[FACE_CTR_TCP_NAMES_READ] - t->names_refused;
}

/**
 * face_drops_foreach() - call @fn for every drop reason that counted a packet
 * @f:		the face, or NULL (no call)
 * @fn:		gets the reason's stats name ("bad_header") and its count
 * @arg:	passed to @fn
 */
void face_drops_foreach(const struct face *f, void (*fn)(const char *reason, uint64_t n, void *arg), void *arg)
{
	char key[64];
	unsigned int i;

	for (i = 0; f && i < FACE_DROP_MAX; i++) {
		if (!f->drop[i])
			continue;
		face_key(face_drop_names[i], key, sizeof(key));
		fn(key, f->drop[i], arg);
	}
}

/**
 * face_print_stats() - the "face" object of `datapath stats`
 * @f:	the face, or NULL (nothing is printed)
 * @o:	printer
 */
void face_print_stats(struct face *f, struct out *o)
{
	char key[64];
	unsigned int i;

	if (!f)
		return;
	out_obj_begin(o, "face");
	out_obj_begin(o, "counters");
	for (i = 0; i < FACE_CTR_MAX; i++) {
		face_key(face_ctr_names[i], key, sizeof(key));
		out_u64(o, key, f->ctr[i]);
	}
	out_obj_end(o);
	out_obj_begin(o, "drops");
	for (i = 0; i < FACE_DROP_MAX; i++) {
		face_key(face_drop_names[i], key, sizeof(key));
		out_u64(o, key, f->drop[i]);
	}
	out_obj_end(o);
	face_udp_print(f, o);
	face_icmp_print(f, o);
	face_tcp_print(f, o);
	out_obj_end(o);
	tcp_glue_print(f->tcp, o, "face_tcp", "face_tcp_connections");
}
