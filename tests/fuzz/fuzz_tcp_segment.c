// SPDX-License-Identifier: MIT
/*
 * fuzz_tcp_segment.c - libFuzzer target for the TCP engine (datapath/tcp/)
 *
 * Theory of operation
 *
 * The target plays the peer and the service of one connection, as
 * tests/unit/test_datapath_tcp.c does, on a virtual clock. The stack is "us"
 * at 10.0.0.1:80 (listening) or :5555 (connecting); the peer is
 * 10.0.0.2:40000. Our ISS is fixed (cfg.isn_fixed), so every run is
 * deterministic.
 *
 * Input layout:
 *   byte 0     scenario: low 4 bits the state the connection is driven into
 *              with well-formed segments (enum fz_scene), bit 4 the peer
 *              offers no options, bit 5 we queue 3000 bytes first, bit 6 the
 *              service orphans the connection (tcp_close) where it can, bit
 *              7 our side runs BBR and both sides negotiate ECN (CUBIC and
 *              no ECN otherwise)
 *   then       records of FZ_REC bytes, each one action (struct fz_rec): a
 *              segment from the peer whose seq/ack are offsets from what the
 *              peer would send next and from what we sent last, with a
 *              window, options (built from bits, or raw bytes through
 *              tcp_opts_parse()) and a payload length, and an IP ECN field
 *              (a CE mark); or a clock step and tcp_timers_run(); or a
 *              service call (send, recv, shutdown, close, abort, a second
 *              connect); or a PMTU update; or an ACK of a misbehaving peer
 *              (fz_bad_ack(): a SACK block it reneges on, a D-SACK of data
 *              never resent, SACKs of all that is out, a window that
 *              shrinks, ECE).
 *
 * Invariants checked with abort(), beyond "no crash, no leak, no sanitizer
 * report":
 *  - every emitted segment has our addresses, iovecs that add up to its
 *    length, a length within the connection's limit, no SYN with RST, and
 *    payload bytes equal to what the service wrote at those sequence
 *    numbers (bytes are a function of their sequence number);
 *  - every byte tcp_recv() returns is the peer's byte for that sequence
 *    number, in order (reassembly and SACK never reorder or invent data);
 *  - tcp_conn_info() of every connection: state in range, unacked <= buffer
 *    used + 2 (SYN, FIN) <= capacity + 2, receive buffer used <= capacity;
 *  - no event after TCP_EV_RESET or TCP_EV_CLOSED on the same connection;
 *  - tcp_next_deadline() is never in the past after tcp_timers_run().
 * At the end the connection is closed and the stack freed (LSan catches a
 * leak). FUZZ_TCP_TRACE=1 in the environment prints every segment in and
 * out, to read a reproducer.
 *
 * Seeds: tests/fuzz/corpus/tcp_segment/, one per scenario and a few
 * sequences (written by hand, see docs/fuzzing.md).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/tcp/tcp.h"

#define FZ_OUR_ISS	5000u
#define FZ_PEER_ISS	1000u
#define FZ_SEC		1000000ULL
#define FZ_MSS		1460u
#define FZ_REC		12
#define FZ_MAX_RECS	400
#define FZ_BUF		70000

enum fz_scene {
	FZ_LISTEN,		/* a listener only */
	FZ_SYN_SENT,
	FZ_SYN_RECEIVED,
	FZ_ESTABLISHED,		/* passive open */
	FZ_ESTABLISHED_ACTIVE,
	FZ_FIN_WAIT_1,
	FZ_FIN_WAIT_2,
	FZ_CLOSE_WAIT,
	FZ_CLOSING,
	FZ_LAST_ACK,
	FZ_TIME_WAIT,
	FZ_SCENE_MAX
};

