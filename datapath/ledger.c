// SPDX-License-Identifier: MIT
/*
 * ledger.c - what a datapath shares with its supervisor and leaves to its
 * successor
 *
 * Theory of operation
 *
 * A datapath can die at any moment (a crash, SIGKILL, an exploit). Its
 * supervisor (supervise.c) then starts another on the same fds within a
 * second. Two things must survive that the dead one cannot hand over:
 *
 *   - the secret of its TCP engines. ISNs are M + F(4-tuple, secret) and
 *     timestamps now + F'(4-tuple, secret) (tcp_conn.c, tcp_out.c); with the
 *     same secret a new datapath's SYN on a 4-tuple that a kernel holds in
 *     TIME-WAIT carries a larger ISN and a newer timestamp, and the kernel
 *     takes it as a new connection instead of answering with a challenge ACK
 *     (RFC 6528, RFC 7323 5.4 and its per-connection offsets);
 *   - the container's open connections. A new datapath knows nothing of
 *     them, and a container socket that waits for data would otherwise hang
 *     until its own timeout. Each pair of the face (face_tcp.c) writes its
 *     4-tuples into a slot here while it is established; the next datapath
 *     resets every pair it finds (face_reset_orphans()) and frees the slots.
 *
 * The ledger is a memfd the supervisor creates before its first datapath:
 * one page of header, written by the supervisor only (the secret, its pid,
 * restarts, deaths, the last death: a datapath maps it read-only and shows
 * it in `datapath stats`), then the book of pair slots, written by the
 * datapath only. It is sealed against growing and shrinking, so that no
 * datapath can make another's mapping fault. Every datapath checks the
 * layout before it maps it (ledger_map()), and a successor treats every
 * slot as untrusted input: a dead datapath may have been compromised.
 *
 * Not a journal of sequence numbers: a slot changes when a pair opens and
 * when it ends, never per segment. The reset needs none (face_tcp.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "datapath/ledger.h"

#define LEDGER_HEAD_BYTES	4096u

_Static_assert(sizeof(struct ledger_head) <= LEDGER_HEAD_BYTES, "the ledger's head fits its page");

static size_t ledger_size(uint32_t n_pairs)
{
	return LEDGER_HEAD_BYTES + sizeof(struct ledger_book) + (size_t)n_pairs * sizeof(struct ledger_pair);
}

/**
 * ledger_create() - the supervisor's ledger: a sealed memfd with a new secret
 * @lg:		filled; ledger_unmap() it
 * @n_pairs:	pair slots (at most LEDGER_PAIRS_MAX)
 *
 * Return: 0 or -errno.
 */
