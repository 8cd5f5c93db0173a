/* SPDX-License-Identifier: MIT */
/*
 * tcp_int.h - what the files of datapath/tcp/ share and nobody else sees
 *
 * Theory of operation
 *
 * One struct tcp_conn per connection (SYN_RECEIVED onwards for passive opens,
 * SYN_SENT onwards for active ones), in a hash table keyed by the 4-tuple and
 * in a min-heap keyed by its earliest timer deadline. Each file owns one
 * concept and exports its functions here with its file's prefix:
 * tcp_conn_* (table, ISN, lifetime), tcp_open_* (the handshake's end),
 * tcp_ack_* (what the peer's ACKs do; arrival itself, tcp_input(), is
 * tcp_in.c's and exports nothing here), tcp_out_* (segment
 * building), tcp_timer_* (deadlines), tcp_sack_* (scoreboard and RFC 6675;
 * tcp_recovery_* and tcp_undo_* live there too), tcp_rack_* (RACK loss
 * detection, RFC 8985), tcp_ooo_* (out-of-order ranges), tcp_synq_* (SYN backlog, cookies),
 * tcp_buf_* (rings), and the congestion controllers behind struct tcp_cc_ops.
 */
#ifndef SANDNET_DATAPATH_TCP_INT_H
#define SANDNET_DATAPATH_TCP_INT_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/tcp/tcp.h"

#define TCP_DEFAULT_MSS		1460
#define TCP_MIN_MSS		88	/* smallest MSS we accept from a peer */
#define TCP_MAX_WSCALE		14
#define TCP_TS_OPT_BYTES	12	/* NOP NOP TS(10) */
#define TCP_PAWS_WINDOW		1	/* TSval ticks a segment may be behind TS.Recent (Linux's) */
#define TCP_RTO_INIT_US		1000000
#define TCP_RTO_MIN_US		200000
#define TCP_RTO_MAX_US		120000000
#define TCP_DELACK_US		40000
#define TCP_QUICKACK_SEGS	16
/*
 * SACK compression (Linux's tcp_comp_sack_*): with data out of order, the
 * first TCP_COMP_SACK_DUPS ACKs for one rcv_nxt leave at once (the sender's
 * fast retransmit), then one ACK stands for up to TCP_COMP_SACK_NR
 * segments, or leaves after 1/20 of the RTT, at most TCP_COMP_SACK_DELAY_US.
 */
#define TCP_COMP_SACK_DUPS	3
#define TCP_COMP_SACK_NR	44
#define TCP_COMP_SACK_DELAY_US	1000
#define TCP_COMP_SACK_BLOCKS	2	/* a change beyond the newest two sends what is held first */
#define TCP_SYN_RETRIES		6
#define TCP_SYNACK_RETRIES	5
#define TCP_DATA_RETRIES	15
#define TCP_TIMEWAIT_US		60000000ULL
#define TCP_FIN_WAIT2_US	60000000ULL
#define TCP_PERSIST_MAX_US	60000000
#define TCP_INIT_CWND		10
#define TCP_SSTHRESH_INIT	0x7fffffffu	/* "arbitrarily high" (RFC 5681 3.1) */
#define TCP_DUPTHRESH		3
#define TCP_SNDBUF_INIT		(256u * 1024)
#define TCP_SNDBUF_MAX		(4u * 1024 * 1024)
#define TCP_RCVBUF_INIT		(128u * 1024)
#define TCP_RCVBUF_MAX		(6u * 1024 * 1024)
#define TCP_RANGES_FIRST	8	/* a range set's first array (tcp_ranges.c) */
#define TCP_RANGES_MAX		512	/* the most any set holds */
#define TCP_OOO_MAX_RANGES	TCP_RANGES_MAX
#define TCP_SACK_MAX_RANGES	TCP_RANGES_MAX
#define TCP_MAX_SEG_IN		(1u << 20)	/* larger input is malformed */
#define TCP_NO_DEADLINE		UINT64_MAX

/* A byte ring: bytes [head, head+len) modulo cap, cap a power of two. */
struct tcp_ring {
	uint8_t *buf;
	uint32_t cap;
	uint32_t head;
	uint32_t len;
	struct tcp_stack *acct;	/* counts cap in its st.buf_mem (tcp_buf.c) */
};

struct tcp_range {
	uint32_t start;
	uint32_t end;
};

/*
 * Sorted, disjoint, non-adjacent [start,end) ranges; the array comes with
 * the first range and grows as needed (most connections never see loss or
 * reordering: three sets of 64 ranges in every connection were two thirds
 * of its size).
 */
struct tcp_ranges {
	struct tcp_range *r;	/* @cap entries, or NULL */
	unsigned int n;
	unsigned int cap;
	unsigned int max;
};

struct tcp_conn;

/*
 * One emitted segment (tcp_rack.c); flags TCP_RACK_*. The tx_* fields are
 * the delivery-rate estimator's (tcp_rate.c): the connection's delivery
 * state when the segment last left.
 */
