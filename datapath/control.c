// SPDX-License-Identifier: MIT
/*
 * control.c - the control socket and `datapath stats`
 *
 * Theory of operation: --control SOCKET makes a unix SOCK_STREAM listener,
 * bound before privileges are dropped (so it may live in /run/sandnet) and
 * made 0600: only root and the datapath's own user may ask. A client sends
 * one line, "stats" or "stats json" (everything), "summary" or "summary
 * json" (the totals, each link's bytes and frames, the drops by reason and
 * the policy's hits: control_print_summary(), what `datapath stats --all`
 * shows per container and `datapath metrics` exports, metrics_expo.c), and
 * reads the answer until EOF. The summary stays small whatever the load (no
 * connection or neighbour lists) so that scraping it every few seconds costs
 * the loop nothing it would notice. The
 * request is read and the answer written with 1-second socket timeouts right
 * in the loop's turn: the answer is a few KiB and the client is local, so a
 * stuck client costs at most a second or two, and no state is kept per
 * client.
 *
 * control_print_stats() is the one code path for text and JSON (out.h): the
 * JSON keys are the text labels, documented in docs/datapath.md. Its
 * "limits" object shows each resource cap (docs/security.md) as max, used
 * and hits (how often the cap was reached).
 *
 * Every answer is of the whole process or an error line ("error: busy: ..."
 * when a shard did not stop to be read within a second): never one shard's
 * counters in the place of all of them, which a Prometheus scrape would take
 * for a counter reset. The client (control_client.c) asks a busy datapath
 * again a few times before it gives up.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "datapath/datapath.h"
#include "datapath/control_proto.h"
#include "datapath/face/face.h"
#include "datapath/ledger.h"
#include "datapath/net/tcp_glue.h"
#include "common/out.h"
#include "datapath/policy.h"
#include "datapath/shard.h"

#define CONTROL_REQ_MAX	(CONTROL_REQ_LINE_MAX - 1)

static const char *const neigh_state_names[] = {
	[NEIGH_INCOMPLETE] = "incomplete",
	[NEIGH_REACHABLE] = "reachable",
	[NEIGH_STALE] = "stale",
	[NEIGH_PERMANENT] = "permanent",
};
_Static_assert(sizeof(neigh_state_names) / sizeof(neigh_state_names[0]) == NEIGH_STATE_MAX,
	       "neigh state names");

static const char *const addr6_state_names[] = {
	[ADDR6_TENTATIVE] = "tentative",
	[ADDR6_PREFERRED] = "preferred",
	[ADDR6_DUPLICATE] = "duplicate",
};
_Static_assert(sizeof(addr6_state_names) / sizeof(addr6_state_names[0]) == ADDR6_STATE_MAX,
	       "addr6 state names");

static double control_ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* The shards (shard.c): 1 without them; shard 0 is the process's stack. */
static unsigned int control_n_shards(const struct dp *dp)
{
	return dp->shards ? dp->shards->n : 1;
}

static struct stack *control_shard_stack(struct dp *dp, unsigned int i)
{
	return dp->shards ? dp->shards->sh[i]->st : &dp->st;
}

static struct loop *control_shard_loop(struct dp *dp, unsigned int i)
{
	return dp->shards ? dp->shards->sh[i]->loop : dp->loop;
}

/*
 * The system calls of a loop itself: a wait a turn, its busy polls, and the
 * sched_yield() after every poll that found nothing (all but the one that
 * ended each hit: loop.c).
 */
static uint64_t control_loop_syscalls(const struct loop *l)
{
	struct loop_busy_stats b = loop_busy_stats(l);

	return loop_turns(l) + b.polls + (b.polls - b.hits);
}

/* Receive buffers the link's channels hold now (they grow with the load, packet.c). */
static unsigned int control_rx_buffers(const struct link *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->n_channels; i++)
		n += l->ch[i].n_rx;
	return n;
}

/* Channels read through a receive ring (packet.c). */
static unsigned int control_ring_channels(const struct link *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->n_channels; i++)
		n += l->ch[i].ring.map != NULL;
	return n;
}

