// SPDX-License-Identifier: MIT
/*
 * face_netstat.c - the container kernel's own counters of what it dropped
 *
 * Theory of operation
 *
 * A datagram through the face can be lost where the datapath cannot see:
 * at the receiving socket in the container (its buffer was full), at the
 * container's socket sending (SndbufErrors), and at the face's TUN in the
 * container's kernel (its transmit queue toward the datapath full, or its
 * backlog from the datapath). The container's kernel counts them, in its
 * netns's /proc/net/snmp and snmp6 (Udp, Udp6) and /proc/net/dev (the TUN's
 * drops). netsetup opens those three files inside the container's netns and
 * hands them over with the face (docs/protocol.md, FACE NETSTAT): a procfs
 * file stays bound to the netns it was opened in, and reading it again
 * from its start gives the counters as they are now. So `datapath stats`
 * ("totals", stats.c) and the metrics say, next to the datapath's own
 * drops, where the container's kernel lost datagrams.
 *
 * The files are the kernel's, not the container's programs' (they cannot
 * write them), but they are read as any outside bytes: a bounded buffer, a
 * line that does not parse is skipped, a counter that is absent stays 0.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datapath/face/face_int.h"
#include "datapath/link/link.h"

#define FACE_NETSTAT_BUF	16384	/* /proc/net/snmp is about 1.6 KiB, dev 200 bytes a device */

enum { NETSTAT_SNMP, NETSTAT_SNMP6, NETSTAT_DEV };

/**
 * face_netstat_take() - keep the container's /proc/net files a FACE brought
 * @f:		the face
 * @cfg:	the FACE; its netstat fds move here (or are closed: the face
 *		has some already, from another link of the same netns)
 */
void face_netstat_take(struct face *f, struct proto_face *cfg)
{
	unsigned int i;

	if (cfg->n_netstat == PROTO_FACE_NETSTAT_FDS && !f->n_netstat) {
		for (i = 0; i < PROTO_FACE_NETSTAT_FDS; i++)
			f->netstat_fds[i] = cfg->netstat_fds[i];
		f->n_netstat = PROTO_FACE_NETSTAT_FDS;
	} else {
		proto_fds_close(cfg->netstat_fds, cfg->n_netstat);
	}
	cfg->n_netstat = 0;
}

/** face_netstat_close() - close the files (the face goes) */
void face_netstat_close(struct face *f)
{
	proto_fds_close(f->netstat_fds, f->n_netstat);
	f->n_netstat = 0;
}

/* The whole file, from its start, into @buf (NUL-terminated). Return: its length, or -1. */
static ssize_t face_netstat_read(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return (ssize_t)len;
}

/* The next whitespace-separated word of *@s (moved past it), or NULL at the line's end. */
static const char *face_netstat_word(const char **s, size_t *len)
{
	const char *p = *s;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n')
		return NULL;
	*s = p;
	while (**s && **s != ' ' && **s != '\t' && **s != '\n')
		(*s)++;
	*len = (size_t)(*s - p);
	return p;
}

static uint64_t face_netstat_num(const char *w, size_t len)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len && w[i] >= '0' && w[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(w[i] - '0');
	return v;
}

static const char *face_netstat_next_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl + 1 : NULL;
}

/*
 * /proc/net/snmp: a "Udp:" line of names, then a "Udp:" line of values.
 * Add the value of @name to *@v.
 */
static void face_netstat_snmp(const char *text, const char *name, uint64_t *v)
{
	const char *names, *values;
	size_t nlen = strlen(name);

	for (names = text; names; names = face_netstat_next_line(names)) {
		if (strncmp(names, "Udp: ", 5))
			continue;
		values = face_netstat_next_line(names);
		if (!values || strncmp(values, "Udp: ", 5))
			return;
		names += 5;
		values += 5;
		for (;;) {
			size_t kl, vl;
			const char *k = face_netstat_word(&names, &kl), *val = face_netstat_word(&values, &vl);

			if (!k || !val)
				return;
			if (kl == nlen && !memcmp(k, name, nlen)) {
				*v += face_netstat_num(val, vl);
				return;
			}
		}
	}
}

/* /proc/net/snmp6: "NAME VALUE" a line. Add the value of @name to *@v. */
static void face_netstat_snmp6(const char *text, const char *name, uint64_t *v)
{
	size_t nlen = strlen(name);
	const char *line;

	for (line = text; line; line = face_netstat_next_line(line)) {
		const char *p = line, *k, *val;
		size_t kl, vl;

		k = face_netstat_word(&p, &kl);
		val = k ? face_netstat_word(&p, &vl) : NULL;
		if (val && kl == nlen && !memcmp(k, name, nlen)) {
			*v += face_netstat_num(val, vl);
			return;
		}
	}
}

/*
 * /proc/net/dev: "NAME: rx_bytes rx_packets rx_errs rx_drop ... (8 receive
 * columns) tx_bytes tx_packets tx_errs tx_drop ...". Add @ifname's drops.
 */
static void face_netstat_dev(const char *text, const char *ifname, uint64_t *rx_drop, uint64_t *tx_drop)
{
	size_t nlen = strlen(ifname);
	const char *line;

	for (line = text; line; line = face_netstat_next_line(line)) {
		const char *p = line, *w;
		uint64_t col[12];
		size_t len;
		unsigned int i;

		while (*p == ' ')
			p++;
		if (strncmp(p, ifname, nlen) || p[nlen] != ':')
			continue;
		p += nlen + 1;
		for (i = 0; i < 12 && (w = face_netstat_word(&p, &len)); i++)
			col[i] = face_netstat_num(w, len);
		if (i == 12) {
			*rx_drop += col[3];
			*tx_drop += col[11];
		}
		return;
	}
}

