// SPDX-License-Identifier: MIT
/*
 * face_tcp.c - the container's TCP: every connection terminated on one side
 * and re-originated on the other
 *
 * Theory of operation
 *
 * A pair is two connections of two engines: @inner, of the face's engine,
 * whose peer is the container's kernel; and @outer, of the outer stack's,
 * whose peer is the remote end. Both carry the same 4-tuple seen from
 * opposite sides (inner: local = the remote end we stand for, remote = the
 * container; outer: local = the container's address and, where free, its
 * port, remote = the remote end), so the endpoints a program sees are the
 * ones it would see without sandnet. Sequence numbers, options and windows
 * are each connection's own.
 *
 * Opening. The side that sends the SYN first decides the direction:
 *
 *   outbound: the container's SYN to X:Y reaches the inner engine's
 *     catch-all (tcp_listen_any()), which holds it unanswered; the pair
 *     connects @outer to X:Y. Its outcome is what the container's connect()
 *     sees: CONNECTED answers the SYN (tcp_conn_answer()); a RST refuses it
 *     with a RST (ECONNREFUSED); an ICMP error (tcp_glue_icmp()) refuses it
 *     with the same ICMP error quoting the container's SYN (EHOSTUNREACH,
 *     ENETUNREACH); the outer timeout refuses it silently, and the
 *     container's kernel times out (ETIMEDOUT) on its own, retrying the SYN
 *     meanwhile, which the held connection absorbs.
 *   inbound: a SYN from the network to one of the container's ports no
 *     --publish takes reaches the outer engine's catch-all; the pair connects
 *     @inner to the container from the client's own address and port, and
 *     the container's answer becomes the client's: its SYN-ACK, its RST, its
 *     ICMP error, or its silence.
 *
 * Both catch-alls count their held SYNs as half-open (--max-half-open):
 * beyond it a SYN is dropped, never cookied (a cookie would accept what the
 * other side may refuse), and its sender retries. A SYN flood from either
 * side is therefore bounded by the caps, not by memory.
 *
 * Moving bytes. Once both are connected, bytes that one side receives in
 * order while nothing of it waits go straight into the other's send ring
 * (face_pair_sink(): one copy, from the packet). Otherwise each engine
 * event (readable, writable, FIN) puts the pair on the pending list; at the
 * end of the loop turn (face_pump(), from stack_turn_end()) every pending
 * pair copies what one side received (tcp_peek()) into the other's send
 * buffer, as much as it accepts (tcp_send() takes what fits), and only that
 * is consumed (tcp_consume()), then pushes what its sinks queued. What the
 * other side does not take stays in the receive ring, whose window then
 * closes: the outer window limits the inner and back, and nothing is
 * buffered beyond the two engines' own buffers. tcp_send() never writes
 * over bytes a queued segment still carries (the borrow rule, tcp_pool.c).
 *
 * What it says it is. A connection the policy let through for a name (a
 * name rule matched its address, policy.c "Names") is held before its
 * first byte leaves: nothing the container sends goes to the network until
 * its first bytes were read (hello.c) and, if they give a name (a TLS
 * ClientHello's server_name, an HTTP/1 request's host), the policy allowed
 * that name on this port (policy_name_refuses()). A refused name, or TLS
 * or HTTP this reader will not guess at, resets both halves: the remote end
 * has seen a handshake and not one byte. Bytes of another protocol, or
 * that give no name, pass: the address's binding decided. A connection to
 * port 53 is read message by message instead, when there are name rules
 * (DNS over TCP: face_dns.c). The wait is for
 * the container's bytes only; what the remote end sends first (an SSH or
 * SMTP banner) moves meanwhile. A connection on which nothing was sent waits
 * as long as it likes (a pool's connection opened ahead of its use); one
 * whose first bytes began but did not finish a ClientHello or a request head
 * within FACE_READ_NAME_MS is reset, as a refusal: bytes trickled one at a
 * time must not hold a connection, and the policy's decision, forever.
 *
 * Closing. A FIN on one side becomes tcp_shutdown_write() on the other once
 * everything before it was moved (half-close works both ways). When both
 * directions are shut the pair closes both connections gracefully and the
 * engines finish the exchange (FIN, TIME-WAIT) on their own. A RST on either
 * side aborts the other (RST). A finished pair is unlinked at once and freed
 * at the end of the turn (loop_defer()): an engine callback may be on the
 * stack.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/face/face_int.h"
#include "datapath/ledger.h"
#include "datapath/names/hello.h"
#include "common/out.h"
#include "datapath/policy.h"

/* First bytes that began a ClientHello or a request head finish within this. */
#define FACE_READ_NAME_MS	10000

