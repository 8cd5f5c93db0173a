// SPDX-License-Identifier: MIT
/*
 * tcp_stats.c - what `datapath stats` and `datapath ss` show of one TCP
 * engine: its counters (the engine's and its glue's) and a table of its
 * connections under the keys its caller names (the outer stack's "tcp" /
 * "tcp_connections"; docs/datapath.md has them all); the `ss -ti` style
 * list of `datapath ss`, and a trace sample as a line of JSON.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

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
	out_u64(o, "bytes_sent", i.stats.bytes_sent);
	out_u64(o, "bytes_acked", i.stats.bytes_acked);
	out_u64(o, "bytes_received", i.stats.bytes_received);
	out_u64(o, "segs_out", i.stats.segs_out);
	out_u64(o, "segs_in", i.stats.segs_in);
	out_u64(o, "retrans", i.stats.retrans_segs);
	out_u64(o, "sack_recoveries", i.stats.sack_recoveries);
	out_u64(o, "fast_recoveries", i.stats.fast_recoveries);
	out_u64(o, "rtos", i.stats.rto_count);
	out_u64(o, "rack_lost", i.rack_marked);
	out_double(o, "reo_wnd_ms", i.rack_reo_wnd_us / 1000.0);
	out_u64(o, "dsacks_rx", i.dsacks_rx);
	out_u64(o, "undos", i.undos);
	out_u64(o, "tlp_probes", i.stats.tlp_probes);
	out_u64(o, "tlp_recoveries", i.tlp_recoveries);
	out_u64(o, "unacked", i.unacked_bytes);
	out_u64(o, "sndbuf_used", i.sndbuf_used);
	out_u64(o, "sndbuf", i.sndbuf_cap);
	out_u64(o, "sndbuf_held", i.sndbuf_held);
	out_u64(o, "rcvbuf_used", i.rcvbuf_used);
	out_u64(o, "rcvbuf", i.rcvbuf_cap);
	out_u64(o, "rcvbuf_held", i.rcvbuf_held);
	out_u64(o, "ooo_bytes", i.ooo_bytes);
	out_u64(o, "records_held", i.records_held);
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
	out_u64(o, "acks_compressed", s.acks_compressed);
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
	out_u64(o, "drop_rcv_mem", s.drop_rcv_mem);
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
	out_u64(o, "ecn_ce_rcvd", s.ecn_ce_rcvd);
	out_u64(o, "ecn_reductions", s.ecn_reductions);
	out_u64(o, "sack_reneges", s.sack_reneges);
	out_u64(o, "syn_deferred", s.syn_deferred);
	out_u64(o, "syn_deferred_dropped", s.syn_deferred_dropped);
	out_obj_end(o);
	out_arr_begin(o, conns);
	tcp_foreach_conn(tcp_glue_engine(g), tcp_glue_conn_row, o);
	out_arr_end(o);
}

/* A rate in bytes/s as ss prints it: "352.1Mbps". */
static const char *tcp_stats_rate(uint64_t bytes_per_s, char *buf, size_t len)
{
	double bps = (double)bytes_per_s * 8;

	if (bps >= 1e9)
		snprintf(buf, len, "%.2fGbps", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(buf, len, "%.1fMbps", bps / 1e6);
	else if (bps >= 1e3)
		snprintf(buf, len, "%.1fKbps", bps / 1e3);
	else
		snprintf(buf, len, "%.0fbps", bps);
	return buf;
}

struct tcp_stats_ss {
	struct out *o;
	unsigned int shard;
	const char *engine;
};

static int tcp_glue_ss_row(struct tcp_conn *c, void *arg)
{
	const struct tcp_stats_ss *a = arg;
	struct out *o = a->o;
	struct tcp_conn_info i;
	char l[INET6_ADDRSTRLEN + 16], r[INET6_ADDRSTRLEN + 16], text[160], rate[32];

	tcp_conn_info(c, &i);
	tcp_glue_endpoint_str(&i.local, l, sizeof(l));
	tcp_glue_endpoint_str(&i.remote, r, sizeof(r));
	out_obj_begin(o, NULL);
	out_u64f(o, "shard", "shard %llu ", a->shard);
	out_strf(o, "engine", "%-9s ", a->engine);
	out_strf(o, "state", "%-11s ", tcp_state_name(i.state));
	out_strf(o, "local", "%s ", l);
	out_strf(o, "remote", "%s\n\t", r);
	out_strf(o, "cc", "%s", i.cc ? i.cc : "-");
	out_strf(o, "cong_state", NULL, tcp_cong_state_name(i.cong_state));
	if (i.cong_state)
		out_text(o, i.cong_state == TCP_CONG_RECOVERY ? " recovery" : " loss");
	if (i.cc_mode) {
		out_strf(o, "cc_mode", " %s", i.cc_mode);
		out_strf(o, "cc_bw", " bw:%s", tcp_stats_rate(i.cc_bw, rate, sizeof(rate)));
		out_u64f(o, "cc_bw_bps", NULL, i.cc_bw * 8);
	}
	snprintf(text, sizeof(text), " rtt:%.3f/%.3f rto:%.0f min_rtt:%.3f", i.srtt_us / 1000.0, i.rttvar_us / 1000.0,
		 i.rto_us / 1000.0, i.min_rtt_us / 1000.0);
	out_text(o, text);
	out_u64f(o, "srtt_us", NULL, i.srtt_us);
	out_u64f(o, "rttvar_us", NULL, i.rttvar_us);
	out_u64f(o, "rto_us", NULL, i.rto_us);
	out_u64f(o, "min_rtt_us", NULL, i.min_rtt_us);
	out_u64f(o, "mss", " mss:%llu", i.snd_mss);
	out_u64f(o, "rcv_mss", NULL, i.rcv_mss);
	out_u64f(o, "cwnd", " cwnd:%llu", i.cwnd);
	if (i.ssthresh < 0x7fffffff)
		out_u64f(o, "ssthresh", " ssthresh:%llu", i.ssthresh);
	out_u64f(o, "bytes_in_flight", " inflight:%llu", i.pipe);
	out_u64f(o, "unacked_bytes", NULL, i.unacked_bytes);
	out_u64f(o, "sacked_bytes", " sacked:%llu", i.sacked_bytes);
	out_u64f(o, "lost_bytes", " lost:%llu", i.lost_bytes);
	out_u64f(o, "retrans", " retrans:%llu", i.stats.retrans_segs);
	out_u64f(o, "fast_recoveries", " recoveries:%llu", i.stats.fast_recoveries);
	out_u64f(o, "rtos", " rtos:%llu", i.stats.rto_count);
	out_u64f(o, "tlp_probes", " tlp:%llu", i.stats.tlp_probes);
	out_u64f(o, "undos", NULL, i.undos);
	out_boolf(o, "ecn", i.ecn ? " ecn" : NULL, i.ecn);
	out_u64f(o, "ce_rcvd", i.ce_rcvd ? " ce:%llu" : NULL, i.ce_rcvd);
	out_u64f(o, "ece_rcvd", i.ece_rcvd ? " ece:%llu" : NULL, i.ece_rcvd);
	out_u64f(o, "ecn_reductions", i.ecn_reductions ? " ecn_reductions:%llu" : NULL, i.ecn_reductions);
	out_u64f(o, "bytes_sent", "\n\tbytes_sent:%llu", i.stats.bytes_sent);
	out_u64f(o, "bytes_acked", " bytes_acked:%llu", i.stats.bytes_acked);
	out_u64f(o, "bytes_received", " bytes_received:%llu", i.stats.bytes_received);
	out_u64f(o, "delivered", " delivered:%llu", i.delivered);
	out_u64f(o, "segs_out", " segs_out:%llu", i.stats.segs_out);
	out_u64f(o, "segs_in", " segs_in:%llu", i.stats.segs_in);
	out_strf(o, "delivery_rate", " delivery_rate %s", tcp_stats_rate(i.delivery_rate, rate, sizeof(rate)));
	out_u64f(o, "delivery_rate_bps", NULL, i.delivery_rate * 8);
	if (i.pacing_rate)
		out_strf(o, "pacing_rate", " pacing_rate %s", tcp_stats_rate(i.pacing_rate, rate, sizeof(rate)));
	out_u64f(o, "pacing_rate_bps", NULL, i.pacing_rate * 8);
	out_boolf(o, "app_limited", i.app_limited ? " app_limited" : NULL, i.app_limited);
	out_u64f(o, "snd_wnd", " snd_wnd:%llu", i.snd_wnd);
	out_u64f(o, "rcv_wnd", " rcv_wnd:%llu", i.rcv_wnd);
	out_u64f(o, "sndbuf_used", " notsent+unacked:%llu", i.sndbuf_used);
	out_u64f(o, "rcvbuf_used", " unread:%llu", i.rcvbuf_used);
	out_u64f(o, "ooo_bytes", NULL, i.ooo_bytes);
	out_text(o, "\n");
	out_obj_end(o);
	return 0;
}

/**
 * tcp_glue_print_ss() - one instance's connections, `ss -ti` style
 * @g:		the instance
 * @o:		a formatted printer (out_init_formatted()) inside its array
 * @shard:	the shard it belongs to
 * @engine:	which engine it is ("network", "container")
 */
void tcp_glue_print_ss(struct tcp_glue *g, struct out *o, unsigned int shard, const char *engine)
{
	struct tcp_stats_ss a = { o, shard, engine };

	tcp_foreach_conn(tcp_glue_engine(g), tcp_glue_ss_row, &a);
}

/**
 * tcp_glue_trace_print() - one trace sample as a line of JSON
 * @f:		where
 * @s:		the sample
 * @shard:	the shard of its engine
 * @engine:	which engine ("network", "container")
 *
 * The keys are documented with `datapath ss --trace` (docs/tcp.md).
 */
void tcp_glue_trace_print(FILE *f, const struct tcp_trace_sample *s, unsigned int shard, const char *engine)
{
	char l[INET6_ADDRSTRLEN + 16], r[INET6_ADDRSTRLEN + 16];

	tcp_glue_endpoint_str(&s->local, l, sizeof(l));
	tcp_glue_endpoint_str(&s->remote, r, sizeof(r));
	fprintf(f,
		"{\"t_us\":%llu,\"shard\":%u,\"engine\":\"%s\",\"local\":\"%s\",\"remote\":\"%s\",\"event\":\"%s\","
		"\"cong_state\":\"%s\",\"app_limited\":%s,\"snd_una\":%u,\"snd_nxt\":%u,\"mss\":%u,\"cwnd\":%u,"
		"\"ssthresh\":%u,\"bytes_in_flight\":%u,\"sacked_bytes\":%u,\"lost_bytes\":%u,\"snd_wnd\":%u,"
		"\"srtt_us\":%u,\"rttvar_us\":%u,\"rto_us\":%u,\"min_rtt_us\":%u,\"rtt_us\":%lld,\"acked_sacked\":%u,"
		"\"delivered\":%llu,\"delivery_rate_bps\":%llu,\"pacing_rate_bps\":%llu,\"retrans\":%llu,\"rtos\":%llu,"
		"\"recoveries\":%llu,\"cc_mode\":\"%s\",\"cc_bw_bps\":%llu}\n",
		(unsigned long long)s->t_us, shard, engine, l, r, tcp_trace_event_name(s->event),
		tcp_cong_state_name(s->cong_state), s->app_limited ? "true" : "false", s->snd_una, s->snd_nxt, s->mss,
		s->cwnd, s->ssthresh, s->pipe, s->sacked, s->lost, s->snd_wnd, s->srtt_us, s->rttvar_us, s->rto_us,
		s->min_rtt_us, (long long)s->rtt_us, s->acked_sacked, (unsigned long long)s->delivered,
		(unsigned long long)s->delivery_rate * 8, (unsigned long long)s->pacing_rate * 8,
		(unsigned long long)s->retrans, (unsigned long long)s->rtos, (unsigned long long)s->recoveries,
		s->cc_mode ? s->cc_mode : "", (unsigned long long)s->cc_bw * 8);
}
