// SPDX-License-Identifier: MIT
/*
 * svc_udp_pump.c - the UDP services' datagrams in batches, both ways
 *
 * Theory of operation
 *
 * Host-side I/O is batched like the link's: datagrams for the host (a
 * publish's backend, a forward's local client) are copied into a queue
 * shared by the services of one stack (struct svc_udp_table,
 * svc_pump_to_host()) and leave at the end of the loop turn (the stack's
 * STACK_TURN_HAND_DOWN phase, which the table registers for) or when
 * SVC_UDP_BATCH are waiting. Consecutive datagrams for the same flow leave
 * together: to an inet destination as UDP_SEGMENT sends (a run of datagrams
 * the size of the first, a shorter last one allowed), which the host's
 * kernel carries as one packet as far as the receiving socket (seed 003:
 * one crossing of the IP output path instead of one per datagram); to a
 * unix one, or once a host refused UDP GSO (host_gso_off), in one
 * sendmmsg(). A publish flow sends on its connected socket, a forward flow
 * through the listening socket to its client's address (svc_flow_dest()).
 * Host sockets are read with recvmmsg() into the table's buffers
 * (svc_pump_rx_prepare()), SVC_UDP_BATCH datagrams at most per readable
 * event so one busy flow cannot starve the loop. A datagram the host
 * refuses (ENOBUFS, EAGAIN on a full socket, ECONNREFUSED after an ICMP
 * error, ...) is counted in the service's errors and dropped, as UDP would.
 *
 * Toward the stack, a recvmmsg() batch is handed down in runs (UDP GSO,
 * docs/gso.md): consecutive datagrams of one flow that all have the size of
 * the first, except a shorter last one (svc_pump_run()), go to
 * udp_sendto_gso() as one payload with that size as the segment size
 * (svc_pump_to_stack()), so that in hw mode they leave as one GSO frame and
 * in sw mode as one sendmmsg() of frames that share the payload. A run of
 * one is an ordinary udp_sendto().
 *
 * This file moves datagrams and counts them; which flow they belong to, and
 * when flows come and go, is svc_udp_flow.c's and svc_udp.c's (it names
 * neither).
 */
#include <errno.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/svc/svc_udp_int.h"

/* One UDP_SEGMENT send toward a backend: the kernel's UDP_MAX_SEGMENTS is 64
 * on older kernels (128 on 6.18), and the payload stays within one datagram's
 * 65507 bytes */
#define SVC_UDP_GSO_SEGS	64
#define SVC_UDP_GSO_BYTES	65507

/**
 * svc_pump_rx_prepare() - a recvmmsg() batch into the table's receive buffers
 * @t:		the services' table
 * @m:		SVC_UDP_BATCH headers, filled
 * @iov:	SVC_UDP_BATCH iovecs, filled
 * @from:	SVC_UDP_BATCH sender addresses (a forward's listener), or NULL
 */
void svc_pump_rx_prepare(struct svc_udp_table *t, struct mmsghdr *m, struct iovec *iov,
			 struct sockaddr_storage *from)
{
	unsigned int i;

