// SPDX-License-Identifier: MIT
/*
 * tcp_defaults.c - the container namespace's own TCP choices, as the
 * datapath's --tcp-cc and --tcp-ecn
 *
 * Theory of operation: once the datapath serves a namespace, no kernel TCP
 * there sends a byte to the network; the datapath's engine does, for every
 * program in the container. What the namespace's administrator chose for
 * its TCP, net.ipv4.tcp_congestion_control and net.ipv4.tcp_ecn, would
 * otherwise be ignored: a host (or a container) set to BBR for its long,
 * lossy paths got CUBIC from the datapath, and a tenth of the throughput.
 * So `netsetup run` reads both in the container's namespace and starts the
 * datapath with the matching options, ahead of the user's own datapath
 * arguments (the last --tcp-cc or --tcp-ecn for a link wins: what the user,
 * the CNI configuration or an annotation gives overrides the namespace).
 *
 * The datapath has cubic, reno and bbr; any other congestion control
 * (dctcp, westwood, ...) maps to cubic, Linux's default, and says so.
 * tcp_ecn: 0 off, 1 on (ask on active opens), 2 accept (the kernel's
 * default); the AccECN values map to the classic ECN they imply: 3 and 4 ask
 * (on), 5 accepts. Anything unreadable keeps the datapath's own defaults
 * (cubic, accept).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netsetup/kernel/kernel.h"

/* Read a sysctl file of the calling thread's netns into @buf, trailing newline removed. */
static int sysctl_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return n ? 0 : -ENODATA;
}

/**
 * ns_tcp_defaults_map() - the datapath's options for a namespace's TCP sysctls
 * @cc:		net.ipv4.tcp_congestion_control, or NULL when unreadable
 * @ecn:	net.ipv4.tcp_ecn, or a negative value when unreadable
 * @d:		receives the options, and a note when @cc had to change
 */
void ns_tcp_defaults_map(const char *cc, int ecn, struct ns_tcp_defaults *d)
{
	static const char *const known[] = { "cubic", "reno", "bbr" };
	static const char *const ecn_modes[] = { "off", "on", "accept", "on", "on", "accept" };
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->cc = "cubic";
	d->ecn = "accept";
	for (i = 0; cc && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(cc, known[i]))
			break;
	if (cc && i < sizeof(known) / sizeof(known[0]))
		d->cc = known[i];
	else if (cc && *cc)
		snprintf(d->note, sizeof(d->note),
			 "the namespace's congestion control '%.32s' is not one the datapath has (cubic, reno, bbr): cubic",
			 cc);
	if (ecn >= 0 && (size_t)ecn < sizeof(ecn_modes) / sizeof(ecn_modes[0]))
		d->ecn = ecn_modes[ecn];
}

/**
 * ns_tcp_defaults_read() - ns_tcp_defaults_map() of the calling thread's netns
 * @d:		receives the options
 */
void ns_tcp_defaults_read(struct ns_tcp_defaults *d)
{
	char cc[64], ecn[16];
	bool have_cc = !sysctl_read("/proc/sys/net/ipv4/tcp_congestion_control", cc, sizeof(cc));
	bool have_ecn = !sysctl_read("/proc/sys/net/ipv4/tcp_ecn", ecn, sizeof(ecn));

	ns_tcp_defaults_map(have_cc ? cc : NULL, have_ecn ? atoi(ecn) : -1, d);
}