int ledger_create(struct ledger *lg, uint32_t n_pairs)
{
	size_t size = ledger_size(n_pairs);
	void *m;
	int fd, ret;

	memset(lg, 0, sizeof(*lg));
	lg->fd = -1;
	if (!n_pairs || n_pairs > LEDGER_PAIRS_MAX)
		return -EINVAL;
	fd = memfd_create("sandnet-ledger", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	lg->head = m;
	lg->book = (struct ledger_book *)((uint8_t *)m + LEDGER_HEAD_BYTES);
	lg->size = size;
	lg->fd = fd;
	lg->head->magic = LEDGER_MAGIC;
	lg->head->version = LEDGER_VERSION;
	lg->head->head_bytes = LEDGER_HEAD_BYTES;
	lg->head->pair_bytes = sizeof(struct ledger_pair);
	lg->head->n_pairs = n_pairs;
	lg->head->supervisor_pid = (int32_t)getpid();
	randombytes_buf(lg->head->secret, sizeof(lg->head->secret));
	return 0;
}

/**
 * ledger_map() - a datapath's view of its supervisor's ledger
 * @fd:		the memfd it was given (--ledger-fd); closed here either way
 * @lg:		filled; ledger_unmap() it
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * The head is mapped read-only, the book read-write.
 *
 * Return: 0 or -errno.
 */
int ledger_map(int fd, struct ledger *lg, char *err, size_t err_len)
{
	struct ledger_head head;
	struct stat sb;
	void *h = MAP_FAILED, *b = MAP_FAILED;
	int ret = -EINVAL;

	memset(lg, 0, sizeof(*lg));
	lg->fd = -1;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, err_len, "--ledger-fd %d: not the supervisor's ledger (not a memfd)", fd);
		goto out;
	}
	if (pread(fd, &head, sizeof(head), 0) != (ssize_t)sizeof(head) || head.magic != LEDGER_MAGIC ||
	    head.version != LEDGER_VERSION || head.head_bytes != LEDGER_HEAD_BYTES ||
	    head.pair_bytes != sizeof(struct ledger_pair) || !head.n_pairs || head.n_pairs > LEDGER_PAIRS_MAX ||
	    (size_t)sb.st_size != ledger_size(head.n_pairs) ||
	    (fcntl(fd, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
		snprintf(err, err_len, "--ledger-fd %d: not a ledger of this version (magic, layout or seals)", fd);
		goto out;
	}
	h = mmap(NULL, LEDGER_HEAD_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	b = mmap(NULL, (size_t)sb.st_size - LEDGER_HEAD_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 LEDGER_HEAD_BYTES);
	if (h == MAP_FAILED || b == MAP_FAILED) {
		ret = -errno;
		snprintf(err, err_len, "--ledger-fd %d: mmap: %s", fd, strerror(errno));
		if (h != MAP_FAILED)
			munmap(h, LEDGER_HEAD_BYTES);
		if (b != MAP_FAILED)
			munmap(b, (size_t)sb.st_size - LEDGER_HEAD_BYTES);
		goto out;
	}
	lg->head = h;
	lg->book = b;
	lg->size = (size_t)sb.st_size;
	ret = 0;
out:
	close(fd);
	return ret;
}

/**
 * ledger_unmap() - release a mapping (and the supervisor's memfd)
 * @lg:		the ledger, or one never mapped
 */
void ledger_unmap(struct ledger *lg)
{
	if (lg->part) {
		free(lg->free);
		memset(lg, 0, sizeof(*lg));
		lg->fd = -1;
		return;
	}
	if (lg->head && lg->fd >= 0) {
		munmap(lg->head, lg->size);
	} else if (lg->head) {
		munmap(lg->head, LEDGER_HEAD_BYTES);
		munmap(lg->book, lg->size - LEDGER_HEAD_BYTES);
	}
	if (lg->fd >= 0)
		close(lg->fd);
	free(lg->free);
	memset(lg, 0, sizeof(*lg));
	lg->fd = -1;
}

/**
 * ledger_pair_add() - write a pair into a free slot
 * @lg:		the datapath's ledger
 * @p:		the pair (@p->used is set here)
 *
 * Return: the slot, -ENOSPC when every slot is taken (counted in @lg->full),
 * -ENOMEM.
 */
int ledger_pair_add(struct ledger *lg, const struct ledger_pair *p)
{
	uint32_t first = lg->part ? lg->first : 0, n = lg->part ? lg->count : lg->head->n_pairs;
	uint32_t stride = lg->part ? lg->stride : 1, slot, hi;

	if (lg->part && !lg->count) {
		lg->full++;
		return -ENOSPC;
	}
	if (!lg->free) {
		/* a stack of every slot, lowest on top: the book grows from slot 0 */
		lg->free = malloc(n * sizeof(*lg->free));
		if (!lg->free)
			return -ENOMEM;
		for (slot = 0; slot < n; slot++)
			lg->free[slot] = first + (n - 1 - slot) * stride;
		lg->n_free = n;
	}
	if (!lg->n_free) {
		lg->full++;
		return -ENOSPC;
	}
	slot = lg->free[--lg->n_free];
	lg->book->pairs[slot] = *p;
	lg->book->pairs[slot].used = 1;
	/* shards raise @hi together: the highest wins */
	hi = __atomic_load_n(&lg->book->hi, __ATOMIC_RELAXED);
	while (slot >= hi && !__atomic_compare_exchange_n(&lg->book->hi, &hi, slot + 1, true, __ATOMIC_RELAXED,
							  __ATOMIC_RELAXED))
		;
	return (int)slot;
}

/**
 * ledger_pair_del() - free the slot of a pair that ended
 * @lg:		the datapath's ledger
 * @slot:	from ledger_pair_add(); a negative one is ignored
 */
void ledger_pair_del(struct ledger *lg, int slot)
{
	if (slot < 0 || (uint32_t)slot >= lg->head->n_pairs || !lg->book->pairs[slot].used)
		return;
	memset(&lg->book->pairs[slot], 0, sizeof(lg->book->pairs[slot]));
	lg->free[lg->n_free++] = (uint32_t)slot;
}

/**
 * ledger_share() - shard @i of @n's own slots of @lg
 * @lg:		the datapath's ledger, after ledger_pairs_take() (the first
 *		shard takes what the last datapath left, before any shard runs)
 * @i, @n:	the shard and how many there are
 * @part:	receives a ledger on the same mapping whose pairs go to slots
 *		no other shard writes; its ledger_unmap() keeps the mapping
 *
 * Every shard adds and deletes pairs without a lock: each owns every n-th
 * slot from slot i, lowest first, so that n shards of few pairs each use the
 * first pages of the book together, and the book's high mark, which all of
 * them raise (an atomic maximum), stays low: a successor reads and clears
 * only up to it (ledger_pairs_take()). With a slice each, the second shard's
 * first pair would have lifted it past the first shard's whole slice, and
 * every start faulted in that much of the memfd (2.5 MB).
 */
void ledger_share(struct ledger *lg, unsigned int i, unsigned int n, struct ledger *part)
{
	uint32_t per = lg->head->n_pairs / n;

	memset(part, 0, sizeof(*part));
	part->head = lg->head;
	part->book = lg->book;
	part->size = lg->size;
	part->fd = -1;
	part->part = true;
	part->first = i;
	part->stride = n;
	part->count = per;	/* 0 with fewer slots than shards: no slot */
}

/**
 * ledger_pairs_take() - hand every pair a dead datapath left to @fn, and
 * clear the book
 * @lg:		the new datapath's ledger, before its first pair
 * @fn:		called once per pair with a family of AF_INET or AF_INET6
 *		(the caller checks the rest: the slot is untrusted)
 * @ctx:	for @fn
 *
 * Return: the number of pairs handed over.
 */
unsigned int ledger_pairs_take(struct ledger *lg, void (*fn)(void *ctx, const struct ledger_pair *p),
			       void *ctx)
{
	uint32_t hi = lg->book->hi, i;
	unsigned int n = 0;

	if (hi > lg->head->n_pairs)
		hi = lg->head->n_pairs;
	for (i = 0; i < hi; i++) {
		struct ledger_pair p = lg->book->pairs[i];

		if (p.used != 1 || (p.family != AF_INET && p.family != AF_INET6))
			continue;
		fn(ctx, &p);
		n++;
	}
	memset(lg->book->pairs, 0, (size_t)hi * sizeof(struct ledger_pair));
	lg->book->hi = 0;
	return n;
}

/**
 * ledger_death_text() - a wait status in words: "exited with status 2",
 * "killed by signal 11 (Segmentation fault)"
 * @status:	from waitpid()
 * @buf:	receives the text
 * @size:	size of @buf
 *
 * Return: @buf.
 */
const char *ledger_death_text(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by signal %d (%s)%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
			 WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(buf, size, "wait status 0x%x", (unsigned int)status);
	return buf;
}
