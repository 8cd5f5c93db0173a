// SPDX-License-Identifier: MIT
/*
 * test_datapath_metrics.c - `datapath metrics`: requests, the exposition, the scrape
 *
 * - every request the exporter refuses, with its status and the words that
 *   say why (malformed request line, target, version, header line; another
 *   path 404, another method 405); GET and HEAD of /metrics, with a query,
 *   in absolute form, with LF line ends;
 * - --listen: the forms taken and every malformed one refused by name;
 * - the exposition of a real summary (stats_print_summary() of a stack
 *   with counts set): each family's HELP and TYPE once, its samples together,
 *   the labels; a datapath that gave no summary is up 0 and nothing else;
 *   the supervisor's restarts and status appear only when the summary has
 *   them; duplicate container names and duplicate policy rules never make
 *   two samples with one label set; label values escaped;
 * - a scrape of a folder whose sockets answer, stall, refuse, answer garbage
 *   or an error line, each with its reason, within the timeout, no fd left;
 *   the state file's owner names a datapath that does not answer.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "datapath/proc/proc.h"
#include "datapath/obs/stats.h"
#include "datapath/obs/metrics.h"
#include "datapath/obs/metrics_expo.h"
#include "datapath_testlib.h"

/* ---- requests ---- */

static int req(const char *head, char *why, size_t why_len, struct metrics_request *r)
{
	return metrics_http_request(head, strlen(head), r, why, why_len);
}

#define REQ(head, code, words) do {								\
		struct metrics_request r_;							\
		char why_[384];									\
		int c_ = req(head, why_, sizeof(why_), &r_);					\
		ck_assert_msg(c_ == (code), "%s: %d, expected %d (%s)", head, c_, code, why_);	\
		ck_assert_msg(strstr(why_, words), "%s: '%s' lacks '%s'", head, why_, words);	\
	} while (0)