/**
 * struct face_pair - one of the container's TCP connections, both halves
 * @inner:	the connection with the container's kernel
 * @outer:	the connection with the remote end
 * @in_ep:	@inner's endpoints (local: the remote end we stand for)
 * @out_ep:	@outer's endpoints (local: the container's address)
 * @syn_seq:	the held SYN's sequence number (ICMP errors quote it)
 * @outbound:	the container opened it (@inner was held), else the network did
 * @up:		both connections are established
 * @pending:	on f->pending
 * @in_eof, @out_eof:	that side's peer sent FIN
 * @in_shut, @out_shut:	our FIN is queued on that side
 * @dead:	finished; freed at the end of the turn
 * @ledger_slot: its slot in the supervisor's ledger while it is up, or -1
 * @to_outer, @to_inner: bytes moved
 * @push_outer, @push_inner: that side's sink queued bytes this turn
 * @read_name:	the container's first bytes must be read before any leave
 *		(a name rule let it through)
 * @reading:	unfinished first bytes, or an unfinished DNS query, wait
 *		(counted in f->n_reading)
 * @reading_since_ms: since when
 * @dns:	a connection to port 53 with name rules: every message is read
 *		(face_pair_dns_queries(), face_pair_dns_answers())
 * @dns_q_pass, @dns_a_pass: bytes of the query (answer) being passed on
 * @log:	its flow log record (face_log.c), or NULL
 * @how:	how it ends, when it does not end gracefully (a reset unless said)
 * @segs_out, @segs_in: segments the container sent and was sent, kept
 *		when @inner goes
 */
struct face_pair {
	struct face_pair *next, *prev, *pend_next;
	struct face *f;
	struct tcp_conn *inner, *outer;
	struct tcp_endpoint in_ep[2], out_ep[2];
	uint32_t syn_seq;
	bool outbound, up, pending;
	bool in_eof, out_eof, in_shut, out_shut;
	bool dead;
	int ledger_slot;
	uint64_t to_outer, to_inner;
	bool push_outer, push_inner;
	bool read_name, reading, dns;
	uint64_t reading_since_ms;
	size_t dns_q_pass, dns_a_pass;
	struct flowlog_record *log;
	enum flowlog_end how;
	uint64_t segs_out, segs_in;
	struct loop_defer defer;
};

static void face_pair_inner_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err);
static void face_pair_outer_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err);
static size_t face_pair_sink(struct tcp_conn *c, void *user, const void *data, size_t len);

/* A connection no pair owns any more: nothing to tell. */
static void face_orphan_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	(void)c;
	(void)user;
	(void)ev;
	(void)err;
}

static void face_pair_free(struct loop_defer *d)
{
	free(loop_defer_owner(d, struct face_pair, defer));
}

static struct face_pair *face_pair_new(struct face *f, bool outbound)
{
	struct face_pair *pr = calloc(1, sizeof(*pr));

	if (!pr)
		return NULL;
	pr->f = f;
	pr->outbound = outbound;
	pr->ledger_slot = -1;
	pr->how = FLOWLOG_END_RESET;
	pr->next = f->pairs;
	if (f->pairs)
		f->pairs->prev = pr;
	f->pairs = pr;
	f->n_pairs++;
	return pr;
}

/* The container's segments, from @inner's counters, before it goes. */
static void face_pair_keep_segs(struct face_pair *pr)
{
	struct tcp_conn_info info;

	if (!pr->log)
		return;
	tcp_conn_info(pr->inner, &info);
	pr->segs_in = info.stats.segs_in;
	pr->segs_out = info.stats.segs_out;
}

/*
 * End a pair: each connection still held is closed (@graceful) or reset
 * (RST), or, still held back unanswered, refused silently.
 */
static void face_pair_kill(struct face_pair *pr, bool graceful)
{
	struct face *f = pr->f;
	struct tcp_conn *c[2] = { pr->inner, pr->outer };
	uint64_t now = face_now_us(f);
	unsigned int i;

	if (pr->dead)
		return;
	pr->dead = true;
	if (pr->reading)
		f->n_reading--;
	if (pr->inner)
		face_pair_keep_segs(pr);
	pr->inner = pr->outer = NULL;
	if (f->st->ledger)
		ledger_pair_del(f->st->ledger, pr->ledger_slot);
	for (i = 0; i < 2; i++) {
		struct tcp_conn_info info;

		if (!c[i])
			continue;
		tcp_conn_set_user(c[i], face_orphan_event, NULL);
		tcp_conn_info(c[i], &info);
		if (info.deferred)
			tcp_conn_refuse(c[i], false, now);
		else if (graceful)
			tcp_close(c[i], now);
		else
			tcp_abort(c[i], now);
	}
	if (pr->prev)
		pr->prev->next = pr->next;
	else
		f->pairs = pr->next;
	if (pr->next)
		pr->next->prev = pr->prev;
	f->n_pairs--;
	if (pr->log) {
		pr->log->bytes_out = pr->to_outer;
		pr->log->bytes_in = pr->to_inner;
		pr->log->packets_out = pr->segs_in;
		pr->log->packets_in = pr->segs_out;
		face_log_end(f, pr->log, graceful ? FLOWLOG_END_CLOSED : pr->how);
		pr->log = NULL;
	}
	loop_defer(f->st->loop, &pr->defer, face_pair_free);
}

