/* SPDX-License-Identifier: MIT */
/*
 * front.h - netsetup's front ends: what their files share
 *
 * Every way into netsetup is here: main.c picks the front end; the command
 * line (opts.c) and its subcommands (cmd_gso.c, cmd_detach.c, cmd_restart.c;
 * attach and run are the orchestration's ns_attach()), the CNI plugin
 * (cni.c), the OCI hook (oci.c), sandnet-runtime (runtime.c), the daemon
 * (serve.c, its policy serve_conf.c) and its client (connect.c); conf.c
 * reads the key = value files of serve and sandnet-runtime. They fill a
 * struct ns_opts and call the orchestration (orch/orch.h) or, for what
 * reads without attaching, the kernel area (kernel/kernel.h) directly.
 *
 * No other area includes this header: it is the top one.
 */
#ifndef SANDNET_NETSETUP_FRONT_H
#define SANDNET_NETSETUP_FRONT_H

#include <stdio.h>

#include "netsetup/orch/orch.h"

/* --- opts.c: the command line, and the options every front end shares - */

/* The options every front end shares, whatever it calls them (ns_opt_set()) */
enum ns_opt {
	NS_OPT_GSO,		/* auto, hw, sw or off */
	NS_OPT_CHANNELS,	/* 1..PROTO_MAX_CHANNELS per link */
	NS_OPT_SHARDS,		/* 1..NS_MAX_SHARDS, or auto */
	NS_OPT_IFACE,		/* a link to hand over, up to NS_MAX_IFACES of them */
	NS_OPT_FACE,		/* on or off */
	NS_OPT_MAX
};

/* getopt_long()'s val for a shared option: one call takes them all (ns_opt_getopt()) */
#define NS_OPT_GETOPT(opt)	(0x100 + (opt))

struct option;
void ns_opts_init(struct ns_opts *o);
int ns_opt_set(struct ns_opts *o, enum ns_opt opt, const char *what, const char *arg, struct ns_err *e);
int ns_opt_getopt(struct ns_opts *o, const struct option *opts, int val, int index, const char *arg,
		  struct ns_err *e);
int ns_opt_refuse(struct ns_err *e, int val, const char *arg, const char *usage);
int ns_shards_check(const struct ns_opts *o, const char *channels, const char *shards, struct ns_err *e);
int ns_opts_parse(int argc, char **argv, struct ns_opts *o, struct ns_err *e);
int ns_policy_item_parse(const char *item, const char **flag, const char **rule);
int ns_tcp_setting_check(const char *what, const char *opt, const char *val, struct ns_err *e);
void ns_version_print(FILE *f, const char *prog);
#define NS_POLICY_ITEM_FORMS	"egress-allow=RULE, egress-deny=RULE, ingress-allow=RULE or ingress-deny=RULE"
extern const char ns_usage[];

/* --- cmd_*.c ---------------------------------------------------------- */

int ns_cmd_gso_show(const struct ns_opts *o, FILE *out, struct ns_err *e);
int ns_cmd_detach(const struct ns_opts *o, struct ns_err *e);
int ns_attached_open(const struct ns_opts *o, uint64_t keep, const char *stage, struct ns_netns *ns,
		     char *path, size_t size, struct ns_state *st, struct ns_err *e);
int ns_cmd_restart(const struct ns_opts *o, struct ns_err *e);

/* --- conf.c: "key = value" configuration files ------------------------ */

int ns_conf_next(FILE *f, const char *name, char *line, size_t size, unsigned int *lineno, char **key,
		 char **val, struct ns_err *e);

/* --- cni.c, oci.c, serve.c, connect.c, runtime.c: the runtime entry points */

bool ns_cni_mode(int argc, char **argv);
int ns_cni_main(FILE *in, FILE *out);
bool ns_runtime_mode(const char *argv0);
int ns_runtime_main(int argc, char **argv);
int ns_oci_main(int argc, char **argv, FILE *in, struct ns_err *e);
int ns_oci_check(int argc, char **argv, FILE *in, struct ns_err *e);
int ns_serve_main(int argc, char **argv, struct ns_err *e);
int ns_connect_main(int argc, char **argv, struct ns_err *e);
extern const char ns_serve_usage[];

#define NS_RUNTIME_MAX_POLICY	32

/**
 * struct ns_runtime - sandnet-runtime's reading of its command line and configuration (runtime.c)
 * @runtime:	the real runtime named by --runtime, $SANDNET_RUNTIME or the file; NULL: runc, then crun
 * @cmd:	the command word ("create", "state", ...), "" when there is none
 * @bundle:	create and run: the bundle folder ("." when not given)
 * @log:	--log FILE of the caller, where refusals go too; @log_format its --log-format
 * @argv:	the real runtime's arguments, ours removed; argv[0] is set before the exec
 * @policy:	policy items (egress-deny=RULE, ...) every container gets first
 * @conf_text:	the configuration file's values, which @runtime and @policy point into
 */
struct ns_runtime {
	const char *runtime;
	const char *cmd;
	const char *bundle;
	const char *log, *log_format;
	char **argv;
	int argc;
	unsigned int n_policy;
	const char *policy[NS_RUNTIME_MAX_POLICY];
	unsigned int n_conf;
	char *conf_text[NS_RUNTIME_MAX_POLICY + 1];
};

int ns_runtime_parse(int argc, char **argv, struct ns_runtime *rt, struct ns_err *e);
int ns_runtime_conf(FILE *f, const char *name, struct ns_runtime *rt, struct ns_err *e);
int ns_runtime_inject(const char *config, const struct ns_runtime *rt, const char *netsetup, char *why,
		      size_t why_len, struct ns_err *e);
void ns_runtime_free(struct ns_runtime *rt);

#define NS_SERVE_MAX_IDS	64
#define NS_SERVE_SOCKET		"/run/sandnet/netsetup.sock"

/**
 * struct ns_serve_conf - what `netsetup serve` allows (serve_conf.c, docs/runtime.md)
 * @uids:	peers (SO_PEERCRED) with one of these uids may attach
 * @gids:	... or with one of these primary gids
 * @ifaces:	links a request may name; no entry: any
 * @gso_allowed: per enum proto_gso_mode, a request may ask for it
 * @gso_auto_allowed: a request may leave the mode to netsetup
 * @max_channels: largest channel count a request may ask for
 * @max_clients: requests and attachments served at once
 * @keep_dark:	when a datapath dies without being stopped, keep its
 *		namespace dark (the default) instead of giving it back
 *		(on_datapath_exit = restore)
 * @request_timeout_s: how long a client may take to send its request
 */
struct ns_serve_conf {
	unsigned int n_uids;
	uid_t uids[NS_SERVE_MAX_IDS];
	unsigned int n_gids;
	gid_t gids[NS_SERVE_MAX_IDS];
	unsigned int n_ifaces;
	char ifaces[NS_MAX_IFACES][IFNAMSIZ];
	bool gso_allowed[PROTO_GSO_MODE_MAX];
	bool gso_auto_allowed;
	unsigned int max_channels;
	unsigned int max_clients;
	bool keep_dark;
	unsigned int request_timeout_s;
};

struct ucred;
void ns_serve_conf_default(struct ns_serve_conf *c);
int ns_serve_conf_parse(FILE *f, const char *name, struct ns_serve_conf *c, struct ns_err *e);
int ns_serve_authorize(const struct ns_serve_conf *c, const struct ucred *cred,
		       const struct proto_attach *req, struct ns_err *e);

#endif /* SANDNET_NETSETUP_FRONT_H */
