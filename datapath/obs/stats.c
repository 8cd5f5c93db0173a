// SPDX-License-Identifier: MIT
/*
 * stats.c - `datapath stats`: every counter of the process, and the summary
 *
 * Theory of operation: stats_print() is everything, for an operator who
 * looks into one datapath; stats_print_summary() is the few figures per
 * container (the totals, each link's bytes and frames, the drops by reason,
 * a row per shard and the policy's hits) that `datapath stats --all` shows
 * and `datapath metrics` exports (metrics_expo.c). The summary stays small
 * whatever the load (no connection or neighbour lists) so that scraping it
 * every few seconds costs the loop nothing it would notice.
 *
 * One code path for text and JSON (common/out.h): the JSON keys are the text
 * labels, documented in docs/datapath.md. The "limits" object shows each
 * resource cap (docs/security.md) as max, used and hits (how often the cap
 * was reached).
 *
 * The summary's numbers are described once, in tables (counters.h): the
 * face's totals and the container kernel's (face.c, face_netstat.c), and
 * here those of the process (stats_totals_table: what the links carried, the
 * system calls, the policy's refusals), of each shard
 * (stats_shard_row_table), of the head and of the supervisor. The exporter
 * walks the same tables (stats.h), so a row added to one is printed, summed
 * over the shards and exported with nothing else to change.
 *
 * Every answer is of the whole process or an error (-ETIMEDOUT when a shard
 * did not stop to be read within a second, shards_pause()): never one
 * shard's counters in the place of all of them, which a Prometheus scrape
 * would take for a counter reset.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/out.h"
#include "datapath/proc/proc.h"
#include "datapath/face/face.h"
#include "datapath/ledger.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/flowlog.h"
#include "datapath/policy.h"
#include "datapath/proc/shard.h"
#include "datapath/obs/stats.h"

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

static double stats_ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* The shards (shard.c); shard 0 runs on the main thread. */
static unsigned int stats_n_shards(const struct dp *dp)
{
	return dp->shards->n;
}

static struct stack *stats_shard_stack(struct dp *dp, unsigned int i)
{
	return &dp->shards->sh[i]->st;
}

static struct loop *stats_shard_loop(struct dp *dp, unsigned int i)
{
	return dp->shards->sh[i]->loop;
}

/*
 * The system calls of a loop itself: a wait a turn, its busy polls, and the
 * sched_yield() after every poll that found nothing (all but the one that
 * ended each hit: loop.c).
 */
static uint64_t stats_loop_syscalls(const struct loop *l)
{
	struct loop_busy_stats b = loop_busy_stats(l);

	return loop_turns(l) + b.polls + (b.polls - b.hits);
}

/* Receive buffers the link's channels hold now (they grow with the load, packet.c). */
static unsigned int stats_rx_buffers(const struct link *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->n_channels; i++)
		n += l->ch[i].n_rx;
	return n;
}

/* Channels read through a receive ring (packet.c). */
static unsigned int stats_ring_channels(const struct link *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->n_channels; i++)
		n += l->ch[i].ring.map != NULL;
	return n;
}

static void stats_link(struct out *o, struct link *l)
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
	out_double(o, "rx_frames_per_syscall", stats_ratio(s->rx_frames, s->rx_syscalls));
	out_u64(o, "rx_gso_frames", s->rx_gso_frames);
	out_u64(o, "rx_gso_segments", s->rx_gso_segments);
	out_u64(o, "rx_truncated", s->rx_truncated);
	out_u64(o, "rx_bad_vnet", s->rx_bad_vnet);
	out_u64(o, "rx_buffers_grown", s->rx_buffers_grown);
	out_u64(o, "rx_ring_channels", stats_ring_channels(l));
	out_u64(o, "rx_ring_frames", s->rx_ring_frames);
	out_u64(o, "rx_ring_copies", s->rx_ring_copies);
	out_u64(o, "rx_buffers", stats_rx_buffers(l));
	out_u64(o, "rx_kernel_drops", s->rx_kernel_drops);
	out_u64(o, "tx_frames", s->tx_frames);
	out_u64(o, "tx_bytes", s->tx_bytes);
	out_u64(o, "tx_syscalls", s->tx_syscalls);
	out_double(o, "tx_frames_per_syscall", stats_ratio(s->tx_frames, s->tx_syscalls));
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

