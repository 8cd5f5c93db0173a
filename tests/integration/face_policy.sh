#!/usr/bin/env bash
# The container face's policy (issue 13): egress and ingress rules by CIDR,
# port range and protocol, first match wins, the cloud metadata addresses
# denied by default. Each refusal is seen where a user sees it, through the
# real kernel's socket API: inside the container for egress (connect() and a
# connected UDP socket get EHOSTUNREACH over IPv4, EACCES over IPv6: ICMP
# administratively prohibited, as the kernel maps it; ping says "Packet
# filtered"), at the peer for ingress (ping included: the datapath answers
# echo requests to the container itself, unless an ingress rule refuses). What no rule denies still works, the
# same address on another port or protocol included, and every decision is
# counted on the rule that made it in `datapath stats`. Malformed rules make
# the datapath exit 2 naming the rule.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

sn_log "malformed rules: exit 2, naming the rule"
for bad in "--egress-deny tcp:10.0.0.0/33" "--ingress-allow icmp:any:22" "--egress-allow udp:[fd00::1]:9-3" \
	"--ingress-deny frob"; do
	# shellcheck disable=SC2086
	out=$("$DATAPATH" --fd 0 $bad 2>&1); rc=$?
	[ "$rc" = 2 ] || sn_fail "datapath $bad: exit $rc, not 2: $out"
	echo "$out" | grep -qF -- "datapath: ${bad%% *} '${bad#* }': " || sn_fail "datapath $bad said: $out"
	echo "ok: $out"
done

DP_GSO=hw
dp_env_up \
	--egress-deny tcp:10.77.0.11:8000-8001 \
	--egress-deny "tcp:[fd77::11]:8000" \
	--egress-deny "udp:[fd77::11]:5300" \
	--egress-deny 10.77.0.12 \
	--egress-allow tcp:169.254.169.254:80 \
	--ingress-deny tcp:10.77.0.11/32:8080 \
	--ingress-deny "tcp:[fd77::11]:8080" \
	--ingress-deny udp:any:6301 \
	--ingress-deny icmp:10.77.0.11 \
	--ingress-deny icmp:fd77::11
face_check_fenced
tcp_peer_csum_off
# more hosts behind the peer: the rules tell them apart
for a in 10.77.0.11 10.77.0.12; do ip -n "$PEER" addr add "$a/24" dev veth0; done
ip -n "$PEER" addr add fd77::11/64 dev veth0 nodad
ip -n "$PEER" addr add 169.254.169.254/32 dev veth0
ip -n "$PEER" addr add fd00:ec2::254/128 dev veth0 nodad

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
# UDP echo on ADDR,PORT each: bound to the address, so that replies come from it
cat >"$SN_TMP/uecho.py" <<'PY'
import socket, sys, threading
def serve(host, port):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, port))
    while True:
        d, a = s.recvfrom(70000); s.sendto(d, a)
for hp in sys.argv[1:]:
    h, p = hp.split(",")
    threading.Thread(target=serve, args=(h, int(p)), daemon=True).start()
threading.Event().wait()
PY
# udp_errno NS SRC HOST PORT: "echoed", or the errno name a connected UDP socket gets
cat >"$SN_TMP/uclient.py" <<'PY'
import errno, socket, sys
src, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
if src != "-":
    s.bind((src, 0))
s.settimeout(1)
s.connect((host, port))
for i in range(3):
    try:
        s.send(b"policy")
        if s.recv(100) == b"policy":
            print("echoed"); sys.exit(0)
    except socket.timeout:
        continue
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e.errno))); sys.exit(0)
print("TIMEOUT")
PY
# tcp_errno NS SRC HOST PORT: "connected", or the errno name connect() gets
cat >"$SN_TMP/tclient.py" <<'PY'
import errno, socket, sys
src, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
if src != "-":
    s.bind((src, 0))
s.settimeout(5)
try:
    s.connect((host, port)); print("connected" if s.recv(2) == b"hi" else "no greeting")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)) if e.errno else "TIMEOUT")