/*
 * Both halves are established: write their 4-tuples into the supervisor's
 * ledger, so that the next datapath resets them should this one die
 * (face_tcp_reset_orphans()). A full ledger only costs that.
 */
static void face_pair_note(struct face_pair *pr)
{
	struct ledger *lg = pr->f->st->ledger;
	uint8_t family = pr->in_ep[1].addr.family;
	struct ledger_pair lp = {
		.family = family,
		.container_port = pr->in_ep[1].port,
		.outer_port = pr->out_ep[0].port,
		.remote_port = pr->in_ep[0].port,
	};

	if (!lg)
		return;
	memcpy(lp.container, pr->in_ep[1].addr.a.bytes, net_addr_len(family));
	memcpy(lp.remote, pr->in_ep[0].addr.a.bytes, net_addr_len(family));
	pr->ledger_slot = ledger_pair_add(lg, &lp);
}

static void face_pair_pend(struct face_pair *pr)
{
	if (pr->pending || pr->dead)
		return;
	pr->pending = true;
	pr->pend_next = pr->f->pending;
	pr->f->pending = pr;
}

/*
 * The side that connected first (outbound: @outer) is up: answer the SYN the
 * other side held.
 */
static void face_pair_answer(struct face_pair *pr)
{
	struct tcp_conn *held = pr->outbound ? pr->inner : pr->outer;

	if (tcp_conn_answer(held, face_now_us(pr->f)) < 0)
		face_pair_kill(pr, false);
}

/*
 * The connection attempt on the far side failed with @err: the held SYN gets
 * the answer the remote end (outbound) or the container (inbound) gave.
 */
static void face_pair_refuse(struct face_pair *pr, int err)
{
	struct face *f = pr->f;
	struct tcp_conn *held = pr->outbound ? pr->inner : pr->outer;
	const struct tcp_endpoint *ep = pr->outbound ? pr->in_ep : pr->out_ep;
	uint64_t now = face_now_us(f);

	if (pr->inner)
		face_pair_keep_segs(pr);
	pr->inner = pr->outer = NULL;
	pr->how = FLOWLOG_END_REFUSED;
	if (!held) {
		face_pair_kill(pr, false);
		return;
	}
	tcp_conn_set_user(held, face_orphan_event, NULL);
	switch (err) {
	case -ECONNREFUSED:
	case -ECONNRESET:
		face_count(f, FACE_CTR_TCP_REFUSED);
		tcp_conn_refuse(held, true, now);
		break;
	case -ETIMEDOUT:
		face_count(f, FACE_CTR_TCP_TIMED_OUT);
		tcp_conn_refuse(held, false, now);
		break;
	default:
		/* an ICMP error: the same error, quoting the held SYN (sent by ep[1] to ep[0]) */
		face_count(f, FACE_CTR_TCP_UNREACHABLE);
		face_icmp_unreach_for(f, err, ep[1].addr.family, &ep[1], &ep[0], pr->syn_seq, pr->outbound);
		tcp_conn_refuse(held, false, now);
		break;
	}
	face_pair_kill(pr, false);
}

/* An event of one half; @inner says which. */
static void face_pair_event(struct face_pair *pr, bool inner, struct tcp_conn *c, enum tcp_event ev, int err)
{
	bool held_side = inner == pr->outbound;	/* the half whose SYN we held */

	if (pr->dead)
		return;
	switch (ev) {
	case TCP_EV_CONNECTED:
		if (pr->up)
			break;
		if (!held_side) {
			face_pair_answer(pr);
			break;
		}
		pr->up = true;
		tcp_conn_set_sink(pr->inner, face_pair_sink);
		tcp_conn_set_sink(pr->outer, face_pair_sink);
		/*
		 * The network's side only: one ACK a turn instead of one a GSO
		 * frame spares the peer's stack, run on our time. The
		 * container's kernel sent less when its ACKs were thinned (four
		 * streams out: 13-16 against 16-17 Gbit/s, 4 Dec).
		 */
		tcp_conn_ack_at_push(pr->outer);
		face_count(pr->f, FACE_CTR_TCP_CONNECTED);
		face_pair_note(pr);
		face_pair_pend(pr);	/* the first side may have data waiting */
		break;
	case TCP_EV_READABLE:
	case TCP_EV_WRITABLE:
		face_pair_pend(pr);
		break;
	case TCP_EV_PEER_FIN:
		if (inner)
			pr->in_eof = true;
		else
			pr->out_eof = true;
		face_pair_pend(pr);
		break;
	case TCP_EV_RESET:
		/* the engine dropped @c: let go of it, and of nothing twice */
		if (inner)
			face_pair_keep_segs(pr);
		tcp_conn_set_user(c, face_orphan_event, NULL);
		tcp_abort(c, face_now_us(pr->f));
		if (inner)
			pr->inner = NULL;
		else
			pr->outer = NULL;
		if (!pr->up && !held_side) {
			face_pair_refuse(pr, err);
			break;
		}
		face_count(pr->f, FACE_CTR_TCP_RESETS);
		face_pair_kill(pr, false);
		break;
	case TCP_EV_CLOSED:
	default:
		break;
	}
}

