/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - `datapath metrics`: a Prometheus exporter over the datapaths' summaries
 *
 *   metrics.c         the command: options, the HTTP listener, its clients and their requests
 *   metrics_scrape.c  ask every control socket of a folder for its summary, all at once, one deadline
 *   metrics_expo.c    the summaries as the Prometheus text exposition format (version 0.0.4)
 *
 * docs/datapath.md ("Metrics") lists the series; docs/security.md says what the exporter may do.
 */
#ifndef SANDNET_DATAPATH_METRICS_H
#define SANDNET_DATAPATH_METRICS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <jansson.h>

#define METRICS_SUMMARY_MAX_BYTES	(1 << 20)	/* one datapath's answer */
#define METRICS_MAX_TARGETS		4096		/* control sockets read per scrape */
#define METRICS_NAME_MAX		192		/* the container label (netsetup's NS_OWNER_MAX) */

/* Why a datapath gave no summary: the reason label of sandnet_scrape_errors_total. */
#define METRICS_ERR_LIST(X)	\
	X(UNREACHABLE)		\
	X(TIMEOUT)		\
	X(MALFORMED)		\
	X(BUSY)			\
	X(FOLDER)		\
	X(TOO_MANY)

#define METRICS_X_ENUM(name) METRICS_ERR_##name,
enum metrics_err { METRICS_ERR_NONE = -1, METRICS_ERR_LIST(METRICS_X_ENUM) METRICS_ERR_MAX };

const char *metrics_err_name(enum metrics_err e);

/**
 * struct metrics_target - one control socket and what it answered
 * @sock:	its file name in the folder ("8a3f....state.ctl")
 * @name:	the container label: the summary's "name", else the owner in the
 *		state file next to the socket, else @sock (metrics_expo_names()
 *		makes it unique)
 * @pid:	the datapath's pid as this process sees it (SO_PEERCRED), 0 unknown
 * @summary:	the summary document, NULL when @err says why not
 * @err:	METRICS_ERR_NONE, or why there is no summary
 * @why:	that reason in words, for the log
 * @have_proc:	@cpu_seconds and @rss_bytes were read from /proc/PID/stat
 */
struct metrics_target {
	char sock[NAME_MAX + 1];
	char name[METRICS_NAME_MAX + NAME_MAX + 4];
	pid_t pid;
	json_t *summary;
	enum metrics_err err;
	char why[160];
	bool have_proc;
	double cpu_seconds;
	uint64_t rss_bytes;
	/* metrics_scrape.c's, while asking */
	int fd;
	char *buf;
	size_t len;
};

/**
 * struct metrics_scrape - one scrape of a folder
 * @targets:	one per control socket, in name order
 * @n:		how many
 * @folder_err:	the folder could not be read (METRICS_ERR_FOLDER), or more
 *		sockets than METRICS_MAX_TARGETS (METRICS_ERR_TOO_MANY), else
 *		METRICS_ERR_NONE
 * @why:	that, in words
 */
struct metrics_scrape {
	struct metrics_target *targets;
	unsigned int n;
	enum metrics_err folder_err;
	char why[PATH_MAX + 64];
};

int metrics_scrape_dir(const char *dir, unsigned int timeout_ms, struct metrics_scrape *s);
void metrics_scrape_free(struct metrics_scrape *s);
int metrics_proc_stat(pid_t pid, double *cpu_seconds, uint64_t *rss_bytes);

/**
 * struct metrics_self - what the exporter says of itself
 * @scrape_errors: per enum metrics_err, since it started
 * @requests:	answered requests by status code, since it started (index: code - 100)
 * @scrape_seconds: how long the last scrape of the datapaths took
 */
struct metrics_self {
	uint64_t scrape_errors[METRICS_ERR_MAX];
	uint64_t requests[500];
	double scrape_seconds;
};

void metrics_expo_names(struct metrics_target *t, unsigned int n);
void metrics_expo_write(FILE *f, const struct metrics_scrape *s, const struct metrics_self *self);
void metrics_expo_label_value(FILE *f, const char *v);

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