static void stats_udp_sock(const struct udp_sock *s, void *arg)
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

static void stats_limit(struct out *o, const char *name, uint64_t max, uint64_t used, uint64_t hits)
{
	out_obj_begin(o, name);
	out_u64(o, "max", max);
	out_u64(o, "used", used);
	out_u64(o, "hits", hits);
	out_obj_end(o);
}

/* An engine's ring memory: the limit's figures, and the most it held at once */
static void stats_limit_tcp_mem(struct out *o, const char *name, uint64_t max, const struct tcp_stack_stats *t)
{
	out_obj_begin(o, name);
	out_u64(o, "max", max);
	out_u64(o, "used", t->buf_mem);
	out_u64(o, "hits", t->buf_pressure);
	out_u64(o, "peak", t->buf_mem_peak);
	out_obj_end(o);
}

static void stats_limits(struct out *o, struct dp *dp, unsigned int k)
{
	struct stack *st = stats_shard_stack(dp, k);
	const struct stack_limits *lim = &st->limits;
	struct tcp_stack_stats t;
	struct svc_udp_usage u;

	memset(&t, 0, sizeof(t));
	if (st->tcp)
		tcp_stack_stats(tcp_glue_stack(st), &t);
	out_obj_begin(o, "limits");
	stats_limit(o, "tcp_conns", lim->max_conns, t.conns, t.conns_limited);
	stats_limit(o, "tcp_half_open", lim->max_half_open, t.half_open, t.synq_overflow);
	stats_limit(o, "tcp_timewait", lim->max_timewait, t.timewait, t.timewait_evicted);
	stats_limit_tcp_mem(o, "tcp_mem", lim->tcp_mem, &t);
	if (face_of(st)) {
		/* the container side's engine: caps of the same size, its own use */
		memset(&t, 0, sizeof(t));
		tcp_stack_stats(face_tcp_engine(face_of(st)), &t);
		stats_limit(o, "face_tcp_conns", lim->max_conns, t.conns, t.conns_limited);
		stats_limit(o, "face_tcp_half_open", lim->max_half_open, t.half_open, t.synq_overflow);
		stats_limit(o, "face_tcp_timewait", lim->max_timewait, t.timewait, t.timewait_evicted);
		stats_limit_tcp_mem(o, "face_tcp_mem", lim->tcp_mem, &t);
	}
	stats_limit(o, "reasm_mem", ip_reasm_limit(st), ip_reasm_bytes(st), st->drop[DROP_FRAG_NO_MEMORY]);
	stats_limit(o, "neigh", neigh_limit(st), neigh_count(st), st->ctr[CTR_NEIGH_TABLE_FULL]);
	/* the shard's own UDP services */
	memset(&u, 0, sizeof(u));
	if (dp->shards->sh[k]->svc_udp)
		svc_udp_usage(dp->shards->sh[k]->svc_udp, dp->shards->sh[k]->svc, dp->shards->n_svcs, &u);
	stats_limit(o, "udp_flows", u.flows_max, u.flows_used, u.flows_hits);
	stats_limit(o, "udp_flows_per_source", u.per_source_max, u.per_source_used, u.per_source_hits);
	out_obj_end(o);
}

/*
 * What the links of one stack carried: the outer links' receive side is
 * what the network sent, the inner links' (the face's TUNs) what the
 * container sent. Both the totals and a shard's row begin with it.
 */
struct stats_traffic {
	uint64_t network_rx_bytes, network_tx_bytes, network_rx_frames, network_tx_frames;
	uint64_t container_tx_bytes, container_rx_bytes;
	uint64_t link_syscalls;		/* every link's reads and writes */
};

static void stats_traffic_add(struct stats_traffic *t, const struct stack *st)
{
	unsigned int i;

	for (i = 0; i < st->n_links; i++) {
		const struct link_stats *l = &st->links[i]->stats;

		t->network_rx_bytes += l->rx_bytes;
		t->network_tx_bytes += l->tx_bytes;
		t->network_rx_frames += l->rx_frames;
		t->network_tx_frames += l->tx_frames;
		t->link_syscalls += l->rx_syscalls + l->tx_syscalls;
	}
	for (i = 0; i < st->n_inner; i++) {
		const struct link_stats *l = &st->inner[i]->stats;

		t->container_tx_bytes += l->rx_bytes;
		t->container_rx_bytes += l->tx_bytes;
		t->link_syscalls += l->rx_syscalls + l->tx_syscalls;
	}
}

