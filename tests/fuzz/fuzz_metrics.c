// SPDX-License-Identifier: MIT
/*
 * fuzz_metrics.c - libFuzzer target for `datapath metrics`' two parsers
 *
 * Theory of operation
 *
 * The exporter reads two things it does not control: HTTP request heads
 * from any client that reaches its port (datapath/obs/metrics.c), and the
 * summaries datapaths answer on their control sockets (metrics_scrape.c
 * parses them with jansson; metrics_expo.c turns them into series). The
 * first byte picks which: odd, the rest is a summary document; 2 or 6 modulo
 * 8 (bit 1), the rest is the --listen value metrics_listen_parse() reads
 * from its command line; else the rest is a request head.
 *
 *   - a head: metrics_http_head_end() never points past the input, and
 *     metrics_http_request() answers 200, 400, 404, 405 or 505, with a reason
 *     for every refusal; 200 only for GET or HEAD;
 *   - a --listen value: refused with -EINVAL and a reason naming
 *     --listen, or an IPv4 or IPv6 socket address of its family's size whose
 *     port is the number after the value's last ':', 1..65535;
 *   - a summary: whatever JSON object it is, the exposition of it (twice,
 *     under one name, and a target that did not answer) is lines that are
 *     "# HELP", "# TYPE" or a sample whose label values hold no raw newline,
 *     so that a name or a rule cannot inject series.
 *
 * Seeds: tests/fuzz/corpus/metrics/.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/obs/metrics.h"
#include "datapath/obs/metrics_expo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_metrics: %s\n", what);
	abort();
}

static void fz_head(const char *buf, size_t len)
{
	struct metrics_request r;
	char why[384];
	ssize_t end = metrics_http_head_end(buf, len);
	int code;

	if (end > (ssize_t)len || end == 0 || end < -1)
		fz_fail("head end outside the input");
	code = metrics_http_request(buf, end > 0 ? (size_t)end : len, &r, why, sizeof(why));
	if (code != 200 && code != 400 && code != 404 && code != 405 && code != 505)
		fz_fail("a status it never sends");
	if (code != 200 && !why[0])
		fz_fail("a refusal without a reason");
	if (code == 200 && strcmp(r.method, "GET") && strcmp(r.method, "HEAD"))
		fz_fail("200 for another method");
	if (code == 200 && r.head_only != !strcmp(r.method, "HEAD"))
		fz_fail("HEAD not seen");
}

static void fz_listen(const char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t ss_len = 0;
	char err[512], *spec = strndup(buf, len);
	const char *colon;
	unsigned int port;
	int ret;

	if (!spec)
		fz_fail("strndup");
	err[0] = 0;
	ret = metrics_listen_parse(spec, &ss, &ss_len, err, sizeof(err));
	if (ret) {
		if (ret != -EINVAL || strncmp(err, "--listen", 8))
			fz_fail("a --listen refused without -EINVAL and a reason naming it");
		free(spec);
		return;
	}
	colon = strrchr(spec, ':');
	if (!colon)
		fz_fail("a --listen accepted without a port");
	port = ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port) :
	       ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) : 0;
	if ((ss.ss_family == AF_INET && ss_len != sizeof(struct sockaddr_in)) ||
	    (ss.ss_family == AF_INET6 && ss_len != sizeof(struct sockaddr_in6)) || !port ||
	    port != (unsigned int)strtoul(colon + 1, NULL, 10))
		fz_fail("a --listen accepted as another family, size or port");
	free(spec);
}

static void fz_summary(const char *buf, size_t len)
{
	struct metrics_target t[3];
	struct metrics_scrape s = { .targets = t, .n = 3, .folder_err = CONTROL_ASK_OK };
	struct metrics_self self = { .scrape_seconds = 0.5 };
	char *text = NULL, *line, *save;
	size_t tlen = 0;
	unsigned int i;
	json_t *doc;
	FILE *f;

	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return;
	}
	memset(t, 0, sizeof(t));
	for (i = 0; i < 3; i++) {
		t[i].err = CONTROL_ASK_OK;
		snprintf(t[i].sock, sizeof(t[i].sock), "%c.ctl", 'a' + i);
		snprintf(t[i].name, sizeof(t[i].name), "%.*s", METRICS_NAME_MAX - 1,
			 json_string_value(json_object_get(doc, "name")) ?: "");
	}
	t[0].summary = t[1].summary = doc;
	t[2].err = CONTROL_ASK_ERR_TIMEOUT;
	metrics_expo_names(t, 3);
	f = open_memstream(&text, &tlen);
	if (!f)
		fz_fail("open_memstream");
	metrics_expo_write(f, &s, &self);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned int quotes = 0;
		char *c;

		if (!strncmp(line, "# HELP sandnet_", 15) || !strncmp(line, "# TYPE sandnet_", 15))
			continue;
		if (strncmp(line, "sandnet_", 8))
			fz_fail("a line that is no sample");
		for (c = line; *c; c++) {
			if (*c == '\\' && c[1])
				c++;
			else if (*c == '"')
				quotes++;
		}
		if (quotes % 2)
			fz_fail("a label value cut open");
	}
	free(text);
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		fz_summary((const char *)data + 1, size - 1);
	else if (data[0] & 2)
		fz_listen((const char *)data + 1, size - 1);
	else
		fz_head((const char *)data + 1, size - 1);
	return 0;
}