static void face_pair_inner_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	face_pair_event(user, true, c, ev, err);
}

static void face_pair_outer_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	face_pair_event(user, false, c, ev, err);
}

/*
 * Copy what @from received into @to's send buffer, as much as it takes and
 * at most @limit bytes (SIZE_MAX: all; a DNS message over TCP: its own).
 * Return: true when @from has nothing left to read.
 */
static bool face_move(struct face *f, struct tcp_conn *from, struct tcp_conn *to, size_t limit, uint64_t *moved)
{
	uint64_t now = face_now_us(f);
	size_t total = 0;

	while (total < limit) {
		struct iovec iov[2];
		size_t done = 0;
		int n = tcp_peek(from, iov), i;

		if (n <= 0)
			return true;
		/* tcp_send() takes what fits; when it takes less, WRITABLE follows */
		for (i = 0; i < n && total + done < limit; i++) {
			size_t want = iov[i].iov_len < limit - total - done ? iov[i].iov_len : limit - total - done;
			ssize_t sent = tcp_send(to, iov[i].iov_base, want, now);

			if (sent > 0)
				done += (size_t)sent;
			if (sent < (ssize_t)want)
				break;
		}
		if (!done)
			return false;
		tcp_consume(from, done, now);
		total += done;
		*moved += done;
	}
	return false;
}

/*
 * Both halves' sink (tcp_conn_set_sink(), once the pair is up): what one
 * side receives in order while none of it waits in its ring goes straight
 * into the other's send ring, copied once instead of twice. It is pushed
 * at the end of the turn (face_pair_pump()), with whatever else the turn
 * brought, so that it leaves in segments as large as the pump's; so is the
 * outer side itself, whose ACK for what it took waits for that push
 * (tcp_conn_ack_at_push()).
 */
static size_t face_pair_sink(struct tcp_conn *c, void *user, const void *data, size_t len)
{
	struct face_pair *pr = user;
	bool inner = c == pr->inner;
	struct tcp_conn *to = inner ? pr->outer : pr->inner;
	ssize_t n;

	if (pr->dead || !pr->up || pr->dns || (inner ? pr->out_shut || pr->read_name : pr->in_shut))
		return 0;
	n = tcp_send_more(to, data, len, face_now_us(pr->f));
	if (n <= 0)
		return 0;	/* the receive ring keeps it; WRITABLE brings the pump */
	if (inner) {
		pr->to_outer += (uint64_t)n;
		pr->push_outer = true;
	} else {
		pr->to_inner += (uint64_t)n;
		pr->push_inner = true;
		pr->push_outer = true;	/* its ACK */
	}
	face_pair_pend(pr);
	return (size_t)n;
}

/* Up to @cap bytes of what @c received, copied out of its ring (which may wrap). Return: how many. */
static size_t face_peek_copy(struct tcp_conn *c, uint8_t *buf, size_t cap)
{
	struct iovec iov[2];
	size_t have = 0;
	int n, i;

	n = tcp_peek(c, iov);
	for (i = 0; i < n && have < cap; i++) {
		size_t take = iov[i].iov_len < cap - have ? iov[i].iov_len : cap - have;

		memcpy(buf + have, iov[i].iov_base, take);
		have += take;
	}
	return have;
}

/* Unfinished first bytes (or an unfinished query) wait, or stop waiting: the sweep's clock. */
static void face_pair_reading(struct face_pair *pr, bool on)
{
	struct face *f = pr->f;

	if (on == pr->reading)
		return;
	pr->reading = on;
	if (on) {
		pr->reading_since_ms = loop_now_ms(f->st->loop);
		f->n_reading++;
	} else {
		f->n_reading--;
	}
}

/*
 * The container's first bytes, held in @inner's ring, say what the
 * connection is for (see "What it says it is"). Return: true when they may
 * go; false to wait for more, or when the pair was reset for them.
 */