struct tcp_rack_seg {
	uint64_t xmit_us;	/* latest (re)transmission */
	uint64_t tx_delivered;	/* C.delivered then */
	uint64_t tx_delivered_us;	/* C.delivered_time then */
	uint64_t tx_first_us;	/* C.first_sent_time then */
	uint32_t start;
	uint32_t end;		/* includes a FIN */
	uint16_t flags;
	uint16_t order;		/* send order within one xmit_us tick */
};

#define TCP_RACK_SACKED		1u
#define TCP_RACK_LOST		2u	/* deemed lost, not resent since */
#define TCP_RACK_RETRANS	4u	/* resent at least once */
#define TCP_RACK_APP_LIMITED	8u	/* sent while the sender was application-limited */

/**
 * struct tcp_rate_sample - what one ACK says about the path (tcp_rate.c)
 * @prior_delivered:	C.delivered when the sampled segment left
 * @prior_us:		C.delivered_time then (0: no segment sampled)
 * @send_elapsed_us:	the sampled segment's send time - C.first_sent_time then
 * @interval_us:	the sample's interval, -1 when it has none (too short,
 *			or nothing was delivered)
 * @delivered:		bytes delivered over @interval_us
 * @acked_sacked:	bytes this ACK newly acknowledged or SACKed
 * @prior_in_flight:	pipe before the ACK (tcp_sack_pipe())
 * @losses:		bytes this ACK made RACK mark lost
 * @rtt_us:		this ACK's RTT sample, -1 when it has none
 * @is_app_limited:	the sampled segment left while application-limited
 */
struct tcp_rate_sample {
	uint64_t prior_delivered;
	uint64_t prior_us;
	int64_t send_elapsed_us;
	int64_t interval_us;
	uint64_t delivered;
	uint32_t acked_sacked;
	uint32_t prior_in_flight;
	uint32_t losses;
	int64_t rtt_us;
	bool is_app_limited;
};
#define TCP_RACK_MAX_SEGS	8192u	/* then the newest segment grows */

/**
 * struct tcp_cc_info - a controller's own state, for `ss -ti` and traces
 * @mode:	its phase ("startup", "probe_bw", ...), or NULL
 * @bw:		its bandwidth estimate, bytes/s
 * @min_rtt_us:	its minimum RTT
 * @pacing_gain, @cwnd_gain: in percent
 */
struct tcp_cc_info {
	const char *mode;
	uint64_t bw;
	uint32_t min_rtt_us;
	uint32_t pacing_gain;
	uint32_t cwnd_gain;
};

/* A windowed maximum of three samples (Kathleen Nichols' algorithm), tcp_cc_bbr.c */
struct tcp_minmax {
	struct {
		uint32_t t;	/* when (a round count) */
		uint64_t v;
	} s[3];
};

/*
 * BBR's model of the path (tcp_cc_bbr.c): bandwidth in bytes/s, times in
 * microseconds, amounts in bytes unless named _segs.
 */
struct tcp_bbr {
	uint8_t mode;			/* enum in tcp_cc_bbr.c */
	uint8_t prev_cong_state;	/* enum tcp_cong_state at the last ACK */
	uint8_t cycle_idx;		/* PROBE_BW's place in its gain cycle */
	uint8_t full_bw_cnt;		/* rounds without 25 % more bandwidth */
	uint8_t extra_acked_win_rtts;
	uint8_t extra_acked_win_idx;
	bool round_start;		/* this ACK began a round trip */
	bool packet_conservation;	/* first round of a recovery */
	bool full_bw_reached;		/* the pipe is full: STARTUP is over */
	bool has_seen_rtt;
	bool idle_restart;		/* sending again after application-limited idle */
	bool probe_rtt_round_done;
	bool lt_is_sampling, lt_use_bw;	/* policer detection */
	uint32_t rtt_cnt;		/* round trips so far */
	uint64_t next_rtt_delivered;	/* C.delivered that ends this round */
	struct tcp_minmax bw;		/* max delivery rate of the last BBR_BW_RTTS rounds */
	uint64_t full_bw;		/* the bandwidth full_bw_cnt is counted against */
	uint32_t min_rtt_us;		/* UINT32_MAX: none yet */
	uint64_t min_rtt_stamp_us;
	uint64_t probe_rtt_done_us;	/* PROBE_RTT ends then (0: not yet timed) */
	uint64_t cycle_stamp_us;	/* the current gain phase began (C.delivered_time) */
	uint32_t pacing_gain;		/* x BBR_UNIT */
	uint32_t cwnd_gain;
	uint32_t prior_cwnd;		/* segments, before a recovery or PROBE_RTT */
	uint32_t lt_rtt_cnt;
	uint64_t lt_bw;
	uint64_t lt_last_delivered, lt_last_lost, lt_last_stamp_us;
	uint64_t ack_epoch_stamp_us;	/* ACK aggregation: where the epoch began */
	uint64_t ack_epoch_acked;	/* bytes ACKed since */
	uint64_t extra_acked[2];	/* max bytes ACKed beyond the model, two windows */
	uint32_t rng;			/* PROBE_BW's random starting phase */
};

