/* SPDX-License-Identifier: MIT */
/*
 * tcp.h - the TCP protocol engine of the datapath: its whole public API
 *
 * Theory of operation
 *
 * The engine is a pure protocol machine. It neither parses nor builds IP or
 * Ethernet headers, computes no checksum and never reads a clock:
 *
 *   IP layer --tcp_input(seg, now_us)--> engine --cfg.emit(ctx, seg_out)--> IP layer
 *   event loop --tcp_timers_run(now_us)--> engine; tcp_next_deadline() -> timer wheel
 *   services <--event callback-- engine <--tcp_send/recv/...(conn, now_us)-- services
 *
 * Input is a parsed segment in host order (struct tcp_seg_in; tcp_opts_parse()
 * turns the option bytes of a header into struct tcp_opts). Output is one call
 * of the emit callback per segment (struct tcp_seg_out; tcp_opts_write() turns
 * its options back into bytes). A segment emitted with @gso_size non-zero may
 * carry up to the connection's gso_max_bytes of payload: the link splits it
 * into @gso_size-byte segments (seq advancing, the same options on each, FIN
 * and PSH only on the last) or hands it to the kernel as one GSO frame.
 *
 * The payload iovecs of an emitted segment point into the connection's send
 * buffer (no copy). Until the caller says with tcp_stack_tx_done() that its
 * links flushed every segment emitted so far, that memory and those bytes
 * stay as they were: the engine neither frees nor overwrites them, whatever
 * tcp_send() is asked meanwhile (the borrow rule, tcp_pool.c).
 *
 * The emit callback must not call back into the stack (queue the segment;
 * a loopback delivers it on the next loop turn).
 *
 * Every call takes the time in microseconds, so tests run a virtual clock.
 * Callbacks run synchronously from inside tcp_input(), tcp_timers_run() and
 * the socket calls; a callback may call any tcp_* function on any
 * connection, including tcp_close() on its own.
 *
 * Lifetime: the service owns a struct tcp_conn from tcp_connect() (or from
 * the listener's accept callback) until it calls tcp_close() or tcp_abort();
 * the engine frees it once both the service let go and the protocol finished
 * (CLOSED, or after TIME_WAIT). Not thread-safe: one datapath thread owns a
 * stack.
 */
#ifndef SANDNET_DATAPATH_TCP_H
#define SANDNET_DATAPATH_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "datapath/addr.h"

/* Header flags, host order (the low byte of the header's flags field). */
#define TCP_FIN	0x01
#define TCP_SYN	0x02
#define TCP_RST	0x04
#define TCP_PSH	0x08
#define TCP_ACK	0x10
#define TCP_URG	0x20
#define TCP_ECE	0x40
#define TCP_CWR	0x80

/* The IP header's ECN field (RFC 3168 5), as segments carry it */
#define TCP_ECN_NOT_ECT	0
#define TCP_ECN_ECT1	1
#define TCP_ECN_ECT0	2
#define TCP_ECN_CE	3

#define TCP_SACK_MAX_BLOCKS	4
/* Longest option block a header can carry (60-byte header - 20). */
#define TCP_OPTS_MAX_BYTES	40

/* Option kinds (RFC 9293 3.1, RFC 7323, RFC 2018) and their lengths. */
#define TCP_OPT_EOL		0
#define TCP_OPT_NOP		1
#define TCP_OPT_MSS		2
#define TCP_OPT_WSCALE		3
#define TCP_OPT_SACK_PERM	4
#define TCP_OPT_SACK		5
#define TCP_OPT_TS		8
#define TCP_OPTLEN_MSS		4
#define TCP_OPTLEN_WSCALE	3
#define TCP_OPTLEN_SACK_PERM	2
#define TCP_OPTLEN_SACK_BLOCK	8	/* a SACK option is 2 bytes and 1 to 4 blocks */
#define TCP_OPTLEN_TS		10

/* States are TCPS_* (as in BSD): <netinet/tcp.h> already has TCP_ESTABLISHED &c. */