static void control_link(struct out *o, struct link *l)
{
	const struct link_stats *s = &l->stats;
	char buf[INET6_ADDRSTRLEN + 8], mac[18];
	unsigned int i;

	link_poll_kernel_stats(l);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", l->mac[0], l->mac[1],
		 l->mac[2], l->mac[3], l->mac[4], l->mac[5]);
	out_obj_begin(o, l->name);
	out_str(o, "kind", link_kind_name(l->kind));
	if (l->outer)
		out_str(o, "outer", l->outer->name);
	out_u64(o, "ifindex", l->ifindex);
	out_str(o, "mac", mac);
	out_u64(o, "mtu", l->mtu);
	out_str(o, "gso_mode", proto_gso_mode_name(l->gso_mode));
	out_str(o, "gso_reason", l->gso_reason);
	out_u64(o, "gso_max_size", l->gso_max_size);
	out_u64(o, "gso_ipv4_max_size", l->gso_ipv4_max_size);
	out_u64(o, "channels", l->n_channels);
	out_arr_begin(o, "addresses");
	for (i = 0; i < l->n_addr4; i++) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &l->addr4[i].addr, a, sizeof(a));
		snprintf(buf, sizeof(buf), "%s/%u", a, l->addr4[i].prefixlen);
		out_obj_begin(o, NULL);
		out_str(o, "address", buf);
		out_str(o, "state", "preferred");
		out_obj_end(o);
	}
	for (i = 0; i < l->n_addr6; i++) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, &l->addr6[i].addr, a, sizeof(a));
		snprintf(buf, sizeof(buf), "%s/%u", a, l->addr6[i].prefixlen);
		out_obj_begin(o, NULL);
		out_str(o, "address", buf);
		out_str(o, "state", addr6_state_names[l->addr6[i].state]);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_u64(o, "rx_frames", s->rx_frames);
	/* Per channel: a fanout member or a TUN queue, one per shard */
	out_arr_begin(o, "per_channel");
	for (i = 0; i < l->n_channels; i++) {
		out_obj_begin(o, NULL);
		out_u64(o, "rx_frames", l->ch[i].rx_frames);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_u64(o, "rx_bytes", s->rx_bytes);
	if (l->kind == LINK_KIND_TUN)
		out_str(o, "io", l->io_reason);
	out_u64(o, "rx_syscalls", s->rx_syscalls);
	out_double(o, "rx_frames_per_syscall", control_ratio(s->rx_frames, s->rx_syscalls));
	out_u64(o, "rx_gso_frames", s->rx_gso_frames);
	out_u64(o, "rx_gso_segments", s->rx_gso_segments);
	out_u64(o, "rx_truncated", s->rx_truncated);
	out_u64(o, "rx_bad_vnet", s->rx_bad_vnet);
	out_u64(o, "rx_buffers_grown", s->rx_buffers_grown);
	out_u64(o, "rx_ring_channels", control_ring_channels(l));
	out_u64(o, "rx_ring_frames", s->rx_ring_frames);
	out_u64(o, "rx_ring_copies", s->rx_ring_copies);
	out_u64(o, "rx_buffers", control_rx_buffers(l));
	out_u64(o, "rx_kernel_drops", s->rx_kernel_drops);
	out_u64(o, "tx_frames", s->tx_frames);
	out_u64(o, "tx_bytes", s->tx_bytes);
	out_u64(o, "tx_syscalls", s->tx_syscalls);
	out_double(o, "tx_frames_per_syscall", control_ratio(s->tx_frames, s->tx_syscalls));
	out_u64(o, "tx_gso_frames", s->tx_gso_frames);
	out_u64(o, "tx_sw_segments", s->tx_sw_segments);
	out_u64(o, "tx_max_frame", s->tx_max_frame);
	out_u64(o, "tx_over_mtu", s->tx_over_mtu);
	out_u64(o, "tx_eagain", s->tx_eagain);
	out_u64(o, "tx_errors", s->tx_errors);
	out_u64(o, "tx_queue_full", s->tx_queue_full);
	out_u64(o, "tx_queue_max", s->tx_queue_max);
	out_obj_end(o);
}

static void control_udp_sock(const struct udp_sock *s, void *arg)
{
	struct out *o = arg;
	char a[INET6_ADDRSTRLEN];

	out_obj_begin(o, NULL);
	out_str(o, "local", net_addr_str(&s->local, a, sizeof(a)));
	out_u64(o, "port", s->port);
	out_str(o, "owner", s->owner);
	out_u64(o, "rx_datagrams", s->rx_datagrams);
	out_u64(o, "rx_bytes", s->rx_bytes);
	out_u64(o, "tx_datagrams", s->tx_datagrams);
	out_u64(o, "tx_bytes", s->tx_bytes);
	out_u64(o, "tx_errors", s->tx_errors);
	out_obj_end(o);
}

static void control_limit(struct out *o, const char *name, uint64_t max, uint64_t used, uint64_t hits)
{
	out_obj_begin(o, name);
	out_u64(o, "max", max);
	out_u64(o, "used", used);
	out_u64(o, "hits", hits);
	out_obj_end(o);
}

