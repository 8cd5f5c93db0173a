// SPDX-License-Identifier: MIT
/*
 * tcp_settings.c - the options that choose how the network side's TCP
 * behaves: --tcp-cc, --tcp-ecn, --tcp-pacing (datapath(8))
 *
 * Theory of operation: each option takes a value for every link, or
 * LINK=VALUE for one link by its name (the container's interface, e.g.
 * eth0), and may be given again; the last one for a link wins. They fill a
 * struct stack_tcp_settings, which every shard's stack gets a copy of and
 * which sets the congestion control, the ECN mode and pacing of each
 * connection the stack opens or accepts on that link
 * (tcp_glue_conn_opts()). The container face's own connections, to the
 * container's kernel over its TUN, are not network connections: they keep
 * the defaults (CUBIC, ECN when the container asks, pacing).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "datapath/net/net.h"
#include "datapath/proc/proc.h"
#include "datapath/tcp/tcp.h"

/* The entry of link @name (@len bytes), made when missing. Return: its index, or negative errno. */
static int tcp_settings_link(struct stack_tcp_settings *t, const char *name, size_t len, char *err,
			     size_t err_len)
{
	unsigned int i;

	if (!len || len >= sizeof(t->link[0].name)) {
		snprintf(err, err_len, "link name '%.*s': expected 1..%zu characters", (int)len, name,
			 sizeof(t->link[0].name) - 1);
		return -EINVAL;
	}
	for (i = 0; i < t->n_links; i++)
		if (strlen(t->link[i].name) == len && !memcmp(t->link[i].name, name, len))
			return (int)i;
	if (t->n_links >= PROTO_MAX_LINKS) {
		snprintf(err, err_len, "settings for more than %d links", PROTO_MAX_LINKS);
		return -E2BIG;
	}
	memcpy(t->link[i].name, name, len);
	t->link[i].name[len] = '\0';
	t->link[i].cc = -1;
	t->link[i].ecn = -1;
	t->n_links++;
	return (int)i;
}

/**
 * tcp_settings_parse() - one of --tcp-cc, --tcp-ecn, --tcp-pacing
 * @t:		the settings (zeroed: CUBIC, ECN accept, paced)
 * @opt:	the option's name without "--"
 * @val:	its value: VALUE or LINK=VALUE (--tcp-pacing: on or off, every link)
 * @err:	why not, naming the option and the value
 * @err_len:	size of @err
 *
 * Return: 0, -EINVAL, -E2BIG.
 */
int tcp_settings_parse(struct stack_tcp_settings *t, const char *opt, const char *val, char *err, size_t err_len)
{
	const char *eq = strchr(val, '='), *v = eq ? eq + 1 : val;
	int n, k = -1;

	if (!strcmp(opt, "tcp-pacing")) {
		if (strcmp(val, "on") && strcmp(val, "off")) {
			snprintf(err, err_len, "--tcp-pacing %s: expected on or off", val);
			return -EINVAL;
		}
		t->no_pacing = !strcmp(val, "off");
		return 0;
	}
	if (strcmp(opt, "tcp-cc") && strcmp(opt, "tcp-ecn")) {
		snprintf(err, err_len, "--%s: not a TCP setting", opt);
		return -EINVAL;
	}
	n = !strcmp(opt, "tcp-cc") ? tcp_cc_by_name(v) : tcp_ecn_mode_by_name(v);
	if (n < 0) {
		snprintf(err, err_len, "--%s %s: '%s' is not %s", opt, val, v,
			 !strcmp(opt, "tcp-cc") ? "a congestion control (cubic, reno, bbr)" : "off, accept or on");
		return -EINVAL;
	}
	if (eq) {
		char why[128];

		k = tcp_settings_link(t, val, (size_t)(eq - val), why, sizeof(why));
		if (k < 0) {
			snprintf(err, err_len, "--%s %s: %s", opt, val, why);
			return k;
		}
	}
	if (!strcmp(opt, "tcp-cc")) {
		if (k < 0)
			t->cc = (uint8_t)n;
		else
			t->link[k].cc = (int16_t)n;
	} else {
		if (k < 0)
			t->ecn = (uint8_t)n;
		else
			t->link[k].ecn = (int16_t)n;
	}
	return 0;
}
