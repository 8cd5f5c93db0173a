// SPDX-License-Identifier: MIT
/*
 * main.c - netsetup: hand a container's network namespace to the datapath
 *
 * Parses the command line (opts.c), runs one subcommand (cmd_*.c) and turns
 * its result into the one message and the exit status: 0 success, 1 failure
 * (the message says what and why), 2 a malformed command line. `run` exits
 * with the datapath's own status (128 + signal when it was killed).
 */
#include <stdio.h>
#include <stdlib.h>

#include "netsetup/netsetup.h"

int main(int argc, char **argv)
{
	struct ns_err e = { "" };
	struct ns_opts o;
	int ret;

	if (ns_opts_parse(argc, argv, &o, &e) < 0) {
		fprintf(stderr, "netsetup: %s\n%s", e.text, ns_usage);
		return 2;
	}
	switch (o.cmd) {
	case NS_CMD_GSO_SHOW:
		ret = ns_cmd_gso_show(&o, stdout, &e);
		break;
	case NS_CMD_ATTACH:
	case NS_CMD_RUN:
		ret = ns_cmd_attach(&o, &e);
		break;
	case NS_CMD_DETACH:
		ret = ns_cmd_detach(&o, &e);
		break;
	case NS_CMD_HELP:
	default:
		fputs(ns_usage, stdout);
		return 0;
	}
	if (ret < 0) {
		fprintf(stderr, "netsetup: %s\n", e.text[0] ? e.text : "failed");
		return 1;
	}
	return ret;
}