static void control_limits(struct out *o, struct dp *dp, unsigned int k)
{
	struct stack *st = control_shard_stack(dp, k);
	const struct stack_limits *lim = &st->limits;
	struct tcp_stack_stats t;
	struct svc_udp_usage u;

	memset(&t, 0, sizeof(t));
	if (st->tcp)
		tcp_stack_stats(tcp_glue_stack(st), &t);
	out_obj_begin(o, "limits");
	control_limit(o, "tcp_conns", lim->max_conns, t.conns, t.conns_limited);
	control_limit(o, "tcp_half_open", lim->max_half_open, t.half_open, t.synq_overflow);
	control_limit(o, "tcp_timewait", lim->max_timewait, t.timewait, t.timewait_evicted);
	control_limit(o, "tcp_mem", lim->tcp_mem, t.buf_mem, t.buf_pressure);
	if (face_of(st)) {
		/* the container side's engine: caps of the same size, its own use */
		memset(&t, 0, sizeof(t));
		tcp_stack_stats(face_tcp_engine(face_of(st)), &t);
		control_limit(o, "face_tcp_conns", lim->max_conns, t.conns, t.conns_limited);
		control_limit(o, "face_tcp_half_open", lim->max_half_open, t.half_open, t.synq_overflow);
		control_limit(o, "face_tcp_timewait", lim->max_timewait, t.timewait, t.timewait_evicted);
		control_limit(o, "face_tcp_mem", lim->tcp_mem, t.buf_mem, t.buf_pressure);
	}
	control_limit(o, "reasm_mem", ip_reasm_limit(st), ip_reasm_bytes(st), st->drop[DROP_FRAG_NO_MEMORY]);
	control_limit(o, "neigh", neigh_limit(st), neigh_count(st), st->ctr[CTR_NEIGH_TABLE_FULL]);
	/* the shard's own UDP services (struct dp_svcs) */
	memset(&u, 0, sizeof(u));
	if (dp->svcs[k].udp)
		svc_udp_usage(dp->svcs[k].udp, dp->svcs[k].svc, dp->n_svcs, &u);
	control_limit(o, "udp_flows", u.flows_max, u.flows_used, u.flows_hits);
	control_limit(o, "udp_flows_per_source", u.per_source_max, u.per_source_used, u.per_source_hits);
	out_obj_end(o);
}

/* Bytes and frames of a set of links, both ways. */
static void control_link_sums(struct link *const *links, unsigned int n, uint64_t sum[5])
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		sum[0] += links[i]->stats.rx_bytes;
		sum[1] += links[i]->stats.tx_bytes;
		sum[2] += links[i]->stats.rx_frames;
		sum[3] += links[i]->stats.tx_frames;
		sum[4] += links[i]->stats.rx_syscalls + links[i]->stats.tx_syscalls;
	}
}

/* The bytes and frames of control_link_sums() of the outer links and the TUNs. */
static void control_traffic(struct out *o, const uint64_t outer[5], const uint64_t inner[5])
{
	out_u64(o, "network_rx_bytes", outer[0]);
	out_u64(o, "network_tx_bytes", outer[1]);
	out_u64(o, "network_rx_frames", outer[2]);
	out_u64(o, "network_tx_frames", outer[3]);
	out_u64(o, "container_tx_bytes", inner[0]);
	out_u64(o, "container_rx_bytes", inner[1]);
}

/*
 * "totals": one container at a glance. The inner links' receive side is what
 * the container sent; the outer links' is what the network sent. "syscalls"
 * counts every link's reads and writes and the loop's waits (one a turn):
 * per TCP connection, it is what a short flow costs in system calls.
 */
