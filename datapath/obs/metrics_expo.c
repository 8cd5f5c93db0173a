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
 *   - the summary's numbers: every table of stats_summary_sections[]
 *     (stats.h), walked as the datapath printed them. Each row says its
 *     key, its family, its kind, its HELP, a fixed label and a scale
 *     (uptime_ms -> seconds), so a number a layer adds to its table is
 *     exported with nothing here to change; a row's key that a summary lacks
 *     (an older datapath's) prints nothing for that datapath: nothing is
 *     made up. Rows of an array ("shard_rows", "link_totals") carry the
 *     row's id as a label (shard="N", link="eth0");
 *   - the drops by layer and reason, the policy's rules and the
 *     supervisor's status (a gauge per state, 1 for the current one): one
 *     function each below;
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

#include "datapath/obs/metrics_expo.h"
#include "datapath/obs/stats.h"
#include "proto/status.h"


/* The family whose HELP and TYPE are printed only once a sample comes. */
struct metrics_expo {
	FILE *f;
	const char *family, *type, *help;
	bool started;
	bool skipping;		/* a table's rows that are not exported */
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

/*
 * Whether row @d is exported: it begins its family, goes on with the row
 * before's (NULL), or is in the stats only (STAT_NOT_EXPORTED, and so are
 * the rows that go on with it).
 */
static bool expo_row(struct metrics_expo *x, const struct stat_desc *d)
{
	if (!d->family)
		return !x->skipping;
	x->skipping = !d->family[0];
	if (!x->skipping)
		expo_family(x, d->family, stat_kind_name(d->kind), d->help);
	return !x->skipping;
}

/* The id of an array's row as a label value: a string, or an integer's digits. */
static const char *expo_row_id(json_t *row, const char *key, char *buf, size_t size)
{
	json_t *id = json_object_get(row, key);

	if (json_is_integer(id)) {
		snprintf(buf, size, "%lld", (long long)json_integer_value(id));
		return buf;
	}
	return json_string_value(id);
}

/* One table of the summary, every datapath's samples of each family together. */
static void expo_section(struct metrics_expo *x, const struct metrics_scrape *s, const struct stats_section *sec)
{
	const struct stat_table *t = sec->table;
	unsigned int r, i;

	x->skipping = false;
	for (r = 0; r < t->n; r++) {
		const struct stat_desc *d = &t->rows[r];
		double scale = d->scale ? d->scale : 1;

		if (!expo_row(x, d))
			continue;
		for (i = 0; i < s->n; i++) {
			json_t *where = s->targets[i].summary, *row;
			char id[32];
			size_t k;

			if (!where)
				continue;
			if (sec->path[0])
				where = json_object_get(where, sec->path);
			if (!sec->row_id) {
				const char *labels[3] = { d->label, d->value, NULL };

				expo_json(x, s->targets[i].name, labels, json_object_get(where, d->key), scale);
				continue;
			}
			json_array_foreach(where, k, row) {
				const char *labels[5] = { sec->row_id, expo_row_id(row, sec->row_id, id, sizeof(id)),
							  d->label, d->value, NULL };

				if (labels[1])
					expo_json(x, s->targets[i].name, labels, json_object_get(row, d->key), scale);
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
	expo_family(x, "sandnet_policy_refused_by_default_total", "counter",
		    "New conversations no policy rule matched, refused (egress, once a name rule is given), by direction.");
	for (i = 0; i < s->n; i++) {
		for (d = 0; d < 2; d++) {
			const char *labels[] = { "direction", dirs[d], NULL };
			json_t *pol = json_object_get(json_object_get(s->targets[i].summary, "policy"), dirs[d]);

			expo_json(x, s->targets[i].name, labels, json_object_get(pol, "refused_by_default"), 1);
		}
	}
	expo_family(x, "sandnet_policy_dns_refused_total", "counter",
		    "DNS queries for a name no policy rule allows, answered REFUSED by the datapath.");
	for (i = 0; i < s->n; i++) {
		const char *labels[] = { NULL };

		expo_json(x, s->targets[i].name, labels, expo_path(s->targets[i].summary, "policy.egress.dns_refused"),
			  1);
	}
	expo_family(x, "sandnet_policy_name_bindings", "gauge",
		    "Addresses bound to allowed names by DNS answers, held now (expired ones not yet swept included).");
	for (i = 0; i < s->n; i++) {
		const char *labels[] = { NULL };

		expo_json(x, s->targets[i].name, labels,
			  expo_path(s->targets[i].summary, "policy.egress.name_bindings.held"), 1);
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
	for (i = 0; i < CONTROL_ASK_ERR_MAX; i++) {
		const char *labels[] = { "reason", control_ask_err_name(i), NULL };

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

	unsigned int i;

	expo_self(&x, s, self);
	expo_process(&x, s);
	for (i = 0; i < stats_summary_n_sections; i++)
		expo_section(&x, s, &stats_summary_sections[i]);
	expo_drops(&x, s);
	expo_policy(&x, s);
	expo_status(&x, s);
}