PY
ip netns exec "$PEER" python3 "$SN_TMP/tcpsrv.py" 80 8000 8002 &
sn_on_exit "kill $!"
ip netns exec "$PEER" python3 "$SN_TMP/uecho.py" 10.77.0.1,5300 10.77.0.11,5300 10.77.0.12,5300 \
	169.254.169.254,5300 fd77::1,5300 fd77::11,5300 fd00:ec2::254,5300 &
sn_on_exit "kill $!"
ip netns exec "$CT" python3 "$SN_TMP/tcpsrv.py" 8080 8081 &
sn_on_exit "kill $!"
ip netns exec "$CT" python3 "$SN_TMP/uecho.py" 10.77.0.2,6300 10.77.0.2,6301 fd77::2,6301 &
sn_on_exit "kill $!"
tcp_wait_listen "$PEER" 8002
tcp_wait_listen "$CT" 8081
sn_wait_for 10 sh -c "ip netns exec '$CT' ss -Hlun 'sport = :6301' | grep -q ." || sn_fail "container UDP echo"
sn_wait_for 10 sh -c "ip netns exec '$PEER' ss -Hlun 'sport = :5300' | grep -q ." || sn_fail "peer UDP echo"

# expect WANT NS PROTO SRC HOST PORT
expect() {
	local want=$1 ns=$2 proto=$3 src=$4 host=$5 port=$6 got
	got=$(ip netns exec "$ns" python3 "$SN_TMP/${proto:0:1}client.py" "$src" "$host" "$port")
	[ "$got" = "$want" ] || sn_fail "$proto from ${src/-/$ns} to $host:$port: $got, expected $want"
	echo "ok: $proto ${src/-/$ns} -> $host:$port: $got"
}

sn_log "egress, seen inside the container"
expect connected "$CT" tcp - 10.77.0.1 8000		# no rule
expect EHOSTUNREACH "$CT" tcp - 10.77.0.11 8000		# tcp:10.77.0.11:8000-8001
expect connected "$CT" tcp - 10.77.0.11 8002		# past the range
expect echoed "$CT" udp - 10.77.0.11 5300			# the rule is tcp only
expect EACCES "$CT" tcp - fd77::11 8000			# tcp:[fd77::11]:8000
expect connected "$CT" tcp - fd77::11 8002
expect EACCES "$CT" udp - fd77::11 5300			# udp:[fd77::11]:5300
expect echoed "$CT" udp - fd77::1 5300
expect EHOSTUNREACH "$CT" tcp - 10.77.0.12 8000		# 10.77.0.12: every protocol
expect EHOSTUNREACH "$CT" udp - 10.77.0.12 5300
out=$(ip netns exec "$CT" ping -c 1 -W 2 10.77.0.12 2>&1) && sn_fail "ping 10.77.0.12 answered: $out"
echo "$out" | grep -q "Packet filtered" || sn_fail "ping 10.77.0.12: $out"
echo "ok: ping 10.77.0.12: $(echo "$out" | grep filtered)"
ip netns exec "$CT" ping -c 1 -W 2 10.77.0.11 >/dev/null || sn_fail "ping 10.77.0.11 (no icmp rule)"

sn_log "the cloud metadata addresses: denied by default, allowed by a rule"
expect connected "$CT" tcp - 169.254.169.254 80		# tcp:169.254.169.254:80 goes first
expect EHOSTUNREACH "$CT" tcp - 169.254.169.254 8000	# the default
expect EHOSTUNREACH "$CT" udp - 169.254.169.254 5300
expect EACCES "$CT" tcp - fd00:ec2::254 80
expect EACCES "$CT" udp - fd00:ec2::254 5300

