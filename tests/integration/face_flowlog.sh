#!/usr/bin/env bash
# The flow log (issue 42): one JSON line per conversation of the container,
# when it ends, in the file --flow-log names and to `datapath flows
# --follow`. Name rules and dnsmasq in the peer, as face_names.sh. Checked:
#  - bad --flow-log and `datapath flows` command lines: exit 2, naming what;
#  - a TCP connection that sent N bytes and got N/2 back: one record, proto
#    tcp, the allowed name, the rule, bytes_out N and bytes_in N/2 (what the
#    peer's server counted), ended "closed";
#  - an HTTP request whose Host no rule allows: one record, verdict deny, the
#    name it gave, bytes_out 0 (the server got nothing), ended "name";
#  - an address never looked up: verdict deny, no rule (the default), ended
#    "policy"; a refused DNS query: udp to 53, the name asked, ended "policy";
#  - UDP and ICMP flows: datagrams and bytes each way as sent, ended "stop"
#    when the datapath stops; the resolver's flow is there too;
#  - with --flow-log-starts, each conversation let through has one start
#    record before its end record, a refused one none;
#  - the live view got the same lines as the file while following;
#  - stats and metrics count the records, with nothing dropped;
#  - a flow log nobody reads (a FIFO whose reader never reads): the writer
#    is stuck, the ring fills and records are dropped and counted, and the
#    datapath goes on serving: a connection made meanwhile works.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"
command -v dnsmasq >/dev/null || sn_skip "dnsmasq not installed"

sn_log "bad command lines: exit 2, naming what was wrong"
for bad in "--flow-log /nonexistent-$$/flows.jsonl:the folder /nonexistent-$$ does not exist" \
	"--flow-log=:--flow-log '': give the path of a file"; do
	# shellcheck disable=SC2086
	out=$("$DATAPATH" --fd 0 ${bad%%:*} 2>&1); rc=$?
	[ "$rc" = 2 ] || sn_fail "datapath ${bad%%:*}: exit $rc, not 2: $out"
	echo "$out" | grep -qF -- "${bad#*:}" || sn_fail "datapath ${bad%%:*} said: $out"
	echo "ok: $out"
done
out=$("$DATAPATH" flows --control /nonexistent 2>&1); rc=$?
[ "$rc" = 2 ] && echo "$out" | grep -q -- "--follow" || sn_fail "datapath flows without --follow: exit $rc: $out"
out=$("$DATAPATH" flows --control "/nonexistent-$$.ctl" --follow 2>&1); rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q "No such file" || sn_fail "datapath flows on no socket: exit $rc: $out"
echo "ok: datapath flows: $out"

FLOWS="$SN_TMP/flows.jsonl"
DP_GSO=hw
dp_env_up --name flowtest --flow-log "$FLOWS" --flow-log-starts \
	--egress-allow tcp:allowed.test:8002 \
	--egress-allow udp:allowed.test:9000 \
	--egress-allow icmp:allowed.test
face_check_fenced
tcp_peer_csum_off
ip -n "$PEER" addr add 10.77.0.11/24 dev veth0
ip -n "$PEER" addr add 10.77.0.12/24 dev veth0
[ -f "$FLOWS" ] || sn_fail "the supervisor did not make $FLOWS"