	memset(m, 0, sizeof(*m) * SVC_UDP_BATCH);
	for (i = 0; i < SVC_UDP_BATCH; i++) {
		iov[i].iov_base = t->rxbuf[i];
		iov[i].iov_len = SVC_UDP_BUF;
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		if (from) {
			m[i].msg_hdr.msg_name = &from[i];
			m[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
	}
}

/**
 * struct svc_dest - where a flow's queued datagrams go (svc_flow_dest())
 * @fd:		a publish flow's connected socket, or a forward's listener
 * @name:	a forward's client, NULL for a publish; @len its length
 * @gso:	the destination may take UDP_SEGMENT sends (inet, and the
 *		service never saw one refused)
 */
struct svc_dest {
	int fd;
	const struct sockaddr *name;
	socklen_t len;
	bool gso;
};

static struct svc_dest svc_flow_dest(const struct svc_flow *f)
{
	const struct svc_udp *s = f->svc;

	if (s->spec.kind == SVC_PUBLISH)
		return (struct svc_dest){ .fd = f->fd, .gso = !s->spec.target.is_unix && !s->host_gso_off };
	return (struct svc_dest){
		.fd = s->listen_fd,
		.name = (const struct sockaddr *)&f->client,
		.len = f->client_len,
		.gso = f->client.ss_family != AF_UNIX && !s->host_gso_off,
	};
}

/* @n datagrams of @f reached the host: its backend, or its client. */
static void svc_flow_delivered(struct svc_flow *f, unsigned int n)
{
	if (f->svc->spec.kind == SVC_PUBLISH)
		f->svc->to_target += n;
	else
		f->svc->from_target += n;
}

/*
 * The end of the part of [@i, @j) (one flow's queued datagrams) that one
 * UDP_SEGMENT send carries: datagrams the size of the first, a shorter last
 * one ending it, at most SVC_UDP_GSO_SEGS of them and SVC_UDP_GSO_BYTES in
 * all. A run of one is sent plainly.
 */
static unsigned int svc_host_gso_run(const struct svc_udp_table *t, unsigned int i, unsigned int j)
{
	uint32_t size = t->txq[i].p->len, total = size;
	unsigned int k;

	if (!size)
		return i + 1;
	for (k = i + 1; k < j && k - i < SVC_UDP_GSO_SEGS; k++) {
		uint32_t len = t->txq[k].p->len;

		if (!len || len > size || total + len > SVC_UDP_GSO_BYTES)
			break;
		total += len;
		if (len < size)
			return k + 1;	/* a shorter last datagram ends the run */
	}
	return k;
}

/*
 * Datagrams [@i, @end) of @t's queue to @d in one sendmsg() with
 * UDP_SEGMENT: the host's kernel carries them as one packet as far as the
 * receiving socket, which gets them one by one.
 * Return: 0, -EOPNOTSUPP when the socket or its route takes no UDP GSO (the
 * caller sends them one by one, and does so from then on), or -errno: the
 * datagrams were refused (counted by the caller, as UDP would lose them).
 */
static int svc_host_gso_send(struct svc_udp_table *t, struct svc_flow *f, const struct svc_dest *d,
			     unsigned int i, unsigned int end)
{
	struct iovec iov[SVC_UDP_GSO_SEGS];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(uint16_t))];
	} ctrl;
	struct msghdr mh = {
		.msg_name = (void *)d->name,
		.msg_namelen = d->len,
		.msg_iov = iov,
		.msg_iovlen = end - i,
		.msg_control = ctrl.buf,
		.msg_controllen = sizeof(ctrl.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	uint16_t gso = (uint16_t)t->txq[i].p->len;
	unsigned int k;
	ssize_t ret;

	for (k = i; k < end; k++) {
		iov[k - i].iov_base = pkt_data(t->txq[k].p);
		iov[k - i].iov_len = t->txq[k].p->len;
	}
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(gso));
	memcpy(CMSG_DATA(c), &gso, sizeof(gso));
	do
		ret = sendmsg(d->fd, &mh, MSG_DONTWAIT);
	while (ret < 0 && errno == EINTR);
	f->svc->host_syscalls_out++;
	if (ret >= 0)
		return 0;
	/* EINVAL/EIO: GSO is not for this socket or route (docs/gso.md) */
	return errno == EINVAL || errno == EIO || errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
}

