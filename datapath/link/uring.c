// SPDX-License-Identifier: MIT
/*
 * uring.c - batches of readv()/writev() on a device in one system call
 *
 * Theory of operation
 *
 * A TUN is a character device: one read() takes one packet, one write()
 * gives one, and there is no recvmmsg()/sendmmsg() for it. On this kind of
 * machine a system call is dear (a null one costs about 1 us under PTI in a
 * guest; `perf bench syscall basic`), and one per packet was what limited
 * the face: reading a burst of datagrams cost 1.6 us a packet with readv(),
 * 0.35 us with batches of 32 through io_uring (measured in a netns on this
 * kernel, 6.18). So a link that has a device hands its readv()s and
 * writev()s to an io_uring, a batch per io_uring_enter(); liburing does the
 * ring's bookkeeping.
 *
 * Every operation completes before io_uring_enter() returns, in the order
 * submitted, so a batch behaves as the same calls made one after another:
 * - reads carry RWF_NOWAIT: one that finds the queue empty completes at
 *   once with -EAGAIN instead of waiting for a packet (an O_NONBLOCK file
 *   alone would make io_uring arm a poll and complete it later, out of
 *   line). The reads after it find the queue empty too; a packet that
 *   arrives in between is read by a later entry of the same batch, still
 *   in order;
 * - a TUN write never waits (the packet goes to the container's stack at
 *   once), so writes complete inline too. io_uring_submit_and_wait() waits
 *   for the whole batch all the same: nothing is left in flight that points
 *   into the caller's buffers.
 *
 * The sandbox. seccomp.c allows io_uring_enter() and nothing else of
 * io_uring: the operations of a ring are not system calls and no filter
 * sees them, so a ring must not be able to do what the filter forbids. Each
 * ring is made before the filter is loaded (link_uring_refuse() marks that
 * point; after it link_uring_new() fails) and is restricted before it is
 * enabled (IORING_SETUP_R_DISABLED, IORING_REGISTER_RESTRICTIONS): READV
 * and WRITEV only, only on the files registered with it (IOSQE_FIXED_FILE
 * required), and no register operation at all afterwards. So a datapath
 * taken over can read and write its own TUN queues through it, which it
 * could already, and nothing else.
 *
 * Where io_uring is not to be had (kernel.io_uring_disabled, a seccomp
 * profile of the caller's, an older kernel), link_uring_new() fails with the
 * reason and the link reads and writes one packet per call, as before.
 */
#include <errno.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/link/uring.h"

struct link_uring {
	struct io_uring ring;
	unsigned int n_files;
};

/* Why no ring is made any more, or NULL (set by the main thread before any shard runs). */
static const char *link_uring_refused;

/**
 * link_uring_refuse() - make no ring from now on
 * @why:	the reason link_uring_new() gives (a static string)
 *
 * `--no-io-uring`; and the main thread calls it before the system call
 * filter: io_uring_setup() and io_uring_register() are not on the
 * allow-list (seccomp.c), so a ring asked for afterwards fails cleanly
 * instead of killing the process.
 */
void link_uring_refuse(const char *why)
{
	link_uring_refused = why;
}

/**
 * link_uring_new() - a ring that may only readv/writev @fds
 * @fds:	the devices, addressed as 0..@n_fds-1 afterwards
 * @n_fds:	how many
 * @err:	on failure, why, in words
 * @err_len:	size of @err
 *
 * Return: the ring, or NULL with @err filled (the caller then uses one
 * system call per packet).
 */
struct link_uring *link_uring_new(const int *fds, unsigned int n_fds, char *err, size_t err_len)
{
	struct io_uring_restriction res[] = {
		{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READV },
		{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_WRITEV },
		{ .opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED, .sqe_flags = IOSQE_FIXED_FILE },
		{ .opcode = IORING_RESTRICTION_SQE_FLAGS_REQUIRED, .sqe_flags = IOSQE_FIXED_FILE },
	};
	struct io_uring_params params = { .flags = IORING_SETUP_R_DISABLED };
	struct link_uring *u;
	const char *what;
	int ret;

