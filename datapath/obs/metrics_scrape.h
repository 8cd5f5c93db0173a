/* SPDX-License-Identifier: MIT */
/*
 * metrics_scrape.h - one scrape: every datapath's summary of a folder, parsed (metrics_scrape.c)
 */
#ifndef SANDNET_DATAPATH_METRICS_SCRAPE_H
#define SANDNET_DATAPATH_METRICS_SCRAPE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "datapath/obs/control_ask.h"

#define METRICS_NAME_MAX		192		/* the container label (netsetup's NS_OWNER_MAX) */

/**
 * struct metrics_target - one control socket and what it answered
 * @sock:	its file name in the folder ("8a3f....state.ctl")
 * @name:	the container label: the summary's "name", else the owner in the
 *		state file next to the socket, else @sock (metrics_expo_names()
 *		makes it unique)
 * @pid:	the datapath's pid as this process sees it (SO_PEERCRED), 0 unknown
 * @summary:	the summary document, NULL when @err says why not
 * @err:	CONTROL_ASK_OK, or why there is no summary (the reason label of
 *		sandnet_scrape_errors_total)
 * @why:	that reason in words, for the log
 * @have_proc:	@cpu_seconds and @rss_bytes were read from /proc/PID/stat
 */
struct metrics_target {
	char sock[NAME_MAX + 1];
	char name[METRICS_NAME_MAX + NAME_MAX + 4];
	pid_t pid;
	json_t *summary;
	enum control_ask_err err;
	char why[160];
	bool have_proc;
	double cpu_seconds;
	uint64_t rss_bytes;
};

/**
 * struct metrics_scrape - one scrape of a folder
 * @targets:	one per control socket, in name order
 * @n:		how many
 * @folder_err:	the folder could not be read (CONTROL_ASK_ERR_FOLDER), or more
 *		sockets than CONTROL_ASK_MAX_SOCKETS (CONTROL_ASK_ERR_TOO_MANY),
 *		else CONTROL_ASK_OK
 * @why:	that, in words
 */
struct metrics_scrape {
	struct metrics_target *targets;
	unsigned int n;
	enum control_ask_err folder_err;
	char why[PATH_MAX + 64];
};

int metrics_scrape_dir(const char *dir, unsigned int timeout_ms, struct metrics_scrape *s);
void metrics_scrape_free(struct metrics_scrape *s);
int metrics_proc_stat(pid_t pid, double *cpu_seconds, uint64_t *rss_bytes);

#endif /* SANDNET_DATAPATH_METRICS_SCRAPE_H */