/* Datagrams [@i, @end) of @t's queue to @d, one sendmmsg() a try. */
static void svc_host_send_each(struct svc_udp_table *t, struct svc_flow *f, const struct svc_dest *d,
			       unsigned int i, unsigned int end)
{
	struct mmsghdr m[SVC_UDP_BATCH];
	struct iovec iov[SVC_UDP_BATCH];
	struct svc_udp *s = f->svc;
	unsigned int k, n = end - i;
	int sent;

	for (k = 0; k < n; k++) {
		iov[k].iov_base = pkt_data(t->txq[i + k].p);
		iov[k].iov_len = t->txq[i + k].p->len;
		memset(&m[k], 0, sizeof(m[k]));
		m[k].msg_hdr.msg_iov = &iov[k];
		m[k].msg_hdr.msg_iovlen = 1;
		m[k].msg_hdr.msg_name = (void *)d->name;
		m[k].msg_hdr.msg_namelen = d->len;
	}
	k = 0;
	while (k < n) {
		sent = sendmmsg(d->fd, m + k, n - k, MSG_DONTWAIT);
		s->host_syscalls_out++;
		if (sent > 0) {
			svc_flow_delivered(f, (unsigned int)sent);
			k += sent;
			continue;
		}
		if (sent < 0 && errno == EINTR)
			continue;
		/* the head datagram was refused: count it, go on */
		s->errors++;
		stack_drop(s->st, DROP_SERVICE);
		k++;
	}
}

/**
 * svc_udp_flush() - send the datagrams queued for host sockets
 * @t:		the services' table
 *
 * Called at the end of every loop turn, when the queue is full, and before a
 * flow is freed. Consecutive datagrams of one flow leave together: to an
 * inet backend as UDP_SEGMENT sends (svc_host_gso_run()), to a unix one, or
 * where the host takes no UDP GSO, in one sendmmsg().
 */
void svc_udp_flush(struct svc_udp_table *t)
{
	unsigned int i = 0, j, k, end;

	while (i < t->txq_len) {
		struct svc_flow *f = t->txq[i].flow;
		struct svc_udp *s = f->svc;
		int ret;

		for (j = i; j < t->txq_len && t->txq[j].flow == f; j++)
			;
		while (i < j) {
			struct svc_dest d = svc_flow_dest(f);

			end = d.gso ? svc_host_gso_run(t, i, j) : j;
			if (end - i < 2) {
				svc_host_send_each(t, f, &d, i, end);
			} else if (!(ret = svc_host_gso_send(t, f, &d, i, end))) {
				svc_flow_delivered(f, end - i);
				s->host_gso_sends++;
				s->host_gso_datagrams += end - i;
			} else if (ret == -EOPNOTSUPP) {
				s->host_gso_off = true;
				svc_host_send_each(t, f, &d, i, end);
			} else {
				/* refused (a full socket, ECONNREFUSED): lost, as UDP would */
				s->errors += end - i;
				for (k = i; k < end; k++)
					stack_drop(s->st, DROP_SERVICE);
			}
			for (; i < end; i++)
				pkt_free(t->txq[i].p);
		}
	}
	t->txq_len = 0;
}

/* The stack's STACK_TURN_HAND_DOWN phase: what the turn queued leaves. */
static void svc_udp_turn_end(void *ctx, bool links_idle)
{
	(void)links_idle;
	svc_udp_flush(ctx);
}

/**
 * svc_udp_table_new() - the table the UDP services of @st share
 * @st:		the stack; the table flushes its queue in its turn end
 *
 * Return: the table, or NULL (out of memory, or no room for the hook).
 */
struct svc_udp_table *svc_udp_table_new(struct stack *st)
{
	struct svc_udp_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->st = st;
	t->rxbuf = malloc(sizeof(*t->rxbuf) * SVC_UDP_BATCH);
	if (!t->rxbuf || stack_on_turn_end(st, STACK_TURN_HAND_DOWN, svc_udp_turn_end, t) < 0) {
		free(t->rxbuf);
		free(t);
		return NULL;
	}
	return t;
}

/**
 * svc_udp_table_free() - after every service of @t was freed
 * @t:		the table, or NULL
 */