struct tcp_cc_ops {
	const char *name;
	/* optional: the controller's own state (tcp_conn_info(), traces) */
	void (*get_info)(const struct tcp_conn *c, struct tcp_cc_info *out);
	/*
	 * optional: a controller that models the path sets cwnd and the
	 * pacing rate itself from every ACK's rate sample (BBR); the engine
	 * then neither calls on_ack nor runs PRR in recovery, and on_loss /
	 * on_rto only tell it (it keeps cwnd, ssthresh means nothing to it)
	 */
	void (*cong_control)(struct tcp_conn *c, const struct tcp_rate_sample *rs, uint64_t now_us);
	/* optional: a recovery or RTO was undone (else cwnd and ssthresh come back) */
	void (*undo)(struct tcp_conn *c);
	/* optional: sending starts with nothing in flight */
	void (*on_tx_start)(struct tcp_conn *c, uint64_t now_us);
	void (*init)(struct tcp_conn *c);
	/* snd_una advanced by @acked bytes outside recovery */
	void (*on_ack)(struct tcp_conn *c, uint32_t acked, uint64_t now_us);
	/* fast retransmit: set ssthresh (segments) */
	void (*on_loss)(struct tcp_conn *c, uint64_t now_us);
	/* RTO fired: set ssthresh, cwnd = 1 */
	void (*on_rto)(struct tcp_conn *c, uint64_t now_us);
};

const struct tcp_cc_ops *tcp_cc_ops_of(enum tcp_cc_algo cc);
uint32_t tcp_cc_slow_start(struct tcp_conn *c, uint32_t acked);
void tcp_hystart_rtt(struct tcp_conn *c, uint32_t rtt_us);
uint32_t tcp_hystart_growth(const struct tcp_conn *c, uint32_t acked);
extern const struct tcp_cc_ops tcp_cc_reno_ops;
extern const struct tcp_cc_ops tcp_cc_cubic_ops;
extern const struct tcp_cc_ops tcp_cc_bbr_ops;

struct tcp_listener {
	struct tcp_stack *stack;
	struct tcp_listener *next;
	struct tcp_endpoint local;
	struct tcp_conn_opts opts;
	tcp_accept_fn accept;
	tcp_event_fn ev;
	void *user;
	tcp_syn_fn syn;		/* a catch-all (tcp_listen_any()): any address and port */
	unsigned int backlog;
	unsigned int synq_len;	/* conns in SYN_RECEIVED */
	uint64_t last_overflow_us;	/* SYN cookies valid shortly after */
	bool overflowed;
};

struct tcp_conn {
	struct tcp_stack *stack;
	struct tcp_conn *hnext;		/* hash chain */
	struct tcp_conn *all_next, *all_prev;	/* every conn */
	struct tcp_conn *tw_next, *tw_prev;	/* TIME_WAIT FIFO */
	struct tcp_conn *lent_next, *lent_prev;	/* waiting for loans to end */
	/* the send ring's loan (tcp_pool.c): segments emitted since the last
	 * tcp_stack_tx_done() point into @lent_buf from sequence @lent_seq on */
	const uint8_t *lent_buf;
	uint64_t lent_gen;
	uint32_t lent_seq;
	struct tcp_listener *listener;	/* SYN_RECEIVED of a listener */
	uint32_t heap_idx;		/* UINT32_MAX = not in the heap */
	uint64_t deadline_us;		/* min of the timers below */

	enum tcp_state state;
	struct tcp_endpoint local;
	struct tcp_endpoint remote;
	struct tcp_conn_opts opts;
	tcp_event_fn ev;
	void *user;
	tcp_sink_fn sink;	/* takes in-order bytes as they arrive, or NULL */
	bool user_holds;	/* the service has not closed it yet */
	bool passive;
	bool deferred;		/* a catch-all's SYN-RECEIVED: SYN-ACK not sent yet */
	bool syn_owned;		/* taken at the SYN (tcp_syn_fn): no accept, CONNECTED instead */
	bool syn_resent;	/* SYN-SENT: the SYN went again after a challenge ACK */
	bool dead;		/* in the reap list */
	bool fin_queued;	/* the service shut down writing */
	bool fin_sent;
	bool fin_rcvd;
	bool peer_fin_told;
	bool writable_wanted;	/* tcp_send() ran out of space */
	bool lent_waiting;	/* on the stack's lent_waiters (tcp_pool.c) */
	bool sack_ok;
	bool ts_ok;
	bool ws_ok;
	bool traced;		/* matches the stack's trace filter (tcp_trace.c) */
	/* ECN (RFC 3168), tcp_ecn.c */
	bool ecn_ok;		/* negotiated */
	bool ecn_peer_asked;	/* passive: the SYN asked for it */
	bool ecn_ece;		/* receiver: echo ECE until a CWR comes */
	bool ecn_cwr_pending;	/* sender: set CWR on the next new segment */
	bool ecn_reacted;	/* sender: reduced once, @ecn_high is valid */
	uint32_t ecn_high;	/* no new reduction until snd_una is past it */
	uint64_t ce_rcvd, ece_rcvd, ecn_reductions;
	uint64_t sack_reneges;	/* scoreboards forgotten (tcp_sack_renege()) */

