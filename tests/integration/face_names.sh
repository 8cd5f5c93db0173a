#!/usr/bin/env bash
# Egress by DNS name (issue 42): name rules in the policy, the container's DNS
# read by the datapath. dnsmasq in the peer answers for every name; the
# container asks through its resolv.conf with glibc (getent) and connects
# with the kernel's socket API. Checked, as a user sees it:
#  - nothing a name rule names is reachable before its name was looked up:
#    egress is refused by default once a name rule is given;
#  - a lookup of an allowed name (directly, through a CNAME, under a
#    wildcard) works, and then its addresses are reachable on the rule's
#    protocol and ports only, IPv4 and IPv6;
#  - a lookup of any other name fails (REFUSED) and never reaches dnsmasq
#    (its query log), a name a deny rule names before a wildcard included:
#    DNS carries nothing out; the addresses of such names stay refused, even
#    when the container knows them;
#  - DNS over TCP (glibc's use-vc, and three queries pipelined in one
#    write) is read message by message: allowed names answered, a refused
#    one resets the connection and never reaches dnsmasq; bytes that are no
#    query are dropped over UDP and reset the connection over TCP;
#  - what a connection says it is for: a TLS ClientHello's server_name
#    (openssl s_client) or an HTTP request's Host (curl) that no rule allows
#    on that port resets the connection, and the server (a recorder of
#    every byte) receives none; an allowed one, or bytes of neither, pass;
#    a ClientHello sent 20 bytes at a time passes whole; one that never
#    finishes is reset after 10 s, and the server gets none of it; curl over
#    HTTPS (certificate checked) reaches a TLS server on an allowed name;
#  - `datapath stats` counts the queries, the refusals, the bindings and the
#    rules' hits, and `datapath metrics` exports them;
#  - with --name-ttl 3-3, a binding made by an answer with TTL 0 lets a
#    connection through at once and refuses one 3.5 s later, until the next
#    lookup.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"
command -v dnsmasq >/dev/null || sn_skip "dnsmasq not installed"

sn_log "malformed name rules: exit 2, naming the rule"
for bad in "--egress-allow frob" "--ingress-allow tcp:pypi.org:443" "--egress-allow a..b.test" \
	"--egress-deny 10.0.0.300"; do
	# shellcheck disable=SC2086
	out=$("$DATAPATH" --fd 0 $bad 2>&1); rc=$?
	[ "$rc" = 2 ] || sn_fail "datapath $bad: exit $rc, not 2: $out"
	echo "$out" | grep -qF -- "datapath: ${bad%% *} '${bad#* }': " || sn_fail "datapath $bad said: $out"
	echo "ok: $out"
done

DP_GSO=hw
dp_env_up \
	--egress-allow tcp:allowed.test:8000 \
	--egress-allow alias.test \
	--egress-deny bad.wild.test \
	--egress-allow "*.wild.test"
face_check_fenced
tcp_peer_csum_off
for a in 10.77.0.11 10.77.0.12 10.77.0.13 10.77.0.14 10.77.0.15 10.77.0.16; do ip -n "$PEER" addr add "$a/24" dev veth0; done
ip -n "$PEER" addr add fd77::11/64 dev veth0 nodad

cat >"$SN_TMP/tcpsrv.py" <<'PY'
import socket, sys, threading
def serve(port):
    ls = socket.socket(socket.AF_INET6); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("::", port)); ls.listen(64)
    while True:
        c, a = ls.accept(); c.sendall(b"hi"); c.close()
for p in sys.argv[1:]:
    threading.Thread(target=serve, args=(int(p),), daemon=True).start()
