// SPDX-License-Identifier: MIT
/*
 * main.c - netsetup: hand a container's network namespace to the datapath
 *
 * Parses the command line (opts.c), runs one subcommand (cmd_*.c; attach
 * and run are the orchestration's ns_attach(), orch/attach.c) and turns
 * its result into the one message and the exit status: 0 success, 1 failure
 * or refusal (the message says what and why), 2 a malformed command line
 * (struct ns_err's usage). `run` exits with the datapath's own status (128 +
 * signal when it was killed). `--version` and every command's `--help` print
 * on stdout and exit 0.
 *
 * Four entry points do not go through opts.c: sandnet-runtime (netsetup
 * called by that name, an OCI runtime that adds the hooks and execs runc or
 * crun, runtime.c; first, so that it hands the real runtime the signal
 * dispositions it got), the CNI plugin (called as "sandnet" /
 * "sandnet-cni", or with CNI_COMMAND set and no argument; it speaks JSON on
 * stdin/stdout, cni.c), `netsetup oci-hook` (oci.c) and `netsetup serve` and
 * `netsetup connect` (serve.c, connect.c), which parse their own arguments.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netsetup/front/front.h"

int main(int argc, char **argv)
{
	struct ns_err e = { .text = "" };
	struct ns_opts o;
	int ret;

	if (ns_runtime_mode(argv[0]))
		return ns_runtime_main(argc, argv);
	/*
	 * A closed stdout (`netsetup run ... | head`) must show up as EPIPE on a
	 * write, not kill netsetup between taking the addresses and giving them
	 * back. The datapath child inherits the ignored signal; it sends with
	 * MSG_NOSIGNAL anyway.
	 */
	signal(SIGPIPE, SIG_IGN);
	if (ns_cni_mode(argc, argv))
		return ns_cni_main(stdin, stdout);
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		ns_version_print(stdout, "netsetup");
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "oci-hook") || !strcmp(argv[1], "serve") ||
			 !strcmp(argv[1], "connect"))) {
		if (!strcmp(argv[1], "oci-hook"))
			ret = ns_oci_main(argc - 1, argv + 1, stdin, &e);
		else if (!strcmp(argv[1], "serve"))
			ret = ns_serve_main(argc - 1, argv + 1, &e);
		else
			ret = ns_connect_main(argc - 1, argv + 1, &e);
		if (ret < 0) {
			fprintf(stderr, "netsetup %s: %s\n", argv[1], e.text[0] ? e.text : "failed");
			return e.usage ? 2 : 1;
		}
		return ret;
	}
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
		ret = ns_attach(&o, &e);
		break;
	case NS_CMD_DETACH:
		ret = ns_cmd_detach(&o, &e);
		break;
	case NS_CMD_RESTART:
		ret = ns_cmd_restart(&o, &e);
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