	/* send sequence space (RFC 9293 3.3.1) */
	uint32_t iss;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t snd_max;	/* highest sequence sent + 1 */
	uint32_t snd_wnd;	/* scaled */
	uint32_t max_snd_wnd;
	uint32_t snd_wl1;
	uint32_t snd_wl2;
	uint8_t snd_wscale;	/* shift applied to the peer's window */
	uint16_t snd_mss;	/* payload per on-wire segment, options deducted */
	uint16_t peer_mss;	/* the MSS option the peer sent */
	uint32_t gso_max_bytes;

	/* receive sequence space */
	uint32_t irs;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;	/* right edge advertised */
	uint8_t rcv_wscale;
	uint16_t rcv_mss;	/* largest segment seen, for delayed ACK */

	/* timestamps (RFC 7323) */
	uint32_t ts_recent;
	uint32_t ts_offset;
	uint32_t last_ack_sent;

	/* buffers: snd holds data from sequence snd_buf_seq on */
	uint32_t snd_buf_seq;
	struct tcp_ring snd;
	struct tcp_ring rcv;	/* rcv.len = in-order unread bytes */
	uint32_t sndbuf_max;
	uint32_t rcvbuf_max;
	struct tcp_ranges ooo;	/* received above rcv_nxt, stored in rcv */
	uint32_t ooo_recent[TCP_SACK_MAX_BLOCKS];	/* a byte of each range that changed last, newest first */
	uint8_t ooo_n_recent;
	bool ooo_fin;		/* a FIN arrived out of order at ooo_fin_seq */
	bool dsack;		/* report [dsack_start, dsack_end) once (RFC 2883) */
	uint32_t dsack_start, dsack_end;
	uint32_t ooo_fin_seq;
	uint32_t rcv_space_bytes;	/* auto-tuning: delivered this round */
	uint64_t rcv_space_time_us;

	/* RTT (RFC 6298), microseconds */
	uint32_t srtt_us;
	uint32_t rttvar_us;
	uint32_t rto_us;
	uint32_t rtt_seq;	/* Karn timing without timestamps */
	uint64_t rtt_time_us;
	bool rtt_timing;
	uint8_t backoff;
	uint8_t retries;

	/* congestion control */
	const struct tcp_cc_ops *cc;
	uint32_t cwnd;		/* segments */
	uint32_t ssthresh;	/* segments */
	uint32_t cwnd_acc;	/* bytes acked toward the next increment */
	bool cwnd_limited;	/* the last send filled cwnd (RFC 7661 idea) */
	double cubic_wmax;
	double cubic_k;
	double cubic_west;
	double cubic_acc;
	uint64_t cubic_epoch_us;

	/* loss recovery */
	struct tcp_ranges sacked;	/* scoreboard, above snd_una */
	bool in_recovery;
	bool after_rto;		/* go-back-N after an RTO: resend below snd_max */
	uint32_t recover;	/* RecoveryPoint */
	uint32_t high_rxt;	/* HighRxt (RFC 6675) */
	uint32_t rxt_mark;	/* snd_max when the latest retransmission left */
	uint32_t prr_delivered;	/* PRR (RFC 6937), bytes */
	uint32_t prr_out;
	uint32_t prr_recover_fs;
	uint32_t prr_budget;	/* bytes recovery may send now */
	uint32_t dupacks;

	/* delayed ACK */
	uint32_t unacked_segs;
	uint32_t quickack;
	uint32_t comp_rcv_nxt;	/* rcv_nxt of the out-of-order ACKs being counted */
	uint8_t comp_dups;	/* ACKs sent at once for comp_rcv_nxt */
	uint8_t comp_acks;	/* out-of-order ACKs held back since the last ACK */
	bool ack_now;
	bool ack_at_push;	/* tcp_conn_ack_at_push() */
	bool sink_took;		/* the sink took bytes of the segment in hand */

