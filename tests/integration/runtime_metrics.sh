#!/usr/bin/env bash
# `datapath metrics`, the Prometheus exporter, against the real thing:
#  - two containers (namespaces of the test, each a veth to the test's "host"
#    namespace) attached by `netsetup oci-hook create` as a runtime would, one
#    with a policy annotation; traffic both ways, one connection refused by
#    the policy, one by the metadata default;
#  - a control socket that accepts nothing (a stuck datapath) next to theirs;
#  - the exporter in the host namespace: its process has no capability left;
#    GET /metrics passes `promtool check metrics`, carries each container's
#    series (bytes and packets per link both ways, connections, the refusals
#    per rule, drops, CPU and memory, and a series per shard: container 2
#    runs two, sandnet.shards), the stuck socket costs only its own
#    sandnet_datapath_up 0 and counts in sandnet_scrape_errors_total, and the
#    scrape takes the datapath timeout, not more;
#  - bad requests: another path 404, another method 405, garbage 400, another
#    version 505, a head over 8 KiB 431; a client that sends nothing is cut
#    after --client-timeout with 408 while other clients are answered;
#  - Debian's Prometheus server, offline in the host namespace, scrapes it:
#    up is 1 and sandnet_* series carry both containers;
#  - SIGTERM stops it; the hooks' poststop gives everything back.
# Every process runs in the test's namespaces; Prometheus's data is in $SN_TMP.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

command -v promtool >/dev/null || sn_skip "no promtool (apt-get install prometheus)"
command -v prometheus >/dev/null || sn_skip "no prometheus (apt-get install prometheus)"
[ -x "$DATAPATH" ] || sn_skip "no $DATAPATH"

sn_netns_add host
HOSTNS=$(sn_ns host)
PFX=10.$((200 + $$ % 50)).$(( $$ % 250 ))
PORT=9476
PROM_PORT=9090
URL=http://127.0.0.1:$PORT/metrics
mkdir -p "$SANDNET_STATE_DIR"
chmod 700 "$SANDNET_STATE_DIR"