static struct fz {
	struct tcp_stack *s;
	struct tcp_listener *lis;
	struct tcp_conn *conn;		/* owned by us, the service */
	bool conn_dead;			/* RESET or CLOSED seen */
	bool orphan;
	bool peer_opts;
	bool bbr_ecn;			/* BBR on our side, ECN negotiated */
	uint8_t in_ecn;			/* the IP ECN field of the next segment in */
	uint64_t now;
	uint32_t peer_nxt;		/* the peer's next sequence number */
	uint32_t peer_tsval;
	uint32_t our_nxt;		/* highest seq + len we emitted */
	uint32_t our_tsval;
	uint32_t sent;			/* bytes the service gave tcp_send() */
	uint32_t iss;			/* our ISS in the last SYN we emitted */
	uint32_t data_iss;		/* the ISS of F.conn */
	uint32_t irs_next;		/* ack of the last SYN-ACK we emitted */
	bool in_syn;			/* the segment being input is a SYN ... */
	uint32_t in_seq;		/* ... with this seq */
	uint32_t rd_seq;		/* next peer byte tcp_recv() must return */
	uint16_t local_port;
	unsigned int emitted;
	struct tcp_endpoint local, remote;
} F;

static uint8_t fz_payload[FZ_BUF];
static bool fz_trace;		/* FUZZ_TCP_TRACE=1: print every segment (reproducing) */
static uint8_t fz_rdbuf[FZ_BUF];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_tcp_segment: %s\n", what);
	abort();
}

/* Every byte of both streams is a function of its sequence number. */
static uint8_t fz_byte(uint32_t seq, bool ours)
{
	return (uint8_t)(seq * 131u + (seq >> 9) + (ours ? 0x5a : 0));
}

static struct tcp_endpoint fz_ep(uint8_t last, uint16_t port)
{
	struct tcp_endpoint e;

	memset(&e, 0, sizeof(e));
	e.addr.family = AF_INET;
	e.addr.a.bytes[0] = 10;
	e.addr.a.bytes[3] = last;
	e.port = port;
	return e;
}

/* FUZZ_TCP_TRACE=1: the engine's own samples too (tcp_trace.c) */
static void fz_sample(void *ctx, const struct tcp_trace_sample *t)
{
	(void)ctx;
	fprintf(stderr, "  [%s %s] una %u nxt %u cwnd %u ssth %u pipe %u sacked %u lost %u rtx %llu %s\n",
		tcp_trace_event_name(t->event), tcp_cong_state_name(t->cong_state), t->snd_una, t->snd_nxt, t->cwnd,
		t->ssthresh, t->pipe, t->sacked, t->lost, (unsigned long long)t->retrans, t->cc_mode ? t->cc_mode : "");
}

static int fz_emit(void *ctx, const struct tcp_seg_out *seg)
{
	size_t total = 0, off = 0;
	uint32_t dseq;
	int i;

	(void)ctx;
	F.emitted++;
	if (fz_trace)
		fprintf(stderr, "  out %u->%u flags %02x seq %u ack %u len %zu wnd %u\n", seg->sport, seg->dport,
			seg->flags, seg->seq, seg->ack, seg->len, seg->wnd);
	if (seg->src.family != AF_INET || seg->src.a.bytes[3] != 1 || seg->dst.a.bytes[3] != 2 ||
	    seg->dport != 40000)
		fz_fail("segment to or from an unknown address");
	if ((seg->flags & TCP_SYN) && (seg->flags & TCP_RST))
		fz_fail("segment with SYN and RST");
	if (seg->iovcnt < 0 || seg->iovcnt > TCP_SEG_OUT_IOV_MAX)
		fz_fail("bad iovcnt");
	for (i = 0; i < seg->iovcnt; i++)
		total += seg->iov[i].iov_len;
	if (total != seg->len)
		fz_fail("iovecs do not add up to the segment length");
	if (seg->len > (seg->gso_size ? 65535u : FZ_MSS))
		fz_fail("segment longer than the MSS (or 64 KiB with GSO)");
	if (seg->gso_size > FZ_MSS)
		fz_fail("gso_size above the MSS");
	if ((seg->flags & TCP_RST) && seg->len)
		fz_fail("RST with payload");
	if (seg->flags & TCP_RST)
		return 0;
	/* Our bytes at their sequence numbers (data follows a SYN by one). */
	dseq = seg->seq + ((seg->flags & TCP_SYN) ? 1 : 0);
	if (seg->len) {
		for (i = 0; i < seg->iovcnt; i++) {
			const uint8_t *b = seg->iov[i].iov_base;

			for (size_t k = 0; k < seg->iov[i].iov_len; k++, off++)
				if (b[k] != fz_byte(dseq + (uint32_t)off, true))
					fz_fail("emitted payload differs from what the service wrote");
		}
	}
	if (seg->sport == F.local_port) {
		uint32_t end = seg->seq + (uint32_t)seg->len + ((seg->flags & TCP_SYN) ? 1 : 0) +
			       ((seg->flags & TCP_FIN) ? 1 : 0);

		if (seq_gt(end, F.our_nxt))
			F.our_nxt = end;
		if (seg->opts.has_ts)
			F.our_tsval = seg->opts.ts_val;
		if (seg->flags & TCP_SYN)
			F.iss = seg->seq;
		if ((seg->flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK))
			F.irs_next = seg->ack;
	}
	return 0;
}