	/* timers (absolute; TCP_NO_DEADLINE = off) */
	uint64_t t_rtx_us;	/* retransmission or SYN */
	uint64_t t_persist_us;
	uint64_t t_delack_us;
	uint64_t t_keep_us;
	uint64_t t_close_us;	/* TIME_WAIT, FIN_WAIT_2 orphan */
	uint64_t t_tlp_us;	/* tail loss probe (RFC 8985 7) */
	bool tlp_active;	/* a probe is out, not yet acknowledged */
	uint32_t tlp_high_seq;	/* snd_max when it left (TLP.end_seq) */
	bool tlp_in_recovery;	/* it left during a recovery: any delivery answers it */
	bool tlp_is_retrans;	/* TLP.is_retrans, sent outside recovery */
	bool tlp_check;		/* RFC 8985 7.4: D-SACK of the probe or an ACK past it? */
	uint32_t tlp_seq;	/* the probe's first sequence number */
	uint64_t tlp_episodes;	/* fast_recoveries + rto_count when it left */
	uint64_t tlp_recoveries;	/* losses repaired by a probe alone (cwnd cut once) */
	uint32_t persist_backoff;
	uint32_t keep_probes;
	uint64_t last_rcv_us;

	struct tcp_conn_stats stats;

	/* pacing (tcp_pace.c) */
	uint64_t pacing_rate;		/* bytes/s, 0 = not paced */
	uint64_t pace_next_us;		/* the earliest departure of the next segment */
	uint64_t t_pace_us;		/* timer: a paced send is due (TCP_NO_DEADLINE = off) */

	/* delivery rate (tcp_rate.c), bytes and microseconds */
	uint64_t delivered;		/* C.delivered: bytes acknowledged or SACKed */
	uint64_t delivered_us;		/* C.delivered_time: when it last grew */
	uint64_t first_tx_us;		/* C.first_sent_time */
	uint64_t app_limited;		/* C.app_limited: delivered mark, 0 = not */
	uint64_t lost_total;		/* bytes RACK ever marked lost */
	uint64_t rate_delivered;	/* the latest sample not app-limited (or larger): */
	uint64_t rate_interval_us;	/* delivery_rate = rate_delivered / rate_interval_us */
	uint64_t ack_first_acked_us;	/* this ACK: the earliest never-resent segment acknowledged, */
	uint64_t ack_first_sacked_us;	/* SACKed (RTT samples) */
	bool ack_karn;			/* this ACK acknowledged resent data */
	struct tcp_rate_sample rs;	/* this ACK's */

	/* RACK (RFC 8985 6), tcp_rack.c: emitted segments by sequence */
	struct tcp_rack_seg *rack_segs;	/* rack_segs[rack_head .. rack_head + rack_n) */
	uint32_t rack_cap, rack_head, rack_n;
	uint32_t rack_lost_bytes;	/* in LOST segments (not resent since) */
	bool rack_off;			/* no SACK, or bookkeeping failed: RFC 6675 */
	bool rack_reord;		/* RACK.reordering_seen */
	bool rack_dsack_round_on;
	uint8_t rack_reo_mult;		/* RACK.reo_wnd_mult */
	uint8_t rack_reo_persist;	/* RACK.reo_wnd_persist */
	uint64_t rack_xmit_us;		/* RACK.xmit_ts, 0 = none yet */
	uint32_t rack_end_seq;		/* RACK.end_seq */
	uint16_t rack_order;		/* its send order (ties of RACK.xmit_ts) */
	uint16_t rack_next_order;
	uint64_t rack_last_xmit_us;
	uint32_t rack_rtt_us;		/* RACK.rtt */
	uint32_t rack_min_rtt_us;	/* RACK.min_RTT, 0 = none yet */
	uint32_t rack_fack;		/* RACK.fack */
	uint32_t rack_dsack_round;	/* RACK.dsack_round */
	uint32_t rack_reo_wnd_us;	/* the latest RACK.reo_wnd, for stats */
	uint64_t t_rack_us;		/* reordering timer */
	uint64_t rack_marked;		/* segments RACK marked lost */

	/* undo of spurious recoveries (RFC 2883 / 3708, RFC 3522 / 4015), tcp_undo.c */
	bool undo_on;			/* an episode can still be undone */
	bool undo_eifel;		/* the first ACK after its retransmission is due */
	bool undo_ts_set;
	uint32_t undo_cwnd, undo_ssthresh;
	double undo_wmax;
	uint32_t undo_marker;		/* snd_una when the episode began */
	uint32_t undo_retrans;		/* its retransmissions not yet D-SACKed */
	uint32_t undo_tsval;		/* TSval of its first retransmission */
	uint32_t undo_eifel_end;	/* and its end */
	struct tcp_ranges undo_rxt;	/* what it retransmitted */
	uint64_t undos;
	uint64_t dsacks_rx;

	uint64_t last_data_us;		/* latest data segment sent (restart after idle) */
	uint64_t idle_restarts;

	struct tcp_bbr bbr;		/* tcp_cc_bbr.c, when it is the controller */

	/* HyStart++ (RFC 9406), tcp_cc_hystart.c */
	bool hs_round_on;
	bool hs_css;			/* in Conservative Slow Start */
	uint8_t hs_css_rounds;
	uint32_t hs_round_end;
	uint32_t hs_samples;		/* RTT samples this round */
	uint32_t hs_cur_min_us;		/* 0 = none yet */
	uint32_t hs_last_min_us;
	uint32_t hs_css_base_us;
	uint64_t hs_css_entries;
};

