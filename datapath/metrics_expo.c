// SPDX-License-Identifier: MIT
/*
 * metrics_expo.c - the datapaths' summaries as Prometheus series
 *
 * Theory of operation: metrics_expo_write() prints the text exposition
 * format, version 0.0.4 (what every Prometheus since 2.0 reads, and what
 * `promtool check metrics` checks): for each metric family a "# HELP" and a
 * "# TYPE" line, then every sample of that family, of every datapath, before
 * the next family starts. So the loop is families outside, datapaths
 * inside; the summaries are parsed once (metrics_scrape.c) and read here as
 * often as there are families.
 *
 * Every series of a datapath carries container="NAME" (the summary's name:
 * the owner netsetup gave it, "oci:ID", "cni:ID:IFNAME"); where it fits also
 * link, direction, layer, reason, action and rule. Names carry their unit
 * (_bytes, _seconds) and counters end in _total.
 *
 * Where a series comes from:
 *   - single numbers of the summary: the table metrics_expo_scalars[], one
 *     row a (dotted) path, its family, a scale (uptime_ms -> seconds) and at
 *     most one fixed label. A field that a later datapath adds to its summary
 *     is one more row; a row whose path a summary lacks prints nothing for
 *     that datapath (nothing is made up: sandnet_datapath_restarts_total
 *     and _deaths_total come from the supervisor's "supervisor.restarts"
 *     and "supervisor.deaths", control_print_supervisor());
 *   - rows of the summary (link_totals[], dropped[], shard_rows[] with a
 *     shard="N" label, policy.*.rules[]) and
 *     the supervisor's status (a gauge per state, 1 for the current one):
 *     one function each below;
 *   - the process (CPU time, resident memory) from /proc (metrics_scrape.c);
 *   - the exporter itself: sandnet_datapath_up (0 for a socket that gave no
 *     summary), sandnet_scrape_errors_total by reason, the last scrape's
 *     duration, and the requests it answered by status code.
 *
 * Two label sets must never repeat within a family (Prometheus drops the
 * whole scrape otherwise): containers are made unique by
 * metrics_expo_names(), and policy rules with the same direction, action and
 * text (a user rule that repeats a default) are summed into one sample.
 *
 * common/out.c is not used here: it prints one document's keys in order,
 * where the exposition needs every document's samples regrouped per family,
 * with labels quoted its own way (metrics_expo_label_value()).
 */
#include <string.h>

#include "datapath/metrics.h"
#include "proto/status.h"

/**
 * struct metrics_expo_scalar - one number of the summary as one sample
 * @family:	the metric; NULL: the family of the row before (more samples)
 * @type:	"counter" or "gauge"
 * @help:	the HELP text
 * @path:	where in the summary: object keys separated by '.'
 * @scale:	the value is multiplied by it (milliseconds to seconds)
 * @label:	a fixed label of this row, or NULL; @value: its value
 */
struct metrics_expo_scalar {
	const char *family, *type, *help, *path;
	double scale;
	const char *label, *value;
};