START_TEST(test_requests)
{
	struct metrics_request r;
	char why[384];

	ck_assert_int_eq(req("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\n\r\n", why, sizeof(why), &r),
			 200);
	ck_assert(!r.head_only);
	ck_assert_str_eq(r.method, "GET");
	ck_assert_int_eq(req("HEAD /metrics HTTP/1.0\r\n\r\n", why, sizeof(why), &r), 200);
	ck_assert(r.head_only);
	ck_assert_int_eq(req("GET /metrics?name[]=x HTTP/1.1\n\n", why, sizeof(why), &r), 200);
	ck_assert_int_eq(req("GET http://127.0.0.1:9476/metrics HTTP/1.1\r\n\r\n", why, sizeof(why), &r), 200);

	REQ("GET / HTTP/1.1\r\n\r\n", 404, "/: no such path; the metrics are at /metrics");
	REQ("GET /metricsx HTTP/1.1\r\n\r\n", 404, "no such path");
	REQ("GET /metrics/ HTTP/1.1\r\n\r\n", 404, "no such path");
	REQ("GET http://h/ HTTP/1.1\r\n\r\n", 404, "no such path");
	REQ("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405, "method POST: /metrics answers GET and HEAD only");
	REQ("DELETE /metrics HTTP/1.1\r\n\r\n", 405, "method DELETE");
	REQ("POST /other HTTP/1.1\r\n\r\n", 404, "no such path");
	REQ("GARBAGE\r\n\r\n", 400, "malformed request line");
	REQ("\x16\x03\x01\x02 /metrics HTTP/1.1\r\n\r\n", 400, "the method is not a token");
	REQ("GET  /metrics HTTP/1.1\r\n\r\n", 400, "one space apart");
	REQ("GET /metrics HTTP/1.1 extra\r\n\r\n", 400, "one space apart");
	REQ("GET /metrics\r\n\r\n", 400, "malformed request line");
	REQ("GET metrics HTTP/1.1\r\n\r\n", 400, "malformed request target 'metrics'");
	REQ("GET /met\x01rics HTTP/1.1\r\n\r\n", 400, "a control character");
	REQ("GET /metrics HTTP/1.x\r\n\r\n", 400, "the version is not HTTP/1.1");
	REQ("GET /metrics http/1.1\r\n\r\n", 400, "the version");
	REQ("GET /metrics HTTP/2.0\r\n\r\n", 505, "HTTP/2.0: only HTTP/1.0 and HTTP/1.1");
	REQ("GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", 400, "malformed header line 1: expected NAME: VALUE");
	REQ("GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, "malformed header line 2");
	REQ("GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", 400, "no space before the colon");
	REQ("GET /metrics HTTP/1.1\r\nX: a\x01b\r\n\r\n", 400, "header line 1: a control character");
	REQ("ABCDEFGHIJKLMNOPQRSTUVWXYZ /metrics HTTP/1.1\r\n\r\n", 400, "not a token");
	ck_assert_int_eq(metrics_http_request("GET /metrics HTTP/1.1\r\n\0\r\n\r\n", 27, &r, why, sizeof(why)), 400);
	ck_assert_ptr_nonnull(strstr(why, "NUL"));
}
END_TEST

START_TEST(test_head_end)
{
	ck_assert_int_eq(metrics_http_head_end("GET / HTTP/1.1\r\n", 16), -1);
	ck_assert_int_eq(metrics_http_head_end("GET / HTTP/1.1\r\n\r\n", 18), 18);
	ck_assert_int_eq(metrics_http_head_end("GET / HTTP/1.1\n\nrest", 20), 16);
	ck_assert_int_eq(metrics_http_head_end("GET / HTTP/1.1\r\nA: b\r\n\r\nbody", 28), 24);
	ck_assert_int_eq(metrics_http_head_end("", 0), -1);
	ck_assert_str_eq(metrics_http_reason(431), "Request Header Fields Too Large");
	ck_assert_str_eq(metrics_http_reason(299), "Error");
}
END_TEST

START_TEST(test_listen_parse)
{
	static const char *const bad[][2] = {
		{ "9476", "expected ADDRESS:PORT" },
		{ ":9476", "expected ADDRESS:PORT" },
		{ "127.0.0.1:", "port '' is not a number" },
		{ "127.0.0.1:0", "port '0'" },
		{ "127.0.0.1:65536", "port '65536'" },
		{ "127.0.0.1:9x", "port '9x'" },
		{ "localhost:9476", "'localhost' is not an IPv4 or IPv6 address" },
		{ "::1:9476", "expected ADDRESS:PORT" },
		{ "[::1]9476", "expected [IPV6]:PORT" },
		{ "[::1:9476", "expected [IPV6]:PORT" },
		{ "[nope]:9476", "'nope' is not an IPv4 or IPv6 address" },
	};
	struct sockaddr_storage ss;
	socklen_t len;
	char err[256];
	unsigned int i;

	ck_assert_int_eq(metrics_listen_parse("127.0.0.1:9476", &ss, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_int_eq(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9476);
	ck_assert_int_eq(metrics_listen_parse("[::1]:80", &ss, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_int_eq(metrics_listen_parse("0.0.0.0:1", &ss, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(metrics_listen_parse("[::]:65535", &ss, &len, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(metrics_listen_parse(bad[i][0], &ss, &len, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, bad[i][1]) && strstr(err, bad[i][0]), "%s: '%s'", bad[i][0], err);
	}
}
END_TEST

/* ---- the exposition ---- */

/* The exposition of @n targets, in memory (free it). */
static char *expo(struct metrics_target *t, unsigned int n, const struct metrics_self *self)
{
	struct metrics_scrape s = { .targets = t, .n = n, .folder_err = CONTROL_ASK_OK };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	metrics_expo_names(t, n);
	metrics_expo_write(f, &s, self);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

static void target(struct metrics_target *t, const char *sock, const char *json)
{
	json_error_t jerr;

	memset(t, 0, sizeof(*t));
	t->err = CONTROL_ASK_OK;
	snprintf(t->sock, sizeof(t->sock), "%s", sock);
	if (!json) {
		t->err = CONTROL_ASK_ERR_TIMEOUT;
		return;
	}
	t->summary = json_loads(json, 0, &jerr);
	ck_assert_msg(t->summary != NULL, "%s: %s", json, jerr.text);
	snprintf(t->name, sizeof(t->name), "%s", json_string_value(json_object_get(t->summary, "name")) ?: "");
}

/*
 * The text is a well-formed exposition: every family's HELP then TYPE
 * once, before its samples, and its samples in one block; no label set twice.
 */
static void assert_grouped(const char *text)
{
	char *copy = strdup(text), *line, *save, done[64][96], cur[96] = "";
	char *seen[1024];
	unsigned int n_done = 0, n_seen = 0, i;

	ck_assert_ptr_nonnull(copy);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char fam[96];

		if (!strncmp(line, "# HELP ", 7)) {
			sscanf(line + 7, "%95s", fam);
			for (i = 0; i < n_done; i++)
				ck_assert_msg(strcmp(done[i], fam), "family %s twice", fam);
			ck_assert_uint_lt(n_done, 64);
			strcpy(done[n_done++], fam);
			strcpy(cur, fam);
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			ck_assert_msg(!strncmp(line + 7, cur, strlen(cur)), "TYPE %s after HELP %s", line, cur);
			continue;
		}
		ck_assert_msg(!strncmp(line, cur, strlen(cur)) && (line[strlen(cur)] == '{' || line[strlen(cur)] == ' '),
			      "sample '%s' outside its family %s", line, cur);
		*strrchr(line, ' ') = '\0';
		for (i = 0; i < n_seen; i++)
			ck_assert_msg(strcmp(seen[i], line), "series %s twice", line);
		ck_assert_uint_lt(n_seen, 1024);
		seen[n_seen++] = line;
	}
	free(copy);
}

static struct shards sh;
static struct stack *st;
static int peer_fd;

static void s_setup(void)
{
	const struct dpt_link_opts o = { .mode = PROTO_GSO_SW, .addr4 = "10.0.0.2" };

	st = dpt_shard_up(&sh, &o, &peer_fd);
}

static void s_teardown(void)
{
	dpt_shard_down(&sh, peer_fd);
}

START_TEST(test_expo_summary)
{
	struct metrics_self self = { .scrape_seconds = 0.25 };
	struct metrics_target t[2];
	char *json = NULL, *text;
	size_t len = 0;
	struct dp dp;
	FILE *f;

	st->links[0]->stats.rx_bytes = 1234;
	st->links[0]->stats.tx_bytes = 567;
	st->links[0]->stats.rx_frames = 12;
	st->links[0]->stats.tx_frames = 5;
	st->drop[DROP_NOT_FOR_US] = 3;
	st->drop[DROP_BAD_CHECKSUM] = 1;
	memset(&dp, 0, sizeof(dp));
	dp.shards = &sh;
	dp.loop = sh.sh[0]->loop;
	dp.name = "oci:web \"1\"";
	f = open_memstream(&json, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(stats_print_summary(&dp, f, true), 0);
	ck_assert_int_eq(fclose(f), 0);
	/* the summary's rows: every link, only the reasons that counted */
	ck_assert_ptr_nonnull(strstr(json, "\"link_totals\":[{\"link\":\"eth0\",\"side\":\"network\",\"rx_bytes\":1234,"
					   "\"tx_bytes\":567,\"rx_frames\":12,\"tx_frames\":5}]"));
	ck_assert_ptr_nonnull(strstr(json, "\"dropped\":[{\"layer\":\"stack\",\"reason\":\"bad_checksum\",\"packets\":1},"
					   "{\"layer\":\"stack\",\"reason\":\"not_for_us\",\"packets\":3}]"));
	ck_assert_ptr_nonnull(strstr(json, "\"tcp_open\":0,\"udp_flows_open\":0"));
	/* one shard: one row, with the process's own counters */
	ck_assert_msg(strstr(json, "\"shard_rows\":[{\"shard\":0,\"cpu_ns\":"), "%s", json);
	ck_assert_msg(strstr(json, "\"loop_turns\":0,\"network_rx_bytes\":1234,\"network_tx_bytes\":567,"
				   "\"network_rx_frames\":12,\"network_tx_frames\":5,"), "%s", json);
	ck_assert_msg(strstr(json, "\"udp_flows_open\":0,\"drops\":4,\"busy_polls\":0,\"busy_poll_hits\":0,"
				   "\"busy_poll_misses\":0,\"refused_egress\":0,\"refused_ingress\":0}]"), "%s", json);
	ck_assert_msg(strstr(json, "\"busy_poll_us\":0,"), "%s", json);	/* a fake clock never polls */

	target(&t[0], "a.state.ctl", json);
	target(&t[1], "b.state.ctl", NULL);
	snprintf(t[1].name, sizeof(t[1].name), "cni:gone:eth0");
	t[0].have_proc = true;
	t[0].cpu_seconds = 1.5;
	t[0].rss_bytes = 4096;
	self.scrape_errors[CONTROL_ASK_ERR_TIMEOUT] = 2;
	self.requests[200 - 100] = 7;
	self.requests[404 - 100] = 1;
	text = expo(t, 2, &self);
	assert_grouped(text);
#define HAS(s) ck_assert_msg(strstr(text, s), "no '%s' in\n%s", s, text)
#define HASNT(s) ck_assert_msg(!strstr(text, s), "'%s' in\n%s", s, text)
	HAS("# HELP sandnet_datapath_up ");
	HAS("# TYPE sandnet_datapath_up gauge\n");
	HAS("sandnet_datapath_up{container=\"oci:web \\\"1\\\"\"} 1\n");
	HAS("sandnet_datapath_up{container=\"cni:gone:eth0\"} 0\n");
	HAS("sandnet_scrape_errors_total{reason=\"timeout\"} 2\n");
	HAS("sandnet_scrape_errors_total{reason=\"unreachable\"} 0\n");
	HAS("sandnet_scrape_errors_total{reason=\"malformed\"} 0\n");
	HAS("sandnet_scrape_errors_total{reason=\"busy\"} 0\n");
	HAS("sandnet_scrape_duration_seconds 0.25\n");
	HAS("sandnet_exporter_http_requests_total{code=\"200\"} 7\n");
	HAS("sandnet_exporter_http_requests_total{code=\"404\"} 1\n");
	HAS("# TYPE sandnet_datapath_cpu_seconds_total counter\n");
	HAS("sandnet_datapath_cpu_seconds_total{container=\"oci:web \\\"1\\\"\"} 1.5\n");
	HAS("sandnet_datapath_resident_memory_bytes{container=\"oci:web \\\"1\\\"\"} 4096\n");
	HAS("sandnet_link_bytes_total{container=\"oci:web \\\"1\\\"\",link=\"eth0\",direction=\"rx\"} 1234\n");
	HAS("sandnet_link_bytes_total{container=\"oci:web \\\"1\\\"\",link=\"eth0\",direction=\"tx\"} 567\n");
	HAS("sandnet_link_packets_total{container=\"oci:web \\\"1\\\"\",link=\"eth0\",direction=\"rx\"} 12\n");
	HAS("sandnet_drops_total{container=\"oci:web \\\"1\\\"\",layer=\"stack\",reason=\"not_for_us\"} 3\n");
	HAS("sandnet_tcp_connections_opened_total{container=\"oci:web \\\"1\\\"\",direction=\"outbound\"} 0\n");
	HAS("sandnet_tcp_connections_open{container=\"oci:web \\\"1\\\"\"} 0\n");
	HAS("sandnet_udp_flows_opened_total{container=\"oci:web \\\"1\\\"\"} 0\n");
	HAS("# TYPE sandnet_datapath_uptime_seconds gauge\n");
	HAS("# TYPE sandnet_shard_cpu_seconds_total counter\n");
	HAS("sandnet_shard_cpu_seconds_total{container=\"oci:web \\\"1\\\"\",shard=\"0\"} ");
	HAS("sandnet_shard_network_packets_total{container=\"oci:web \\\"1\\\"\",shard=\"0\",direction=\"rx\"} 12\n");
	HAS("sandnet_shard_network_packets_total{container=\"oci:web \\\"1\\\"\",shard=\"0\",direction=\"tx\"} 5\n");
	HAS("sandnet_shard_drops_total{container=\"oci:web \\\"1\\\"\",shard=\"0\"} 4\n");
	HAS("# TYPE sandnet_shard_busy_polls_total counter\n");
	HAS("sandnet_shard_busy_polls_total{container=\"oci:web \\\"1\\\"\",shard=\"0\"} 0\n");
	HAS("sandnet_shard_busy_poll_results_total{container=\"oci:web \\\"1\\\"\",shard=\"0\",result=\"hit\"} 0\n");
	HAS("sandnet_shard_busy_poll_results_total{container=\"oci:web \\\"1\\\"\",shard=\"0\",result=\"miss\"} 0\n");
	/* a row added to the shards' table is exported with nothing else to change */
	HAS("# TYPE sandnet_shard_policy_refusals_total counter\n");
	HAS("sandnet_shard_policy_refusals_total{container=\"oci:web \\\"1\\\"\",shard=\"0\",direction=\"egress\"} 0\n");
	HAS("# TYPE sandnet_datapath_busy_poll_budget_seconds gauge\n");
	HAS("sandnet_datapath_busy_poll_budget_seconds{container=\"oci:web \\\"1\\\"\"} 0\n");
	HAS("sandnet_shard_tcp_connections_open{container=\"oci:web \\\"1\\\"\",shard=\"0\"} 0\n");
	/* the one that did not answer costs its own series, nothing else */
	ck_assert_ptr_null(strstr(strchr(strstr(text, "sandnet_datapath_up{container=\"cni:gone:eth0\"}"), '\n'),
				  "cni:gone"));
	/* no supervisor in this summary: nothing made up */
	HASNT("sandnet_datapath_restarts_total");
	HASNT("sandnet_datapath_status");
	free(text);
	json_decref(t[0].summary);
	free(json);
}
END_TEST

START_TEST(test_expo_supervisor)
{
	struct metrics_self self = { 0 };
	struct metrics_target t[2];
	char *text;

	/* as stats_print_supervisor() prints it (datapath/obs/stats.c) */
	target(&t[0], "a.ctl", "{\"name\": \"oci:a\", \"uptime_ms\": 1500, \"supervisor\": {\"pid\": 5, "
			       "\"state\": \"dark\", \"reason\": \"crash loop: 5 deaths within 60 s\", \"restarts\": 3, "
			       "\"deaths\": 5, \"max_deaths\": 5, \"death_window_s\": 60, \"last_death\": {\"pid\": 9, "
			       "\"cause\": \"killed by signal 9 (Killed)\", \"at_unix_ms\": 1764655000123}}}");
	target(&t[1], "b.ctl", "{\"name\": \"oci:b\", \"supervisor\": {\"restarts\": 0, \"state\": \"rebooting\"}}");
	text = expo(t, 2, &self);
	assert_grouped(text);
	HAS("# TYPE sandnet_datapath_restarts_total counter\n");
	HAS("sandnet_datapath_restarts_total{container=\"oci:a\"} 3\n");
	HAS("sandnet_datapath_restarts_total{container=\"oci:b\"} 0\n");
	HAS("# TYPE sandnet_datapath_deaths_total counter\n");
	HAS("sandnet_datapath_deaths_total{container=\"oci:a\"} 5\n");
	HASNT("sandnet_datapath_deaths_total{container=\"oci:b\"}");
	HAS("sandnet_datapath_status{container=\"oci:a\",status=\"serving\"} 0\n");
	HAS("sandnet_datapath_status{container=\"oci:a\",status=\"dark\"} 1\n");
	HAS("sandnet_datapath_status{container=\"oci:a\",status=\"restarting\"} 0\n");
	HAS("sandnet_datapath_status{container=\"oci:a\",status=\"stopped\"} 0\n");
	/* a state this exporter does not know yet is shown as it is */
	HAS("sandnet_datapath_status{container=\"oci:b\",status=\"rebooting\"} 1\n");
	HAS("sandnet_datapath_uptime_seconds{container=\"oci:a\"} 1.5\n");
	/* fields the summary lacks make no sample */
	HASNT("sandnet_link_bytes_total{");
	HASNT("sandnet_tcp_connections_open{");
	free(text);
	json_decref(t[0].summary);
	json_decref(t[1].summary);
}
END_TEST

START_TEST(test_expo_unique)
{
	static const char pol[] =
		"{\"name\": \"%s\", \"policy\": {\"egress\": {\"refused\": 5, \"allowed_by_default\": 2,"
		" \"refused_by_default\": 7, \"dns_refused\": 3, \"name_bindings\": {\"held\": 11}, \"rules\": ["
		"{\"action\": \"deny\", \"rule\": \"169.254.169.254\", \"default\": false, \"hits\": 4},"
		"{\"action\": \"allow\", \"rule\": \"tcp:10.0.0.0/8:80\", \"default\": false, \"hits\": 9},"
		"{\"action\": \"deny\", \"rule\": \"169.254.169.254\", \"default\": true, \"hits\": 1}]},"
		" \"ingress\": {\"refused\": 0, \"allowed_by_default\": 0, \"rules\": []}}}";
	struct metrics_self self = { 0 };
	struct metrics_target t[4];
	char json[1024], *text;
	unsigned int i;

	snprintf(json, sizeof(json), pol, "oci:same");
	target(&t[0], "a.ctl", json);
	target(&t[1], "b.ctl", json);
	snprintf(json, sizeof(json), pol, "");
	target(&t[2], "c.ctl", json);
	target(&t[3], "d.ctl", NULL);
	snprintf(t[3].name, sizeof(t[3].name), "line\nbreak\\x\x01");
	text = expo(t, 4, &self);
	assert_grouped(text);
	HAS("sandnet_datapath_up{container=\"oci:same\"} 1\n");
	HAS("sandnet_datapath_up{container=\"oci:same (b.ctl)\"} 1\n");
	HAS("sandnet_datapath_up{container=\"c.ctl\"} 1\n");
	HAS("sandnet_datapath_up{container=\"line\\nbreak\\\\x?\"} 0\n");
	/* the repeated rule is one sample with the hits of both */
	HAS("sandnet_policy_rule_hits_total{container=\"oci:same\",direction=\"egress\",action=\"deny\","
	    "rule=\"169.254.169.254\"} 5\n");
	HAS("sandnet_policy_rule_hits_total{container=\"oci:same\",direction=\"egress\",action=\"allow\","
	    "rule=\"tcp:10.0.0.0/8:80\"} 9\n");
	HAS("sandnet_policy_allowed_by_default_total{container=\"c.ctl\",direction=\"egress\"} 2\n");
	HAS("sandnet_policy_allowed_by_default_total{container=\"c.ctl\",direction=\"ingress\"} 0\n");
	HAS("sandnet_policy_refused_by_default_total{container=\"c.ctl\",direction=\"egress\"} 7\n");
	HAS("sandnet_policy_dns_refused_total{container=\"c.ctl\"} 3\n");
	HAS("sandnet_policy_name_bindings{container=\"c.ctl\"} 11\n");
	/* a datapath without names says nothing of them: no sample is made up */
	ck_assert_ptr_null(strstr(text, "sandnet_policy_refused_by_default_total{container=\"c.ctl\",direction=\"ingress\"}"));
	free(text);
	for (i = 0; i < 3; i++)
		json_decref(t[i].summary);
}
END_TEST

/* ---- a scrape of a folder ---- */

static char dir[] = "/tmp/test_datapath_metrics.XXXXXX";

/* A listener at DIR/@name; its fd. */
static int listener(const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir, name);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	return fd;
}

struct answerer {
	int fd;
	const char *answer;
	char request[64];
};

/* Accept one connection, read the request line, answer, close. */
static void *answer_one(void *arg)
{
	struct answerer *a = arg;
	int c = accept(a->fd, NULL, NULL);
	ssize_t n;

	if (c < 0)
		return NULL;
	n = recv(c, a->request, sizeof(a->request) - 1, 0);
	a->request[n > 0 ? n : 0] = '\0';
	if (send(c, a->answer, strlen(a->answer), MSG_NOSIGNAL) < 0)
		a->request[0] = '!';
	close(c);
	return NULL;
}

static void d_setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void d_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/test_datapath_metrics.XXXXXX");
}

static struct metrics_target *by_sock(struct metrics_scrape *s, const char *sock)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->targets[i].sock, sock))
			return &s->targets[i];
	ck_abort_msg("no target %s", sock);
	return NULL;
}

START_TEST(test_scrape_dir)
{
	struct answerer good = { .answer = "{\"name\": \"oci:good\", \"uptime_ms\": 5}\n" };
	struct answerer garbage = { .answer = "{\"name\": \"oci:bad\", " };
	struct answerer words = { .answer = "error: unknown request (expected \"stats\")\n" };
	struct answerer busy = { .answer = "error: busy: a shard did not stop within 1000 ms to be read; ask again\n" };
	struct metrics_scrape s;
	struct timespec t0, t1;
	pthread_t th[4];
	int stall, refused, fds;
	double took;
	FILE *f;
	char path[256];

	fds = dpt_count_fds();
	good.fd = listener("a-good.state.ctl");
	garbage.fd = listener("b-garbage.state.ctl");
	words.fd = listener("c-words.state.ctl");
	busy.fd = listener("cc-busy.state.ctl");
	stall = listener("d-stall.state.ctl");		/* never accepts: connect works, no answer */
	refused = listener("e-refused.state.ctl");
	close(refused);					/* the file stays, nobody listens */
	snprintf(path, sizeof(path), "%s/e-refused.state", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("version 1\nowner cni:gone:eth0\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/not-a-socket.state", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(pthread_create(&th[0], NULL, answer_one, &good), 0);
	ck_assert_int_eq(pthread_create(&th[1], NULL, answer_one, &garbage), 0);
	ck_assert_int_eq(pthread_create(&th[2], NULL, answer_one, &words), 0);
	ck_assert_int_eq(pthread_create(&th[3], NULL, answer_one, &busy), 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(metrics_scrape_dir(dir, 300, &s), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(took >= 0.25 && took < 1.5, "the scrape took %.3f s (timeout 0.3 s)", took);
	ck_assert_uint_eq(s.n, 6);
	ck_assert_int_eq(s.folder_err, CONTROL_ASK_OK);
	/* name order */
	ck_assert_str_eq(s.targets[0].sock, "a-good.state.ctl");
	ck_assert_str_eq(s.targets[5].sock, "e-refused.state.ctl");

	ck_assert_int_eq(by_sock(&s, "a-good.state.ctl")->err, CONTROL_ASK_OK);
	ck_assert_ptr_nonnull(by_sock(&s, "a-good.state.ctl")->summary);
	ck_assert_str_eq(by_sock(&s, "a-good.state.ctl")->name, "oci:good");
	ck_assert_int_eq(by_sock(&s, "a-good.state.ctl")->pid, getpid());
	ck_assert(by_sock(&s, "a-good.state.ctl")->have_proc);
	ck_assert_uint_gt(by_sock(&s, "a-good.state.ctl")->rss_bytes, 0);
	ck_assert_int_eq(by_sock(&s, "b-garbage.state.ctl")->err, CONTROL_ASK_ERR_MALFORMED);
	ck_assert_ptr_nonnull(strstr(by_sock(&s, "b-garbage.state.ctl")->why, "not a summary: line 1"));
	ck_assert_int_eq(by_sock(&s, "c-words.state.ctl")->err, CONTROL_ASK_ERR_MALFORMED);
	ck_assert_ptr_nonnull(strstr(by_sock(&s, "c-words.state.ctl")->why, "it answered \"error: unknown request"));
	/* a shard too busy to be read: no counters this time, under their own reason */
	ck_assert_int_eq(by_sock(&s, "cc-busy.state.ctl")->err, CONTROL_ASK_ERR_BUSY);
	ck_assert_ptr_null(by_sock(&s, "cc-busy.state.ctl")->summary);
	ck_assert_ptr_nonnull(strstr(by_sock(&s, "cc-busy.state.ctl")->why, "it answered \"error: busy: a shard"));
	ck_assert_str_eq(control_ask_err_name(CONTROL_ASK_ERR_BUSY), "busy");
	ck_assert_int_eq(by_sock(&s, "d-stall.state.ctl")->err, CONTROL_ASK_ERR_TIMEOUT);
	ck_assert_str_eq(by_sock(&s, "d-stall.state.ctl")->why, "no answer within 300 ms");
	ck_assert_int_eq(by_sock(&s, "e-refused.state.ctl")->err, CONTROL_ASK_ERR_UNREACHABLE);
	ck_assert_ptr_nonnull(strstr(by_sock(&s, "e-refused.state.ctl")->why, "Connection refused"));
	ck_assert_str_eq(by_sock(&s, "e-refused.state.ctl")->name, "cni:gone:eth0");
	ck_assert_str_eq(by_sock(&s, "d-stall.state.ctl")->name, "");
	ck_assert_str_eq(good.request, "summary json\n");
	metrics_scrape_free(&s);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	pthread_join(th[2], NULL);
	pthread_join(th[3], NULL);
	close(busy.fd);
	close(good.fd);
	close(garbage.fd);
	close(words.fd);
	close(stall);
	ck_assert_int_eq(dpt_count_fds(), fds);
}
END_TEST

START_TEST(test_scrape_folders)
{
	struct metrics_scrape s;
	char path[256];
	int fds = dpt_count_fds();

	/* a folder that is not there has no datapath: not an error */
	snprintf(path, sizeof(path), "%s/nowhere", dir);
	ck_assert_int_eq(metrics_scrape_dir(path, 100, &s), 0);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_int_eq(s.folder_err, CONTROL_ASK_OK);
	metrics_scrape_free(&s);
	/* a file where the folder should be */
	snprintf(path, sizeof(path), "%s/file", dir);
	fclose(fopen(path, "w"));
	ck_assert_int_eq(metrics_scrape_dir(path, 100, &s), -ENOTDIR);
	ck_assert_int_eq(s.folder_err, CONTROL_ASK_ERR_FOLDER);
	ck_assert_ptr_nonnull(strstr(s.why, "Not a directory"));
	metrics_scrape_free(&s);
	/* an empty folder */
	ck_assert_int_eq(metrics_scrape_dir(dir, 100, &s), 0);
	ck_assert_uint_eq(s.n, 0);
	metrics_scrape_free(&s);
	ck_assert_int_eq(dpt_count_fds(), fds);
}
END_TEST

START_TEST(test_proc_stat)
{
	double cpu = -1;
	uint64_t rss = 0;
	volatile unsigned long spin = 0;
	struct timespec a, b;

	/* burn a little CPU so that the count is above zero */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		spin++;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 30000000L);
	ck_assert_int_eq(metrics_proc_stat(getpid(), &cpu, &rss), 0);
	ck_assert_msg(cpu > 0 && cpu < 3600, "cpu %f", cpu);
	ck_assert_uint_gt(rss, 4096);
	ck_assert_int_eq(metrics_proc_stat(0x3fffffff, &cpu, &rss), -ENOENT);
	ck_assert_str_eq(control_ask_err_name(CONTROL_ASK_ERR_TOO_MANY), "too_many");
	ck_assert_str_eq(control_ask_err_name(CONTROL_ASK_OK), "none");
}
END_TEST

static Suite *metrics_suite(void)
{
	Suite *s = suite_create("datapath_metrics");
	TCase *tc;

	tc = tcase_create("http");
	tcase_add_test(tc, test_requests);
	tcase_add_test(tc, test_head_end);
	tcase_add_test(tc, test_listen_parse);
	suite_add_tcase(s, tc);
	tc = tcase_create("expo");
	tcase_add_checked_fixture(tc, s_setup, s_teardown);
	tcase_add_test(tc, test_expo_summary);
	suite_add_tcase(s, tc);
	tc = tcase_create("expo_docs");
	tcase_add_test(tc, test_expo_supervisor);
	tcase_add_test(tc, test_expo_unique);
	suite_add_tcase(s, tc);
	tc = tcase_create("scrape");
	tcase_add_checked_fixture(tc, d_setup, d_teardown);
	tcase_add_test(tc, test_scrape_dir);
	tcase_add_test(tc, test_scrape_folders);
	tcase_add_test(tc, test_proc_stat);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(metrics_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
