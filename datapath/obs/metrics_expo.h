/* SPDX-License-Identifier: MIT */
/*
 * metrics_expo.h - a scrape as the Prometheus text exposition format (metrics_expo.c)
 */
#ifndef SANDNET_DATAPATH_METRICS_EXPO_H
#define SANDNET_DATAPATH_METRICS_EXPO_H

#include <stdint.h>
#include <stdio.h>

#include "datapath/obs/metrics_scrape.h"

/**
 * struct metrics_self - what the exporter says of itself
 * @scrape_errors: per enum control_ask_err, since it started
 * @requests:	answered requests by status code, since it started (index: code - 100)
 * @scrape_seconds: how long the last scrape of the datapaths took
 */
struct metrics_self {
	uint64_t scrape_errors[CONTROL_ASK_ERR_MAX];
	uint64_t requests[500];
	double scrape_seconds;
};

void metrics_expo_names(struct metrics_target *t, unsigned int n);
void metrics_expo_write(FILE *f, const struct metrics_scrape *s, const struct metrics_self *self);
void metrics_expo_label_value(FILE *f, const char *v);

#endif /* SANDNET_DATAPATH_METRICS_EXPO_H */