static void fz_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	(void)user;
	(void)err;
	if ((unsigned int)ev >= TCP_EV_MAX)
		fz_fail("unknown event");
	if (c == F.conn) {
		if (F.conn_dead)
			fz_fail("event after RESET or CLOSED");
		if (ev == TCP_EV_RESET || ev == TCP_EV_CLOSED)
			F.conn_dead = true;
		/* The peer's data starts after the SYN this connection took. */
		if (ev == TCP_EV_CONNECTED)
			F.rd_seq = F.in_syn ? F.in_seq + 1 : F.irs_next;
	}
}

static int fz_accept(struct tcp_listener *l, void *user, struct tcp_conn *c)
{
	(void)l;
	(void)user;
	if (F.conn) {
		/* A second connection from the fuzzer: let it go at once. */
		tcp_close(c, F.now);
		return 0;
	}
	F.conn = c;
	F.conn_dead = false;
	F.data_iss = F.iss;
	F.rd_seq = F.irs_next;
	F.sent = 0;
	return 0;
}

static int fz_check_conn(struct tcp_conn *c, void *arg)
{
	struct tcp_conn_info ci;

	(void)arg;
	tcp_conn_info(c, &ci);
	if ((unsigned int)ci.state >= TCPS_STATE_MAX)
		fz_fail("state out of range");
	/* unacked counts sequence space: a SYN and a FIN take one each. */
	if (ci.unacked_bytes > ci.sndbuf_used + 2 || ci.sndbuf_used > ci.sndbuf_cap)
		fz_fail("send buffer accounting");
	if (ci.rcvbuf_used > ci.rcvbuf_cap)
		fz_fail("receive buffer accounting");
	return 0;
}

static void fz_check(void)
{
	struct tcp_stack_stats st;
	uint64_t d;

	tcp_foreach_conn(F.s, fz_check_conn, NULL);
	tcp_stack_stats(F.s, &st);
	if (st.timewait > 16 || st.conns > 64 + 16)
		fz_fail("connection or TIME_WAIT count above its cap");
	d = tcp_next_deadline(F.s);
	(void)d;
	tcp_stack_tx_done(F.s);
}