# the peer's servers: TCP takes everything, answers half as many bytes, and logs both; UDP echoes
cat >"$SN_TMP/servers.py" <<'PY'
import socket, sys, threading
log = open(sys.argv[1], "a", buffering=1)
def take(c):
    n = 0
    c.settimeout(5)
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            n += len(d)
        c.sendall(b"x" * (n // 2))
    except OSError:
        pass
    c.close()
    log.write(f"tcp {n} {n // 2}\n")
def tcp():
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", 8002)); ls.listen(16)
    while True:
        c, a = ls.accept()
        threading.Thread(target=take, args=(c,), daemon=True).start()
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.77.0.11", 9000))	# answers from there
    while True:
        d, a = s.recvfrom(65536)
        s.sendto(d, a)
threading.Thread(target=udp, daemon=True).start()
tcp()
PY
: >"$SN_TMP/servers.log"
ip netns exec "$PEER" python3 "$SN_TMP/servers.py" "$SN_TMP/servers.log" &
sn_on_exit "kill $!"
ip netns exec "$PEER" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces \
	--listen-address=10.77.0.1 --port=53 --pid-file= \
	--host-record=allowed.test,10.77.0.11 --host-record=other.test,10.77.0.12 \
	--log-queries --log-facility=- >"$SN_TMP/dnsmasq.log" 2>&1 &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 8002
sn_wait_for 10 sh -c "ip netns exec '$PEER' ss -Hlun 'sport = :53' | grep -q ." || sn_fail "dnsmasq did not start"
printf 'nameserver 10.77.0.1\noptions attempts:1 timeout:2\n' >"$SN_TMP/resolv.conf"
in_ct() {
	ip netns exec "$CT" unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$SN_TMP/resolv.conf" "$@"
}

sn_log "the live view follows while the conversations happen"
ip netns exec "$DPNS" "$DATAPATH" flows --control "$DP_CTL" --follow --json --seconds 60 >"$SN_TMP/follow.jsonl" \
	2>"$SN_TMP/follow.err" &
FOLLOW_PID=$!
sn_on_exit "kill $FOLLOW_PID 2>/dev/null"
ip netns exec "$DPNS" "$DATAPATH" flows --control "$DP_CTL" --follow --seconds 60 >"$SN_TMP/follow.txt" \
	2>&1 &
FOLLOW_TEXT_PID=$!
sn_on_exit "kill $FOLLOW_TEXT_PID 2>/dev/null"
sn_wait_for 10 sh -c "ip netns exec '$DPNS' '$DATAPATH' stats --control '$DP_CTL' --json |
	python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)[\"flow_log\"][\"followers\"] != 2)'" ||
	sn_fail "the two followers are not attached: $(cat "$SN_TMP/follow.err")"

got=$(in_ct getent ahosts allowed.test | awk '{print $1}' | sort -u | tr '\n' ' ')
[ "$got" = "10.77.0.11 " ] || sn_fail "lookup of allowed.test: '$got'"
in_ct getent ahosts other.test && sn_fail "other.test was answered"
cat >"$SN_TMP/client.py" <<'PY'
import socket, subprocess, sys
mode = sys.argv[1]
if mode == "tcp":		# N bytes out, then read what comes back until EOF
    n = int(sys.argv[2])
    s = socket.create_connection(("10.77.0.11", 8002), timeout=10)
    s.sendall(b"y" * n)
    s.shutdown(socket.SHUT_WR)
    got = 0
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += len(d)
    print(got)
elif mode == "host":		# an HTTP request naming a host no rule allows
    s = socket.create_connection(("10.77.0.11", 8002), timeout=10)
    s.sendall(b"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n")
    try:
        print("closed" if not s.recv(1) else "data")
    except ConnectionResetError:
        print("reset")
elif mode == "udp":		# 3 datagrams of 100, 200 and 300 bytes, each echoed
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.bind(("0.0.0.0", 40900))
    got = 0
    for size in (100, 200, 300):
        s.sendto(b"u" * size, ("10.77.0.11", 9000))
        got += len(s.recv(65536))
    print(got)
PY
got=$(in_ct python3 "$SN_TMP/client.py" tcp 123456) || sn_fail "the TCP client: $got"
[ "$got" = 61728 ] || sn_fail "the TCP client got $got bytes back, not 61728"
got=$(in_ct python3 "$SN_TMP/client.py" host)
[ "$got" = reset ] || sn_fail "a request for Host other.test: $got, not reset"
expect=$(face_errno "$CT" 4 10.77.0.12 8002)
[ "$expect" = EHOSTUNREACH ] || sn_fail "other.test's address: $expect, not refused"
got=$(in_ct python3 "$SN_TMP/client.py" udp) || sn_fail "the UDP client: $got"
[ "$got" = 600 ] || sn_fail "the UDP client got $got bytes back, not 600"
ip netns exec "$CT" ping -c 2 -i 0.2 -W 2 -s 56 10.77.0.11 >/dev/null || sn_fail "ping allowed.test"
sn_wait_for 10 sh -c "[ \$(wc -l <'$SN_TMP/servers.log') -ge 2 ]" || sn_fail "the server logged $(cat "$SN_TMP/servers.log")"
[ "$(head -n 1 "$SN_TMP/servers.log")" = "tcp 123456 61728" ] || sn_fail "the server: $(cat "$SN_TMP/servers.log")"
[ "$(sed -n 2p "$SN_TMP/servers.log")" = "tcp 0 0" ] || sn_fail "the refused Host reached the server: $(cat "$SN_TMP/servers.log")"

sn_log "counted, and exported"
# the TCP connections (2, and their starts), the refused address, the refused query's A and AAAA,
# the starts of the UDP, ICMP and resolver flows: 10 at least, so far
sn_wait_for 10 sh -c "[ \$(wc -l <'$FLOWS') -ge 10 ]" || sn_fail "the flow log has $(wc -l <"$FLOWS") records"
lines=$(wc -l <"$FLOWS")
dp_stats --json | python3 -c '
import json, sys
fl = json.load(sys.stdin)["flow_log"]
assert fl["file"] is True and fl["records"] == int(sys.argv[1]) and fl["dropped"] == 0, fl
assert fl["followers"] == 2 and fl["follower_dropped"] == 0, fl
print("ok: stats", fl)
' "$lines" || sn_fail "flow log stats: $(dp_stats --json | grep -A6 flow_log)"
ip netns exec "$DPNS" "$DATAPATH" metrics --listen 127.0.0.1:9478 --dir "$(dirname "$DP_CTL")" \
	>"$SN_TMP/metrics.log" 2>&1 &
METRICS_PID=$!
sn_on_exit "kill $METRICS_PID"
sn_wait_for 10 ip netns exec "$DPNS" curl -sf -o /dev/null http://127.0.0.1:9478/metrics || sn_fail "no metrics"
ip netns exec "$DPNS" curl -s http://127.0.0.1:9478/metrics >"$SN_TMP/metrics.txt"
grep -q "^sandnet_flow_log_records_total{container=\"flowtest\"} $lines\$" "$SN_TMP/metrics.txt" &&
	grep -q "^sandnet_flow_log_dropped_total{container=\"flowtest\"} 0\$" "$SN_TMP/metrics.txt" ||
	sn_fail "metrics: $(grep flow_log "$SN_TMP/metrics.txt")"
echo "ok: metrics: $(grep '^sandnet_flow_log' "$SN_TMP/metrics.txt" | tr '\n' ' ')"
kill "$METRICS_PID"

sn_log "the records, once the datapath stopped (its UDP and ICMP flows end then)"
dp_env_down
sn_wait_for 10 sh -c "! kill -0 $FOLLOW_PID 2>/dev/null" || sn_fail "the follower did not end with the datapath"
python3 - "$FLOWS" "$SN_TMP/follow.jsonl" <<'PY' || sn_fail "the flow log: $(cat "$FLOWS")"
import json, sys
every = [json.loads(l) for l in open(sys.argv[1])]
recs = [r for r in every if r["event"] == "end"]
starts = [r for r in every if r["event"] == "start"]
assert len(recs) + len(starts) == len(every), every
key = lambda r: (r["proto"], r["src"], r["sport"], r["dst"], r["dport"])
for r in recs:
    s = [x for x in starts if key(x) == key(r)]
    if r["verdict"] == "allow":
        assert len(s) == 1 and s[0]["time"] <= r["time"] and s[0]["end"] is None, (r, s)
        assert (s[0]["bytes_out"], s[0]["bytes_in"], s[0]["rule"]) == (0, 0, r["rule"]), s
    elif r["end"] == "policy":
        assert not s, (r, s)	# refused: it never began
assert len(starts) == len([r for r in recs if r["verdict"] == "allow" or r["end"] == "name"]), (starts, recs)
for r in recs:
    for k in ("time", "event", "container", "proto", "direction", "src", "sport", "dst", "dport", "name", "verdict", "rule",
              "bytes_out", "packets_out", "bytes_in", "packets_in", "duration_s", "end"):
        assert k in r, (k, r)
    assert r["container"] == "flowtest", r
def one(**want):
    got = [r for r in recs if all(r[k] == v for k, v in want.items())]
    assert len(got) == 1, (want, got, recs)
    return got[0]
t = one(proto="tcp", dport=8002, dst="10.77.0.11", end="closed")
assert (t["name"], t["verdict"], t["rule"]) == ("allowed.test", "allow", "tcp:allowed.test:8002"), t
assert (t["bytes_out"], t["bytes_in"], t["direction"], t["src"]) == (123456, 61728, "egress", "10.77.0.2"), t
assert t["packets_out"] >= 3 and t["packets_in"] >= 3 and t["duration_s"] < 10, t
h = one(proto="tcp", dport=8002, end="name")
assert (h["name"], h["verdict"], h["bytes_out"], h["bytes_in"]) == ("other.test", "deny", 0, 0), h
p = one(proto="tcp", dst="10.77.0.12", end="policy")
assert (p["verdict"], p["rule"], p["name"]) == ("deny", None, None), p
q = [r for r in recs if r["proto"] == "udp" and r["dport"] == 53 and r["name"] == "other.test"]
assert len(q) >= 1 and all(r["verdict"] == "deny" and r["end"] == "policy" and r["bytes_out"] > 0 for r in q), q
r53 = [r for r in recs if r["proto"] == "udp" and r["dport"] == 53 and r["verdict"] == "allow"]
assert r53 and r53[0]["end"] == "stop" and r53[0]["bytes_in"] > 0, r53
u = one(proto="udp", dport=9000)
assert (u["packets_out"], u["bytes_out"], u["packets_in"], u["bytes_in"]) == (3, 600, 3, 600), u
assert (u["name"], u["rule"], u["end"], u["sport"]) == ("allowed.test", "udp:allowed.test:9000", "stop", 40900), u
i = one(proto="icmp", dst="10.77.0.11")
assert (i["packets_out"], i["packets_in"], i["bytes_out"], i["rule"]) == (2, 2, 128, "icmp:allowed.test"), i
# the live view: every record the file has, in the same words, the ones that ended while it followed
follow = [json.loads(l) for l in open(sys.argv[2])]
assert len([r for r in follow if r["event"] == "start"]) >= 4, follow
assert t in follow and h in follow and p in follow and u in follow, follow
print("ok:", len(recs), "records and", len(starts), "starts;", "tcp", t["bytes_out"], t["bytes_in"], "udp", u["bytes_out"], "icmp", i["packets_out"])
PY
grep -q "tcp    egress  10.77.0.2:[0-9]* -> 10.77.0.11:8002 name=allowed.test allow rule=tcp:allowed.test:8002 out=123456/" \
	"$SN_TMP/follow.txt" || sn_fail "the text view: $(cat "$SN_TMP/follow.txt")"
echo "ok: the text view: $(grep -c . "$SN_TMP/follow.txt") lines"

sn_log "a flow log nobody reads: records dropped and counted, the datapath serves on"
dp_env_reset
mkfifo "$SN_TMP/stuck.fifo"
sleep 600 <>"$SN_TMP/stuck.fifo" &	# holds the FIFO open, never reads it
STUCK_PID=$!
sn_on_exit "kill $STUCK_PID 2>/dev/null"
dp_env_up --name stuck --flow-log "$SN_TMP/stuck.fifo" --egress-deny udp:10.77.0.1:7000-7099
ip -n "$PEER" addr add 10.77.0.11/24 dev veth0
ip netns exec "$PEER" python3 "$SN_TMP/servers.py" "$SN_TMP/servers2.log" &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 8002
# 6000 refused datagrams, a record each: more than the pipe and the ring hold
ip netns exec "$CT" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(6000):
    s.sendto(b"z" * 64, ("10.77.0.1", 7000 + i % 100))
    if i % 200 == 199:
        time.sleep(0.002)	# the TUN queue takes them all
'
sn_wait_for 10 sh -c "ip netns exec '$DPNS' '$DATAPATH' stats --control '$DP_CTL' --json |
	python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)[\"flow_log\"][\"dropped\"] == 0)'" ||
	sn_fail "nothing dropped: $(dp_stats --json | grep -A6 flow_log)"
got=$(ip netns exec "$CT" timeout 10 python3 - <<'PY'
import socket
s = socket.create_connection(("10.77.0.1", 8002), timeout=5)
s.sendall(b"y" * 1000)
s.shutdown(socket.SHUT_WR)
print(len(s.recv(65536)))
PY
) || sn_fail "a connection while the flow log is stuck: $got"
[ "$got" = 500 ] || sn_fail "a connection while the flow log is stuck: $got bytes back, not 500"
dp_stats --json | python3 -c '
import json, sys
fl = json.load(sys.stdin)["flow_log"]
# what was not written was dropped: never more records than refusals (the TUN may drop some under a slow build)
assert fl["dropped"] > 0 and fl["dropped"] + fl["records"] <= 6000 + 16, fl
print("ok: stuck flow log", fl)
' || sn_fail "stuck flow log stats"
kill "$STUCK_PID"	# its reader gone: the writer's write fails (EPIPE) and it ends
dp_env_down