/* The rows of struct face_netstat: the summary's "totals" from the container's kernel. */
static const struct stat_desc face_netstat_rows[] = {
	{ .key = "container_udp_in_errors", .offset = STAT_AT(struct face_netstat, udp_in_errors),
	  .kind = STAT_COUNTER, .family = "sandnet_container_udp_receive_errors_total",
	  .help = "Datagrams the container's own UDP sockets dropped on receive, every reason (its kernel's Udp "
		  "and Udp6 InErrors)." },
	{ .key = "container_udp_rcvbuf_errors", .offset = STAT_AT(struct face_netstat, udp_rcvbuf_errors),
	  .kind = STAT_COUNTER, .family = "sandnet_container_udp_receive_buffer_errors_total",
	  .help = "Of those, datagrams dropped because the receiving socket's buffer was full (RcvbufErrors)." },
	{ .key = "container_udp_sndbuf_errors", .offset = STAT_AT(struct face_netstat, udp_sndbuf_errors),
	  .kind = STAT_COUNTER, .family = "sandnet_container_udp_send_buffer_errors_total",
	  .help = "Datagrams the container's own UDP sockets could not send for buffer space (SndbufErrors)." },
	{ .key = "container_tun_tx_dropped", .offset = STAT_AT(struct face_netstat, tun_tx_dropped),
	  .kind = STAT_COUNTER, .family = "sandnet_container_tun_dropped_total",
	  .help = "Packets the container's kernel dropped at the face's TUN: out, its queue to the datapath was "
		  "full; in, its backlog from the datapath.",
	  .label = "direction", .value = "out" },
	{ .key = "container_tun_rx_dropped", .offset = STAT_AT(struct face_netstat, tun_rx_dropped),
	  .kind = STAT_COUNTER, .label = "direction", .value = "in" },
};

const struct stat_table face_netstat_table = STAT_TABLE(face_netstat_rows);

/**
 * face_netstat_read_all() - the container kernel's counters, as they are now
 * @f:	the face
 * @k:	filled (zeros when the face has no files)
 *
 * Return: 0, or -ENODATA when the face has no files (netsetup of an older
 * release, or a kernel without one of them) or they could not be read.
 */
int face_netstat_read_all(const struct face *f, struct face_netstat *k)
{
	char *buf;
	unsigned int i;
	int ret = 0;

	memset(k, 0, sizeof(*k));
	if (!f || f->n_netstat != PROTO_FACE_NETSTAT_FDS)
		return -ENODATA;
	buf = malloc(FACE_NETSTAT_BUF);
	if (!buf)
		return -ENOMEM;
	if (face_netstat_read(f->netstat_fds[NETSTAT_SNMP], buf, FACE_NETSTAT_BUF) < 0) {
		ret = -ENODATA;
		goto out;
	}
	face_netstat_snmp(buf, "InErrors", &k->udp_in_errors);
	face_netstat_snmp(buf, "RcvbufErrors", &k->udp_rcvbuf_errors);
	face_netstat_snmp(buf, "SndbufErrors", &k->udp_sndbuf_errors);
	if (face_netstat_read(f->netstat_fds[NETSTAT_SNMP6], buf, FACE_NETSTAT_BUF) < 0) {
		ret = -ENODATA;
		goto out;
	}
	face_netstat_snmp6(buf, "Udp6InErrors", &k->udp_in_errors);
	face_netstat_snmp6(buf, "Udp6RcvbufErrors", &k->udp_rcvbuf_errors);
	face_netstat_snmp6(buf, "Udp6SndbufErrors", &k->udp_sndbuf_errors);
	if (face_netstat_read(f->netstat_fds[NETSTAT_DEV], buf, FACE_NETSTAT_BUF) < 0) {
		ret = -ENODATA;
		goto out;
	}
	for (i = 0; i < f->n_tuns; i++)
		face_netstat_dev(buf, f->tuns[i]->name, &k->tun_rx_dropped, &k->tun_tx_dropped);
out:
	free(buf);
	return ret;
}

/**
 * face_netstat_parse() - the parsers alone, on a text given (the fuzz
 * target's and the unit test's entry)
 * @snmp, @snmp6, @dev:	the three files' texts, NUL-terminated
 * @ifname:		the TUN whose drops count
 * @k:			filled
 */
void face_netstat_parse(const char *snmp, const char *snmp6, const char *dev, const char *ifname,
			struct face_netstat *k)
{
	memset(k, 0, sizeof(*k));
	face_netstat_snmp(snmp, "InErrors", &k->udp_in_errors);
	face_netstat_snmp(snmp, "RcvbufErrors", &k->udp_rcvbuf_errors);
	face_netstat_snmp(snmp, "SndbufErrors", &k->udp_sndbuf_errors);
	face_netstat_snmp6(snmp6, "Udp6InErrors", &k->udp_in_errors);
	face_netstat_snmp6(snmp6, "Udp6RcvbufErrors", &k->udp_rcvbuf_errors);
	face_netstat_snmp6(snmp6, "Udp6SndbufErrors", &k->udp_sndbuf_errors);
	face_netstat_dev(dev, ifname, &k->tun_rx_dropped, &k->tun_tx_dropped);
}
