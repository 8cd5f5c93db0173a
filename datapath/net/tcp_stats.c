// SPDX-License-Identifier: MIT
/*
 * tcp_stats.c - what `datapath stats` shows of one TCP engine: its counters
 * (the engine's and its glue's) and a table of its connections, `ss -ti`
 * style, under the keys its caller names (the outer stack's "tcp" /
 * "tcp_connections"; docs/datapath.md has them all).
 */
#include <netinet/in.h>

#include "datapath/net/tcp_glue.h"
#include "common/out.h"

static int tcp_glue_conn_row(struct tcp_conn *c, void *arg)
{
	struct out *o = arg;
	struct tcp_conn_info i;
	char buf[INET6_ADDRSTRLEN + 16];

	tcp_conn_info(c, &i);
	out_obj_begin(o, NULL);
	out_str(o, "state", tcp_state_name(i.state));
	out_str(o, "local", tcp_glue_endpoint_str(&i.local, buf, sizeof(buf)));
	out_str(o, "remote", tcp_glue_endpoint_str(&i.remote, buf, sizeof(buf)));
	out_str(o, "cc", i.cc ? i.cc : "-");
	out_u64(o, "mss", i.snd_mss);
	out_u64(o, "cwnd", i.cwnd);
	out_u64(o, "ssthresh", i.ssthresh);
	out_double(o, "srtt_ms", i.srtt_us / 1000.0);
	out_double(o, "rttvar_ms", i.rttvar_us / 1000.0);
	out_u64(o, "rto_ms", i.rto_us / 1000);
	out_u64(o, "snd_wnd", i.snd_wnd);
	out_u64(o, "rcv_wnd", i.rcv_wnd);
	out_u64(o, "bytes_sent", i.bytes_sent);
	out_u64(o, "bytes_acked", i.bytes_acked);
	out_u64(o, "bytes_received", i.bytes_received);
	out_u64(o, "segs_out", i.segs_out);
	out_u64(o, "segs_in", i.segs_in);
	out_u64(o, "retrans", i.retrans_segs);
	out_u64(o, "sack_recoveries", i.sack_recoveries);
	out_u64(o, "fast_recoveries", i.fast_recoveries);
	out_u64(o, "rtos", i.rto_count);
	out_u64(o, "rack_lost", i.rack_marked);
	out_double(o, "reo_wnd_ms", i.rack_reo_wnd_us / 1000.0);
	out_u64(o, "dsacks_rx", i.dsacks_rx);
	out_u64(o, "undos", i.undos);
	out_u64(o, "tlp_probes", i.tlp_probes);
	out_u64(o, "tlp_recoveries", i.tlp_recoveries);
	out_u64(o, "unacked", i.unacked_bytes);
	out_u64(o, "sndbuf_used", i.sndbuf_used);
	out_u64(o, "sndbuf", i.sndbuf_cap);
	out_u64(o, "sndbuf_held", i.sndbuf_held);
	out_u64(o, "rcvbuf_used", i.rcvbuf_used);
	out_u64(o, "rcvbuf", i.rcvbuf_cap);
	out_u64(o, "rcvbuf_held", i.rcvbuf_held);
	out_u64(o, "ooo_bytes", i.ooo_bytes);
	out_obj_end(o);
	return 0;
}

/**
 * tcp_glue_print() - one instance's counters and connection table
 * @g:		the instance
 * @o:		printer (text or JSON, one code path)
 * @counters:	key of the counters object
 * @conns:	key of the connection table
 */
void tcp_glue_print(struct tcp_glue *g, struct out *o, const char *counters, const char *conns)
{
	const struct tcp_glue_counters *gc = tcp_glue_counters(g);
	struct tcp_stack_stats s;

	tcp_stack_stats(tcp_glue_engine(g), &s);
	out_obj_begin(o, counters);
	out_u64(o, "conns", s.conns);
	out_u64(o, "timewait", s.timewait);
	out_u64(o, "segs_in", s.segs_in);
	out_u64(o, "segs_out", s.segs_out);
	out_u64(o, "rst_out", s.rst_out);
	out_u64(o, "rx_bad", gc->rx_bad);
	out_u64(o, "tx_borrowed", gc->borrowed);
	out_u64(o, "tx_copied", gc->copied);
	out_u64(o, "tx_split", gc->split);
	out_u64(o, "tx_gso_frames", gc->gso_frames);
	out_u64(o, "tx_errors", gc->emit_errors);
	out_u64(o, "snd_lent_limited", s.snd_lent_limited);
	out_u64(o, "rcv_sunk_bytes", s.rcv_sunk_bytes);
	out_u64(o, "acks_at_push", s.acks_at_push);
	out_u64(o, "tx_csum_offloaded", gc->csum_offloaded);
	out_u64(o, "pmtu_updates", gc->pmtu_updates);
	out_u64(o, "icmp_aborts", gc->icmp_aborts);
	out_u64(o, "reset_probes", s.reset_probes);
	out_u64(o, "syn_challenged", s.syn_challenged);
	out_u64(o, "pool_cached", s.pool_cached);
	out_u64(o, "pool_hits", s.pool_hits);
	out_u64(o, "pool_maps", s.pool_maps);
	out_u64(o, "pool_trimmed", s.pool_trimmed);
	out_u64(o, "drop_malformed", s.drop_malformed);
	out_u64(o, "drop_no_socket", s.drop_no_socket);
	out_u64(o, "drop_paws", s.drop_paws);
	out_u64(o, "drop_out_of_window", s.drop_out_of_window);
	out_u64(o, "drop_ooo_full", s.drop_ooo_full);
	out_u64(o, "drop_rcv_full", s.drop_rcv_full);
	out_u64(o, "drop_bad_ack", s.drop_bad_ack);
	out_u64(o, "challenge_acks", s.challenge_acks);
	out_u64(o, "challenge_acks_limited", s.challenge_acks_limited);
	out_u64(o, "syncookies_sent", s.syncookies_sent);
	out_u64(o, "syncookies_ok", s.syncookies_ok);
	out_u64(o, "syncookies_bad", s.syncookies_bad);
	out_u64(o, "synq_overflow", s.synq_overflow);
	out_u64(o, "timewait_evicted", s.timewait_evicted);
	out_u64(o, "emit_errors", s.emit_errors);
	out_u64(o, "retrans_segs", s.retrans_segs);
	out_u64(o, "fast_recoveries", s.fast_recoveries);
	out_u64(o, "sack_recoveries", s.sack_recoveries);
	out_u64(o, "rtos", s.rtos);
	out_u64(o, "rack_lost", s.rack_marked);
	out_u64(o, "dsacks_rx", s.dsacks_rx);
	out_u64(o, "undos", s.undos);
	out_u64(o, "syn_deferred", s.syn_deferred);
	out_u64(o, "syn_deferred_dropped", s.syn_deferred_dropped);
	out_obj_end(o);
	out_arr_begin(o, conns);
	tcp_foreach_conn(tcp_glue_engine(g), tcp_glue_conn_row, o);
	out_arr_end(o);
}