static void control_totals(struct out *o, struct dp *dp)
{
	uint64_t outer[5] = { 0 }, inner[5] = { 0 }, syscalls = 0, refused[POLICY_DIR_MAX] = { 0 };
	struct face_totals t = { 0 };
	struct face_netstat kt = { 0 };
	bool have_netstat = false;
	unsigned int i;

	for (i = 0; i < control_n_shards(dp); i++) {
		struct stack *st = control_shard_stack(dp, i);
		struct face_totals ft;
		struct face_netstat k;

		control_link_sums(st->links, st->n_links, outer);
		control_link_sums(st->inner, st->n_inner, inner);
		face_totals(face_of(st), &ft);
		t.tcp_outbound += ft.tcp_outbound;
		t.tcp_inbound += ft.tcp_inbound;
		t.udp_flows += ft.udp_flows;
		t.tcp_open += ft.tcp_open;
		t.udp_flows_open += ft.udp_flows_open;
		t.drops += ft.drops;
		t.udp_held_to_container += ft.udp_held_to_container;
		t.udp_held_to_network += ft.udp_held_to_network;
		t.udp_overruns_to_container += ft.udp_overruns_to_container;
		t.udp_overruns_to_network += ft.udp_overruns_to_network;
		if (face_netstat_read_all(face_of(st), &k) == 0) {
			have_netstat = true;
			kt.udp_in_errors += k.udp_in_errors;
			kt.udp_rcvbuf_errors += k.udp_rcvbuf_errors;
			kt.udp_sndbuf_errors += k.udp_sndbuf_errors;
			kt.tun_tx_dropped += k.tun_tx_dropped;
			kt.tun_rx_dropped += k.tun_rx_dropped;
		}
		syscalls += control_loop_syscalls(control_shard_loop(dp, i));
		refused[POLICY_EGRESS] += policy_refusals(st->policy, POLICY_EGRESS);
		refused[POLICY_INGRESS] += policy_refusals(st->policy, POLICY_INGRESS);
	}
	syscalls += outer[4] + inner[4];
	out_obj_begin(o, "totals");
	control_traffic(o, outer, inner);
	out_u64(o, "tcp_outbound", t.tcp_outbound);
	out_u64(o, "tcp_inbound", t.tcp_inbound);
	out_u64(o, "udp_flows", t.udp_flows);
	out_u64(o, "tcp_open", t.tcp_open);
	out_u64(o, "udp_flows_open", t.udp_flows_open);
	out_u64(o, "syscalls", syscalls);
	out_double(o, "syscalls_per_tcp_connection",
		   control_ratio(syscalls, t.tcp_outbound + t.tcp_inbound));
	out_u64(o, "refused_egress", refused[POLICY_EGRESS]);
	out_u64(o, "refused_ingress", refused[POLICY_INGRESS]);
	out_u64(o, "face_drops", t.drops);
	/* the face's UDP pacer, each way (docs/face.md, "A UDP flow's timing through the face") */
	out_u64(o, "udp_held_to_container", t.udp_held_to_container);
	out_u64(o, "udp_held_to_network", t.udp_held_to_network);
	out_u64(o, "udp_pace_overruns_to_container", t.udp_overruns_to_container);
	out_u64(o, "udp_pace_overruns_to_network", t.udp_overruns_to_network);
	if (have_netstat) {	/* the container's own kernel (face_netstat.c) */
		out_u64(o, "container_udp_in_errors", kt.udp_in_errors);
		out_u64(o, "container_udp_rcvbuf_errors", kt.udp_rcvbuf_errors);
		out_u64(o, "container_udp_sndbuf_errors", kt.udp_sndbuf_errors);
		out_u64(o, "container_tun_tx_dropped", kt.tun_tx_dropped);
		out_u64(o, "container_tun_rx_dropped", kt.tun_rx_dropped);
	}
	out_obj_end(o);
}

/**
 * control_print_supervisor() - the "supervisor" object: who keeps the
 * container's fds, how often a datapath was started again and why
 * @o:		the printer
 * @h:		the ledger's head (datapath/ledger.c)
 * @state:	serving, or the supervisor's own state when no datapath runs
 *		(dark, restarting): its name (proto/status.c) is printed
 * @reason:	why it is dark, or NULL
 */
void control_print_supervisor(struct out *o, const struct ledger_head *h, enum proto_dp_state state,
			      const char *reason)
{
	char cause[sizeof(h->last_death_why)];

	out_obj_begin(o, "supervisor");
	out_u64(o, "pid", (uint64_t)h->supervisor_pid);
	out_str(o, "state", proto_dp_state_name(state));
	if (reason)
		out_str(o, "reason", reason);
	out_u64(o, "restarts", h->restarts);
	out_u64(o, "deaths", h->deaths);
	out_u64(o, "max_deaths", h->max_deaths);
	out_u64(o, "death_window_s", h->death_window_s);
	if (h->deaths) {
		out_obj_begin(o, "last_death");
		out_u64(o, "pid", (uint64_t)h->last_death_pid);
		/* the head is shared memory: copy, and end the copy, before printing */
		memcpy(cause, h->last_death_why, sizeof(cause));
		cause[sizeof(cause) - 1] = '\0';
		out_str(o, "cause", cause);
		out_u64(o, "at_unix_ms", h->last_death_unix_ms);
		out_obj_end(o);
	}
	out_obj_end(o);
}

/* One row of "link_totals": link @i's bytes and frames both ways, in every
 * shard (each has the same links, in the same order). */
