# Sourced by netsetup integration tests after common.sh: the test receiver,
# snapshots of a namespace's addresses and routes, and small assertions.
#
#   ns_sink_start NAME [proto_sink options]   # listens on $SN_TMP/NAME.sock
#   ns_snapshot NS FILE                       # normalized ip -j addr / route
#   ns_same FILE1 FILE2 WHAT                  # fail with a diff when they differ
#   ns_settle NS                              # wait until no IPv6 address is tentative
#   ns_expect_fail "what" WORDS -- CMD...     # CMD must fail and say WORDS (a grep -E pattern)
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
	local what=$1 words=$2 out rc; shift 2
	[ "$1" = "--" ] && shift
	out=$("$@" 2>&1); rc=$?
	[ "$rc" -ne 0 ] || sn_fail "$what: succeeded, expected a failure: $out"
	! echo "$out" | grep -Eq 'Sanitizer|runtime error' || sn_fail "$what: sanitizer report: $out"
	echo "$out" | grep -Eq -e "$words" || sn_fail "$what: message does not say '$words': $out"
	echo "ok: $what: $(echo "$out" | head -n 1)"
}