	if (link_uring_refused) {
		snprintf(err, err_len, "io_uring: %s", link_uring_refused);
		return NULL;
	}
	if (!n_fds) {
		snprintf(err, err_len, "io_uring: no file to register");
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		snprintf(err, err_len, "io_uring: out of memory");
		return NULL;
	}
	what = "io_uring_setup";
	ret = io_uring_queue_init_params(LINK_URING_DEPTH, &u->ring, &params);
	if (ret < 0) {
		free(u);
		goto fail;
	}
	/* liburing 2.3 (Debian 12) has no exported wrappers for these two */
	what = "registering the files";
	ret = io_uring_register_files(&u->ring, fds, n_fds);
	if (ret >= 0) {
		what = "IORING_REGISTER_RESTRICTIONS";
		ret = io_uring_register(u->ring.ring_fd, IORING_REGISTER_RESTRICTIONS, res,
					sizeof(res) / sizeof(res[0]));
	}
	if (ret >= 0) {
		what = "IORING_REGISTER_ENABLE_RINGS";
		ret = io_uring_register(u->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	}
	if (ret < 0) {
		io_uring_queue_exit(&u->ring);
		free(u);
		goto fail;
	}
	u->n_files = n_fds;
	return u;
fail:
	snprintf(err, err_len, "io_uring: %s: %s", what, strerror(-ret));
	return NULL;
}

/**
 * link_uring_free() - close the ring
 * @u:	ring or NULL
 */
void link_uring_free(struct link_uring *u)
{
	if (!u)
		return;
	io_uring_queue_exit(&u->ring);
	free(u);
}

/*
 * Submit what is queued, wait until all @n have completed, and put each
 * result at its index in @res (bytes, or negative errno).
 */
static int link_uring_run(struct link_uring *u, unsigned int n, ssize_t *res)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0, i;
	int ret;

	for (i = 0; i < n; i++)
		res[i] = -ECANCELED;
	do
		ret = io_uring_submit_and_wait(&u->ring, n);
	while (ret == -EINTR);
	if (ret < 0)
		return ret;
	io_uring_for_each_cqe(&u->ring, head, cqe) {
		if (cqe->user_data < n)
			res[cqe->user_data] = cqe->res;
		seen++;
	}
	io_uring_cq_advance(&u->ring, seen);
	return seen < n ? -EIO : 0;
}

/**
 * link_uring_readv() - @n readv()s of one file in one system call
 * @u:		ring
 * @file:	index of the file (link_uring_new()'s @fds)
 * @iov:	per read, its two iovecs
 * @n:		reads, at most LINK_URING_DEPTH
 * @res:	per read, the bytes read or negative errno (-EAGAIN: nothing
 *		was queued); in order, as if read one after the other
 *
 * Return: 0, or negative errno when the batch could not run at all.
 */
int link_uring_readv(struct link_uring *u, unsigned int file, struct iovec (*iov)[2], unsigned int n,
		     ssize_t *res)
{
	unsigned int i;

	if (file >= u->n_files || !n || n > LINK_URING_DEPTH)
		return -EINVAL;
	if (io_uring_sq_space_left(&u->ring) < n)
		return -EBUSY;	/* cannot be: every batch is drained before the next */
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

		io_uring_prep_readv(sqe, (int)file, iov[i], 2, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		sqe->rw_flags = RWF_NOWAIT;
		sqe->user_data = i;
	}
	return link_uring_run(u, n, res);
}

/**
 * link_uring_writev() - @n writev()s to one file in one system call
 * @u:		ring
 * @file:	index of the file
 * @iov:	per write, its iovecs
 * @iovcnt:	per write, how many (1..3)
 * @n:		writes, at most LINK_URING_DEPTH
 * @res:	per write, bytes written or negative errno, in order
 *
 * Return: 0, or negative errno when the batch could not run at all.
 */
int link_uring_writev(struct link_uring *u, unsigned int file, struct iovec (*iov)[3],
		      const unsigned int *iovcnt, unsigned int n, ssize_t *res)
{
	unsigned int i;

	if (file >= u->n_files || !n || n > LINK_URING_DEPTH)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!iovcnt[i] || iovcnt[i] > 3)
			return -EINVAL;
	if (io_uring_sq_space_left(&u->ring) < n)
		return -EBUSY;
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

		io_uring_prep_writev(sqe, (int)file, iov[i], iovcnt[i], 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		sqe->user_data = i;
	}
	return link_uring_run(u, n, res);
}
