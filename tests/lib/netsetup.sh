# Sourced by netsetup integration tests after common.sh: the test receiver,
# snapshots of a namespace's addresses and routes, and small assertions.
#
#   ns_sink_start NAME [proto_sink options]   # listens on $SN_TMP/NAME.sock
#   ns_snapshot NS FILE                       # normalized ip -j addr / route
#   ns_same FILE1 FILE2 WHAT                  # fail with a diff when they differ
#   ns_settle NS                              # wait until no IPv6 address is tentative
#   ns_expect_fail "what" WORDS -- CMD...     # CMD must fail and say WORDS (a grep -E pattern)
#   ns_tcp_conn_check CTL CT PEER IP PORT CC ECN
#                                             # a connection from CT to a server in PEER at IP:PORT,
#                                             # held open while `datapath ss --control CTL --json`
#                                             # must show its network side with congestion control
#                                             # CC and ECN true/false (PEER's kernel accepts ECN)
#
# State files go to a private directory so tests never touch /run/sandnet.
export SANDNET_STATE_DIR=$SN_TMP/state
SINK=$TOOLS/proto_sink

[ -x "$NETSETUP" ] || sn_skip "no $NETSETUP (build it first)"
[ -x "$SINK" ] || sn_skip "no $SINK (make tools)"

ns_path() { echo "/run/netns/$SN_PREFIX$1"; }

ns_sink_start() {
	local name=$1 pid; shift
	"$SINK" --listen "$SN_TMP/$name.sock" "$@" >"$SN_TMP/$name.out" 2>"$SN_TMP/$name.err" &
	pid=$!
	sn_on_exit "kill $pid"
	sn_wait_for 5 test -S "$SN_TMP/$name.sock" || sn_fail "proto_sink $name did not start"
}

ns_snapshot() {
	local ns=$1 out=$2
	ip -n "$ns" -j addr >"$out.addr" || sn_fail "ip -j addr in $ns"
	ip -n "$ns" -j -4 route >"$out.r4" || sn_fail "ip -j -4 route in $ns"
	ip -n "$ns" -j -6 route >"$out.r6" || sn_fail "ip -j -6 route in $ns"
	python3 - "$out" <<'EOF'
import json, sys
o = sys.argv[1]
addr = json.load(open(o + ".addr"))
res = {
    "addr": {l["ifname"]: sorted(json.dumps(a, sort_keys=True) for a in l.get("addr_info", []))
             for l in addr},
    "route4": sorted(json.dumps(r, sort_keys=True) for r in json.load(open(o + ".r4"))),
    "route6": sorted(json.dumps(r, sort_keys=True) for r in json.load(open(o + ".r6"))),
}
json.dump(res, open(o, "w"), indent=1, sort_keys=True)
EOF
}

ns_same() {
	diff -u "$1" "$2" >&2 || sn_fail "$3: ip -j addr/route differ (diff above)"
}

ns_settle() {
	sn_wait_for 10 sh -c "! ip -n '$1' addr | grep -q tentative" ||
		sn_fail "IPv6 addresses in $1 stay tentative"
}

ns_expect_fail() {
	local what words out rc status=
	# -s N: the exit status must be N (1 refused or failed, 2 a malformed command line)
	if [ "$1" = "-s" ]; then status=$2; shift 2; fi
	what=$1 words=$2; shift 2
	[ "$1" = "--" ] && shift
	out=$("$@" 2>&1); rc=$?
	[ "$rc" -ne 0 ] || sn_fail "$what: succeeded, expected a failure: $out"
	[ -z "$status" ] || [ "$rc" -eq "$status" ] || sn_fail "$what: exit status $rc, expected $status: $out"
	! echo "$out" | grep -Eq 'Sanitizer|runtime error' || sn_fail "$what: sanitizer report: $out"
	echo "$out" | grep -Eq -e "$words" || sn_fail "$what: message does not say '$words': $out"
	echo "ok: $what: $(echo "$out" | head -n 1)"
}

ns_tcp_conn_check() {
	local ctl=$1 ct=$2 peer=$3 ip=$4 port=$5 cc=$6 ecn=$7 srv cli
	ip netns exec "$peer" sysctl -qw net.ipv4.tcp_ecn=2 || sn_fail "tcp_ecn in $peer"
	ip netns exec "$peer" python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); s.settimeout(15)
c, _ = s.accept(); c.settimeout(15); c.recv(16); time.sleep(10)' "$ip" "$port" &
	srv=$!
	sn_on_exit "kill $srv"
	sn_wait_for 5 sh -c "ip netns exec '$peer' ss -Htln 'sport = :$port' | grep -q LISTEN" ||
		sn_fail "the test server on $ip:$port did not listen"
	ip netns exec "$ct" python3 -c '
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10); c.sendall(b"hold"); time.sleep(10)' \
		"$ip" "$port" &
	cli=$!
	sn_on_exit "kill $cli"
	# the network side's row of the connection: exit 1 while there is none
	cat >"$SN_TMP/ss_row.py" <<'EOF'
import json, sys
rows = [r for r in json.load(sys.stdin) if r["engine"] == "network" and r["remote"].endswith(":" + sys.argv[1])
        and r["state"] == "ESTABLISHED"]
if len(sys.argv) == 2:
    sys.exit(0 if len(rows) == 1 else 1)
assert len(rows) == 1, rows
r, cc, ecn = rows[0], sys.argv[2], sys.argv[3] == "true"
assert r["cc"] == cc and r["ecn"] == ecn, ("got", r["cc"], r["ecn"], "expected", cc, ecn)
print("ok: datapath ss:", r["local"], "->", r["remote"], "cc", r["cc"], "ecn", r["ecn"])
EOF
	sn_wait_for 8 sh -c "'$DATAPATH' ss --control '$ctl' --json | python3 '$SN_TMP/ss_row.py' $port" ||
		sn_fail "datapath ss shows no network connection to $ip:$port"
	"$DATAPATH" ss --control "$ctl" --json | python3 "$SN_TMP/ss_row.py" "$port" "$cc" "$ecn" ||
		sn_fail "the connection does not run with cc $cc, ecn $ecn"
	kill "$cli" "$srv" 2>/dev/null
	wait "$cli" "$srv" 2>/dev/null
	return 0
}