static bool face_pair_read_name(struct face_pair *pr)
{
	struct face *f = pr->f;
	uint8_t buf[HELLO_READ_MAX];
	size_t have = face_peek_copy(pr->inner, buf, sizeof(buf));
	const struct policy_rule *by = NULL;
	struct hello h;
	int ret;

	if (!have && pr->in_eof) {	/* a FIN before any byte: nothing to read */
		pr->read_name = false;
		return true;
	}
	ret = hello_read(buf, have, &h, NULL);
	if (ret == -EAGAIN) {
		/* the ring holds far more than HELLO_READ_MAX: a FIN or the sweep ends the wait */
		if (!pr->in_eof && have < sizeof(buf)) {
			face_pair_reading(pr, have > 0);
			return false;
		}
		ret = -EBADMSG;
	}
	face_pair_reading(pr, false);
	face_count(f, FACE_CTR_TCP_NAMES_READ);
	if (!ret && h.has_name && pr->log)
		face_log_name(pr->log, h.name.text);
	if (!ret && (!h.has_name || !policy_name_refuses(f->st->policy, &h.name, IPPROTO_TCP, pr->in_ep[0].port, &by))) {
		pr->read_name = false;
		return true;
	}
	face_count(f, FACE_CTR_TCP_NAMES_REFUSED);
	if (pr->log)
		face_log_rule(pr->log, by);
	pr->how = FLOWLOG_END_NAME;
	face_pair_kill(pr, false);
	return false;
}

/*
 * DNS over TCP with name rules (face_dns.c): each query the container sent
 * goes on only whole and allowed (@dns_q_pass: what is left of the one
 * going), a refused or malformed one resets the pair. Return: true when
 * @inner has nothing left to read; false when waiting, or reset.
 */
static bool face_pair_dns_queries(struct face_pair *pr)
{
	struct face *f = pr->f;
	uint8_t buf[2 + FACE_DNS_TCP_QUERY_MAX];
	size_t have, len;
	int ret;

	for (;;) {
		if (pr->dns_q_pass) {
			uint64_t before = pr->to_outer;

			face_move(f, pr->inner, pr->outer, pr->dns_q_pass, &pr->to_outer);
			pr->dns_q_pass -= (size_t)(pr->to_outer - before);
			if (pr->dns_q_pass)
				return false;	/* the rest is not here yet, or the resolver's side is full */
		}
		have = face_peek_copy(pr->inner, buf, sizeof(buf));
		len = have >= 2 ? (size_t)buf[0] << 8 | buf[1] : 0;
		if (have >= 2 && (!len || len > FACE_DNS_TCP_QUERY_MAX)) {
			face_drop(f, FACE_DROP_BAD_DNS);
			break;
		}
		if (have < 2 || have < 2 + len) {
			if (have && pr->in_eof)
				break;	/* a query cut short by the FIN */
			face_pair_reading(pr, have > 0);
			return !have;
		}
		face_pair_reading(pr, false);
		ret = face_dns_tcp_query(f, &pr->in_ep[0].addr, buf + 2, len, pr->log);
		if (ret < 0) {
			pr->how = ret == -EACCES ? FLOWLOG_END_POLICY : FLOWLOG_END_RESET;
			break;
		}
		pr->dns_q_pass = 2 + len;
	}
	face_pair_kill(pr, false);
	return false;
}

/*
 * The resolver's answers on such a connection: each read whole, up to
 * FACE_DNS_TCP_ANSWER_MAX, and its addresses bound before it goes on
 * (@dns_a_pass: what is left of the one going). Return: as above.
 */
static bool face_pair_dns_answers(struct face_pair *pr)
{
	struct face *f = pr->f;
	uint8_t buf[2 + FACE_DNS_TCP_ANSWER_MAX];
	size_t have, len;

	for (;;) {
		if (pr->dns_a_pass) {
			uint64_t before = pr->to_inner;

			face_move(f, pr->outer, pr->inner, pr->dns_a_pass, &pr->to_inner);
			pr->dns_a_pass -= (size_t)(pr->to_inner - before);
			if (pr->dns_a_pass)
				return false;
		}
		have = face_peek_copy(pr->outer, buf, sizeof(buf));
		len = have >= 2 ? (size_t)buf[0] << 8 | buf[1] : 0;
		if (have >= 2 && len > FACE_DNS_TCP_ANSWER_MAX) {
			face_drop(f, FACE_DROP_DNS_TOO_BIG);
			break;
		}
		if (have < 2 || have < 2 + len) {
			if (have && pr->out_eof)
				break;
			return !have;
		}
		if (!face_dns_answer(f, buf + 2, len, FACE_DNS_TCP_ANSWER_MAX))
			break;	/* counted: malformed, or for a name never let out */
		pr->dns_a_pass = 2 + len;
	}
	face_pair_kill(pr, false);
	return false;
}

