/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - `datapath metrics`: a Prometheus exporter over the datapaths' summaries
 *
 *   metrics.c         the command: options, the HTTP listener, its clients and their requests (this header)
 *   metrics_expo.c    the summaries as the Prometheus text exposition format, version 0.0.4 (metrics_expo.h)
 *   metrics_scrape.c  every datapath's summary, asked for all at once (control_ask.c), parsed (metrics_scrape.h)
 *
 * docs/datapath.md ("Metrics") lists the series; docs/security.md says what the exporter may do.
 */
#ifndef SANDNET_DATAPATH_METRICS_H
#define SANDNET_DATAPATH_METRICS_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/**
 * struct metrics_request - what metrics_http_request() found in a request head
 * @head_only:	HEAD: the answer has no body
 * @method:	the method, for the log ("" when the request line is malformed)
 * @target:	the request target, for the log
 */
struct metrics_request {
	bool head_only;
	char method[17];
	char target[256];
};

#define METRICS_HEAD_MAX_BYTES	8192	/* request line and headers */

int metrics_http_request(const char *head, size_t len, struct metrics_request *r, char *why, size_t why_len);
ssize_t metrics_http_head_end(const char *buf, size_t len);
const char *metrics_http_reason(int code);
int metrics_listen_parse(const char *spec, struct sockaddr_storage *ss, socklen_t *ss_len, char *err,
			 size_t err_len);
int metrics_main(int argc, char **argv);

#endif /* SANDNET_DATAPATH_METRICS_H */