/* A send buffer queued segments may still point into (tcp_pool.c). */
struct tcp_pool_free;

struct tcp_retired {
	void *buf;
	uint32_t cap;
};

#define TCP_POOL_CLASSES	11	/* 16 KiB .. 16 MiB (tcp_pool.c) */

/**
 * struct tcp_pool - ring buffers that stay warm between connections (tcp_pool.c)
 * @free:	per power-of-two size, buffers waiting (linked through their
 *		first bytes)
 * @cached:	bytes waiting in @free
 * @next_trim_us: the next pass that unmaps idle buffers, 0 when nothing waits
 * @conns_freed: connection structures freed since the heap was last trimmed
 */
struct tcp_pool {
	struct tcp_pool_free *free[TCP_POOL_CLASSES];
	uint64_t cached;
	uint64_t next_trim_us;
	uint32_t conns_freed;
};

struct tcp_stack {
	struct tcp_stack_cfg cfg;
	unsigned char hash_key[16];
	struct tcp_conn **table;
	uint32_t table_mask;
	struct tcp_conn *all;
	struct tcp_conn *tw_head, *tw_tail;
	struct tcp_conn *reap;		/* dead conns, freed at depth 0 */
	struct tcp_listener *listeners;
	struct tcp_listener *catch_all;	/* tcp_listen_any(), at most one */
	struct tcp_conn **heap;
	uint32_t heap_len, heap_cap;
	unsigned int depth;		/* nesting of entry points */
	uint16_t next_port;
	tcp_port_ok_fn port_ok;		/* an ephemeral port must pass it (shards), or NULL */
	void *port_ok_ctx;
	uint64_t chack_second;
	uint32_t chack_count;
	/* send-buffer memory replaced while segments may point into it */
	struct tcp_retired *retired;
	uint32_t nretired, cap_retired;
	/* loans (tcp_pool.c): one generation per tcp_stack_tx_done() */
	uint64_t tx_gen;
	struct tcp_conn *lent_waiters;	/* tcp_send() held short by a loan */
	bool lent_wake;			/* loans ended: WRITABLE due for the waiters */
	struct tcp_pool pool;
	uint64_t clock_us;		/* the latest time a caller gave (the pool's clock) */
	/* tracing (tcp_trace.c) */
	struct tcp_trace_filter trace_filter;
	tcp_trace_fn trace_fn;		/* NULL: nothing traced */
	void *trace_ctx;
	struct tcp_stack_stats st;
};

/* tcp_conn.c */
uint32_t tcp_conn_hash(const struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r);
struct tcp_conn *tcp_conn_lookup(struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r);
struct tcp_conn *tcp_conn_new(struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r,
			      const struct tcp_conn_opts *opts);
uint32_t tcp_conn_isn(struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r,
		      uint64_t now_us);
void tcp_conn_set_state(struct tcp_conn *c, enum tcp_state st, uint64_t now_us);
void tcp_conn_tw_requeue(struct tcp_conn *c);
void tcp_conn_event(struct tcp_conn *c, enum tcp_event ev, int err);
void tcp_conn_drop(struct tcp_conn *c, int err, uint64_t now_us);
void tcp_conn_enter(struct tcp_stack *s);
void tcp_conn_leave(struct tcp_stack *s);
void tcp_conn_maybe_reap(struct tcp_conn *c);
void tcp_conn_opts_defaults(struct tcp_conn_opts *o);
uint32_t tcp_conn_buckets(uint32_t max_conns);
void tcp_conn_free_all(struct tcp_stack *s);
struct tcp_listener *tcp_listener_lookup(struct tcp_stack *s, const struct tcp_endpoint *local);
bool tcp_addr_eq(const struct net_addr *a, const struct net_addr *b);
uint64_t tcp_siphash(const struct tcp_stack *s, const void *data, size_t len);

/* tcp_pool.c */
void *tcp_pool_get(struct tcp_stack *s, uint32_t cap);
void tcp_pool_put(struct tcp_stack *s, void *buf, uint32_t cap);
void tcp_pool_conn_freed(struct tcp_stack *s);
void tcp_pool_trim(struct tcp_stack *s, uint64_t now_us, bool all);
int tcp_stack_retire(struct tcp_stack *s, void *buf, uint32_t cap);
void tcp_snd_lend(struct tcp_conn *c, uint32_t seq);
uint32_t tcp_snd_lent(const struct tcp_conn *c);
void tcp_snd_lent_wait(struct tcp_conn *c);
void tcp_snd_lent_unwait(struct tcp_conn *c);
void tcp_snd_lent_wake(struct tcp_stack *s);