/* One segment from the peer. */
static void fz_peer(uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd, const struct tcp_opts *o,
		    size_t len)
{
	struct tcp_seg_in in;

	memset(&in, 0, sizeof(in));
	in.src = F.remote.addr;
	in.dst = F.local.addr;
	in.sport = F.remote.port;
	in.dport = F.local.port;
	in.seq = seq;
	in.ack = ack;
	in.flags = flags;
	in.wnd = wnd;
	if (o)
		in.opts = *o;
	if (len > sizeof(fz_payload))
		len = sizeof(fz_payload);
	/* Data follows a SYN by one sequence number. */
	for (size_t i = 0; i < len; i++)
		fz_payload[i] = fz_byte(seq + ((flags & TCP_SYN) ? 1 : 0) + (uint32_t)i, false);
	in.data = len ? fz_payload : NULL;
	in.len = len;
	in.ecn = F.in_ecn;
	if (fz_trace)
		fprintf(stderr, "in  flags %02x seq %u ack %u len %zu wnd %u (peer_nxt %u our_nxt %u)\n", flags,
			seq, ack, len, wnd, F.peer_nxt, F.our_nxt);
	F.in_syn = flags & TCP_SYN;
	F.in_seq = seq;
	tcp_input(F.s, &in, F.now);
	F.in_syn = false;
	if (seq_gt(seq + (uint32_t)len + ((flags & TCP_SYN) ? 1 : 0) + ((flags & TCP_FIN) ? 1 : 0),
		   F.peer_nxt) && seq_geq(seq, F.peer_nxt - 65536) && !(flags & TCP_RST))
		F.peer_nxt = seq + (uint32_t)len + ((flags & TCP_SYN) ? 1 : 0) + ((flags & TCP_FIN) ? 1 : 0);
	fz_check();
}

static void fz_opts(struct tcp_opts *o, bool syn)
{
	memset(o, 0, sizeof(*o));
	if (!F.peer_opts)
		return;
	o->has_ts = true;
	o->ts_val = ++F.peer_tsval;
	o->ts_ecr = F.our_tsval;
	if (syn) {
		o->has_mss = true;
		o->mss = FZ_MSS;
		o->has_wscale = true;
		o->wscale = 7;
		o->sack_perm = true;
	}
}

/* A well-formed in-order segment from the peer. */
static void fz_peer_ok(uint8_t flags, size_t len)
{
	struct tcp_opts o;

	fz_opts(&o, flags & TCP_SYN);
	fz_peer(flags, F.peer_nxt, F.our_nxt, F.peer_opts ? 1024 : 65535, &o, len);
}

static void fz_send(size_t len)
{
	uint8_t buf[4096];
	ssize_t n;

	if (!F.conn || len > sizeof(buf))
		return;
	for (size_t i = 0; i < len; i++)
		buf[i] = fz_byte(F.data_iss + 1 + F.sent + (uint32_t)i, true);
	n = tcp_send(F.conn, buf, len, F.now);
	if (n > (ssize_t)len)
		fz_fail("tcp_send() took more than given");
	if (n > 0)
		F.sent += (uint32_t)n;
}

static void fz_recv(size_t len)
{
	ssize_t n;

	if (!F.conn)
		return;
	if (len > sizeof(fz_rdbuf))
		len = sizeof(fz_rdbuf);
	n = tcp_recv(F.conn, fz_rdbuf, len, F.now);
	if (n > (ssize_t)len)
		fz_fail("tcp_recv() returned more than asked");
	for (ssize_t i = 0; i < n; i++)
		if (fz_rdbuf[i] != fz_byte(F.rd_seq + (uint32_t)i, false))
			fz_fail("tcp_recv() returned bytes the peer did not send there");
	if (fz_trace)
		fprintf(stderr, "recv %zd at %u\n", n, F.rd_seq);
	if (n > 0)
		F.rd_seq += (uint32_t)n;
}

static void fz_close(void)
{
	if (!F.conn)
		return;
	tcp_close(F.conn, F.now);
	F.conn = NULL;
}

static bool fz_state_is(enum tcp_state want)
{
	return F.conn && tcp_conn_state(F.conn) == want;
}