# ct N: namespace ctN, eth0 PFX.(N*4+2)/30 <-> veth-ctN PFX.(N*4+1) in the host
# namespace, a process in it (the container), attached by the hook (owner
# oci:ID) with the policy annotation @2.
CPIDS=()
ct() {
	local n=$1 policy=$2 shards=$3 ns ip gw
	sn_netns_add "ct$n"
	ns=$(sn_ns "ct$n")
	ip=$PFX.$((n * 4 + 2)); gw=$PFX.$((n * 4 + 1))
	sn_veth_add "ct$n" eth0 host "veth-ct$n"
	ip -n "$HOSTNS" addr add "$gw/30" dev "veth-ct$n"
	ip -n "$ns" addr add "$ip/30" dev eth0
	ip -n "$ns" route add default via "$gw"
	ns_settle "$ns"
	ip netns exec "$ns" sleep 120 >/dev/null 2>&1 &
	CPIDS[$n]=$!
	sn_on_exit "kill ${CPIDS[$n]}"
	sn_on_exit "echo '{\"id\": \"m$$-$n\", \"status\": \"stopped\"}' | '$NETSETUP' oci-hook poststop"
	sn_wait_for 5 sh -c "[ \"\$(readlink /proc/${CPIDS[$n]}/ns/net)\" = \"\$(ip netns exec '$ns' readlink /proc/self/ns/net)\" ]" ||
		sn_fail "the container process did not enter $ns"
	ip netns exec "$HOSTNS" "$NETSETUP" oci-hook create <<<"{\"id\": \"m$$-$n\", \"status\": \"creating\", \"pid\": ${CPIDS[$n]}, \"annotations\": {\"sandnet.policy\": \"$policy\", \"sandnet.shards\": \"$shards\"}}" ||
		sn_fail "hook create (container $n)"
}
ct 1 "egress-deny=tcp:$PFX.9:8000" 1
ct 2 "ingress-deny=tcp:any:22" 2
C1=oci:m$$-1 C2=oci:m$$-2
ls "$SANDNET_STATE_DIR"/*.ctl >/dev/null || sn_fail "no control sockets in $SANDNET_STATE_DIR"

sn_log "traffic: the host pings both, container 1 fetches a page, meets the policy and the metadata default"
echo "page from the host" >"$SN_TMP/index.html"
(cd "$SN_TMP" && exec ip netns exec "$HOSTNS" python3 -m http.server --bind 0.0.0.0 8000) >/dev/null 2>&1 &
sn_on_exit "kill $!"
sn_wait_for 10 ip netns exec "$HOSTNS" curl -sf -o /dev/null "http://$PFX.5:8000/" || sn_fail "the host's http.server"
for n in 1 2; do
	ip netns exec "$HOSTNS" ping -c 2 -i 0.2 -W 2 "$PFX.$((n * 4 + 2))" >/dev/null || sn_fail "ping container $n"
done
ip netns exec "$(sn_ns ct1)" curl -sS --max-time 5 "http://$PFX.5:8000/index.html" >"$SN_TMP/got" ||
	sn_fail "container 1 cannot fetch from the host"
grep -q "page from the host" "$SN_TMP/got" || sn_fail "container 1 fetched: $(cat "$SN_TMP/got")"
# $PFX.9 (container 2's gateway, the same http.server) is served, but container 1's policy denies it
out=$(ip netns exec "$(sn_ns ct1)" curl -sS --max-time 3 "http://$PFX.9:8000/" 2>&1) && sn_fail "the policy let $PFX.9:8000 through"
echo "refused by the policy: $out"
ip netns exec "$(sn_ns ct1)" curl -sS --max-time 3 http://169.254.169.254/ >/dev/null 2>&1 && sn_fail "the metadata address answered"

sn_log "a control socket that accepts nothing (a stuck datapath)"
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[1] + ".ready", "w").close()
time.sleep(120)' "$SANDNET_STATE_DIR/zz-stuck.state.ctl" &
sn_on_exit "kill $!"
sn_wait_for 5 test -e "$SANDNET_STATE_DIR/zz-stuck.state.ctl.ready" || sn_fail "the stuck socket"
printf 'owner oci:stuck-%s\n' $$ >"$SANDNET_STATE_DIR/zz-stuck.state"

sn_log "the exporter in the host namespace"
ip netns exec "$HOSTNS" "$DATAPATH" metrics --listen "127.0.0.1:$PORT" --dir "$SANDNET_STATE_DIR" \
	--datapath-timeout 500 --client-timeout 2 >"$SN_TMP/metrics.log" 2>&1 &
MPID=$!
sn_on_exit "kill $MPID"
sn_wait_for 10 grep -q "serving 127.0.0.1:$PORT/metrics" "$SN_TMP/metrics.log" ||
	sn_fail "the exporter did not start: $(cat "$SN_TMP/metrics.log")"
grep -q "as uid 0 without capabilities" "$SN_TMP/metrics.log" || sn_fail "exporter: $(cat "$SN_TMP/metrics.log")"
for k in CapEff CapPrm CapBnd CapAmb; do
	[ "$(awk -v k="$k:" '$1 == k { print $2 }' "/proc/$MPID/status")" = 0000000000000000 ] ||
		sn_fail "the exporter keeps $k: $(grep Cap "/proc/$MPID/status")"
done
grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$MPID/status" || sn_fail "the exporter may gain privileges"
hget() { ip netns exec "$HOSTNS" curl -sS --max-time 10 "$@"; }

start=$(date +%s%N)
hget -D "$SN_TMP/h1" -o "$SN_TMP/m1" "$URL" || sn_fail "GET /metrics"
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "GET /metrics took $took_ms ms with a stuck datapath (timeout 500 ms)"
[ "$took_ms" -lt 2000 ] || sn_fail "the scrape took $took_ms ms: the stuck datapath held it"
grep -qi '^content-type: text/plain; version=0.0.4' "$SN_TMP/h1" || sn_fail "content type: $(cat "$SN_TMP/h1")"
promtool check metrics <"$SN_TMP/m1" || sn_fail "promtool check metrics (above)"
python3 - "$SN_TMP/m1" "$C1" "$C2" "oci:stuck-$$" "$PFX.9" <<'EOF' || sn_fail "the series (above)"
import re, sys
text, c1, c2, stuck, denied = open(sys.argv[1]).read(), *sys.argv[2:]
s = {}
for line in text.splitlines():
    if line.startswith("#"):
        continue
    name, value = line.rsplit(" ", 1)
    s[name] = float(value)
def v(family, **labels):
    lab = ",".join('%s="%s"' % kv for kv in labels.items())
    key = "%s{%s}" % (family, lab) if lab else family
    assert key in s, "no %s in\n%s" % (key, text)
    return s[key]
for c in (c1, c2):
    assert v("sandnet_datapath_up", container=c) == 1
    assert v("sandnet_link_bytes_total", container=c, link="eth0", direction="rx") > 0
    assert v("sandnet_link_bytes_total", container=c, link="eth0", direction="tx") > 0
    assert v("sandnet_link_packets_total", container=c, link="eth0", direction="rx") >= 2
    assert v("sandnet_link_packets_total", container=c, link="sn-eth0", direction="tx") >= 0
    assert v("sandnet_datapath_resident_memory_bytes", container=c) > 100000
    assert v("sandnet_datapath_cpu_seconds_total", container=c) >= 0
    assert v("sandnet_datapath_uptime_seconds", container=c) > 0
    assert v("sandnet_tcp_connections_open", container=c) >= 0
    assert v("sandnet_udp_flows_opened_total", container=c) >= 0
    for d in ("to_container", "to_network"):
        assert v("sandnet_face_udp_paced_total", container=c, direction=d) >= 0
        assert v("sandnet_face_udp_pace_overruns_total", container=c, direction=d) >= 0
    assert v("sandnet_datapath_status", container=c, status="serving") == 1
    assert v("sandnet_datapath_status", container=c, status="dark") == 0
    assert v("sandnet_datapath_deaths_total", container=c) == 0 and v("sandnet_datapath_restarts_total", container=c) == 0
# a series per shard: one for container 1, two for container 2 (sandnet.shards
# 2); the shards' frames from the network add up to the link's
for c, n in ((c1, 1), (c2, 2)):
    assert not any('container="%s",shard="%d"' % (c, n) in k for k in s), (c, "more shards than", n)
    rx = 0
    for k in range(n):
        assert v("sandnet_shard_cpu_seconds_total", container=c, shard=str(k)) >= 0
        assert v("sandnet_shard_loop_turns_total", container=c, shard=str(k)) > 0
        assert v("sandnet_shard_tcp_connections_open", container=c, shard=str(k)) >= 0
        assert v("sandnet_shard_drops_total", container=c, shard=str(k)) >= 0
        rx += v("sandnet_shard_network_packets_total", container=c, shard=str(k), direction="rx")
    assert rx == v("sandnet_link_packets_total", container=c, link="eth0", direction="rx"), (c, rx)
    # busy polling, on by default (50 us): polls after the turns that had work,
    # each ending in a hit or a miss
    assert v("sandnet_datapath_busy_poll_budget_seconds", container=c) == 50e-6
    polls = sum(v("sandnet_shard_busy_polls_total", container=c, shard=str(k)) for k in range(n))
    ends = sum(v("sandnet_shard_busy_poll_results_total", container=c, shard=str(k), result=r)
               for k in range(n) for r in ("hit", "miss"))
    assert polls >= ends > 0, (c, polls, ends)
assert v("sandnet_link_bytes_total", container=c1, link="sn-eth0", direction="tx") > 0   # the page, to the container
assert v("sandnet_tcp_connections_opened_total", container=c1, direction="outbound") >= 1
assert v("sandnet_policy_rule_hits_total", container=c1, direction="egress", action="deny", rule="tcp:%s:8000" % denied) >= 1
assert v("sandnet_policy_rule_hits_total", container=c1, direction="egress", action="deny", rule="169.254.169.254") >= 1
assert v("sandnet_policy_rule_hits_total", container=c2, direction="ingress", action="deny", rule="tcp:any:22") == 0
assert v("sandnet_drops_total", container=c1, layer="face", reason="policy") >= 2
# the stuck one: its own up 0, named from its state file, nothing else of it; the errors count it
assert v("sandnet_datapath_up", container=stuck) == 0
assert v("sandnet_scrape_errors_total", reason="timeout") == 1
assert sum(1 for k in s if stuck in k) == 1, [k for k in s if stuck in k]
print("ok: %d series; both containers, the stuck socket only as up 0" % len(s))
EOF
grep -q "zz-stuck.state.ctl: no answer within 500 ms" "$SN_TMP/metrics.log" || sn_fail "the log does not name the stuck socket"

sn_log "container 2's datapath killed: its supervisor starts another, the exporter counts it"
ST2=$(grep -l "^owner $C2$" "$SANDNET_STATE_DIR"/*.state) || sn_fail "no state of $C2"
kill -9 "$(awk '$1 == "datapath" { print $2 }' "$ST2.status")"
sn_wait_for 10 sh -c "grep -q '^deaths 1$' '$ST2.status' && grep -q '^state serving$' '$ST2.status'" ||
	sn_fail "no new datapath for $C2: $(cat "$ST2.status")"
hget -o "$SN_TMP/m2" "$URL" || sn_fail "GET /metrics after the death"
promtool check metrics <"$SN_TMP/m2" || sn_fail "promtool check metrics after the death (above)"
grep -qx "sandnet_datapath_deaths_total{container=\"$C2\"} 1" "$SN_TMP/m2" &&
	grep -qx "sandnet_datapath_restarts_total{container=\"$C2\"} 1" "$SN_TMP/m2" &&
	grep -qx "sandnet_datapath_status{container=\"$C2\",status=\"serving\"} 1" "$SN_TMP/m2" &&
	grep -qx "sandnet_datapath_deaths_total{container=\"$C1\"} 0" "$SN_TMP/m2" ||
	sn_fail "the death is not in the metrics: $(grep -E 'deaths|restarts|datapath_status' "$SN_TMP/m2")"

sn_log "bad requests"
# http_raw REQUEST: send the bytes (none: a silent client), read to EOF; prints
# "after S s: STATUS-LINE | BODY"
http_raw() {
	ip netns exec "$HOSTNS" python3 - "$PORT" "$1" <<'EOF'
import socket, sys, time
req = sys.argv[2].encode().decode("unicode_escape").encode("latin-1")
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
t = time.monotonic()
s.sendall(req)
got = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    got += d
head, _, body = got.partition(b"\r\n\r\n")
print("after %.1f s: %s | %s" % (time.monotonic() - t, head.split(b"\r\n")[0].decode(),
                                 body.decode(errors="replace").strip()))
EOF
}
# raw REQUEST STATUS-LINE: the answer to REQUEST has that status line
raw() {
	local out
	out=$(http_raw "$1") || return 1
	echo "${1:0:40} -> $out"
	case $out in *": $2 | "*) return 0;; *) return 1;; esac
}
raw 'GET /other HTTP/1.1\r\nHost: x\r\n\r\n' 'HTTP/1.1 404 Not Found' || sn_fail "another path"
raw 'GET / HTTP/1.1\r\n\r\n' 'HTTP/1.1 404 Not Found' || sn_fail "/"
raw 'POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello' 'HTTP/1.1 405 Method Not Allowed' || sn_fail "POST"
raw 'DELETE /metrics HTTP/1.1\r\n\r\n' 'HTTP/1.1 405 Method Not Allowed' || sn_fail "DELETE"
raw '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n' 'HTTP/1.1 400 Bad Request' || sn_fail "TLS to the plain port"
raw 'GET /metrics\r\n\r\n' 'HTTP/1.1 400 Bad Request' || sn_fail "HTTP/0.9"
raw 'GET /metrics HTTP/3.0\r\n\r\n' 'HTTP/1.1 505 HTTP Version Not Supported' || sn_fail "HTTP/3.0"
raw "GET /metrics HTTP/1.1\\r\\nX: $(head -c 9000 /dev/zero | tr '\0' a)\\r\\n\\r\\n" \
	'HTTP/1.1 431 Request Header Fields Too Large' || sn_fail "a 9 KB header"
raw 'GET /metrics HTTP/1.1\r\nbad header\r\n\r\n' 'HTTP/1.1 400 Bad Request' || sn_fail "a malformed header line"
curl_code() { hget -o /dev/null -w '%{http_code}' "$@"; }
[ "$(curl_code -I "$URL")" = 200 ] || sn_fail "HEAD /metrics"
[ "$(curl_code -X PUT "$URL")" = 405 ] || sn_fail "PUT /metrics with curl"

sn_log "a client that sends nothing is cut after --client-timeout; the others are answered meanwhile"
http_raw '' >"$SN_TMP/silent.out" 2>&1 &
SILENT=$!
sleep 0.3
start=$(date +%s%N)
hget -o /dev/null "$URL" || sn_fail "GET /metrics while a silent client is connected"
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$took_ms" -lt 1500 ] || sn_fail "a silent client held another's request for $took_ms ms"
wait "$SILENT" || sn_fail "the silent client: $(cat "$SN_TMP/silent.out")"
cat "$SN_TMP/silent.out"
grep -Eq "^after (1\.[7-9]|2\.[0-9]) s: HTTP/1.1 408 Request Timeout \| .*no complete request within 2 s" "$SN_TMP/silent.out" ||
	sn_fail "the silent client was not cut after 2 s with 408"

sn_log "Prometheus scrapes it"
cat >"$SN_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: sandnet
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
EOF
promtool check config "$SN_TMP/prometheus.yml" >/dev/null || sn_fail "promtool check config"
ip netns exec "$HOSTNS" prometheus --config.file="$SN_TMP/prometheus.yml" --storage.tsdb.path="$SN_TMP/prom" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$SN_TMP/prometheus.log" 2>&1 &
sn_on_exit "kill $!"
query() { hget -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
# Prometheus up, the target scraped (up 1), and both containers' series there
scraped() {
	query 'up{job="sandnet"}' | grep -q '"value":\[[0-9.]*,"1"\]' &&
		query 'sandnet_link_bytes_total{direction="rx",link="eth0"}' | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
assert {x["metric"]["container"] for x in r} >= set(sys.argv[1:]), r' "$C1" "$C2"
}
sn_wait_for 20 scraped || sn_fail "Prometheus did not scrape both containers: $(query 'up'; tail -5 "$SN_TMP/prometheus.log")"
query 'sandnet_datapath_up' | python3 -c '
import json, sys
r = {x["metric"]["container"]: x["value"][1] for x in json.load(sys.stdin)["data"]["result"]}
assert r[sys.argv[1]] == "1" and r[sys.argv[2]] == "1" and r[sys.argv[3]] == "0", r
print("Prometheus: sandnet_datapath_up", r)' "$C1" "$C2" "oci:stuck-$$" || sn_fail "sandnet_datapath_up in Prometheus"
query 'up{job="sandnet"}' | grep -q '"value":\[[0-9.]*,"1"\]' || sn_fail "up is not 1"

sn_log "SIGTERM stops the exporter"
kill "$MPID"
wait "$MPID" || sn_fail "the exporter exited $? on SIGTERM: $(tail -3 "$SN_TMP/metrics.log")"
grep -q "datapath metrics: stopped" "$SN_TMP/metrics.log" || sn_fail "no 'stopped' in the log"
! grep -Eq 'Sanitizer|runtime error' "$SN_TMP/metrics.log" || sn_fail "sanitizer report: $(cat "$SN_TMP/metrics.log")"
ns_expect_fail "a bad --listen" "--listen '127.0.0.1': expected ADDRESS:PORT" -- "$DATAPATH" metrics --listen 127.0.0.1
ns_expect_fail "no --listen" "--listen ADDRESS:PORT is needed" -- "$DATAPATH" metrics
ns_expect_fail "a bad timeout" "--datapath-timeout '0': expected a number in 10..60000" -- \
	"$DATAPATH" metrics --listen 127.0.0.1:1 --datapath-timeout 0
echo "metrics: promtool, Prometheus, both containers, the stuck one alone, every bad request answered"