/* The traffic's rows of a table over @type, which has a struct stats_traffic named traffic. */
#define STATS_TRAFFIC_ROWS(type, rx_frames_family, rx_frames_help)							\
	{ .key = "network_rx_bytes", .offset = STAT_AT(type, traffic.network_rx_bytes), .kind = STAT_COUNTER,	\
	  .family = STAT_NOT_EXPORTED, .help = "Bytes the network side's links received." },		\
	{ .key = "network_tx_bytes", .offset = STAT_AT(type, traffic.network_tx_bytes), .kind = STAT_COUNTER,	\
	  .family = STAT_NOT_EXPORTED, .help = "Bytes the network side's links sent." },			\
	{ .key = "network_rx_frames", .offset = STAT_AT(type, traffic.network_rx_frames), .kind = STAT_COUNTER,	\
	  .family = (rx_frames_family), .help = (rx_frames_help), .label = "direction", .value = "rx" },			\
	{ .key = "network_tx_frames", .offset = STAT_AT(type, traffic.network_tx_frames), .kind = STAT_COUNTER,	\
	  .label = "direction", .value = "tx" },							\
	{ .key = "container_tx_bytes", .offset = STAT_AT(type, traffic.container_tx_bytes), .kind = STAT_COUNTER,\
	  .family = STAT_NOT_EXPORTED, .help = "Bytes the container sent through its face." },		\
	{ .key = "container_rx_bytes", .offset = STAT_AT(type, traffic.container_rx_bytes), .kind = STAT_COUNTER,\
	  .family = STAT_NOT_EXPORTED, .help = "Bytes the face gave the container." }

/* The summary's "totals" of the process itself; the face's follow them. */
struct stats_totals {
	struct stats_traffic traffic;
	uint64_t syscalls;
	uint64_t refused_egress, refused_ingress;
};

/* sandnet_link_bytes_total and _packets_total have the traffic by link; the
 * rules' hits (sandnet_policy_rule_hits_total) the refusals by rule. */
static const struct stat_desc stats_totals_rows[] = {
	STATS_TRAFFIC_ROWS(struct stats_totals, STAT_NOT_EXPORTED, NULL),
	{ .key = "syscalls", .offset = STAT_AT(struct stats_totals, syscalls), .kind = STAT_COUNTER,
	  .family = "sandnet_datapath_syscalls_total",
	  .help = "System calls of the datapath's loop: every link's reads and writes and its waits." },
	{ .key = "refused_egress", .offset = STAT_AT(struct stats_totals, refused_egress), .kind = STAT_COUNTER,
	  .family = STAT_NOT_EXPORTED, .help = "Conversations the container began that the policy refused." },
	{ .key = "refused_ingress", .offset = STAT_AT(struct stats_totals, refused_ingress), .kind = STAT_COUNTER,
	  .family = STAT_NOT_EXPORTED, .help = "Conversations the network began that the policy refused." },
};

static const struct stat_table stats_totals_table = STAT_TABLE(stats_totals_rows);

/*
 * "totals": one container at a glance, every shard summed: the process's
 * rows, then the face's and (when netsetup gave the files) the container
 * kernel's. "syscalls" counts every link's reads and writes and the loop's
 * waits (one a turn): per TCP connection, it is what a short flow costs in
 * system calls.
 */
static void stats_totals(struct out *o, struct dp *dp)
{
	struct stats_totals p = { 0 };
	struct face_totals t = { 0 };
	struct face_netstat kt = { 0 };
	bool have_netstat = false;
	unsigned int i;

	for (i = 0; i < stats_n_shards(dp); i++) {
		struct stack *st = stats_shard_stack(dp, i);
		struct face_totals ft;
		struct face_netstat k;

		stats_traffic_add(&p.traffic, st);
		face_totals(face_of(st), &ft);
		stat_add(&face_totals_table, &t, &ft);
		if (face_netstat_read_all(face_of(st), &k) == 0) {
			have_netstat = true;
			stat_add(&face_netstat_table, &kt, &k);
		}
		p.syscalls += stats_loop_syscalls(stats_shard_loop(dp, i));
		p.refused_egress += policy_refusals(st->policy, POLICY_EGRESS);
		p.refused_ingress += policy_refusals(st->policy, POLICY_INGRESS);
	}
	p.syscalls += p.traffic.link_syscalls;
	out_obj_begin(o, "totals");
	stat_print(&stats_totals_table, &p, o);
	out_double(o, "syscalls_per_tcp_connection", stats_ratio(p.syscalls, t.tcp_outbound + t.tcp_inbound));
	stat_print(&face_totals_table, &t, o);
	if (have_netstat)	/* the container's own kernel (face_netstat.c) */
		stat_print(&face_netstat_table, &kt, o);
	out_obj_end(o);
}