static void control_link_row(struct out *o, struct dp *dp, unsigned int i, bool inner)
{
	uint64_t sum[5] = { 0 };
	unsigned int k;

	for (k = 0; k < control_n_shards(dp); k++) {
		struct stack *sk = control_shard_stack(dp, k);

		control_link_sums(inner ? &sk->inner[i] : &sk->links[i], 1, sum);
	}
	out_obj_begin(o, NULL);
	out_str(o, "link", inner ? dp->st.inner[i]->name : dp->st.links[i]->name);
	out_str(o, "side", inner ? "container" : "network");
	out_u64(o, "rx_bytes", sum[0]);
	out_u64(o, "tx_bytes", sum[1]);
	out_u64(o, "rx_frames", sum[2]);
	out_u64(o, "tx_frames", sum[3]);
	out_obj_end(o);
}

/* One row of "dropped": a reason that dropped at least one packet. */
static void control_drop_row(struct out *o, const char *layer, const char *reason, uint64_t n)
{
	out_obj_begin(o, NULL);
	out_str(o, "layer", layer);
	out_str(o, "reason", reason);
	out_u64(o, "packets", n);
	out_obj_end(o);
}

/* The face's drops of every shard, one row per reason. */
struct control_face_drops {
	unsigned int n;
	char reason[64][64];	/* face_drops_foreach() lends its names */
	uint64_t packets[64];
};

static void control_face_drop_add(const char *reason, uint64_t n, void *arg)
{
	struct control_face_drops *fd = arg;
	unsigned int i;

	for (i = 0; i < fd->n; i++)
		if (!strcmp(fd->reason[i], reason))
			break;
	if (i == fd->n) {
		if (fd->n == sizeof(fd->reason) / sizeof(fd->reason[0]))
			return;
		snprintf(fd->reason[fd->n++], sizeof(fd->reason[0]), "%s", reason);
	}
	fd->packets[i] += n;
}

/*
 * The summary's per-link and per-reason rows: the outer links (side
 * "network") and the container face's TUNs (side "container"); the drops of
 * the stack and of the face, only the reasons that counted (the text stays
 * short; a reason appears with its first drop).
 */
static void control_summary_rows(struct out *o, struct dp *dp)
{
	struct stack *st = &dp->st;
	struct control_face_drops fd = { 0 };
	uint64_t drop[DROP_MAX] = { 0 };
	unsigned int i, k;

	out_arr_begin(o, "link_totals");
	for (i = 0; i < st->n_links; i++)
		control_link_row(o, dp, i, false);
	for (i = 0; i < st->n_inner; i++)
		control_link_row(o, dp, i, true);
	out_arr_end(o);
	for (k = 0; k < control_n_shards(dp); k++) {
		struct stack *sk = control_shard_stack(dp, k);

		for (i = 0; i < DROP_MAX; i++)
			drop[i] += sk->drop[i];
		face_drops_foreach(face_of(sk), control_face_drop_add, &fd);
	}
	out_arr_begin(o, "dropped");
	for (i = 0; i < DROP_MAX; i++)
		if (drop[i])
			control_drop_row(o, "stack", dp_drop_name(i), drop[i]);
	for (i = 0; i < fd.n; i++)
		control_drop_row(o, "face", fd.reason[i], fd.packets[i]);
	out_arr_end(o);
}

/*
 * The summary's "shard_rows": what each shard carries, so that an operator
 * (and `datapath metrics`, a series per shard) sees how evenly the steering
 * spread the container's conversations and which shard is short of CPU.
 */
static void control_shard_rows(struct out *o, struct dp *dp)
{
	unsigned int i, k;

	out_arr_begin(o, "shard_rows");
	for (k = 0; k < control_n_shards(dp); k++) {
		struct stack *st = control_shard_stack(dp, k);
		uint64_t outer[5] = { 0 }, inner[5] = { 0 }, drops = 0;
		struct loop_busy_stats busy = loop_busy_stats(control_shard_loop(dp, k));
		struct face_totals ft;

		control_link_sums(st->links, st->n_links, outer);
		control_link_sums(st->inner, st->n_inner, inner);
		face_totals(face_of(st), &ft);
		for (i = 0; i < DROP_MAX; i++)
			drops += st->drop[i];
		out_obj_begin(o, NULL);
		out_u64(o, "shard", k);
		out_u64(o, "cpu_ns", shards_cpu_ns(dp->shards, k));
		out_u64(o, "loop_turns", loop_turns(control_shard_loop(dp, k)));
		control_traffic(o, outer, inner);
		out_u64(o, "tcp_connections", ft.tcp_outbound + ft.tcp_inbound);
		out_u64(o, "tcp_open", ft.tcp_open);
		out_u64(o, "udp_flows_open", ft.udp_flows_open);
		out_u64(o, "drops", drops + ft.drops);
		out_u64(o, "busy_polls", busy.polls);
		out_u64(o, "busy_poll_hits", busy.hits);
		out_u64(o, "busy_poll_misses", busy.misses);
		out_obj_end(o);
	}
	out_arr_end(o);
}