/* Move both ways, pass FINs on, finish a pair whose both directions are shut. */
static void face_pair_pump(struct face_pair *pr)
{
	struct face *f = pr->f;
	bool in_drained, out_drained;

	if (pr->dead || !pr->up)
		return;
	if (pr->read_name && !face_pair_read_name(pr)) {
		if (!pr->dead)	/* waiting: the other way moves meanwhile */
			face_move(f, pr->outer, pr->inner, SIZE_MAX, &pr->to_inner);
		if (!pr->dead && pr->push_inner)
			tcp_push(pr->inner, face_now_us(f));
		pr->push_inner = false;
		return;
	}
	if (pr->dns) {
		in_drained = face_pair_dns_queries(pr);
		out_drained = !pr->dead && face_pair_dns_answers(pr);
		if (pr->dead)
			return;
	} else {
		in_drained = face_move(f, pr->inner, pr->outer, SIZE_MAX, &pr->to_outer);
		out_drained = face_move(f, pr->outer, pr->inner, SIZE_MAX, &pr->to_inner);
	}
	if (pr->push_outer)
		tcp_push(pr->outer, face_now_us(f));
	if (pr->push_inner)
		tcp_push(pr->inner, face_now_us(f));
	pr->push_outer = pr->push_inner = false;
	if (pr->in_eof && in_drained && !pr->out_shut) {
		pr->out_shut = true;
		tcp_shutdown_write(pr->outer, face_now_us(f));
	}
	if (pr->out_eof && out_drained && !pr->in_shut) {
		pr->in_shut = true;
		tcp_shutdown_write(pr->inner, face_now_us(f));
	}
	if (pr->in_shut && pr->out_shut) {
		face_count(f, FACE_CTR_TCP_CLOSED);
		face_pair_kill(pr, true);
	}
}

/**
 * face_tcp_sweep() - reset the pairs whose first bytes did not finish in time
 * @f:		the face
 * @now_ms:	the loop's time
 */
void face_tcp_sweep(struct face *f, uint64_t now_ms)
{
	struct face_pair *pr, *next;

	for (pr = f->n_reading ? f->pairs : NULL; pr; pr = next) {
		next = pr->next;
		if (pr->reading && now_ms - pr->reading_since_ms >= FACE_READ_NAME_MS) {
			if (pr->dns) {
				face_drop(f, FACE_DROP_BAD_DNS);	/* a query never finished */
			} else {
				face_count(f, FACE_CTR_TCP_NAMES_READ);
				face_count(f, FACE_CTR_TCP_NAMES_REFUSED);
				pr->how = FLOWLOG_END_NAME;
			}
			face_pair_kill(pr, false);
		}
	}
}

/**
 * face_tcp_pump() - move what the pairs received this turn (face_pump())
 * @f:		the face
 *
 * Whatever the links still hold: tcp_send() never writes over bytes a
 * queued segment carries (the borrow rule, tcp_pool.c).
 */
void face_tcp_pump(struct face *f)
{
	while (f->pending) {
		struct face_pair *pr = f->pending;

		f->pending = pr->pend_next;
		pr->pending = false;
		face_pair_pump(pr);
	}
}

/* The container's SYN (outbound): connect the outer half to where it goes. */
static int face_tcp_inner_syn(struct tcp_listener *l, void *user, struct tcp_conn *c,
			      const struct tcp_seg_in *syn)
{
	struct face *f = user;
	struct tcp_endpoint in_local, in_remote, local, remote;
	struct tcp_conn_opts oo, io;
	const struct policy_rule *by;
	struct net_addr dst, ca;
	bool dns;
	struct face_pair *pr;
	int ret;

	(void)l;
	tcp_conn_endpoints(c, &in_local, &in_remote);
	dst = in_local.addr;
	/* with name rules, DNS is read message by message; else the rules decide */
	dns = in_local.port == 53 && policy_has_names(f->st->policy);
	by = NULL;
	if (dns ? policy_resolver_refuses(f->st->policy, &dst, IPPROTO_TCP) :
		  policy_decide(f->st->policy, POLICY_EGRESS, &dst, IPPROTO_TCP, in_local.port, &by)) {
		face_drop(f, FACE_DROP_POLICY);
		face_log_refused(f, IPPROTO_TCP, false, &in_remote.addr, in_remote.port, &dst, in_local.port, by, NULL,
				 0);
		face_icmp_unreach_for(f, -EACCES, dst.family, &in_remote, &in_local, syn->seq, true);
		return -EACCES;
	}
	if (!route_lookup(f->st, dst.family, &dst.a)) {
		/* as the container's kernel would say without a route */
		face_drop(f, FACE_DROP_NO_ROUTE);
		face_icmp_unreach_for(f, -ENETUNREACH, dst.family, &in_remote, &in_local, syn->seq, true);
		return -ENETUNREACH;
	}
	pr = face_pair_new(f, true);
	if (!pr) {
		face_drop(f, FACE_DROP_NO_MEMORY);
		return -ENOMEM;
	}
	face_count(f, FACE_CTR_TCP_OUTBOUND);
	pr->log = face_log_begin(f, IPPROTO_TCP, false, &in_remote.addr, in_remote.port, &dst, in_local.port, by);
	pr->read_name = by && by->is_name;
	pr->dns = dns;
	pr->inner = c;
	pr->in_ep[0] = in_local;
	pr->in_ep[1] = in_remote;
	pr->syn_seq = syn->seq;
	tcp_conn_set_user(c, face_pair_inner_event, pr);
	ca = in_remote.addr;
	tcp_glue_conn_opts_link(face_tun_for(f, &ca), dst.family, &io);
	tcp_conn_set_path(c, &io);
	/* the container's address and, where free, its port */
	local = in_remote;
	remote = in_local;
	tcp_glue_conn_opts(f->st, dst.family, &dst, &oo);
	/* the container's program asked for ECN: so does its connection on the network (unless off) */
	if ((syn->flags & (TCP_ECE | TCP_CWR)) == (TCP_ECE | TCP_CWR) && oo.ecn == TCP_ECN_ACCEPT)
		oo.ecn = TCP_ECN_ON;
	ret = tcp_connect(tcp_glue_stack(f->st), &local, &remote, &oo, face_pair_outer_event, pr,
			  face_now_us(f), &pr->outer);
	if (ret == -EADDRINUSE) {
		local.port = 0;
		ret = tcp_connect(tcp_glue_stack(f->st), &local, &remote, &oo, face_pair_outer_event, pr,
				  face_now_us(f), &pr->outer);
	}
	if (ret < 0) {
		/* out of connections: drop the SYN, the container retries */
		tcp_conn_set_user(c, face_orphan_event, NULL);
		pr->inner = NULL;
		pr->how = FLOWLOG_END_LIMIT;
		face_pair_kill(pr, false);
		face_drop(f, FACE_DROP_FLOW_LIMIT);
		return ret;
	}
	tcp_conn_endpoints(pr->outer, &pr->out_ep[0], &pr->out_ep[1]);
	return 0;
}