sn_log "ingress, seen at the peer"
expect connected "$PEER" tcp 10.77.0.1 10.77.0.2 8080
expect EHOSTUNREACH "$PEER" tcp 10.77.0.11 10.77.0.2 8080	# tcp:10.77.0.11/32:8080
expect connected "$PEER" tcp 10.77.0.11 10.77.0.2 8081
expect EACCES "$PEER" tcp fd77::11 fd77::2 8080		# tcp:[fd77::11]:8080
expect connected "$PEER" tcp fd77::1 fd77::2 8080
expect echoed "$PEER" udp - 10.77.0.2 6300
expect EHOSTUNREACH "$PEER" udp - 10.77.0.2 6301		# udp:any:6301
expect EACCES "$PEER" udp - fd77::2 6301
# echo requests to the container are answered by the datapath; an ingress rule still decides
for pair in "10.77.0.11 10.77.0.2" "fd77::11 fd77::2"; do
	set -- $pair
	out=$(ip netns exec "$PEER" ping -c 1 -W 2 -I "$1" "$2" 2>&1) && sn_fail "ping $2 from $1 answered: $out"
	echo "$out" | grep -q "Packet filtered\|Administratively prohibited" || sn_fail "ping $2 from $1: $out"
	echo "ok: ping $1 -> $2: $(echo "$out" | grep -i 'filtered\|prohibited' | head -1)"
done
ip netns exec "$PEER" ping -c 1 -W 2 -I 10.77.0.1 10.77.0.2 >/dev/null || sn_fail "ping 10.77.0.2 from 10.77.0.1"
ip netns exec "$PEER" ping -c 1 -W 2 -I fd77::1 fd77::2 >/dev/null || sn_fail "ping fd77::2 from fd77::1"
# an allowed flow's replies are never asked about: the container's own UDP to the peer
expect echoed "$CT" udp - 10.77.0.1 5300

sn_log "every decision counted on its rule"
dp_stats >"$SN_TMP/stats.txt" || sn_fail "stats"
grep -q "rule tcp:10.77.0.11:8000-8001" "$SN_TMP/stats.txt" || sn_fail "text stats lack the rules: $(cat "$SN_TMP/stats.txt")"
dp_stats_sum | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["policy"]
hits = {(dr, r["rule"]): r["hits"] for dr in ("egress", "ingress") for r in p[dr]["rules"]}
want = {("egress", "tcp:10.77.0.11:8000-8001"): 1, ("egress", "tcp:[fd77::11]:8000"): 1,
        ("egress", "udp:[fd77::11]:5300"): 1, ("egress", "10.77.0.12"): 3,
        ("egress", "tcp:169.254.169.254:80"): 1, ("egress", "169.254.169.254"): 2,
        ("egress", "fd00:ec2::254"): 2, ("ingress", "tcp:10.77.0.11/32:8080"): 1,
        ("ingress", "tcp:[fd77::11]:8080"): 1, ("ingress", "udp:any:6301"): 2,
        ("ingress", "icmp:10.77.0.11"): 1, ("ingress", "icmp:fd77::11"): 1}
for k, n in want.items():
    assert hits.get(k, 0) >= n, f"{k}: {hits.get(k)} hits, expected at least {n}"
assert [r["default"] for r in p["egress"]["rules"]][-2:] == [True, True], p["egress"]
refused = sum(r["hits"] for r in p["egress"]["rules"] + p["ingress"]["rules"] if r["action"] == "deny")
assert refused == p["egress"]["refused"] + p["ingress"]["refused"], p
assert d["face"]["drops"]["policy"] == refused, (d["face"]["drops"]["policy"], refused)
assert p["egress"]["allowed_by_default"] >= 5 and p["ingress"]["allowed_by_default"] >= 3, p
print("ok: refused", refused, "hits", {f"{k[0]} {k[1]}": v for k, v in hits.items()})
' || sn_fail "policy stats"
# the summary's rows per shard say where the refusals were, and add up to the totals
"$DATAPATH" stats --all --dir "$(dirname "$DP_CTL")" --json | python3 -c '
import json, sys
d = [s for s in json.load(sys.stdin) if s["pid"] == '"$(dp_stat "raw['pid']")"'][0]
t, rows = d["totals"], d["shard_rows"]
for dr in ("egress", "ingress"):
    n = sum(r["refused_" + dr] for r in rows)
    assert n == t["refused_" + dr] and n > 0, (dr, n, t["refused_" + dr], rows)
print("ok: refusals per shard", [(r["refused_egress"], r["refused_ingress"]) for r in rows])
' || sn_fail "refusals per shard"
face_check_clean policy
echo "policy: egress and ingress, TCP, UDP and ICMP, IPv4 and IPv6, defaults, counted"