/* Drive the connection into @scene with well-formed segments. */
static void fz_scene(enum fz_scene scene, bool queue_data)
{
	struct tcp_listener *l;

	struct tcp_conn_opts o;

	memset(&o, 0, sizeof(o));
	o.cc = F.bbr_ecn ? TCP_CC_BBR : TCP_CC_CUBIC;
	o.ecn = F.bbr_ecn ? TCP_ECN_ON : TCP_ECN_ACCEPT;
	F.local = fz_ep(1, 80);
	F.remote = fz_ep(2, 40000);
	F.local_port = 80;
	if (tcp_listen(F.s, &F.local, 16, &o, fz_accept, fz_event, NULL, &l))
		fz_fail("tcp_listen");
	F.lis = l;
	if (scene == FZ_LISTEN)
		return;
	if (scene == FZ_SYN_SENT || scene == FZ_ESTABLISHED_ACTIVE) {
		F.local = fz_ep(1, 5555);
		F.local_port = 5555;
		if (tcp_connect(F.s, &F.local, &F.remote, &o, fz_event, NULL, F.now, &F.conn))
			fz_fail("tcp_connect");
		F.data_iss = F.iss;
		fz_check();
		if (scene == FZ_SYN_SENT)
			return;
		fz_peer_ok(TCP_SYN | TCP_ACK | (F.bbr_ecn ? TCP_ECE : 0), 0);
		F.rd_seq = F.peer_nxt;
		if (!fz_state_is(TCPS_ESTABLISHED))
			fz_fail("active open did not reach ESTABLISHED");
		return;
	}
	F.our_nxt = FZ_OUR_ISS;
	fz_peer_ok(TCP_SYN | (F.bbr_ecn ? TCP_ECE | TCP_CWR : 0), 0);
	F.rd_seq = F.peer_nxt;
	if (scene == FZ_SYN_RECEIVED)
		return;
	fz_peer_ok(TCP_ACK, 0);
	if (!fz_state_is(TCPS_ESTABLISHED))
		fz_fail("passive open did not reach ESTABLISHED");
	if (queue_data) {
		fz_send(3000);
		fz_peer_ok(TCP_ACK, 0);
	}
	switch (scene) {
	case FZ_FIN_WAIT_1:
		tcp_shutdown_write(F.conn, F.now);
		fz_check();
		if (!fz_state_is(TCPS_FIN_WAIT_1))
			fz_fail("shutdown did not reach FIN_WAIT_1");
		break;
	case FZ_FIN_WAIT_2:
	case FZ_TIME_WAIT:
		tcp_shutdown_write(F.conn, F.now);
		fz_peer_ok(TCP_ACK, 0);
		if (!fz_state_is(TCPS_FIN_WAIT_2))
			fz_fail("ACK of our FIN did not reach FIN_WAIT_2");
		if (scene == FZ_TIME_WAIT) {
			fz_peer_ok(TCP_FIN | TCP_ACK, 0);
			if (!fz_state_is(TCPS_TIME_WAIT))
				fz_fail("peer FIN did not reach TIME_WAIT");
		}
		break;
	case FZ_CLOSE_WAIT:
	case FZ_LAST_ACK:
		fz_peer_ok(TCP_FIN | TCP_ACK, 0);
		if (!fz_state_is(TCPS_CLOSE_WAIT))
			fz_fail("peer FIN did not reach CLOSE_WAIT");
		if (scene == FZ_LAST_ACK) {
			tcp_shutdown_write(F.conn, F.now);
			fz_check();
			if (!fz_state_is(TCPS_LAST_ACK))
				fz_fail("shutdown did not reach LAST_ACK");
		}
		break;
	case FZ_CLOSING: {
		struct tcp_opts o;
		uint32_t una = F.our_nxt;

		tcp_shutdown_write(F.conn, F.now);
		/* The peer's FIN acknowledges everything but our FIN. */
		fz_opts(&o, false);
		fz_peer(TCP_FIN | TCP_ACK, F.peer_nxt, una, F.peer_opts ? 1024 : 65535, &o, 0);
		if (!fz_state_is(TCPS_CLOSING))
			fz_fail("crossing FINs did not reach CLOSING");
		break;
	}
	default:
		break;
	}
}