/* A SYN from the network to the container (inbound): connect the inner half. */
static int face_tcp_outer_syn(struct tcp_listener *l, void *user, struct tcp_conn *c,
			      const struct tcp_seg_in *syn)
{
	struct face *f = user;
	struct tcp_endpoint out_local, out_remote, local, remote;
	struct tcp_conn_opts io, oo;
	const struct policy_rule *by;
	struct net_addr ca, ra;
	struct face_pair *pr;
	struct link *tun;
	int ret;

	(void)l;
	tcp_conn_endpoints(c, &out_local, &out_remote);
	ca = out_local.addr;
	ra = out_remote.addr;
	tun = face_tun_for(f, &ca);
	if (!tun) {
		/* a link without a face: nothing listens, as before */
		tcp_conn_refuse(c, true, face_now_us(f));
		return 0;
	}
	if (policy_decide(f->st->policy, POLICY_INGRESS, &ra, IPPROTO_TCP, out_local.port, &by)) {
		face_drop(f, FACE_DROP_POLICY);
		face_log_refused(f, IPPROTO_TCP, true, &ra, out_remote.port, &ca, out_local.port, by, NULL, 0);
		face_icmp_unreach_for(f, -EACCES, ra.family, &out_remote, &out_local, syn->seq, false);
		return -EACCES;
	}
	pr = face_pair_new(f, false);
	if (!pr) {
		face_drop(f, FACE_DROP_NO_MEMORY);
		return -ENOMEM;
	}
	face_count(f, FACE_CTR_TCP_INBOUND);
	pr->log = face_log_begin(f, IPPROTO_TCP, true, &ra, out_remote.port, &ca, out_local.port, by);
	pr->outer = c;
	pr->out_ep[0] = out_local;
	pr->out_ep[1] = out_remote;
	pr->syn_seq = syn->seq;
	tcp_conn_set_user(c, face_pair_outer_event, pr);
	tcp_glue_conn_opts(f->st, ra.family, &ra, &oo);
	tcp_conn_set_path(c, &oo);
	/* from the client's own address and port */
	local = out_remote;
	remote = out_local;
	tcp_glue_conn_opts_link(tun, ca.family, &io);
	/* the client asked for ECN: so does the connection to the container's kernel */
	if ((syn->flags & (TCP_ECE | TCP_CWR)) == (TCP_ECE | TCP_CWR) && oo.ecn != TCP_ECN_OFF)
		io.ecn = TCP_ECN_ON;
	ret = tcp_connect(tcp_glue_engine(f->tcp), &local, &remote, &io, face_pair_inner_event, pr,
			  face_now_us(f), &pr->inner);
	if (ret < 0) {
		tcp_conn_set_user(c, face_orphan_event, NULL);
		pr->outer = NULL;
		pr->how = FLOWLOG_END_LIMIT;
		face_pair_kill(pr, false);
		face_drop(f, FACE_DROP_FLOW_LIMIT);
		return ret;
	}
	tcp_conn_endpoints(pr->inner, &pr->in_ep[0], &pr->in_ep[1]);
	return 0;
}

/**
 * face_tcp_init() - the two catch-all listeners
 * @f:	the face, its engine made
 *
 * Return: 0 or negative errno.
 */
int face_tcp_init(struct face *f)
{
	struct tcp_conn_opts o;
	int ret;

	tcp_glue_conn_opts_link(NULL, AF_INET6, &o);
	ret = tcp_listen_any(tcp_glue_engine(f->tcp), &o, face_tcp_inner_syn, face_orphan_event, f,
			     &f->ls_inner);
	if (ret < 0)
		return ret;
	tcp_glue_conn_opts(f->st, AF_INET6, NULL, &o);
	return tcp_listen_any(tcp_glue_stack(f->st), &o, face_tcp_outer_syn, face_orphan_event, f,
			      &f->ls_outer);
}