threading.Event().wait()
PY
ip netns exec "$PEER" python3 "$SN_TMP/tcpsrv.py" 8001 &
sn_on_exit "kill $!"
mkdir -p "$SN_TMP/www"
echo "served" >"$SN_TMP/www/index.html"
(cd "$SN_TMP/www" && exec ip netns exec "$PEER" python3 -m http.server --bind :: 8000 >"$SN_TMP/http.log" 2>&1) &
sn_on_exit "kill $!"
# the recorder: every connection's byte count, one line each, when it ends
cat >"$SN_TMP/recorder.py" <<'PY'
import socket, sys, threading
log = open(sys.argv[2], "a", buffering=1)
def take(c, a):
    n = 0
    c.settimeout(1)	# idle: the client waits for an answer that never comes
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            n += len(d)
    except OSError:
        pass
    c.close()
    log.write(f"{a[0]} {n}\n")
ls = socket.socket(socket.AF_INET6); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("::", int(sys.argv[1]))); ls.listen(64)
while True:
    c, a = ls.accept()
    threading.Thread(target=take, args=(c, a), daemon=True).start()
PY
: >"$SN_TMP/recorder.log"
ip netns exec "$PEER" python3 "$SN_TMP/recorder.py" 8002 "$SN_TMP/recorder.log" &
sn_on_exit "kill $!"
ip netns exec "$PEER" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces \
	--listen-address=10.77.0.1 --port=53 --pid-file= \
	--host-record=allowed.test,10.77.0.11,fd77::11 --host-record=other.test,10.77.0.12 \
	--host-record=target.cdn.test,10.77.0.13 --cname=alias.test,target.cdn.test \
	--host-record=a.wild.test,10.77.0.14 --host-record=bad.wild.test,10.77.0.15 \
	--host-record=wild.test,10.77.0.14 --host-record=tcp.wild.test,10.77.0.16 \
	--log-queries --log-facility=- >"$SN_TMP/dnsmasq.log" 2>&1 &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 8001
tcp_wait_listen "$PEER" 8000
tcp_wait_listen "$PEER" 8002
sn_wait_for 10 sh -c "ip netns exec '$PEER' ss -Hlun 'sport = :53' | grep -q ." || sn_fail "dnsmasq did not start"
printf 'nameserver 10.77.0.1\noptions attempts:1 timeout:2\n' >"$SN_TMP/resolv.udp"
printf 'nameserver 10.77.0.1\noptions use-vc attempts:1 timeout:2\n' >"$SN_TMP/resolv.tcp"

# lookup HOW NAME: the addresses getent gives, one line, or "FAILED"
lookup() {
	ip netns exec "$CT" unshare -m sh -c \
		"mount --bind '$SN_TMP/resolv.$1' /etc/resolv.conf && getent ahosts '$2'" 2>/dev/null |
		awk '{print $1}' | sort -u | tr '\n' ' ' | sed 's/ $//'
	[ "${PIPESTATUS[0]}" = 0 ] || echo "FAILED"
}
# in_ct CMD...: a command in the container with the resolv.conf that reaches dnsmasq
in_ct() {
	ip netns exec "$CT" unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$SN_TMP/resolv.udp" "$@"
}
# expect_lookup NAME WANT
expect_lookup() {
	local got
	got=$(lookup udp "$1")
	[ "$got" = "$2" ] || sn_fail "lookup of $1: '$got', expected '$2'"
	echo "ok: $1 -> $got"
}
# expect_tcp WANT FAM ADDR PORT
expect_tcp() {
	local got
	got=$(face_errno "$CT" "$2" "$3" "$4")
	[ "$got" = "$1" ] || sn_fail "connect to $3 port $4: $got, expected $1"
	echo "ok: connect $3:$4: $got"
}

sn_log "before any lookup: every address refused, by default"
expect_tcp EHOSTUNREACH 4 10.77.0.11 8000
expect_tcp EACCES 6 fd77::11 8000
expect_tcp EHOSTUNREACH 4 10.77.0.1 8000		# no rule names the peer either

sn_log "an allowed name: looked up, then reachable on the rule's port only"
expect_lookup allowed.test "10.77.0.11 fd77::11"
expect_tcp connected 4 10.77.0.11 8000
expect_tcp connected 6 fd77::11 8000
expect_tcp EHOSTUNREACH 4 10.77.0.11 8001		# tcp:allowed.test:8000

