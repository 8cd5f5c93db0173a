/* SPDX-License-Identifier: MIT */
/*
 * stats.h - `datapath stats` and the summary (stats.c), and the tables that
 * describe the summary's numbers of the process, for the exporter
 * (metrics_expo.c) to walk as the printer does
 */
#ifndef SANDNET_DATAPATH_STATS_H
#define SANDNET_DATAPATH_STATS_H

#include <stdbool.h>
#include <stdio.h>

#include "datapath/counters.h"
#include "proto/status.h"

struct dp;
struct ledger_head;
struct out;

/**
 * struct stats_section - where one table's numbers stand in the summary
 * @path:	the object that holds them ("" the top level, "totals"), or,
 *		with @row_id, the array of rows
 * @row_id:	NULL, or the key that tells the array's rows apart ("shard",
 *		"link"): its value labels each of the row's samples
 * @table:	the rows, described (counters.h)
 */
struct stats_section {
	const char *path;
	const char *row_id;
	const struct stat_table *table;
};

/* Every table of the summary, in the order the summary prints them. */
extern const struct stats_section stats_summary_sections[];
extern const unsigned int stats_summary_n_sections;

int stats_print(struct dp *dp, FILE *f, bool json);
int stats_print_summary(struct dp *dp, FILE *f, bool json);
void stats_print_supervisor(struct out *o, const struct ledger_head *h, enum proto_dp_state state,
			    const char *reason);

#endif /* SANDNET_DATAPATH_STATS_H */