/*
 * An ACK of a misbehaving peer at @ack, with ECE when @shape has 0x80 and a
 * window of @wnd: SACK blocks by @shape & 3: 0 a block that starts at the
 * ACK (it threw away what it had SACKed: reneging), 1 a D-SACK of @n bytes
 * below the ACK (as if data arrived twice that we never resent), 2 one
 * block over everything above the ACK, 3 none.
 */
static void fz_bad_ack(uint8_t shape, uint32_t ack, uint16_t wnd, uint32_t n)
{
	struct tcp_opts o;

	fz_opts(&o, false);
	switch (shape & 3) {
	case 0:
		o.nsack = 1;
		o.sack[0].start = ack;
		o.sack[0].end = ack + n;
		break;
	case 1:
		o.nsack = 1;
		o.sack[0].start = ack - n;
		o.sack[0].end = ack;
		break;
	case 2:
		o.nsack = 1;
		o.sack[0].start = ack + 1;
		o.sack[0].end = F.our_nxt;
		break;
	default:
		break;
	}
	fz_peer(TCP_ACK | ((shape & 0x80) ? TCP_ECE : 0), F.peer_nxt, ack, wnd, &o, 0);
}

/* One action record. */
static void fz_action(const uint8_t *r, const uint8_t **raw, size_t *raw_left)
{
	uint8_t kind = r[0] & 7;
	int8_t seq_off = (int8_t)r[2], ack_off = (int8_t)r[3];
	uint32_t seq_scale = (r[0] & 0x08) ? 1024 : 1, ack_scale = (r[0] & 0x10) ? 1024 : 1;
	uint16_t wnd = (uint16_t)(r[4] | r[5] << 8);
	uint8_t optbits = r[6];
	size_t len = (size_t)(r[7] | r[8] << 8);
	uint8_t dt = r[9];
	struct tcp_opts o;

	F.now += (uint64_t)dt * ((r[0] & 0x20) ? FZ_SEC : 1000);
	F.in_ecn = r[0] >> 6;	/* the IP ECN field of a segment in: CE when 3 */
	switch (kind) {
	case 0:
	case 1:
	case 2:		/* a segment from the peer */
		memset(&o, 0, sizeof(o));
		if (optbits & 0x80) {
			/* Raw option bytes from the tail of the input. */
			size_t n = optbits & 0x3f;

			if (n > *raw_left)
				n = *raw_left;
			if (n > TCP_OPTS_MAX_BYTES)
				n = TCP_OPTS_MAX_BYTES;
			tcp_opts_parse(*raw, n, &o);
			*raw += n;
			*raw_left -= n;
		} else {
			if (optbits & 1) {
				o.has_ts = true;
				o.ts_val = F.peer_tsval + (uint32_t)(int8_t)r[10];
				if (!(optbits & 0x40))
					F.peer_tsval = o.ts_val;
				o.ts_ecr = F.our_tsval;
			}
			if (optbits & 2) {
				o.has_mss = true;
				o.mss = (uint16_t)(r[10] << 4);
			}
			if (optbits & 4) {
				o.has_wscale = true;
				o.wscale = r[11] & 15;
			}
			o.sack_perm = optbits & 8;
			o.nsack = (optbits >> 4) & 3;
			for (unsigned int i = 0; i < o.nsack; i++) {
				o.sack[i].start = F.our_nxt - (uint32_t)(r[10] + i * 1460u) * (i + 1);
				o.sack[i].end = o.sack[i].start + (uint32_t)r[11] * 16u;
			}
		}
		if (kind == 2)
			len &= 0x7ff;
		else if (len > 9000)
			len %= 9000;
		fz_peer(r[1], F.peer_nxt + (uint32_t)seq_off * seq_scale,
			F.our_nxt + (uint32_t)ack_off * ack_scale, wnd, &o, len);
		break;
	case 3:		/* time passes */
		tcp_timers_run(F.s, F.now);
		fz_check();
		if (tcp_next_deadline(F.s) && tcp_next_deadline(F.s) < F.now)
			fz_fail("next deadline in the past after tcp_timers_run()");
		break;
	case 4:		/* the service */
		switch (r[1] & 7) {
		case 0:
		case 1:
			fz_send(len % 4096);
			break;
		case 2:
		case 3:
			fz_recv(len);
			break;
		case 4:
			if (F.conn)
				tcp_shutdown_write(F.conn, F.now);
			break;
		case 5:
			if (F.orphan)
				fz_close();
			break;
		case 6:
			if (F.conn && (r[1] & 0x80)) {
				tcp_abort(F.conn, F.now);
				F.conn = NULL;
			}
			break;
		case 7:
			if (F.conn) {
				struct iovec iov[2];
				int n = tcp_peek(F.conn, iov);

				if (fz_trace)
					fprintf(stderr, "peek %d at %u\n", n, F.rd_seq);
				if (n > 0 && iov[0].iov_len) {
					if (*(const uint8_t *)iov[0].iov_base != fz_byte(F.rd_seq, false))
						fz_fail("tcp_peek() shows a byte the peer did not send there");
					if (tcp_consume(F.conn, 1, F.now) == 0)
						F.rd_seq++;
				}
			}
			break;
		}
		fz_check();
		break;
	case 5:		/* a path MTU update */
		tcp_pmtu_update(F.s, &F.local.addr, &F.remote.addr, (uint32_t)(wnd % 10000), F.now);
		fz_check();
		break;
	case 6:		/* a misbehaving peer's ACK */
		fz_bad_ack(r[1], F.our_nxt + (uint32_t)ack_off * ack_scale, wnd, (uint32_t)len + 1);
		break;
	default:	/* a well-formed in-order segment */
		fz_peer_ok((r[1] & (TCP_FIN | TCP_PSH)) | TCP_ACK, len % 2000);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tcp_stack_cfg cfg;
	const uint8_t *raw;
	size_t nrec, raw_left;
	unsigned int scene;

	if (size < 1)
		return 0;
	fz_trace = getenv("FUZZ_TCP_TRACE");
	memset(&F, 0, sizeof(F));
	F.now = 1000 * FZ_SEC;
	F.peer_nxt = FZ_PEER_ISS;
	F.our_nxt = FZ_OUR_ISS;
	F.peer_tsval = 100;
	scene = (data[0] & 15) % FZ_SCENE_MAX;
	F.peer_opts = !(data[0] & 0x10);
	F.orphan = data[0] & 0x40;
	F.bbr_ecn = data[0] & 0x80;

	memset(&cfg, 0, sizeof(cfg));
	cfg.emit = fz_emit;
	memset(cfg.secret, 7, sizeof(cfg.secret));
	cfg.isn_fixed = FZ_OUR_ISS;
	cfg.max_conns = 64;
	cfg.max_timewait = 16;
	F.s = tcp_stack_new(&cfg);
	if (!F.s)
		fz_fail("tcp_stack_new");
	if (fz_trace) {
		struct tcp_trace_filter all = { .any_addr = true };

		tcp_stack_set_trace(F.s, &all, fz_sample, NULL);
	}

	fz_scene(scene, data[0] & 0x20);
	if (F.orphan && scene >= FZ_FIN_WAIT_1)
		fz_close();

	nrec = (size - 1) / FZ_REC;
	if (nrec > FZ_MAX_RECS)
		nrec = FZ_MAX_RECS;
	raw = data + 1 + nrec * FZ_REC;
	raw_left = size - 1 - nrec * FZ_REC;
	for (size_t i = 0; i < nrec; i++)
		fz_action(data + 1 + i * FZ_REC, &raw, &raw_left);

	fz_close();
	if (F.lis)
		tcp_listener_close(F.lis);
	tcp_stack_free(F.s);
	return 0;
}