sn_log "through a CNAME, and under a wildcard (every port)"
expect_lookup alias.test 10.77.0.13
expect_tcp connected 4 10.77.0.13 8000
expect_tcp connected 4 10.77.0.13 8001
expect_tcp EHOSTUNREACH 4 10.77.0.14 8001		# not looked up yet
expect_lookup a.wild.test 10.77.0.14
expect_tcp connected 4 10.77.0.14 8001

sn_log "any other name: refused by the datapath, never seen by the resolver"
for name in other.test bad.wild.test wild.test target.cdn.test secret-4f2a.exfil.example; do
	expect_lookup "$name" FAILED
	grep -q "query.* $name from" "$SN_TMP/dnsmasq.log" && sn_fail "dnsmasq saw a query for $name"
done
expect_tcp EHOSTUNREACH 4 10.77.0.12 8000		# other.test, known to the container anyway
expect_tcp EHOSTUNREACH 4 10.77.0.15 8000		# bad.wild.test
grep -q "query\[A\] allowed.test from 10.77.0.2" "$SN_TMP/dnsmasq.log" ||
	sn_fail "dnsmasq saw no query for allowed.test: $(cat "$SN_TMP/dnsmasq.log")"

sn_log "DNS over TCP: read message by message, pipelined queries included"
got=$(lookup tcp allowed.test)
[ "$got" = "10.77.0.11 fd77::11" ] || sn_fail "a lookup over TCP: $got"
echo "ok: allowed.test over TCP -> $got"
expect_tcp EHOSTUNREACH 4 10.77.0.16 8001		# tcp.wild.test, not looked up yet
got=$(lookup tcp tcp.wild.test)
[ "$got" = "10.77.0.16" ] || sn_fail "a lookup of tcp.wild.test over TCP: $got"
expect_tcp connected 4 10.77.0.16 8001		# bound by the answer over TCP
got=$(lookup tcp other.test)
[ "$got" = FAILED ] || sn_fail "a lookup of other.test over TCP: $got"
echo "ok: other.test over TCP -> $got (the connection reset)"
cat >"$SN_TMP/dnstcp.py" <<'PY'
import socket, struct, sys
# queries given by name, pipelined; prints "ID:rcodeN:anN" per answer, or "reset"
def query(qid, name, qtype):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack(">HH", qtype, 1)
    return struct.pack(">H", len(q)) + q
s = socket.create_connection((sys.argv[1], 53), timeout=5)
s.sendall(b"".join(query(i + 1, n, 1) for i, n in enumerate(sys.argv[2:])))	# A queries, one write
got, buf = [], b""
try:
    while len(got) < len(sys.argv) - 2:
        d = s.recv(65536)
        if not d:
            break
        buf += d
        while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
            n = struct.unpack(">H", buf[:2])[0]
            m, buf = buf[2:2 + n], buf[2 + n:]
            got.append("%d:rcode%d:an%d" % (struct.unpack(">H", m[:2])[0], m[3] & 15, struct.unpack(">H", m[6:8])[0]))
except ConnectionResetError:
    got.append("reset")
print(" ".join(got))
PY
got=$(in_ct python3 "$SN_TMP/dnstcp.py" 10.77.0.1 allowed.test alias.test a.wild.test)
[ "$got" = "1:rcode0:an1 2:rcode0:an2 3:rcode0:an1" ] || sn_fail "three queries in one write: $got"
echo "ok: three allowed queries pipelined in one write: $got"
got=$(in_ct python3 "$SN_TMP/dnstcp.py" 10.77.0.1 allowed.test pipelined-secret.exfil.example)
case $got in reset|"1:rcode0:an1 reset") ;; *) sn_fail "an allowed and a refused query pipelined: $got";; esac
echo "ok: an allowed and a refused query pipelined: $got"
grep -q "other.test\|pipelined-secret" "$SN_TMP/dnsmasq.log" && sn_fail "dnsmasq saw a refused name over TCP"