/* RFC 1982-style comparisons: the only way sequence numbers are compared. */
static inline bool seq_lt(uint32_t a, uint32_t b)  { return (int32_t)(a - b) < 0; }
static inline bool seq_leq(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline bool seq_gt(uint32_t a, uint32_t b)  { return (int32_t)(a - b) > 0; }
static inline bool seq_geq(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }
static inline uint32_t seq_max(uint32_t a, uint32_t b) { return seq_gt(a, b) ? a : b; }
static inline uint32_t seq_min(uint32_t a, uint32_t b) { return seq_lt(a, b) ? a : b; }

/**
 * struct tcp_endpoint - an address and a port (host order)
 */
struct tcp_endpoint {
	struct net_addr addr;
	uint16_t port;
};

/**
 * struct tcp_opts - the TCP options the engine understands, host order
 * @has_mss, @mss:		MSS (RFC 9293 3.7.1), SYN only
 * @has_wscale, @wscale:	window scale shift (RFC 7323 2), SYN only
 * @sack_perm:			SACK permitted (RFC 2018), SYN only
 * @has_ts, @ts_val, @ts_ecr:	timestamps (RFC 7323 3)
 * @nsack, @sack:		SACK blocks [start, end) (RFC 2018 3)
 */
struct tcp_opts {
	bool has_mss;
	bool has_wscale;
	bool sack_perm;
	bool has_ts;
	uint16_t mss;
	uint8_t wscale;
	uint8_t nsack;
	uint32_t ts_val;
	uint32_t ts_ecr;
	struct {
		uint32_t start;
		uint32_t end;
	} sack[TCP_SACK_MAX_BLOCKS];
};

/**
 * struct tcp_seg_in - a received segment, parsed by the IP layer
 * @src, @dst:		addresses (the same family; checked)
 * @sport, @dport:	ports
 * @seq, @ack, @flags, @wnd: header fields (@wnd unscaled, as on the wire)
 * @opts:		parsed options (tcp_opts_parse())
 * @data, @len:		payload (may be a coalesced GSO/GRO segment)
 * @ecn:		the IP header's ECN field (TCP_ECN_*)
 */
struct tcp_seg_in {
	struct net_addr src;
	struct net_addr dst;
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	uint16_t wnd;
	struct tcp_opts opts;
	const uint8_t *data;
	size_t len;
	uint8_t ecn;
};

#define TCP_SEG_OUT_IOV_MAX	2

/**
 * struct tcp_seg_out - a segment to send
 * @src, @dst, @sport, @dport, @seq, @ack, @flags, @wnd: header fields, host
 *		order (@wnd already scaled down)
 * @opts:	options to write (tcp_opts_write())
 * @iov, @iovcnt, @len: payload, pointing into the send buffer
 * @gso_size:	0 when @len fits one segment, else the payload bytes per
 *		on-wire segment the link must split into
 * @ecn:	the ECN field the IP header must carry (TCP_ECN_*)
 */
struct tcp_seg_out {
	struct net_addr src;
	struct net_addr dst;
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	uint16_t wnd;
	struct tcp_opts opts;
	struct iovec iov[TCP_SEG_OUT_IOV_MAX];
	int iovcnt;
	size_t len;
	uint16_t gso_size;
	uint8_t ecn;
};

enum tcp_state {
	TCPS_CLOSED,
	TCPS_LISTEN,
	TCPS_SYN_SENT,
	TCPS_SYN_RECEIVED,
	TCPS_ESTABLISHED,
	TCPS_FIN_WAIT_1,
	TCPS_FIN_WAIT_2,
	TCPS_CLOSE_WAIT,
	TCPS_CLOSING,
	TCPS_LAST_ACK,
	TCPS_TIME_WAIT,
	TCPS_STATE_MAX
};

enum tcp_cc_algo {
	TCP_CC_CUBIC,
	TCP_CC_RENO,
	TCP_CC_BBR,
	TCP_CC_MAX
};

/* ECN (RFC 3168) for a connection */
enum tcp_ecn_mode {
	TCP_ECN_ACCEPT,		/* use it when the peer's SYN asks (default, as Linux's tcp_ecn=2) */
	TCP_ECN_OFF,		/* never */
	TCP_ECN_ON,		/* ask for it on our SYNs too */
	TCP_ECN_MODE_MAX
};

enum tcp_event {
	TCP_EV_CONNECTED,	/* handshake done (active or passive open) */
	TCP_EV_READABLE,	/* new in-order data in the receive buffer */
	TCP_EV_WRITABLE,	/* send buffer space after it was full */
	TCP_EV_PEER_FIN,	/* the peer shut down its direction (EOF) */
	TCP_EV_RESET,		/* connection dead: @err is -ECONNRESET,
				 * -ECONNREFUSED or -ETIMEDOUT */
	TCP_EV_CLOSED,		/* both directions finished gracefully */
	TCP_EV_MAX
};

struct tcp_stack;
struct tcp_conn;
struct tcp_listener;

/* Called for every event of a connection; @user is tcp_conn_set_user()'s. */
typedef void (*tcp_event_fn)(struct tcp_conn *c, void *user, enum tcp_event ev, int err);
/*
 * Takes in-order bytes as they arrive (tcp_conn_set_sink()), so that they
 * are copied once: called from inside tcp_input() with the bytes at rcv_nxt
 * while nothing is unread, it returns how many it took (0 .. @len), and the
 * engine stores the rest in the receive ring and raises TCP_EV_READABLE for
 * it as usual. What it takes counts as read (tcp_consume()). It must not
 * call into @c's own stack.
 */
typedef size_t (*tcp_sink_fn)(struct tcp_conn *c, void *user, const void *data, size_t len);
/*
 * Called when a passive open completed; the new connection starts with the
 * listener's event function and user pointer, change them with
 * tcp_conn_set_user(). Return 0 to keep it, negative to refuse (RST).
 */
typedef int (*tcp_accept_fn)(struct tcp_listener *l, void *user, struct tcp_conn *c);
/*
 * Called for a SYN that a catch-all listener (tcp_listen_any()) takes: @c is
 * a new SYN-RECEIVED connection whose SYN-ACK is not sent yet, and the
 * callee holds it from now on (it gets @c's events: TCP_EV_RESET when the
 * peer gives up, TCP_EV_CONNECTED when the handshake completes after
 * tcp_conn_answer()). It answers later with tcp_conn_answer() or
 * tcp_conn_refuse(). @syn is the SYN (valid during the call). Return 0 to
 * keep @c, negative to drop the SYN silently (the engine frees @c).
 */
typedef int (*tcp_syn_fn)(struct tcp_listener *l, void *user, struct tcp_conn *c,
			  const struct tcp_seg_in *syn);
/*
 * Emits one segment. Return: 0 when nothing points into its payload any more
 * (sent, or copied), TCP_EMIT_LENT when a queued frame still does, until
 * tcp_stack_tx_done() (the borrow rule, tcp_pool.c), negative: the segment
 * is lost (counted; retransmitted later).
 */
typedef int (*tcp_emit_fn)(void *ctx, const struct tcp_seg_out *seg);
#define TCP_EMIT_LENT	1

/**
 * struct tcp_conn_opts - per-connection settings; zero means "default"
 * @mss:		largest on-wire payload (from the route MTU minus IP and
 *			TCP headers), default 1460
 * @gso_max_bytes:	largest payload of one emitted segment (from the link),
 *			default = one MSS (no GSO)
 * @nagle:		enable Nagle's algorithm (off by default)
 * @cc:			congestion control (default CUBIC)
 * @no_sack, @no_ts, @no_wscale: do not offer these options
 * @no_pacing:		send as cwnd allows, not spread at the pacing rate
 *			(BBR paces anyway)
 * @ecn:		enum tcp_ecn_mode
 * @sndbuf_max, @rcvbuf_max: buffer limits, default 4 MiB and 6 MiB
 * @rcvbuf_init:	initial receive buffer, default 128 KiB
 * @keepalive_idle_ms:	0 = no keepalive, else idle time before probing
 * @keepalive_intvl_ms, @keepalive_cnt: probe interval and count (75 s, 9)
 */
struct tcp_conn_opts {
	uint16_t mss;
	uint32_t gso_max_bytes;
	bool nagle;
	bool no_sack;
	bool no_ts;
	bool no_wscale;
	bool no_pacing;
	uint8_t ecn;
	enum tcp_cc_algo cc;
	uint32_t sndbuf_max;
	uint32_t rcvbuf_max;
	uint32_t rcvbuf_init;
	uint32_t keepalive_idle_ms;
	uint32_t keepalive_intvl_ms;
	uint32_t keepalive_cnt;
};

/**
 * struct tcp_stack_cfg - stack creation parameters
 * @emit, @emit_ctx:	output of every segment
 * @secret:		key for ISNs, SYN cookies and the hash table; all
 *			zero = random (tests pass a fixed one)
 * @max_conns:		connection limit, default 65536
 * @max_timewait:	TIME_WAIT connections kept at most, default 4096
 * @challenge_ack_limit: challenge ACKs per second, default 1000
 * @isn_fixed:		tests only: when non-zero every ISN is this value
 * @max_half_open:	SYN-RECEIVED connections of all listeners together,
 *			default 1024; beyond it (or a listener's backlog) SYNs
 *			are answered with SYN cookies
 * @max_buf_mem:	bytes of send and receive rings of all connections,
 *			default 256 MiB; at it rings stop growing and new
 *			connections start with minimum rings (tcp_buf.c)
 */
struct tcp_stack_cfg {
	tcp_emit_fn emit;
	void *emit_ctx;
	uint8_t secret[16];
	uint32_t max_conns;
	uint32_t max_timewait;
	uint32_t challenge_ack_limit;
	uint32_t isn_fixed;
	uint32_t max_half_open;
	uint64_t max_buf_mem;
};

#define TCP_MAX_CONNS_DEFAULT		65536u
#define TCP_MAX_TIMEWAIT_DEFAULT	4096u
#define TCP_MAX_HALF_OPEN_DEFAULT	1024u
#define TCP_MAX_BUF_MEM_DEFAULT		(256ull << 20)
/* Rings a connection gets under memory pressure (either direction). */
#define TCP_BUF_PRESSURE_MIN		16384u

/**
 * struct tcp_conn_stats - a connection's counters: the engine's (struct
 * tcp_conn) and what tcp_conn_info() copies out, one definition for both
 * @bytes_sent:	new bytes sent (sequence space past snd_max)
 * @bytes_acked: bytes the peer acknowledged
 * @bytes_received: in-order bytes received
 * @segs_out, @segs_in: segments sent and received
 * @retrans_segs: segments sent again
 * @fast_recoveries, @sack_recoveries: recoveries entered (SACK-based ones too)
 * @rto_count:	retransmission timeouts
 * @tlp_probes:	tail loss probes sent (RFC 8985 7)
 */
struct tcp_conn_stats {
	uint64_t bytes_sent;
	uint64_t bytes_acked;
	uint64_t bytes_received;
	uint64_t segs_out;
	uint64_t segs_in;
	uint64_t retrans_segs;
	uint64_t fast_recoveries;
	uint64_t sack_recoveries;
	uint64_t rto_count;
	uint64_t tlp_probes;
};

/**
 * struct tcp_conn_info - what `ss -ti` shows about one connection
 */
struct tcp_conn_info {
	enum tcp_state state;
	struct tcp_endpoint local;
	struct tcp_endpoint remote;
	const char *cc;
	uint32_t snd_mss;
	uint32_t rcv_mss;
	uint32_t cwnd;		/* segments */
	uint32_t ssthresh;	/* segments */
	uint32_t srtt_us;
	uint32_t rttvar_us;
	uint32_t rto_us;
	uint32_t snd_wnd;
	uint32_t rcv_wnd;
	uint8_t snd_wscale;
	uint8_t rcv_wscale;
	bool sack;
	bool ts;
	struct tcp_conn_stats stats;
	uint32_t unacked_bytes;
	uint32_t sndbuf_used;
	uint32_t sndbuf_cap;
	uint32_t sndbuf_held;		/* memory the ring holds now: 0 while parked (tcp_pool.c) */
	uint32_t rcvbuf_used;
	uint32_t rcvbuf_cap;
	uint32_t rcvbuf_held;
	uint32_t ooo_bytes;
	uint32_t records_held;		/* memory the per-segment records hold (tcp_rack.c): 0 with nothing in flight */
	/* RACK (RFC 8985) and undo of spurious recoveries */
	uint32_t rack_reo_wnd_us;	/* the latest reordering window */
	uint64_t rack_marked;		/* segments RACK marked lost */
	uint64_t dsacks_rx;		/* D-SACKs received */
	uint64_t undos;			/* spurious recoveries undone */
	uint64_t tlp_recoveries;	/* losses repaired by a tail loss probe alone (RFC 8985 7.4) */
	uint32_t iss;			/* our initial sequence number */
	uint32_t irs;			/* the peer's */
	bool deferred;			/* a catch-all's SYN not answered yet */
	/* the sender's model of the path (tcp_rate.c, tcp_pace.c, the controller) */
	uint8_t cong_state;		/* enum tcp_cong_state */
	uint32_t pipe;			/* bytes in flight */
	uint32_t sacked_bytes;
	uint32_t lost_bytes;		/* marked lost, not resent yet */
	uint32_t min_rtt_us;
	uint64_t delivered;		/* bytes acknowledged or SACKed */
	uint64_t delivery_rate;		/* bytes/s, the latest sample not application-limited */
	uint64_t pacing_rate;		/* bytes/s, 0: not paced */
	bool app_limited;
	const char *cc_mode;		/* the controller's phase (BBR), or NULL */
	uint64_t cc_bw;			/* its bandwidth estimate, bytes/s */
	/* ECN (tcp_ecn.c) */
	bool ecn;			/* negotiated */
	uint64_t ce_rcvd;		/* segments that arrived CE-marked */
	uint64_t ece_rcvd;		/* ACKs that echoed one of ours */
	uint64_t ecn_reductions;	/* cwnd reductions for them */
};

/**
 * struct tcp_trace_filter - which connections a trace follows
 * @any_addr:	any address; else one end's address is @addr
 * @addr:	the address
 * @port:	0, or one end's port
 *
 * A connection is traced when one of its two ends matches both.
 */
struct tcp_trace_filter {
	bool any_addr;
	struct net_addr addr;
	uint16_t port;
};

enum tcp_trace_event {
	TCP_TRACE_ACK,		/* an ACK was processed */
	TCP_TRACE_RTO,		/* the retransmission timer fired */
	TCP_TRACE_TLP,		/* a tail loss probe left */
	TCP_TRACE_RACK,		/* RACK's reordering timer fired */
	TCP_TRACE_ECE,		/* the sender reduced for an ECN echo */
	TCP_TRACE_EVENT_MAX
};

/* The congestion state, as Linux's tcp_ca_state names it (<netinet/tcp.h> has that name). */
enum tcp_cong_state {
	TCP_CONG_OPEN,		/* no loss being repaired */
	TCP_CONG_RECOVERY,	/* fast recovery */
	TCP_CONG_LOSS,		/* after an RTO, until what was out is acknowledged */
	TCP_CONG_STATE_MAX
};

/**
 * struct tcp_trace_sample - one connection's sender state at one event
 * @t_us:		the time
 * @local, @remote:	the connection
 * @event:		enum tcp_trace_event
 * @cong_state:		enum tcp_cong_state
 * @app_limited:	the latest delivery sample was application-limited
 * @snd_una, @snd_nxt:	relative to our ISS + 1 (bytes sent and acknowledged)
 * @mss, @cwnd, @ssthresh: cwnd and ssthresh in segments of @mss bytes
 * @pipe:		bytes in flight (RFC 6675 pipe)
 * @sacked, @lost:	bytes SACKed, and marked lost and not yet resent
 * @snd_wnd:		the peer's window
 * @srtt_us, @rttvar_us, @rto_us, @min_rtt_us: RTT state
 * @rtt_us:		the RTT sample of this ACK, -1 when none
 * @acked_sacked:	bytes this ACK delivered
 * @delivered:		bytes delivered in all
 * @delivery_rate:	this ACK's delivery-rate sample, bytes/s (0: none)
 * @pacing_rate:	bytes/s (0: not paced)
 * @retrans, @rtos, @recoveries: totals of the connection
 * @cc_mode:		the controller's phase (BBR), or NULL
 * @cc_bw:		the controller's bandwidth estimate (BBR), bytes/s
 */
struct tcp_trace_sample {
	uint64_t t_us;
	struct tcp_endpoint local;
	struct tcp_endpoint remote;
	uint8_t event;
	uint8_t cong_state;
	bool app_limited;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t mss;
	uint32_t cwnd;
	uint32_t ssthresh;
	uint32_t pipe;
	uint32_t sacked;
	uint32_t lost;
	uint32_t snd_wnd;
	uint32_t srtt_us;
	uint32_t rttvar_us;
	uint32_t rto_us;
	uint32_t min_rtt_us;
	int64_t rtt_us;
	uint32_t acked_sacked;
	uint64_t delivered;
	uint64_t delivery_rate;
	uint64_t pacing_rate;
	uint64_t retrans;
	uint64_t rtos;
	uint64_t recoveries;
	const char *cc_mode;
	uint64_t cc_bw;
};

/* Called for every event of a traced connection (tcp_stack_set_trace()). */
typedef void (*tcp_trace_fn)(void *ctx, const struct tcp_trace_sample *s);

/**
 * struct tcp_stack_stats - stack-wide counters; every drop has its reason
 */
struct tcp_stack_stats {
	uint64_t segs_in;
	uint64_t segs_out;
	uint64_t rst_out;
	uint64_t drop_malformed;	/* bad length, mixed families, bad flags */
	uint64_t drop_no_socket;	/* nothing listens; answered with RST */
	uint64_t drop_paws;
	uint64_t drop_out_of_window;
	uint64_t drop_ooo_full;
	uint64_t drop_rcv_full;	/* segments cut for want of room in the receive ring (never: the window is its room) */
	uint64_t drop_rcv_mem;	/* segments cut in the window: the memory cap kept the ring smaller (tcp_buf.c) */
	uint64_t drop_bad_ack;
	uint64_t challenge_acks;
	uint64_t challenge_acks_limited;
	uint64_t syncookies_sent;
	uint64_t syncookies_ok;
	uint64_t syncookies_bad;
	uint64_t synq_overflow;
	uint64_t timewait_evicted;
	uint64_t emit_errors;
	/* Totals over every connection, closed ones included (nstat-like). */
	uint64_t retrans_segs;
	uint64_t fast_recoveries;
	uint64_t sack_recoveries;
	uint64_t rtos;
	uint32_t conns;
	uint32_t timewait;
	/* Resource caps (docs/security.md): what is in use, and each cap's hits. */
	uint32_t half_open;		/* SYN-RECEIVED, all listeners */
	uint64_t buf_mem;		/* ring bytes of all connections */
	uint64_t buf_mem_peak;		/* the most buf_mem has been */
	uint64_t conns_limited;		/* a connection refused at max_conns */
	uint64_t buf_pressure;		/* a ring kept small at max_buf_mem */
	/* RACK and undo totals over every connection */
	uint64_t rack_marked;
	uint64_t dsacks_rx;
	uint64_t undos;
	/* catch-all listeners (tcp_listen_any()) */
	uint64_t syn_deferred;		/* SYNs handed to the callee unanswered */
	uint64_t syn_deferred_dropped;	/* SYNs dropped at max_half_open or max_conns */
	uint64_t icmp_aborts;		/* connection attempts ended by an ICMP error */
	uint64_t reset_probes;		/* SYNs sent to reset a forgotten connection (tcp_reset_probe()) */
	uint64_t syn_challenged;	/* SYNs answered by a challenge ACK: RST, and the SYN again at once */
	/* ring memory (tcp_pool.c) */
	uint64_t pool_cached;		/* bytes of warm buffers waiting for a ring */
	uint64_t pool_hits;		/* rings that got a warm buffer */
	uint64_t pool_maps;		/* rings that needed a new mapping */
	uint64_t pool_trimmed;		/* bytes given back after staying unused */
	uint64_t snd_lent_limited;	/* tcp_send()s cut short by a loan (tcp_pool.c) */
	uint64_t rcv_sunk_bytes;	/* received bytes a sink took, never stored (tcp_conn_set_sink()) */
	uint64_t acks_at_push;		/* ACKs due that waited for tcp_push() (tcp_conn_ack_at_push()) */
	uint64_t acks_compressed;	/* out-of-order ACKs not sent: one later ACK stood for them (SACK compression) */
	uint64_t ecn_ce_rcvd;		/* segments that arrived CE-marked on ECN connections */
	uint64_t ecn_reductions;	/* cwnd reductions for an ECN echo */
	uint64_t sack_reneges;		/* SACK scoreboards forgotten: the receiver reneged (RFC 2018 8) */
};

const char *tcp_state_name(enum tcp_state s);
const char *tcp_trace_event_name(enum tcp_trace_event ev);
const char *tcp_cong_state_name(enum tcp_cong_state st);
int tcp_stack_set_trace(struct tcp_stack *s, const struct tcp_trace_filter *f, tcp_trace_fn fn, void *ctx);
const char *tcp_event_name(enum tcp_event ev);
const char *tcp_cc_name(enum tcp_cc_algo cc);
int tcp_cc_by_name(const char *name);
const char *tcp_ecn_mode_name(enum tcp_ecn_mode m);
int tcp_ecn_mode_by_name(const char *name);

struct tcp_stack *tcp_stack_new(const struct tcp_stack_cfg *cfg);
void tcp_stack_free(struct tcp_stack *s);
/* May an active open use local port @local->port to @remote? (shards) */
typedef bool (*tcp_port_ok_fn)(void *ctx, const struct tcp_endpoint *local, const struct tcp_endpoint *remote);
void tcp_stack_set_port_filter(struct tcp_stack *s, tcp_port_ok_fn fn, void *ctx);
int tcp_stack_set_secret(struct tcp_stack *s, const uint8_t key[16]);
void tcp_reset_probe(struct tcp_stack *s, const struct tcp_endpoint *local, const struct tcp_endpoint *remote,
		     uint64_t now_us);
int tcp_input(struct tcp_stack *s, const struct tcp_seg_in *seg, uint64_t now_us);
void tcp_timers_run(struct tcp_stack *s, uint64_t now_us);
uint64_t tcp_next_deadline(const struct tcp_stack *s);
void tcp_stack_tx_done(struct tcp_stack *s);
void tcp_stack_stats(const struct tcp_stack *s, struct tcp_stack_stats *out);
int tcp_stack_set_limits(struct tcp_stack *s, uint32_t max_conns, uint32_t max_half_open,
			 uint32_t max_timewait, uint64_t max_buf_mem);
void tcp_pmtu_update(struct tcp_stack *s, const struct net_addr *local, const struct net_addr *remote,
		     uint32_t mtu, uint64_t now_us);
int tcp_foreach_conn(struct tcp_stack *s, int (*fn)(struct tcp_conn *c, void *arg), void *arg);

int tcp_opts_parse(const uint8_t *buf, size_t len, struct tcp_opts *out);
int tcp_opts_write(const struct tcp_opts *o, uint8_t *buf, size_t cap);

int tcp_listen(struct tcp_stack *s, const struct tcp_endpoint *local, unsigned int backlog,
	       const struct tcp_conn_opts *opts, tcp_accept_fn accept, tcp_event_fn ev, void *user,
	       struct tcp_listener **out);
void tcp_listener_close(struct tcp_listener *l);
int tcp_listen_any(struct tcp_stack *s, const struct tcp_conn_opts *opts, tcp_syn_fn syn, tcp_event_fn ev,
		   void *user, struct tcp_listener **out);
int tcp_conn_answer(struct tcp_conn *c, uint64_t now_us);
int tcp_conn_set_path(struct tcp_conn *c, const struct tcp_conn_opts *o);
void tcp_conn_refuse(struct tcp_conn *c, bool rst, uint64_t now_us);
int tcp_icmp_error(struct tcp_stack *s, const struct tcp_endpoint *local, const struct tcp_endpoint *remote,
		   uint32_t seq, int err, uint64_t now_us);

int tcp_connect(struct tcp_stack *s, const struct tcp_endpoint *local, const struct tcp_endpoint *remote,
		const struct tcp_conn_opts *opts, tcp_event_fn ev, void *user, uint64_t now_us,
		struct tcp_conn **out);
void tcp_conn_set_user(struct tcp_conn *c, tcp_event_fn ev, void *user);
void tcp_conn_set_sink(struct tcp_conn *c, tcp_sink_fn sink);
void tcp_conn_ack_at_push(struct tcp_conn *c);
ssize_t tcp_send(struct tcp_conn *c, const void *buf, size_t len, uint64_t now_us);
ssize_t tcp_send_more(struct tcp_conn *c, const void *buf, size_t len, uint64_t now_us);
void tcp_push(struct tcp_conn *c, uint64_t now_us);
ssize_t tcp_recv(struct tcp_conn *c, void *buf, size_t len, uint64_t now_us);
int tcp_peek(struct tcp_conn *c, struct iovec iov[2]);
int tcp_consume(struct tcp_conn *c, size_t len, uint64_t now_us);
int tcp_shutdown_write(struct tcp_conn *c, uint64_t now_us);
void tcp_close(struct tcp_conn *c, uint64_t now_us);
void tcp_abort(struct tcp_conn *c, uint64_t now_us);
size_t tcp_send_space(const struct tcp_conn *c);
enum tcp_state tcp_conn_state(const struct tcp_conn *c);
void tcp_conn_info(const struct tcp_conn *c, struct tcp_conn_info *out);
void tcp_conn_endpoints(const struct tcp_conn *c, struct tcp_endpoint *local, struct tcp_endpoint *remote);

#endif
