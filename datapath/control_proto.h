/* SPDX-License-Identifier: MIT */
/*
 * control_proto.h - the words of the control socket, for both its ends:
 * control.c answers them, control.c's client and metrics_scrape.c ask
 * (docs/datapath.md, "Statistics")
 */
#ifndef SANDNET_DATAPATH_CONTROL_PROTO_H
#define SANDNET_DATAPATH_CONTROL_PROTO_H

#define CONTROL_REQ_STATS		"stats\n"
#define CONTROL_REQ_STATS_JSON		"stats json\n"
#define CONTROL_REQ_SUMMARY		"summary\n"
#define CONTROL_REQ_SUMMARY_JSON	"summary json\n"

/* An answer that is not the document asked for starts with this. */
#define CONTROL_ERROR			"error:"
/* ...and with this when a shard did not stop to be read in time: ask again. */
#define CONTROL_BUSY			"error: busy:"

#endif /* SANDNET_DATAPATH_CONTROL_PROTO_H */