sn_log "DNS that is no query: dropped over UDP, the connection reset over TCP"
cat >"$SN_TMP/dnsbad.py" <<'PY'
import socket, struct, sys
mode = sys.argv[2]
if mode == "udp":	# an HTTP request to port 53
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(b"GET / HTTP/1.0\r\n\r\n", (sys.argv[1], 53))
    try:
        s.recv(512)
        print("answered")
    except socket.timeout:
        print("no answer")
    sys.exit(0)
s = socket.create_connection((sys.argv[1], 53), timeout=5)
# a message of length 0, or a query longer than the 4 KiB a query may have
s.sendall(struct.pack(">H", 0) if mode == "tcp-empty" else struct.pack(">H", 5000) + bytes(5000))
try:
    print("closed" if not s.recv(1) else "answered")
except ConnectionResetError:
    print("reset")
PY
for want in "udp:no answer" "tcp-empty:reset" "tcp-long:reset"; do
	got=$(in_ct python3 "$SN_TMP/dnsbad.py" 10.77.0.1 "${want%%:*}")
	[ "$got" = "${want#*:}" ] || sn_fail "DNS that is no query, ${want%%:*}: $got, not ${want#*:}"
	echo "ok: ${want%%:*}: $got"
done
grep -q "query\[A\] alias.test from 10.77.0.2" "$SN_TMP/dnsmasq.log" || sn_fail "dnsmasq saw no pipelined query"