/* One pair a dead datapath left: both of its peers are asked to reset. */
static void face_tcp_orphan(void *ctx, const struct ledger_pair *lp)
{
	struct face *f = ctx;
	struct tcp_endpoint container = { .addr.family = lp->family, .port = lp->container_port };
	struct tcp_endpoint outer = { .addr.family = lp->family, .port = lp->outer_port };
	struct tcp_endpoint remote = { .addr.family = lp->family, .port = lp->remote_port };
	uint64_t now = face_now_us(f);

	memcpy(container.addr.a.bytes, lp->container, net_addr_len(lp->family));
	memcpy(remote.addr.a.bytes, lp->remote, net_addr_len(lp->family));
	outer.addr = container.addr;
	/* a slot is untrusted: only the container's own addresses, no port 0 */
	if (!container.port || !outer.port || !remote.port || !face_is_container(f, &container.addr) ||
	    face_is_container(f, &remote.addr)) {
		face_count(f, FACE_CTR_TCP_ORPHANS_BAD);
		return;
	}
	face_count(f, FACE_CTR_TCP_ORPHANS);
	tcp_reset_probe(tcp_glue_engine(f->tcp), &remote, &container, now);
	tcp_reset_probe(tcp_glue_stack(f->st), &outer, &remote, now);
}

/**
 * face_tcp_reset_orphans() - reset the connections a dead datapath left
 * @f:	the face, started, before its first pair
 *
 * The container's sockets and the remote ends would otherwise wait for
 * data that never comes, until their own timeouts. Neither side's sequence
 * numbers are known here: tcp_reset_probe() makes each peer reveal them,
 * and the engine's answer to that is the RST (tcp_conn.c).
 *
 * Return: the number of pairs found.
 */
unsigned int face_tcp_reset_orphans(struct face *f)
{
	if (!f || !f->st->ledger)
		return 0;
	return ledger_pairs_take(f->st->ledger, face_tcp_orphan, f);
}

/**
 * face_tcp_stop() - a datapath that stops on request resets every pair
 * itself (it knows their sequence numbers), and leaves their ledger slots
 * to its successor all the same
 * @f:	the face, or NULL
 *
 * The caller flushes the links afterwards, so that the RSTs leave.
 */
void face_tcp_stop(struct face *f)
{
	if (!f)
		return;
	while (f->pairs) {
		f->pairs->ledger_slot = -1;
		f->pairs->how = FLOWLOG_END_STOP;
		face_pair_kill(f->pairs, false);
	}
}

/**
 * face_tcp_fini() - reset every pair, close the listeners
 * @f:	the face
 */
void face_tcp_fini(struct face *f)
{
	while (f->pairs) {
		f->pairs->how = FLOWLOG_END_STOP;
		face_pair_kill(f->pairs, false);
	}
	f->pending = NULL;
	if (f->ls_inner)
		tcp_listener_close(f->ls_inner);
	if (f->ls_outer)
		tcp_listener_close(f->ls_outer);
	f->ls_inner = f->ls_outer = NULL;
}

/**
 * face_tcp_print() - the "pairs" table: each connection, both halves
 * @f:	the face
 * @o:	printer
 */
void face_tcp_print(struct face *f, struct out *o)
{
	char a[INET6_ADDRSTRLEN + 16], b[INET6_ADDRSTRLEN + 16];
	struct face_pair *pr;

	out_u64(o, "tcp_pairs", f->n_pairs);
	out_arr_begin(o, "pairs");
	for (pr = f->pairs; pr; pr = pr->next) {
		struct tcp_conn_info ii, oi;

		out_obj_begin(o, NULL);
		out_str(o, "direction", pr->outbound ? "outbound" : "inbound");
		out_str(o, "container", tcp_glue_endpoint_str(&pr->in_ep[1], a, sizeof(a)));
		out_str(o, "remote", tcp_glue_endpoint_str(&pr->in_ep[0], b, sizeof(b)));
		out_str(o, "outer_local", tcp_glue_endpoint_str(&pr->out_ep[0], a, sizeof(a)));
		if (pr->inner) {
			tcp_conn_info(pr->inner, &ii);
			out_str(o, "inner_state", tcp_state_name(ii.state));
		} else {
			out_str(o, "inner_state", "-");
		}
		if (pr->outer) {
			tcp_conn_info(pr->outer, &oi);
			out_str(o, "outer_state", tcp_state_name(oi.state));
		} else {
			out_str(o, "outer_state", "-");
		}
		out_u64(o, "to_outer", pr->to_outer);
		out_u64(o, "to_inner", pr->to_inner);
		out_obj_end(o);
	}
	out_arr_end(o);
}