static const struct metrics_expo_scalar metrics_expo_scalars[] = {
	{ "sandnet_datapath_uptime_seconds", "gauge", "Seconds the datapath has been serving.",
	  "uptime_ms", 0.001, NULL, NULL },
	{ "sandnet_tcp_connections_opened_total", "counter",
	  "TCP connections through the container face, by who opened them (outbound: the container).",
	  "totals.tcp_outbound", 1, "direction", "outbound" },
	{ NULL, NULL, NULL, "totals.tcp_inbound", 1, "direction", "inbound" },
	{ "sandnet_tcp_connections_open", "gauge", "TCP connections of the container open now.",
	  "totals.tcp_open", 1, NULL, NULL },
	{ "sandnet_udp_flows_opened_total", "counter", "UDP flows through the container face, either side opened.",
	  "totals.udp_flows", 1, NULL, NULL },
	{ "sandnet_udp_flows_open", "gauge", "UDP flows of the container open now.",
	  "totals.udp_flows_open", 1, NULL, NULL },
	{ "sandnet_face_udp_paced_total", "counter",
	  "UDP datagrams (or GSO frames) the container face held to space them as they arrived, by direction.",
	  "totals.udp_held_to_container", 1, "direction", "to_container" },
	{ NULL, NULL, NULL, "totals.udp_held_to_network", 1, "direction", "to_network" },
	{ "sandnet_face_udp_pace_overruns_total", "counter",
	  "Of those, sent before their time: held too long or too much held, by direction.",
	  "totals.udp_pace_overruns_to_container", 1, "direction", "to_container" },
	{ NULL, NULL, NULL, "totals.udp_pace_overruns_to_network", 1, "direction", "to_network" },
	{ "sandnet_container_udp_receive_errors_total", "counter",
	  "Datagrams the container's own UDP sockets dropped on receive, every reason (its kernel's Udp and "
	  "Udp6 InErrors).",
	  "totals.container_udp_in_errors", 1, NULL, NULL },
	{ "sandnet_container_udp_receive_buffer_errors_total", "counter",
	  "Of those, datagrams dropped because the receiving socket's buffer was full (RcvbufErrors).",
	  "totals.container_udp_rcvbuf_errors", 1, NULL, NULL },
	{ "sandnet_container_udp_send_buffer_errors_total", "counter",
	  "Datagrams the container's own UDP sockets could not send for buffer space (SndbufErrors).",
	  "totals.container_udp_sndbuf_errors", 1, NULL, NULL },
	{ "sandnet_container_tun_dropped_total", "counter",
	  "Packets the container's kernel dropped at the face's TUN: out, its queue to the datapath was full; "
	  "in, its backlog from the datapath.",
	  "totals.container_tun_tx_dropped", 1, "direction", "out" },
	{ NULL, NULL, NULL, "totals.container_tun_rx_dropped", 1, "direction", "in" },
	{ "sandnet_datapath_syscalls_total", "counter",
	  "System calls of the datapath's loop: every link's reads and writes and its waits.",
	  "totals.syscalls", 1, NULL, NULL },
	{ "sandnet_datapath_busy_poll_budget_seconds", "gauge",
	  "How long the datapath's loop polls for the next event before it sleeps (datapath --busy-poll; 0: never).",
	  "busy_poll_us", 1e-6, NULL, NULL },
	{ "sandnet_datapath_restarts_total", "counter",
	  "Datapaths the supervisor started after the first (after a death, or an upgrade).",
	  "supervisor.restarts", 1, NULL, NULL },
	{ "sandnet_datapath_deaths_total", "counter",
	  "Datapaths that exited or died without being asked to (each one restarted, or the container dark).",
	  "supervisor.deaths", 1, NULL, NULL },
};

/* The family whose HELP and TYPE are printed only once a sample comes. */
struct metrics_expo {
	FILE *f;
	const char *family, *type, *help;
	bool started;
};

static void expo_family(struct metrics_expo *x, const char *family, const char *type, const char *help)
{
	x->family = family;
	x->type = type;
	x->help = help;
	x->started = false;
}

/**
 * metrics_expo_label_value() - print a label value with the format's escapes
 * @f:	stream
 * @v:	the value: backslash, double quote and newline are escaped, other
 *	control characters become '?'
 */
void metrics_expo_label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc((unsigned char)*v < 0x20 || *v == 0x7f ? '?' : *v, f);
	}
}

/*
 * One sample of the current family: container="@container" when it is not
 * NULL, then the pairs of @labels (name, value, ..., NULL).
 */
static void expo_begin(struct metrics_expo *x, const char *container, const char *const *labels)
{
	bool first = true;

	if (!x->started) {
		fprintf(x->f, "# HELP %s %s\n# TYPE %s %s\n", x->family, x->help, x->family, x->type);
		x->started = true;
	}
	fputs(x->family, x->f);
	if (container) {
		fputs("{container=\"", x->f);
		metrics_expo_label_value(x->f, container);
		fputc('"', x->f);
		first = false;
	}
	for (; labels && labels[0]; labels += 2) {
		fprintf(x->f, "%s%s=\"", first ? "{" : ",", labels[0]);
		metrics_expo_label_value(x->f, labels[1]);
		fputc('"', x->f);
		first = false;
	}
	fputs(first ? " " : "} ", x->f);
}

static void expo_u64(struct metrics_expo *x, const char *container, const char *const *labels, uint64_t v)
{
	expo_begin(x, container, labels);
	fprintf(x->f, "%llu\n", (unsigned long long)v);
}

static void expo_double(struct metrics_expo *x, const char *container, const char *const *labels, double v)
{
	expo_begin(x, container, labels);
	fprintf(x->f, "%.15g\n", v);
}

/* A JSON number times @scale; false when @v is not a usable number. */
static bool expo_json(struct metrics_expo *x, const char *container, const char *const *labels, json_t *v,
		      double scale)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0 && scale == 1) {
		expo_u64(x, container, labels, (uint64_t)json_integer_value(v));
		return true;
	}
	if (!json_is_number(v) || json_number_value(v) < 0)
		return false;
	expo_double(x, container, labels, json_number_value(v) * scale);
	return true;
}