/* What both the full stats and the summary begin with. */
static void control_head(struct out *o, struct dp *dp)
{
	out_str(o, "name", dp->name ? dp->name : "");
	out_u64(o, "pid", (uint64_t)getpid());
	out_u64(o, "uid", (uint64_t)geteuid());
	out_u64(o, "uptime_ms", loop_now_ms(dp->loop) - dp->start_ms);
	if (dp->st.ledger)
		control_print_supervisor(o, dp->st.ledger->head, PROTO_DP_SERVING, NULL);
}

/* The policy with every shard's hits. */
static void control_policy(struct out *o, struct dp *dp)
{
	struct policy *sum;
	unsigned int k;

	if (!dp->st.policy || control_n_shards(dp) == 1) {
		policy_print(dp->st.policy, o);
		return;
	}
	sum = malloc(sizeof(*sum));
	if (!sum) {
		policy_print(dp->st.policy, o);	/* shard 0's alone, rather than nothing */
		return;
	}
	*sum = *dp->st.policy;
	for (k = 1; k < control_n_shards(dp); k++)
		policy_add_hits(sum, control_shard_stack(dp, k)->policy);
	policy_print(sum, o);
	free(sum);
}

/**
 * control_print_summary() - what an operator looks at per container: the
 * totals, each link's counters, the drops by reason and every policy rule
 * with its hits (`datapath stats --all`, `datapath metrics`)
 * @dp:		the datapath
 * @f:		stream
 * @json:	JSON instead of text
 *
 * Return: 0, or negative errno with nothing written (shards_pause()).
 */
int control_print_summary(struct dp *dp, FILE *f, bool json)
{
	struct shards *sh = dp->shards;
	int ret = sh ? shards_pause(sh) : 0;
	struct out o;

	if (ret < 0)
		return ret;
	out_init(&o, f, json);
	control_head(&o, dp);
	out_u64(&o, "links", dp->st.n_links);
	out_u64(&o, "faces", dp->st.n_inner);
	out_u64(&o, "busy_poll_us", loop_busy_poll_us(dp->loop));
	control_totals(&o, dp);
	control_summary_rows(&o, dp);
	control_shard_rows(&o, dp);
	control_policy(&o, dp);
	out_finish(&o);
	if (sh)
		shards_resume(sh);
	return 0;
}

/* busy_poll: the budget, and what the polls found (loop.c) */
static void control_busy_poll(struct out *o, const struct loop *l)
{
	struct loop_busy_stats b = loop_busy_stats(l);

	out_obj_begin(o, "busy_poll");
	out_u64(o, "budget_us", loop_busy_poll_us(l));
	out_u64(o, "polls", b.polls);
	out_u64(o, "hits", b.hits);
	out_u64(o, "misses", b.misses);
	out_u64(o, "bulk_turns", b.bulk_turns);
	out_obj_end(o);
}

/* Everything one stack counts: the top level's for shard 0, a shards[]
 * entry's for the others. */
static void control_stack(struct out *o, struct dp *dp, unsigned int k)
{
	struct stack *st = control_shard_stack(dp, k);
	struct loop *loop = control_shard_loop(dp, k);
	uint64_t now = loop_now_ms(loop);
	unsigned int i;

	out_obj_begin(o, "links");
	for (i = 0; i < st->n_links; i++)
		control_link(o, st->links[i]);
	out_obj_end(o);
	if (st->n_inner) {
		/* the container face's TUNs: the inner links */
		out_obj_begin(o, "inner_links");
		for (i = 0; i < st->n_inner; i++)
			control_link(o, st->inner[i]);
		out_obj_end(o);
	}
	out_obj_begin(o, "drops");
	for (i = 0; i < DROP_MAX; i++)
		out_u64(o, dp_drop_name(i), st->drop[i]);
	out_obj_end(o);
	out_obj_begin(o, "counters");
	for (i = 0; i < CTR_MAX; i++)
		out_u64(o, dp_ctr_name(i), st->ctr[i]);
	out_obj_end(o);
	out_obj_begin(o, "reassembly");
	out_u64(o, "queues", ip_reasm_queues(st));
	out_u64(o, "bytes", ip_reasm_bytes(st));
	out_obj_end(o);
	control_limits(o, dp, k);
	out_arr_begin(o, "neighbours");
	for (i = 0; i < NEIGH_MAX; i++) {
		const struct neigh *n = &st->neigh[i];
		char a[INET6_ADDRSTRLEN], mac[18];

		if (!n->used)
			continue;
		inet_ntop(n->family, &n->addr, a, sizeof(a));
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", n->mac[0], n->mac[1],
			 n->mac[2], n->mac[3], n->mac[4], n->mac[5]);
		out_obj_begin(o, NULL);
		out_str(o, "address", a);
		out_str(o, "mac", n->state == NEIGH_INCOMPLETE ? "-" : mac);
		out_str(o, "link", n->link ? n->link->name : "-");
		out_str(o, "state", neigh_state_names[n->state]);
		out_u64(o, "age_ms", n->state == NEIGH_PERMANENT ? 0 : now - n->confirmed_ms);
		out_u64(o, "pending", n->n_pending);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_arr_begin(o, "udp_sockets");
	udp_for_each(st, control_udp_sock, o);
	out_arr_end(o);
	tcp_glue_print_stats(st, o);
	face_print_stats(face_of(st), o);
}