/* tcp_buf.c */
int tcp_ring_reserve(struct tcp_ring *r, uint32_t cap, bool retire);
int tcp_ring_unpark(struct tcp_ring *r);
void tcp_ring_park(struct tcp_ring *r, bool retire);
void tcp_ring_free(struct tcp_ring *r, bool retire);
int tcp_buf_rcv_ready(struct tcp_conn *c);
uint32_t tcp_ring_write_at(struct tcp_ring *r, uint32_t off, const void *data, uint32_t len);
int tcp_ring_iov(const struct tcp_ring *r, uint32_t off, uint32_t len, struct iovec iov[2]);
void tcp_ring_read(const struct tcp_ring *r, uint32_t off, void *dst, uint32_t len);
void tcp_ring_drop(struct tcp_ring *r, uint32_t len);
uint32_t tcp_buf_rcv_space(const struct tcp_conn *c);
uint32_t tcp_buf_rcv_wnd(const struct tcp_conn *c);
void tcp_buf_rcv_autotune(struct tcp_conn *c, uint32_t delivered, uint64_t now_us);
void tcp_buf_rcv_sunk(struct tcp_conn *c, uint32_t len, uint64_t now_us);
int tcp_buf_snd_grow(struct tcp_conn *c, uint32_t want);
uint8_t tcp_buf_wscale_for(uint32_t max_bytes);
uint32_t tcp_buf_new_fit(const struct tcp_stack *s, uint32_t size);
void tcp_buf_release(struct tcp_conn *c);

/* tcp_ooo.c */
int tcp_ooo_insert(struct tcp_conn *c, uint32_t seq, const uint8_t *data, uint32_t len);
uint32_t tcp_ooo_pull(struct tcp_conn *c);
bool tcp_ooo_extends_recent(const struct tcp_conn *c, uint32_t seq, uint32_t end, unsigned int n);
uint32_t tcp_ooo_bytes(const struct tcp_conn *c);
int tcp_ooo_sack_blocks(const struct tcp_conn *c, uint32_t first_start, uint32_t first_end,
			struct tcp_opts *o, unsigned int max);

/* tcp_ranges.c */
void tcp_ranges_init(struct tcp_ranges *rs, unsigned int max);
int tcp_ranges_add(struct tcp_ranges *rs, uint32_t start, uint32_t end);
void tcp_ranges_free(struct tcp_ranges *rs);
void tcp_ranges_trim_below(struct tcp_ranges *rs, uint32_t seq);
uint32_t tcp_ranges_bytes(const struct tcp_ranges *rs, uint32_t from, uint32_t to);
int tcp_ranges_find(const struct tcp_ranges *rs, uint32_t seq);

/* tcp_sack.c */
void tcp_sack_update(struct tcp_conn *c, const struct tcp_opts *o);
uint32_t tcp_sack_pipe(const struct tcp_conn *c);
bool tcp_sack_next_lost(const struct tcp_conn *c, uint32_t *seq, uint32_t *len);
bool tcp_sack_is_lost(const struct tcp_conn *c, uint32_t seq);
uint32_t tcp_sack_highest(const struct tcp_conn *c);
uint32_t tcp_sack_holes(const struct tcp_conn *c, uint32_t from, uint32_t to);
void tcp_sack_renege(struct tcp_conn *c);
bool tcp_sack_check_renege(struct tcp_conn *c);

/* tcp_recovery.c */
void tcp_recovery_on_ack(struct tcp_conn *c, uint32_t acked, bool dupack, uint32_t delivered, uint64_t now_us);
void tcp_recovery_sent(struct tcp_conn *c, uint32_t bytes);
void tcp_recovery_rack_timer(struct tcp_conn *c, uint64_t now_us);
void tcp_recovery_tlp_on_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t acked, uint32_t delivered,
			     bool dsack, uint64_t now_us);

/* tcp_undo.c */
bool tcp_sack_dsack(struct tcp_conn *c, const struct tcp_opts *o, uint32_t ack);
void tcp_undo_start(struct tcp_conn *c);
void tcp_undo_retransmitted(struct tcp_conn *c, uint32_t seq, uint32_t end, uint64_t now_us);
void tcp_undo_on_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, bool advanced, bool dsack);

/* tcp_ecn.c */
void tcp_ecn_negotiate(struct tcp_conn *c, const struct tcp_seg_in *syn);
uint8_t tcp_ecn_syn_flags(const struct tcp_conn *c);
uint8_t tcp_ecn_out(struct tcp_conn *c, uint8_t *flags, bool new_data);
void tcp_ecn_in(struct tcp_conn *c, const struct tcp_seg_in *seg);
void tcp_ecn_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us);

/* tcp_pace.c */
void tcp_pace_update_rate(struct tcp_conn *c);
uint32_t tcp_pace_quantum(const struct tcp_conn *c);
bool tcp_pace_wait(struct tcp_conn *c, uint64_t now_us);
void tcp_pace_sent(struct tcp_conn *c, uint32_t bytes, uint64_t now_us);
void tcp_pace_timer(struct tcp_conn *c, uint64_t now_us);