sn_log "what the connection says it is: TLS server_name and HTTP Host"
# recorded N: the recorder's log has N lines; prints the last line's byte count
recorded() {
	sn_wait_for 10 sh -c "[ \$(wc -l <'$SN_TMP/recorder.log') -ge $1 ]" || sn_fail "the recorder logged no connection $1"
	tail -n 1 "$SN_TMP/recorder.log" | awk '{print $2}'
}
got=$(in_ct curl -s -m 5 http://allowed.test:8000/index.html) || sn_fail "curl http://allowed.test:8000: $?"
[ "$got" = served ] || sn_fail "curl http://allowed.test:8000: $got"
echo "ok: curl http://allowed.test:8000/ (Host allowed.test:8000): $got"
in_ct curl -s -m 5 -H "Host: other.test" http://allowed.test:8000/index.html; rc=$?
[ "$rc" = 56 ] || sn_fail "curl with Host other.test: exit $rc, not 56 (connection reset)"
echo "ok: curl -H 'Host: other.test' http://allowed.test:8000/: exit $rc (reset)"
grep -q "GET /index.html" "$SN_TMP/http.log" || sn_fail "the web server logged nothing: $(cat "$SN_TMP/http.log")"
[ "$(grep -c "GET /index.html" "$SN_TMP/http.log")" = 1 ] ||
	sn_fail "the web server saw the refused request: $(cat "$SN_TMP/http.log")"
echo | in_ct timeout 10 openssl s_client -connect 10.77.0.14:8002 -servername a.wild.test >/dev/null 2>&1
n=$(recorded 1)
[ "$n" -gt 100 ] || sn_fail "an allowed server_name: the server got $n bytes"
echo "ok: ClientHello for a.wild.test: $n bytes reached the server"
for sni in evil.test bad.wild.test; do
	out=$(echo | in_ct timeout 10 openssl s_client -connect 10.77.0.14:8002 -servername "$sni" 2>&1)
	echo "$out" | grep -q "errno=104\|Connection reset" || sn_fail "server_name $sni: not reset: $out"
done
n=$(recorded 3)
[ "$(tail -n 2 "$SN_TMP/recorder.log" | awk '{s += $2} END {print s}')" = 0 ] ||
	sn_fail "a refused server_name reached the server: $(cat "$SN_TMP/recorder.log")"
echo "ok: ClientHellos for evil.test and bad.wild.test: reset, 0 bytes reached the server"
in_ct timeout 5 bash -c 'printf "SSH-2.0-test\r\n" >/dev/tcp/10.77.0.14/8002' || sn_fail "bash /dev/tcp"
n=$(recorded 4)
[ "$n" = 14 ] || sn_fail "bytes of another protocol: the server got $n, not 14"
echo "ok: another protocol's 14 bytes passed"
# HTTPS as users make it: curl, certificate checked, to a TLS server on an allowed name
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=a.wild.test -addext subjectAltName=DNS:a.wild.test \
	-keyout "$SN_TMP/tls.key" -out "$SN_TMP/tls.crt" -days 1 >/dev/null 2>&1 || sn_fail "openssl req"
ip netns exec "$PEER" openssl s_server -quiet -accept 8443 -cert "$SN_TMP/tls.crt" -key "$SN_TMP/tls.key" -www \
	>/dev/null 2>&1 &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 8443
got=$(in_ct curl -s -m 10 --cacert "$SN_TMP/tls.crt" https://a.wild.test:8443/) || sn_fail "curl https://a.wild.test:8443: $?"
echo "$got" | grep -q "s_server" || sn_fail "curl https://a.wild.test:8443: $got"
echo "ok: curl https://a.wild.test:8443/ (certificate checked): the server's page"
# a ClientHello that Python's ssl makes for a name, sent in pieces: all of it, or 40 bytes and then silence
cat >"$SN_TMP/hello.py" <<'PY'
import socket, ssl, sys, time
ctx = ssl.create_default_context()
out = ssl.MemoryBIO()
tls = ctx.wrap_bio(ssl.MemoryBIO(), out, server_hostname=sys.argv[2])
try:
    tls.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = out.read()
s = socket.create_connection((sys.argv[1], 8002), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if sys.argv[3] == "split":
    for i in range(0, len(hello), 20):
        s.send(hello[i:i + 20])
        time.sleep(0.01)
    print(len(hello))
    sys.exit(0)
s.send(hello[:40])
t0 = time.monotonic()
s.settimeout(20)
try:
    print("closed" if not s.recv(1) else "data", round(time.monotonic() - t0))
except ConnectionResetError:
    print("reset", round(time.monotonic() - t0))
except socket.timeout:
    print("TIMEOUT")
PY
want=$(in_ct python3 "$SN_TMP/hello.py" 10.77.0.14 a.wild.test split) || sn_fail "the split ClientHello: $want"
n=$(recorded 5)
[ "$n" = "$want" ] || sn_fail "a ClientHello in 20-byte pieces: the server got $n of $want bytes"
echo "ok: a ClientHello in 20-byte pieces passed whole ($n bytes)"
got=$(in_ct python3 "$SN_TMP/hello.py" 10.77.0.14 a.wild.test unfinished)
case $got in "reset 10"|"reset 11") ;; *) sn_fail "a ClientHello that never finishes: $got, not reset after 10-11 s";; esac
n=$(recorded 6)
[ "$n" = 0 ] || sn_fail "an unfinished ClientHello: the server got $n bytes"
echo "ok: a ClientHello that never finishes: $got s, the server got none of it"

sn_log "counted: queries, refusals, bindings, rules"
dp_stats >"$SN_TMP/stats.txt" || sn_fail "stats"
grep -q "rule \*.wild.test" "$SN_TMP/stats.txt" || sn_fail "text stats lack the rules: $(cat "$SN_TMP/stats.txt")"
dp_stats_sum | python3 -c '
import json, sys
d = json.load(sys.stdin)
p, c = d["policy"]["egress"], d["face"]["counters"]
hits = {r["rule"]: r["hits"] for r in p["rules"]}
assert p["no_match"] == "deny", p
assert d["policy"]["ingress"]["no_match"] == "allow", d["policy"]
# glibc asks A and AAAA: each allowed lookup is two queries on its rule
assert hits["tcp:allowed.test:8000"] >= 2 + 2, hits	# 2 queries, 2 connections (not 8001)
assert hits["alias.test"] >= 2 + 2, hits
assert hits["bad.wild.test"] >= 2, hits	# its address was never bound: refused by default
assert hits["*.wild.test"] >= 2 + 1, hits
# other.test, wild.test, target.cdn.test and the exfil name, A and AAAA (TCP: never read)
assert p["dns_refused"] >= 8, p
assert p["refused_by_default"] >= 6, p
b = p["name_bindings"]
assert b["added"] >= 4 and b["held"] >= 4 and b["max"] == 4096, b
assert c["dns_queries"] >= 16 and c["dns_refused"] >= 10, c
assert c["dns_answers"] >= 6 and c["dns_bound"] >= 4, c
assert d["face"]["drops"]["bad_dns"] == 3, d["face"]["drops"]	# the three above
assert c["tcp_names_read"] >= 8 and c["tcp_names_refused"] == 4, c
print("ok: hits", hits, "dns_refused", p["dns_refused"], "bindings", b, "face", {k: v for k, v in c.items() if k.startswith("dns")})
' || sn_fail "stats: $(dp_stats --json)"
sn_log "and exported: datapath metrics"
ip netns exec "$DPNS" "$DATAPATH" metrics --listen 127.0.0.1:9476 --dir "$(dirname "$DP_CTL")" \
	>"$SN_TMP/metrics.log" 2>&1 &
METRICS_PID=$!
sn_on_exit "kill $METRICS_PID"
sn_wait_for 10 ip netns exec "$DPNS" curl -sf -o /dev/null http://127.0.0.1:9476/metrics || sn_fail "no metrics"
ip netns exec "$DPNS" curl -s http://127.0.0.1:9476/metrics >"$SN_TMP/metrics.txt"
python3 - "$SN_TMP/metrics.txt" <<'PY' || sn_fail "metrics: $(grep -i 'dns\|names\|policy' "$SN_TMP/metrics.txt")"
import re, sys
text = open(sys.argv[1]).read()
def val(family, **labels):
    for line in text.splitlines():
        m = re.match(r"(\w+)\{(.*)\} (\S+)$", line)
        if m and m.group(1) == family and all(f'{k}="{v}"' in m.group(2) for k, v in labels.items()):
            return float(m.group(3))
    raise AssertionError(f"no {family} {labels}")
assert val("sandnet_dns_queries_total", verdict="refused") >= 10
assert val("sandnet_dns_queries_total", verdict="passed") >= 10
assert val("sandnet_dns_addresses_bound_total") >= 5
assert val("sandnet_tcp_names_read_total", verdict="refused") == 4
assert val("sandnet_tcp_names_read_total", verdict="passed") >= 5
assert val("sandnet_policy_dns_refused_total") >= 8
assert val("sandnet_policy_name_bindings") >= 5
assert val("sandnet_policy_refused_by_default_total", direction="egress") >= 6
assert val("sandnet_policy_rule_hits_total", rule="*.wild.test") >= 3
print("ok: metrics", {l.split("{")[0] for l in text.splitlines() if "dns" in l or "names" in l})
PY
kill "$METRICS_PID"
face_check_clean policy bad_dns
dp_env_down

sn_log "a binding lives for its TTL, raised to the floor (--name-ttl 3-3; dnsmasq's TTL is 0)"
dp_start --egress-allow tcp:allowed.test:8000 --name-ttl 3-3
expect_tcp EHOSTUNREACH 4 10.77.0.11 8000		# a new datapath: nothing bound
expect_lookup allowed.test "10.77.0.11 fd77::11"
expect_tcp connected 4 10.77.0.11 8000
sleep 3.5
expect_tcp EHOSTUNREACH 4 10.77.0.11 8000		# expired
expect_lookup allowed.test "10.77.0.11 fd77::11"
expect_tcp connected 4 10.77.0.11 8000
dp_stats_sum | python3 -c '
import json, sys
b = json.load(sys.stdin)["policy"]["egress"]["name_bindings"]
assert b["expired"] >= 1 and b["added"] >= 3, b
print("ok: bindings", b)
' || sn_fail "binding stats"
dp_env_down