/* The supervisor's numbers (the ledger's head is shared memory: a copy). */
struct stats_supervisor {
	uint64_t restarts, deaths, max_deaths, death_window_s;
};

static const struct stat_desc stats_supervisor_rows[] = {
	{ .key = "restarts", .offset = STAT_AT(struct stats_supervisor, restarts), .kind = STAT_COUNTER,
	  .family = "sandnet_datapath_restarts_total",
	  .help = "Datapaths the supervisor started after the first (after a death, or an upgrade)." },
	{ .key = "deaths", .offset = STAT_AT(struct stats_supervisor, deaths), .kind = STAT_COUNTER,
	  .family = "sandnet_datapath_deaths_total",
	  .help = "Datapaths that exited or died without being asked to (each one restarted, or the container "
		  "dark)." },
	/* settings, not measurements */
	{ .key = "max_deaths", .offset = STAT_AT(struct stats_supervisor, max_deaths), .kind = STAT_GAUGE,
	  .family = STAT_NOT_EXPORTED, .help = "Deaths within the window after which the container goes dark." },
	{ .key = "death_window_s", .offset = STAT_AT(struct stats_supervisor, death_window_s), .kind = STAT_GAUGE,
	  .family = STAT_NOT_EXPORTED, .help = "The window, in seconds, that the deaths are counted in." },
};

static const struct stat_table stats_supervisor_table = STAT_TABLE(stats_supervisor_rows);

/**
 * stats_print_supervisor() - the "supervisor" object: who keeps the
 * container's fds, how often a datapath was started again and why
 * @o:		the printer
 * @h:		the ledger's head (datapath/ledger.c)
 * @state:	serving, or the supervisor's own state when no datapath runs
 *		(dark, restarting): its name (proto/status.c) is printed
 * @reason:	why it is dark, or NULL
 */