void svc_udp_table_free(struct svc_udp_table *t)
{
	if (!t)
		return;
	svc_udp_flush(t);
	stack_off_turn_end(t->st, svc_udp_turn_end, t);
	free(t->rxbuf);
	free(t);
}

/**
 * svc_pump_to_host() - a datagram for @f's host destination joins the queue
 * @s:		the service
 * @f:		its flow: a publish's backend socket, or a forward's client
 * @data:	the datagram, copied; @len its bytes
 *
 * It leaves with svc_udp_flush(): at the end of the turn, or now when the
 * queue is full.
 */
void svc_pump_to_host(struct svc_udp *s, struct svc_flow *f, const uint8_t *data, size_t len)
{
	struct pkt *p = pkt_alloc(len);

	if (!p) {
		s->errors++;
		stack_drop(s->st, DROP_NO_MEMORY);
		return;
	}
	memcpy(pkt_put(p, len), data, len);
	s->tbl->txq[s->tbl->txq_len].flow = f;
	s->tbl->txq[s->tbl->txq_len].p = p;
	if (++s->tbl->txq_len == SVC_UDP_BATCH)
		svc_udp_flush(s->tbl);
}

/**
 * svc_pump_run() - the end of the run of datagrams from @i in a recvmmsg()
 * batch that can go down as one GSO send
 * @m:		the batch
 * @i:		the run's first datagram
 * @n:		datagrams in the batch
 * @from:	their senders (forward), or NULL
 *
 * A run: not truncated, not empty, the size of datagram @i except a shorter
 * last one, and with @from the same sender.
 * Return: the index after the run's last datagram.
 */
int svc_pump_run(const struct mmsghdr *m, int i, int n, const struct sockaddr_storage *from)
{
	unsigned int size = m[i].msg_len;
	int j;

	if (!size || (m[i].msg_hdr.msg_flags & MSG_TRUNC))
		return i + 1;
	for (j = i + 1; j < n; j++) {
		if ((m[j].msg_hdr.msg_flags & MSG_TRUNC) || !m[j].msg_len || m[j].msg_len > size)
			break;
		if (from && (m[j].msg_hdr.msg_namelen != m[i].msg_hdr.msg_namelen ||
			     memcmp(&from[j], &from[i], m[i].msg_hdr.msg_namelen)))
			break;
		if (m[j].msg_len < size)
			return j + 1;	/* a shorter last datagram ends the run */
	}
	return j;
}

/**
 * svc_pump_to_stack() - a run of a recvmmsg() batch down through the stack
 * @s:		the service (its counters)
 * @us:		the stack socket that sends
 * @src:	the source address, or NULL for the route's
 * @dst:	where to, @dport its port
 * @m:		the batch in the table's rxbuf; datagrams [@i, @end) go
 *
 * One udp_sendto_gso() for a run, udp_sendto() for one.
 * Return: how many were sent (0 when the stack refused them, counted in
 * errors).
 */
unsigned int svc_pump_to_stack(struct svc_udp *s, struct udp_sock *us, const struct net_addr *src,
			       const struct net_addr *dst, uint16_t dport, const struct mmsghdr *m, int i,
			       int end)
{
	struct iovec iov[SVC_UDP_BATCH];
	int k;

	if (end - i == 1) {
		if (udp_sendto(us, src, dst, dport, s->tbl->rxbuf[i], m[i].msg_len) < 0) {
			s->errors++;
			return 0;
		}
		return 1;
	}
	for (k = i; k < end; k++) {
		iov[k - i].iov_base = s->tbl->rxbuf[k];
		iov[k - i].iov_len = m[k].msg_len;
	}
	if (udp_sendto_gso(us, src, dst, dport, iov, (unsigned int)(end - i), m[i].msg_len) < 0) {
		s->errors++;
		return 0;
	}
	s->gso_sends++;
	s->gso_datagrams += (uint64_t)(end - i);
	return (unsigned int)(end - i);
}