/**
 * control_print_stats() - every counter of the process, as text or JSON
 * @dp:		the datapath
 * @f:		stream
 * @json:	JSON instead of text
 *
 * With shards, the sections of the top level are shard 0's, each entry of
 * "shards" has the same sections for another shard, and "totals", the
 * services and the policy's hits count all of them. Shard 0 reads the others
 * while they are parked (shards_pause()).
 *
 * Return: 0, or negative errno with nothing written (shards_pause()).
 */
int control_print_stats(struct dp *dp, FILE *f, bool json)
{
	struct shards *sh = dp->shards;
	int ret = sh ? shards_pause(sh) : 0;
	struct out o;
	unsigned int i;

	if (ret < 0)
		return ret;
	out_init(&o, f, json);
	control_head(&o, dp);
	out_u64(&o, "cpu_ns", shards_cpu_ns(dp->shards, 0));
	out_u64(&o, "loop_turns", loop_turns(dp->loop));
	control_busy_poll(&o, dp->loop);
	out_u64(&o, "packets_live", (uint64_t)pkt_live());
	{
		/* heap bytes in use vs. held: a leak grows the first, fragmentation the second */
		struct mallinfo2 mi = mallinfo2();

		out_u64(&o, "heap_in_use", mi.uordblks + mi.hblkhd);
		out_u64(&o, "heap_held", mi.arena + mi.hblkhd);
	}
	control_stack(&o, dp, 0);
	out_arr_begin(&o, "services");
	for (i = 0; i < dp->n_svcs; i++) {
		struct svc *v[SHARD_MAX];
		unsigned int k;

		for (k = 0; k < control_n_shards(dp); k++)
			v[k] = dp->svcs[k].svc[i];
		svc_stats(v, control_n_shards(dp), &o);
	}
	out_arr_end(&o);
	out_u64(&o, "n_shards", control_n_shards(dp));
	out_u64(&o, "shard_park_misses", sh ? shards_park_misses(sh) : 0);
	out_arr_begin(&o, "shards");
	for (i = 1; i < control_n_shards(dp); i++) {
		out_obj_begin(&o, NULL);
		out_u64(&o, "shard", i);
		out_u64(&o, "cpu_ns", shards_cpu_ns(dp->shards, i));
		out_u64(&o, "loop_turns", loop_turns(control_shard_loop(dp, i)));
		control_busy_poll(&o, control_shard_loop(dp, i));
		control_stack(&o, dp, i);
		out_obj_end(&o);
	}
	out_arr_end(&o);
	control_totals(&o, dp);
	control_policy(&o, dp);
	out_finish(&o);
	if (sh)
		shards_resume(sh);
	return 0;
}

/* A busy datapath's answer must arrive, not a timeout of its askers just before it. */
_Static_assert(CONTROL_ANSWER_WAIT_MS > 2 * SHARD_PARK_MS, "askers outwait a busy datapath");

/**
 * control_answer() - answer one client of a control socket
 * @listen_fd:	the listening socket (non-blocking)
 * @print:	prints the answer: everything, or the summary
 * @ctx:	for @print
 *
 * Shared by a datapath (its loop) and its supervisor (while no datapath
 * runs): the same requests, the same printer.
 */