void stats_print_supervisor(struct out *o, const struct ledger_head *h, enum proto_dp_state state,
			    const char *reason)
{
	char cause[sizeof(h->last_death_why)];

	out_obj_begin(o, "supervisor");
	out_u64(o, "pid", (uint64_t)h->supervisor_pid);
	out_str(o, "state", proto_dp_state_name(state));
	if (reason)
		out_str(o, "reason", reason);
	stat_print(&stats_supervisor_table,
		   &(struct stats_supervisor){ .restarts = h->restarts, .deaths = h->deaths,
					       .max_deaths = h->max_deaths, .death_window_s = h->death_window_s },
		   o);
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

/* One row of "link_totals": a link's bytes and frames, every shard's. */
struct stats_link_row {
	uint64_t rx_bytes, tx_bytes, rx_frames, tx_frames;
};

#define STATS_LINK_HELP "(sn-IF: the container face; rx on it is what the container sent)."

static const struct stat_desc stats_link_rows[] = {
	{ .key = "rx_bytes", .offset = STAT_AT(struct stats_link_row, rx_bytes), .kind = STAT_COUNTER,
	  .family = "sandnet_link_bytes_total", .help = "Bytes on each link of the datapath " STATS_LINK_HELP,
	  .label = "direction", .value = "rx" },
	{ .key = "tx_bytes", .offset = STAT_AT(struct stats_link_row, tx_bytes), .kind = STAT_COUNTER,
	  .label = "direction", .value = "tx" },
	{ .key = "rx_frames", .offset = STAT_AT(struct stats_link_row, rx_frames), .kind = STAT_COUNTER,
	  .family = "sandnet_link_packets_total", .help = "Frames on each link of the datapath " STATS_LINK_HELP,
	  .label = "direction", .value = "rx" },
	{ .key = "tx_frames", .offset = STAT_AT(struct stats_link_row, tx_frames), .kind = STAT_COUNTER,
	  .label = "direction", .value = "tx" },
};

static const struct stat_table stats_link_row_table = STAT_TABLE(stats_link_rows);

/* Link @i's row, in every shard (each has the same links, in the same order). */
static void stats_link_row(struct out *o, struct dp *dp, unsigned int i, bool inner)
{
	struct stats_link_row r = { 0 };
	unsigned int k;

	for (k = 0; k < stats_n_shards(dp); k++) {
		struct stack *sk = stats_shard_stack(dp, k);
		const struct link_stats *l = &(inner ? sk->inner[i] : sk->links[i])->stats;

		r.rx_bytes += l->rx_bytes;
		r.tx_bytes += l->tx_bytes;
		r.rx_frames += l->rx_frames;
		r.tx_frames += l->tx_frames;
	}
	out_obj_begin(o, NULL);
	out_str(o, "link", inner ? stats_shard_stack(dp, 0)->inner[i]->name
			     : stats_shard_stack(dp, 0)->links[i]->name);
	out_str(o, "side", inner ? "container" : "network");
	stat_print(&stats_link_row_table, &r, o);
	out_obj_end(o);
}

/* One row of "dropped": a reason that dropped at least one packet. */
static void stats_drop_row(struct out *o, const char *layer, const char *reason, uint64_t n)
{
	out_obj_begin(o, NULL);
	out_str(o, "layer", layer);
	out_str(o, "reason", reason);
	out_u64(o, "packets", n);
	out_obj_end(o);
}

/* The face's drops of every shard, one row per reason. */
struct stats_face_drops {
	unsigned int n;
	char reason[64][64];	/* face_drops_foreach() lends its names */
	uint64_t packets[64];
};

static void stats_face_drop_add(const char *reason, uint64_t n, void *arg)
{
	struct stats_face_drops *fd = arg;
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
static void stats_summary_rows(struct out *o, struct dp *dp)
{
	struct stack *st = stats_shard_stack(dp, 0);
	struct stats_face_drops fd = { 0 };
	uint64_t drop[DROP_MAX] = { 0 };
	unsigned int i, k;

	out_arr_begin(o, "link_totals");
	for (i = 0; i < st->n_links; i++)
		stats_link_row(o, dp, i, false);
	for (i = 0; i < st->n_inner; i++)
		stats_link_row(o, dp, i, true);
	out_arr_end(o);
	for (k = 0; k < stats_n_shards(dp); k++) {
		struct stack *sk = stats_shard_stack(dp, k);

		for (i = 0; i < DROP_MAX; i++)
			drop[i] += sk->drop[i];
		face_drops_foreach(face_of(sk), stats_face_drop_add, &fd);
	}
	out_arr_begin(o, "dropped");
	for (i = 0; i < DROP_MAX; i++)
		if (drop[i])
			stats_drop_row(o, "stack", dp_drop_name(i), drop[i]);
	for (i = 0; i < fd.n; i++)
		stats_drop_row(o, "face", fd.reason[i], fd.packets[i]);
	out_arr_end(o);
}

/* What one shard carries: a row of the summary's "shard_rows". */
struct stats_shard_row {
	uint64_t cpu_ns, loop_turns;
	struct stats_traffic traffic;
	uint64_t tcp_connections, tcp_open, udp_flows_open, drops;
	uint64_t busy_polls, busy_poll_hits, busy_poll_misses;
	uint64_t refused_egress, refused_ingress;
};

static const struct stat_desc stats_shard_rows[] = {
	{ .key = "cpu_ns", .offset = STAT_AT(struct stats_shard_row, cpu_ns), .kind = STAT_COUNTER,
	  .family = "sandnet_shard_cpu_seconds_total", .help = "CPU time of each shard's thread.", .scale = 1e-9 },
	{ .key = "loop_turns", .offset = STAT_AT(struct stats_shard_row, loop_turns), .kind = STAT_COUNTER,
	  .family = "sandnet_shard_loop_turns_total", .help = "Turns of each shard's event loop." },
	STATS_TRAFFIC_ROWS(struct stats_shard_row, "sandnet_shard_network_packets_total",
			   "Frames each shard read from and wrote to the network side's links."),
	{ .key = "tcp_connections", .offset = STAT_AT(struct stats_shard_row, tcp_connections),
	  .kind = STAT_COUNTER, .family = "sandnet_shard_tcp_connections_opened_total",
	  .help = "TCP connections through the container face that each shard carried." },
	{ .key = "tcp_open", .offset = STAT_AT(struct stats_shard_row, tcp_open), .kind = STAT_GAUGE,
	  .family = "sandnet_shard_tcp_connections_open", .help = "TCP connections of the container open now, per shard." },
	{ .key = "udp_flows_open", .offset = STAT_AT(struct stats_shard_row, udp_flows_open), .kind = STAT_GAUGE,
	  .family = "sandnet_shard_udp_flows_open", .help = "UDP flows of the container open now, per shard." },
	{ .key = "drops", .offset = STAT_AT(struct stats_shard_row, drops), .kind = STAT_COUNTER,
	  .family = "sandnet_shard_drops_total", .help = "Packets each shard dropped, for any reason." },
	{ .key = "busy_polls", .offset = STAT_AT(struct stats_shard_row, busy_polls), .kind = STAT_COUNTER,
	  .family = "sandnet_shard_busy_polls_total",
	  .help = "Waits that each shard's loop made without sleeping while it busy-polled (system calls)." },
	{ .key = "busy_poll_hits", .offset = STAT_AT(struct stats_shard_row, busy_poll_hits), .kind = STAT_COUNTER,
	  .family = "sandnet_shard_busy_poll_results_total",
	  .help = "Busy polls of each shard that found an event (hit) or spent their budget and slept after all "
		  "(miss).",
	  .label = "result", .value = "hit" },
	{ .key = "busy_poll_misses", .offset = STAT_AT(struct stats_shard_row, busy_poll_misses),
	  .kind = STAT_COUNTER, .label = "result", .value = "miss" },
	{ .key = "refused_egress", .offset = STAT_AT(struct stats_shard_row, refused_egress), .kind = STAT_COUNTER,
	  .family = "sandnet_shard_policy_refusals_total",
	  .help = "Conversations the policy refused on each shard, by who began them (egress: the container).",
	  .label = "direction", .value = "egress" },
	{ .key = "refused_ingress", .offset = STAT_AT(struct stats_shard_row, refused_ingress), .kind = STAT_COUNTER,
	  .label = "direction", .value = "ingress" },
};

static const struct stat_table stats_shard_row_table = STAT_TABLE(stats_shard_rows);

/*
 * The summary's "shard_rows": what each shard carries, so that an operator
 * (and `datapath metrics`, a series per shard) sees how evenly the steering
 * spread the container's conversations and which shard is short of CPU.
 */
static void stats_shard_rows_print(struct out *o, struct dp *dp)
{
	unsigned int i, k;

	out_arr_begin(o, "shard_rows");
	for (k = 0; k < stats_n_shards(dp); k++) {
		struct stack *st = stats_shard_stack(dp, k);
		struct loop_busy_stats busy = loop_busy_stats(stats_shard_loop(dp, k));
		struct stats_shard_row r = { 0 };
		struct face_totals ft;

		r.cpu_ns = shards_cpu_ns(dp->shards, k);
		r.loop_turns = loop_turns(stats_shard_loop(dp, k));
		stats_traffic_add(&r.traffic, st);
		face_totals(face_of(st), &ft);
		r.tcp_connections = ft.tcp_outbound + ft.tcp_inbound;
		r.tcp_open = ft.tcp_open;
		r.udp_flows_open = ft.udp_flows_open;
		for (i = 0; i < DROP_MAX; i++)
			r.drops += st->drop[i];
		r.drops += ft.drops;
		r.busy_polls = busy.polls;
		r.busy_poll_hits = busy.hits;
		r.busy_poll_misses = busy.misses;
		r.refused_egress = policy_refusals(st->policy, POLICY_EGRESS);
		r.refused_ingress = policy_refusals(st->policy, POLICY_INGRESS);
		out_obj_begin(o, NULL);
		out_u64(o, "shard", k);
		stat_print(&stats_shard_row_table, &r, o);
		out_obj_end(o);
	}
	out_arr_end(o);
}

/* The top level of both the stats and the summary. */
struct stats_head {
	uint64_t uptime_ms;
};

static const struct stat_desc stats_head_rows[] = {
	{ .key = "uptime_ms", .offset = STAT_AT(struct stats_head, uptime_ms), .kind = STAT_GAUGE,
	  .family = "sandnet_datapath_uptime_seconds", .help = "Seconds the datapath has been serving.",
	  .scale = 0.001 },
};

static const struct stat_table stats_head_table = STAT_TABLE(stats_head_rows);

/* "flow_log": what the flow log wrote and lost (datapath/flowlog.c); absent without one. */
static void stats_flowlog(struct out *o, struct dp *dp)
{
	struct flowlog_stats s;

	if (!dp->flowlog)
		return;
	flowlog_stats(dp->flowlog, &s);
	out_obj_begin(o, "flow_log");
	out_bool(o, "file", dp->flowlog->fd >= 0);
	stat_print(&flowlog_stats_table, &s, o);
	out_obj_end(o);
}

/* The summary's top level, after the head. */
struct stats_summary_head {
	uint64_t links, faces, busy_poll_us;
};

static const struct stat_desc stats_summary_head_rows[] = {
	/* the link rows say which */
	{ .key = "links", .offset = STAT_AT(struct stats_summary_head, links), .kind = STAT_GAUGE,
	  .family = STAT_NOT_EXPORTED, .help = "Links on the network side." },
	{ .key = "faces", .offset = STAT_AT(struct stats_summary_head, faces), .kind = STAT_GAUGE,
	  .family = STAT_NOT_EXPORTED, .help = "Container faces (TUNs)." },
	{ .key = "busy_poll_us", .offset = STAT_AT(struct stats_summary_head, busy_poll_us), .kind = STAT_GAUGE,
	  .family = "sandnet_datapath_busy_poll_budget_seconds",
	  .help = "How long the datapath's loop polls for the next event before it sleeps (datapath --busy-poll; "
		  "0: never).",
	  .scale = 1e-6 },
};

static const struct stat_table stats_summary_head_table = STAT_TABLE(stats_summary_head_rows);

const struct stats_section stats_summary_sections[] = {
	{ "", NULL, &stats_head_table },
	{ "supervisor", NULL, &stats_supervisor_table },
	{ "", NULL, &stats_summary_head_table },
	{ "totals", NULL, &stats_totals_table },
	{ "totals", NULL, &face_totals_table },
	{ "totals", NULL, &face_netstat_table },
	{ "link_totals", "link", &stats_link_row_table },
	{ "shard_rows", "shard", &stats_shard_row_table },
	{ "flow_log", NULL, &flowlog_stats_table },
};

const unsigned int stats_summary_n_sections = sizeof(stats_summary_sections) / sizeof(stats_summary_sections[0]);

/* What both the full stats and the summary begin with. */
static void stats_head(struct out *o, struct dp *dp)
{
	out_str(o, "name", dp->name ? dp->name : "");
	out_u64(o, "pid", (uint64_t)getpid());
	out_u64(o, "uid", (uint64_t)geteuid());
	stat_print(&stats_head_table, &(struct stats_head){ .uptime_ms = loop_now_ms(dp->loop) - dp->start_ms }, o);
	if (stats_shard_stack(dp, 0)->ledger)
		stats_print_supervisor(o, stats_shard_stack(dp, 0)->ledger->head, PROTO_DP_SERVING, NULL);
}

/* The policy with every shard's hits. */
static void stats_policy(struct out *o, struct dp *dp)
{
	const struct policy *p0 = stats_shard_stack(dp, 0)->policy;
	struct policy *sum;
	unsigned int k;

	if (!p0 || stats_n_shards(dp) == 1) {
		policy_print(p0, o);
		return;
	}
	sum = malloc(sizeof(*sum));
	if (!sum) {
		policy_print(p0, o);	/* shard 0's alone, rather than nothing */
		return;
	}
	*sum = *p0;
	for (k = 1; k < stats_n_shards(dp); k++)
		policy_add_hits(sum, stats_shard_stack(dp, k)->policy);
	policy_print(sum, o);
	free(sum);
}

/**
 * stats_print_summary() - what an operator looks at per container: the
 * totals, each link's counters, the drops by reason and every policy rule
 * with its hits (`datapath stats --all`, `datapath metrics`)
 * @dp:		the datapath
 * @f:		stream
 * @json:	JSON instead of text
 *
 * Return: 0, or negative errno with nothing written (shards_pause()).
 */
int stats_print_summary(struct dp *dp, FILE *f, bool json)
{
	struct shards *sh = dp->shards;
	int ret = shards_pause(sh);
	struct out o;

	if (ret < 0)
		return ret;
	out_init(&o, f, json);
	stats_head(&o, dp);
	stat_print(&stats_summary_head_table,
		   &(struct stats_summary_head){ .links = stats_shard_stack(dp, 0)->n_links,
						 .faces = stats_shard_stack(dp, 0)->n_inner,
						 .busy_poll_us = loop_busy_poll_us(dp->loop) },
		   &o);
	stats_totals(&o, dp);
	stats_summary_rows(&o, dp);
	stats_shard_rows_print(&o, dp);
	stats_policy(&o, dp);
	stats_flowlog(&o, dp);
	out_finish(&o);
	shards_resume(sh);
	return 0;
}

/* busy_poll: the budget, and what the polls found (loop.c) */
static void stats_busy_poll(struct out *o, const struct loop *l)
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
static void stats_stack(struct out *o, struct dp *dp, unsigned int k)
{
	struct stack *st = stats_shard_stack(dp, k);
	struct loop *loop = stats_shard_loop(dp, k);
	uint64_t now = loop_now_ms(loop);
	unsigned int i;

	out_obj_begin(o, "links");
	for (i = 0; i < st->n_links; i++)
		stats_link(o, st->links[i]);
	out_obj_end(o);
	if (st->n_inner) {
		/* the container face's TUNs: the inner links */
		out_obj_begin(o, "inner_links");
		for (i = 0; i < st->n_inner; i++)
			stats_link(o, st->inner[i]);
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
	stats_limits(o, dp, k);
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
	udp_for_each(st, stats_udp_sock, o);
	out_arr_end(o);
	tcp_glue_print_stats(st, o);
	face_print_stats(face_of(st), o);
}

/**
 * stats_print() - every counter of the process, as text or JSON
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
int stats_print(struct dp *dp, FILE *f, bool json)
{
	struct shards *sh = dp->shards;
	int ret = shards_pause(sh);
	struct out o;
	unsigned int i;

	if (ret < 0)
		return ret;
	out_init(&o, f, json);
	stats_head(&o, dp);
	out_u64(&o, "cpu_ns", shards_cpu_ns(dp->shards, 0));
	out_u64(&o, "loop_turns", loop_turns(dp->loop));
	stats_busy_poll(&o, dp->loop);
	out_u64(&o, "packets_live", (uint64_t)pkt_live());
	{
		/* heap bytes in use vs. held: a leak grows the first, fragmentation the second */
		struct mallinfo2 mi = mallinfo2();

		out_u64(&o, "heap_in_use", mi.uordblks + mi.hblkhd);
		out_u64(&o, "heap_held", mi.arena + mi.hblkhd);
	}
	stats_stack(&o, dp, 0);
	out_arr_begin(&o, "services");
	for (i = 0; i < dp->shards->n_svcs; i++) {
		struct svc *v[SHARD_MAX];
		unsigned int k;

		for (k = 0; k < stats_n_shards(dp); k++)
			v[k] = dp->shards->sh[k]->svc[i];
		svc_stats(v, stats_n_shards(dp), &o);
	}
	out_arr_end(&o);
	out_u64(&o, "n_shards", stats_n_shards(dp));
	out_u64(&o, "shard_park_misses", shards_park_misses(sh));
	out_arr_begin(&o, "shards");
	for (i = 1; i < stats_n_shards(dp); i++) {
		out_obj_begin(&o, NULL);
		out_u64(&o, "shard", i);
		out_u64(&o, "cpu_ns", shards_cpu_ns(dp->shards, i));
		out_u64(&o, "loop_turns", loop_turns(stats_shard_loop(dp, i)));
		stats_busy_poll(&o, stats_shard_loop(dp, i));
		stats_stack(&o, dp, i);
		out_obj_end(&o);
	}
	out_arr_end(&o);
	stats_totals(&o, dp);
	stats_policy(&o, dp);
	stats_flowlog(&o, dp);
	out_finish(&o);
	shards_resume(sh);
	return 0;
}