/* tcp_trace.c */
enum tcp_cong_state tcp_cong_state(const struct tcp_conn *c);
void tcp_trace_conn_new(struct tcp_conn *c);
void tcp_trace_emit(struct tcp_conn *c, enum tcp_trace_event ev, uint64_t now_us);

/* tcp_rate.c */
void tcp_rate_stamp(struct tcp_conn *c, struct tcp_rack_seg *r);
void tcp_rate_delivered(struct tcp_conn *c, const struct tcp_rack_seg *r, uint64_t now_us);
void tcp_rate_ack_begin(struct tcp_conn *c);
void tcp_rate_ack_end(struct tcp_conn *c, uint64_t now_us);
void tcp_rate_check_app_limited(struct tcp_conn *c, uint32_t unsent, uint32_t pipe);
uint64_t tcp_rate_delivery_bps(const struct tcp_conn *c);

/* tcp_rack.c */
bool tcp_rack_on(const struct tcp_conn *c);
bool tcp_rack_records_on(const struct tcp_conn *c);
void tcp_rack_sent(struct tcp_conn *c, uint32_t seq, uint32_t end, uint64_t now_us);
void tcp_rack_on_ack(struct tcp_conn *c, const struct tcp_opts *o, bool dsack, uint64_t now_us);
bool tcp_rack_detect(struct tcp_conn *c, uint64_t now_us);
bool tcp_rack_next_lost(const struct tcp_conn *c, uint32_t *seq, uint32_t *len);
void tcp_rack_mark_all_lost(struct tcp_conn *c);
void tcp_rack_unmark_lost(struct tcp_conn *c);
void tcp_rack_unsack_all(struct tcp_conn *c);
void tcp_rack_recovery_done(struct tcp_conn *c);
void tcp_rack_spurious(struct tcp_conn *c);
void tcp_rack_free(struct tcp_conn *c);

/* tcp_out.c */
int tcp_out_emit(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len, uint64_t now_us);
void tcp_out_ack(struct tcp_conn *c, uint64_t now_us);
void tcp_out_push(struct tcp_conn *c, uint64_t now_us);
int tcp_out_retransmit(struct tcp_conn *c, uint32_t seq, uint32_t max_len, uint64_t now_us);
void tcp_out_probe(struct tcp_conn *c, uint64_t now_us);
void tcp_out_rst_reply(struct tcp_stack *s, const struct tcp_seg_in *seg);
void tcp_out_syn_raw(struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r, uint32_t seq);
void tcp_out_rst(struct tcp_conn *c, uint64_t now_us);
void tcp_out_challenge_ack(struct tcp_conn *c, uint64_t now_us);
void tcp_out_synack_raw(struct tcp_stack *s, const struct tcp_seg_in *syn, const struct tcp_opts *o,
			uint32_t iss, uint16_t wnd);
uint32_t tcp_out_ts_now(const struct tcp_conn *c, uint64_t now_us);
uint16_t tcp_out_mss_opt(const struct tcp_conn_opts *o);

/* tcp_open.c */
void tcp_open_negotiate(struct tcp_conn *c, const struct tcp_seg_in *syn);
void tcp_open_established(struct tcp_conn *c, uint64_t now_us);
int tcp_open_accept(struct tcp_conn *c, struct tcp_listener *l, uint64_t now_us);
void tcp_open_syn_sent(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us);
bool tcp_open_syn_rcvd_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us);

/* tcp_ack.c */
void tcp_ack_rtt_sample(struct tcp_conn *c, uint32_t rtt_us);
void tcp_ack_ts_rtt(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us);
bool tcp_ack_input(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us);

/* tcp_timer.c */
void tcp_timer_update(struct tcp_conn *c);
void tcp_timer_heap_remove(struct tcp_conn *c);
void tcp_timer_rtx_arm(struct tcp_conn *c, uint64_t now_us);
void tcp_timer_rtx_restart(struct tcp_conn *c, uint64_t now_us);
void tcp_timer_tlp_arm(struct tcp_conn *c, uint64_t now_us);
void tcp_timer_persist_arm(struct tcp_conn *c, uint64_t now_us);
void tcp_timer_keep_arm(struct tcp_conn *c, uint64_t now_us);
void tcp_timer_delack(struct tcp_conn *c, uint64_t now_us);
void tcp_timer_delack_within(struct tcp_conn *c, uint64_t now_us, uint64_t delay_us);
void tcp_timer_timewait(struct tcp_conn *c, uint64_t now_us);

/* tcp_synq.c */
int tcp_synq_syn(struct tcp_listener *l, const struct tcp_seg_in *seg, uint64_t now_us);
int tcp_synq_cookie_ack(struct tcp_listener *l, const struct tcp_seg_in *seg, uint64_t now_us);
int tcp_synq_cookie_check(struct tcp_listener *l, const struct tcp_seg_in *seg, uint64_t now_us);

#endif