/* The value at a dotted @path of @doc, or NULL. */
static json_t *expo_path(json_t *doc, const char *path)
{
	char key[64];
	const char *dot;

	while (doc && (dot = strchr(path, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		doc = json_object_get(doc, key);
		path = dot + 1;
	}
	return json_object_get(doc, path);
}

static void expo_scalars(struct metrics_expo *x, const struct metrics_scrape *s)
{
	const unsigned int n = sizeof(metrics_expo_scalars) / sizeof(metrics_expo_scalars[0]);
	unsigned int r, i;

	for (r = 0; r < n; r++) {
		const struct metrics_expo_scalar *m = &metrics_expo_scalars[r];
		const char *labels[3] = { m->label, m->value, NULL };

		if (m->family)
			expo_family(x, m->family, m->type, m->help);
		for (i = 0; i < s->n; i++)
			if (s->targets[i].summary)
				expo_json(x, s->targets[i].name, labels, expo_path(s->targets[i].summary, m->path),
					  m->scale);
	}
}

/* link_totals[]: one family for bytes, one for packets, each both ways. */
static void expo_links(struct metrics_expo *x, const struct metrics_scrape *s, const char *family,
		       const char *help, const char *rx, const char *tx)
{
	unsigned int i;
	size_t k;
	json_t *row;

	expo_family(x, family, "counter", help);
	for (i = 0; i < s->n; i++) {
		json_array_foreach(json_object_get(s->targets[i].summary, "link_totals"), k, row) {
			const char *link = json_string_value(json_object_get(row, "link"));
			const char *lrx[] = { "link", link, "direction", "rx", NULL };
			const char *ltx[] = { "link", link, "direction", "tx", NULL };

			if (!link)
				continue;
			expo_json(x, s->targets[i].name, lrx, json_object_get(row, rx), 1);
			expo_json(x, s->targets[i].name, ltx, json_object_get(row, tx), 1);
		}
	}
}

/*
 * shard_rows[]: a series per shard of what each carries (control.c
 * control_shard_rows()), labelled shard="N", the first sample of a row a
 * family of its own; a datapath of one shard has one row.
 */
static const struct metrics_expo_scalar metrics_expo_shard_rows[] = {
	{ "sandnet_shard_cpu_seconds_total", "counter", "CPU time of each shard's thread.", "cpu_ns", 1e-9, NULL,
	  NULL },
	{ "sandnet_shard_loop_turns_total", "counter", "Turns of each shard's event loop.", "loop_turns", 1, NULL,
	  NULL },
	{ "sandnet_shard_network_packets_total", "counter",
	  "Frames each shard read from and wrote to the network side's links.", "network_rx_frames", 1,
	  "direction", "rx" },
	{ NULL, NULL, NULL, "network_tx_frames", 1, "direction", "tx" },
	{ "sandnet_shard_tcp_connections_opened_total", "counter",
	  "TCP connections through the container face that each shard carried.", "tcp_connections", 1, NULL, NULL },
	{ "sandnet_shard_tcp_connections_open", "gauge", "TCP connections of the container open now, per shard.",
	  "tcp_open", 1, NULL, NULL },
	{ "sandnet_shard_udp_flows_open", "gauge", "UDP flows of the container open now, per shard.",
	  "udp_flows_open", 1, NULL, NULL },
	{ "sandnet_shard_drops_total", "counter", "Packets each shard dropped, for any reason.", "drops", 1, NULL,
	  NULL },
	{ "sandnet_shard_busy_polls_total", "counter",
	  "Waits that each shard's loop made without sleeping while it busy-polled (system calls).", "busy_polls", 1,
	  NULL, NULL },
	{ "sandnet_shard_busy_poll_results_total", "counter",
	  "Busy polls of each shard that found an event (hit) or spent their budget and slept after all (miss).",
	  "busy_poll_hits", 1, "result", "hit" },
	{ NULL, NULL, NULL, "busy_poll_misses", 1, "result", "miss" },
};

static void expo_shards(struct metrics_expo *x, const struct metrics_scrape *s)
{
	const unsigned int n = sizeof(metrics_expo_shard_rows) / sizeof(metrics_expo_shard_rows[0]);
	unsigned int r, i;
	size_t k;
	json_t *row;

	for (r = 0; r < n; r++) {
		const struct metrics_expo_scalar *m = &metrics_expo_shard_rows[r];

		if (m->family)
			expo_family(x, m->family, m->type, m->help);
		for (i = 0; i < s->n; i++) {
			json_array_foreach(json_object_get(s->targets[i].summary, "shard_rows"), k, row) {
				json_t *id = json_object_get(row, "shard");
				char shard[16];
				const char *labels[5] = { "shard", shard, m->label, m->value, NULL };

				if (!json_is_integer(id))
					continue;
				snprintf(shard, sizeof(shard), "%lld", (long long)json_integer_value(id));
				expo_json(x, s->targets[i].name, labels, json_object_get(row, m->path), m->scale);
			}
		}
	}
}

/* dropped[]: the reasons that counted, by layer. */
static void expo_drops(struct metrics_expo *x, const struct metrics_scrape *s)
{
	unsigned int i;
	size_t k;
	json_t *row;

	expo_family(x, "sandnet_drops_total", "counter",
		    "Packets the datapath dropped, by layer (stack: the network side; face: the container's) and reason.");
	for (i = 0; i < s->n; i++) {
		json_array_foreach(json_object_get(s->targets[i].summary, "dropped"), k, row) {
			const char *labels[] = { "layer", json_string_value(json_object_get(row, "layer")),
						 "reason", json_string_value(json_object_get(row, "reason")), NULL };

			if (labels[1] && labels[3])
				expo_json(x, s->targets[i].name, labels, json_object_get(row, "packets"), 1);
		}
	}
}

/* Rule @i of @rules is the first with its action and text: its hits and those of its repeats. */
static bool expo_rule_first(json_t *rules, size_t i, uint64_t *hits)
{
	json_t *r = json_array_get(rules, i), *o;
	const char *action = json_string_value(json_object_get(r, "action"));
	const char *text = json_string_value(json_object_get(r, "rule"));
	size_t j;

	if (!action || !text || !json_is_integer(json_object_get(r, "hits")))
		return false;
	*hits = 0;
	json_array_foreach(rules, j, o) {
		const char *a = json_string_value(json_object_get(o, "action"));
		const char *t = json_string_value(json_object_get(o, "rule"));

		if (!a || !t || strcmp(a, action) || strcmp(t, text))
			continue;
		if (j < i)
			return false;	/* counted with the first */
		if (json_integer_value(json_object_get(o, "hits")) > 0)
			*hits += (uint64_t)json_integer_value(json_object_get(o, "hits"));
	}
	return true;
}

/* policy.egress and policy.ingress: each rule's hits, and what no rule matched. */
static void expo_policy(struct metrics_expo *x, const struct metrics_scrape *s)
{
	static const char *const dirs[] = { "egress", "ingress" };
	unsigned int i, d;
	uint64_t hits;
	size_t k;

	expo_family(x, "sandnet_policy_rule_hits_total", "counter",
		    "New conversations each policy rule decided (action deny: refused), by direction and rule.");
	for (i = 0; i < s->n; i++) {
		for (d = 0; d < 2; d++) {
			json_t *rules = expo_path(json_object_get(s->targets[i].summary, "policy"), dirs[d]);

			rules = json_object_get(rules, "rules");
			for (k = 0; k < json_array_size(rules); k++) {
				json_t *r = json_array_get(rules, k);
				const char *labels[] = { "direction", dirs[d],
							 "action", json_string_value(json_object_get(r, "action")),
							 "rule", json_string_value(json_object_get(r, "rule")), NULL };

				if (expo_rule_first(rules, k, &hits))
					expo_u64(x, s->targets[i].name, labels, hits);
			}
		}
	}
	expo_family(x, "sandnet_policy_allowed_by_default_total", "counter",
		    "New conversations no policy rule matched (allowed), by direction.");
	for (i = 0; i < s->n; i++) {
		for (d = 0; d < 2; d++) {
			const char *labels[] = { "direction", dirs[d], NULL };
			json_t *pol = json_object_get(json_object_get(s->targets[i].summary, "policy"), dirs[d]);

			expo_json(x, s->targets[i].name, labels, json_object_get(pol, "allowed_by_default"), 1);
		}
	}
}

/*
 * supervisor.state: one sample per state (proto/status.h, in its order), 1 for
 * the current one (an unknown one is shown too).
 */
static void expo_status(struct metrics_expo *x, const struct metrics_scrape *s)
{
	unsigned int i, k;

	expo_family(x, "sandnet_datapath_status", "gauge",
		    "The supervisor's state of the container's datapath: 1 for the current one.");
	for (i = 0; i < s->n; i++) {
		const char *now = json_string_value(expo_path(s->targets[i].summary, "supervisor.state"));
		bool known = false;

		if (!now)
			continue;
		for (k = 0; k < PROTO_DP_STATE_MAX; k++) {
			const char *labels[] = { "status", proto_dp_state_name(k), NULL };

			known |= !strcmp(now, proto_dp_state_name(k));
			expo_u64(x, s->targets[i].name, labels, !strcmp(now, proto_dp_state_name(k)));
		}
		if (!known) {
			const char *labels[] = { "status", now, NULL };

			expo_u64(x, s->targets[i].name, labels, 1);
		}
	}
}

static void expo_process(struct metrics_expo *x, const struct metrics_scrape *s)
{
	unsigned int i;

	expo_family(x, "sandnet_datapath_cpu_seconds_total", "counter",
		    "CPU time the datapath process used, user and system.");
	for (i = 0; i < s->n; i++)
		if (s->targets[i].summary && s->targets[i].have_proc)
			expo_double(x, s->targets[i].name, NULL, s->targets[i].cpu_seconds);
	expo_family(x, "sandnet_datapath_resident_memory_bytes", "gauge",
		    "Resident memory of the datapath process.");
	for (i = 0; i < s->n; i++)
		if (s->targets[i].summary && s->targets[i].have_proc)
			expo_u64(x, s->targets[i].name, NULL, s->targets[i].rss_bytes);
}

static void expo_self(struct metrics_expo *x, const struct metrics_scrape *s, const struct metrics_self *self)
{
	unsigned int i;

	expo_family(x, "sandnet_datapath_up", "gauge",
		    "1 when the datapath answered this scrape with its summary, 0 when it did not.");
	for (i = 0; i < s->n; i++)
		expo_u64(x, s->targets[i].name, NULL, s->targets[i].summary != NULL);
	expo_family(x, "sandnet_scrape_errors_total", "counter",
		    "Datapaths that gave no summary to a scrape (and folders that could not be read), by reason.");
	for (i = 0; i < METRICS_ERR_MAX; i++) {
		const char *labels[] = { "reason", metrics_err_name(i), NULL };

		expo_u64(x, NULL, labels, self->scrape_errors[i]);
	}
	expo_family(x, "sandnet_scrape_duration_seconds", "gauge", "How long asking every datapath took.");
	expo_double(x, NULL, NULL, self->scrape_seconds);
	expo_family(x, "sandnet_exporter_http_requests_total", "counter",
		    "HTTP requests the exporter answered, by status code.");
	for (i = 0; i < sizeof(self->requests) / sizeof(self->requests[0]); i++) {
		char code[8];
		const char *labels[] = { "code", code, NULL };

		if (!self->requests[i])
			continue;
		snprintf(code, sizeof(code), "%u", i + 100);
		expo_u64(x, NULL, labels, self->requests[i]);
	}
}

/**
 * metrics_expo_names() - make every target's container label set and unique
 * @t:	the targets, in name order of their sockets
 * @n:	how many
 *
 * A target without a name is named by its socket; a name an earlier target
 * has is followed by its socket in parentheses: "oci:x (8a3f.state.ctl)".
 */
void metrics_expo_names(struct metrics_target *t, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		if (!t[i].name[0])
			snprintf(t[i].name, sizeof(t[i].name), "%s", t[i].sock);
		for (j = 0; j < i; j++) {
			if (strcmp(t[i].name, t[j].name))
				continue;
			snprintf(t[i].name + strlen(t[i].name), sizeof(t[i].name) - strlen(t[i].name), " (%s)",
				 t[i].sock);
			break;
		}
	}
}

/**
 * metrics_expo_write() - the exposition of one scrape
 * @f:		stream
 * @s:		the scrape; its names made unique (metrics_expo_names())
 * @self:	the exporter's own counters
 */
void metrics_expo_write(FILE *f, const struct metrics_scrape *s, const struct metrics_self *self)
{
	struct metrics_expo x = { .f = f };

	expo_self(&x, s, self);
	expo_process(&x, s);
	expo_scalars(&x, s);
	expo_links(&x, s, "sandnet_link_bytes_total",
		   "Bytes on each link of the datapath (sn-IF: the container face; rx on it is what the container sent).",
		   "rx_bytes", "tx_bytes");
	expo_links(&x, s, "sandnet_link_packets_total",
		   "Frames on each link of the datapath (sn-IF: the container face; rx on it is what the container sent).",
		   "rx_frames", "tx_frames");
	expo_drops(&x, s);
	expo_shards(&x, s);
	expo_policy(&x, s);
	expo_status(&x, s);
}
