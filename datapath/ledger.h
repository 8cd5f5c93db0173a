/* SPDX-License-Identifier: MIT */
/*
 * ledger.h - what a datapath shares with its supervisor and leaves to its
 * successor (theory of operation in ledger.c)
 */
#ifndef SANDNET_DATAPATH_LEDGER_H
#define SANDNET_DATAPATH_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LEDGER_MAGIC		0x534e4c47u	/* "SNLG" */
#define LEDGER_VERSION		1
#define LEDGER_SECRET_BYTES	32
#define LEDGER_PAIRS_MAX	65536u		/* --max-conns' default: one slot per pair */

/**
 * struct ledger_pair - one TCP connection pair of the container face, as the
 * next datapath needs it to reset both halves (face_tcp.c)
 * @used:	1 while the pair lives, 0 for a free slot
 * @family:	AF_INET or AF_INET6
 * @container_port: the container's port (inner connection)
 * @outer_port:	the port the outer connection uses (the container's, or
 *		another where it was taken)
 * @remote_port: the remote end's port
 * @container:	the container's address (the outer connection's too)
 * @remote:	the remote end's address
 */
struct ledger_pair {
	uint8_t used;
	uint8_t family;
	uint16_t container_port;
	uint16_t outer_port;
	uint16_t remote_port;
	uint8_t container[16];
	uint8_t remote[16];
};

/**
 * struct ledger_head - the first page: written by the supervisor, read by
 * its datapath (stats) and by the next one (the secret)
 * @magic, @version, @head_bytes, @pair_bytes, @n_pairs: the layout, checked
 *		by ledger_map()
 * @secret:	the key of ISNs, timestamp offsets and SYN cookies of both TCP
 *		engines: the same across restarts, so that a kernel's TIME-WAIT
 *		takes a new datapath's SYN as newer (RFC 6528, RFC 7323 5.4)
 * @supervisor_pid: who keeps the ledger
 * @restarts:	datapaths started after the first (deaths and upgrades)
 * @deaths:	datapaths that exited or died without being asked to
 * @last_death_pid, @last_death_status, @last_death_unix_ms: the last of
 *		them: its pid, its wait status, when (0: none yet)
 * @last_death_why: the same in words ("killed by signal 11 (Segmentation
 *		fault)", "cannot execute /usr/bin/datapath: No such file or
 *		directory"), NUL-terminated
 * @max_deaths, @death_window_s: the crash-loop limit (--max-deaths,
 *		--death-window): that many deaths within that many seconds and
 *		no datapath is started any more
 */
struct ledger_head {
	uint32_t magic;
	uint32_t version;
	uint32_t head_bytes;
	uint32_t pair_bytes;
	uint32_t n_pairs;
	uint8_t secret[LEDGER_SECRET_BYTES];
	int32_t supervisor_pid;
	uint32_t restarts;
	uint32_t deaths;
	int32_t last_death_pid;
	int32_t last_death_status;
	uint64_t last_death_unix_ms;
	char last_death_why[160];
	uint32_t max_deaths;
	uint32_t death_window_s;
};

/**
 * struct ledger_book - the pages after the first: the datapath's
 * @hi:		slots at and above it were never used (what the next datapath
 *		reads; it checks it against n_pairs)
 * @pairs:	the slots
 */
struct ledger_book {
	uint32_t hi;
	uint32_t pad;
	struct ledger_pair pairs[];
};

/**
 * struct ledger - one mapping of the ledger
 * @head:	the first page (read-only in a datapath)
 * @book:	the pairs (@head->n_pairs slots)
 * @size:	bytes mapped
 * @fd:		the memfd (the supervisor's; -1 in a datapath, which keeps
 *		only the mapping)
 * @free:	the datapath's free slots, a stack (allocated with the first pair)
 * @n_free:	entries on it
 * @full:	pairs that found no slot (they are not reset after a death)
 * @first, @count, @stride: the slots a share may use, @count of them
 *		from @first every @stride (ledger_share()); unused without
 *		@part (all slots)
 * @part:	a share of another's mapping: unmapping leaves the mapping
 */
struct ledger {
	struct ledger_head *head;
	struct ledger_book *book;
	size_t size;
	int fd;
	uint32_t *free;
	uint32_t n_free;
	uint64_t full;
	uint32_t first, count, stride;
	bool part;
};

int ledger_create(struct ledger *lg, uint32_t n_pairs);
int ledger_map(int fd, struct ledger *lg, char *err, size_t err_len);
void ledger_unmap(struct ledger *lg);
void ledger_share(struct ledger *lg, unsigned int i, unsigned int n, struct ledger *part);
int ledger_pair_add(struct ledger *lg, const struct ledger_pair *p);
void ledger_pair_del(struct ledger *lg, int slot);
unsigned int ledger_pairs_take(struct ledger *lg, void (*fn)(void *ctx, const struct ledger_pair *p),
			       void *ctx);
const char *ledger_death_text(int status, char *buf, size_t size);

#endif /* SANDNET_DATAPATH_LEDGER_H */