void control_answer(int listen_fd, control_print_fn print, control_request_fn more, void *ctx)
{
	char req[CONTROL_REQ_MAX + 1];
	char *text = NULL;
	size_t text_len = 0, off = 0, got = 0;
	ssize_t n;
	int fd, ret = 0;
	FILE *f;

	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	control_sock_timeouts(fd, 1);
	while (got < CONTROL_REQ_MAX && !memchr(req, '\n', got)) {
		n = recv(fd, req + got, CONTROL_REQ_MAX - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	req[got] = '\0';
	f = open_memstream(&text, &text_len);
	if (!f) {
		close(fd);
		return;
	}
	if (!strcmp(req, CONTROL_REQ_STATS) || !strcmp(req, CONTROL_REQ_STATS_JSON))
		ret = print(ctx, f, !strcmp(req, CONTROL_REQ_STATS_JSON), false);
	else if (!strcmp(req, CONTROL_REQ_SUMMARY) || !strcmp(req, CONTROL_REQ_SUMMARY_JSON))
		ret = print(ctx, f, !strcmp(req, CONTROL_REQ_SUMMARY_JSON), true);
	else {
		req[strcspn(req, "\n")] = '\0';
		ret = more ? more(ctx, req, f) : -ENOENT;
	}
	if (ret == -ENOENT) {
		ret = 0;
		fprintf(f, CONTROL_ERROR " unknown request (expected \"stats\", \"stats json\", \"summary\", \"summary json\"%s)\n",
			more ? ", \"conns\", \"conns json\", \"trace start [FILTER]\", \"trace read\" or \"trace stop\""
			     : "; the rest only a running datapath answers");
	}
	if (ret == -ETIMEDOUT)
		fprintf(f, CONTROL_BUSY " a shard did not stop within %u ms to be read; ask again\n",
			SHARD_PARK_MS);
	else if (ret < 0)
		fprintf(f, CONTROL_ERROR " %s\n", strerror(-ret));
	fclose(f);
	while (off < text_len) {
		n = send(fd, text + off, text_len - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += n;
	}
	free(text);
	close(fd);
}

static int control_dp_print(void *ctx, FILE *f, bool json, bool summary)
{
	return summary ? control_print_summary(ctx, f, json) : control_print_stats(ctx, f, json);
}

static int control_dp_request(void *ctx, const char *req, FILE *f)
{
	return control_tcp_request(ctx, req, f);
}

static void control_event(struct loop_fd *h, uint32_t events)
{
	struct dp *dp = h->ctx;

	(void)events;
	control_answer(dp->control_fd, control_dp_print, control_dp_request, dp);
}

/**
 * control_bind() - bind and listen on the control socket at @path (before
 * the privilege drop: it may live in /run/sandnet)
 * @path:	filesystem path; a stale socket there is replaced
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: the listening socket (non-blocking, mode 0600, or 0660 when the
 * umask leaves the group write), or negative errno.
 */
int control_bind(const char *path, char *err, size_t err_len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat sb;
	mode_t mask;
	int fd, ret;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, err_len, "--control %s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			snprintf(err, err_len, "--control %s: exists and is not a socket", path);
			return -EEXIST;
		}
		unlink(path);
	}
	/* the owner's alone, or its group's too when the umask leaves group write (datapath@.service: 0007) */
	mask = umask(0);
	umask(mask);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    chmod(path, (mask & 0060) ? 0600 : 0660) < 0 || listen(fd, 16) < 0) {
		ret = -errno;
		snprintf(err, err_len, "--control %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

/**
 * control_adopt() - serve the control socket the supervisor bound
 * @dp:		the datapath
 * @fd:		the listening socket (--control-fd), owned from now on; its
 *		path stays when the datapath stops (the supervisor keeps the
 *		socket for the next one)
 *
 * Return: 0, or -ENOTSOCK when @fd is not a listening unix stream socket.
 */
int control_adopt(struct dp *dp, int fd)
{
	int v = 0, dom = 0;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0 || !v ||
	    (len = sizeof(dom), getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) < 0) || dom != AF_UNIX) {
		close(fd);
		return -ENOTSOCK;
	}
	dp->control_fd = fd;
	return 0;
}

/**
 * control_start() - serve the control socket from the loop
 * Return: 0 or negative errno.
 */
int control_start(struct dp *dp)
{
	if (dp->control_fd < 0)
		return 0;
	return loop_fd_add(dp->loop, &dp->control_lfd, dp->control_fd, EPOLLIN, control_event, dp);
}

/**
 * control_close() - stop serving (the socket stays: its supervisor has it)
 */
void control_close(struct dp *dp)
{
	control_tcp_close(dp);
	if (dp->control_fd < 0)
		return;
	loop_fd_del(dp->loop, &dp->control_lfd);
	close(dp->control_fd);
	dp->control_fd = -1;
}
