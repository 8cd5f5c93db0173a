#!/usr/bin/env bash
# make demo: the whole flow on a network this script creates and removes.
#
#   scripts/demo.sh BUILD_DIR
#
# A "container" netns and a "peer" netns joined by a veth, the kernel of the
# peer as the far end; netsetup takes the container's link away from its
# kernel and hands it to the datapath (running in a third netns of its own),
# with the container face: a TUN in the container that carries its own
# programs' traffic through sandnet's stack. A program inside the container
# fetches from the peer, a server inside the container answers the peer
# (and logs the peer's address), ping goes both ways; then the services:
# HTTP through a published TCP port, a short iperf3 through a forward to the
# peer's kernel, and a UDP exchange.
set -u
build=${1:?usage: demo.sh BUILD_DIR}
NETSETUP=$build/netsetup
DATAPATH=$build/datapath
[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (network namespaces)"; exit 1; }
for b in "$NETSETUP" "$DATAPATH"; do
	[ -x "$b" ] || { echo "demo: $b is not built (make O=$build)"; exit 1; }
done

P=sndemo$$-
CT=${P}ct PEER=${P}peer DPNS=${P}dp
TMP=$(mktemp -d /tmp/${P}XXXX)
CTL=$TMP/datapath.ctl
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for ns in "$CT" "$PEER" "$DPNS"; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# wait_listen NS PORT: until something listens on TCP PORT in NS (5 s at most)
wait_listen() {
	for _ in $(seq 50); do
		ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	echo "demo: nothing listens on port $2 in $1"
}
run() { printf '$ %s\n' "$*"; "$@"; }

step "a container netns and a peer netns joined by a veth"
for ns in "$CT" "$PEER" "$DPNS"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip link add ${P}a type veth peer name ${P}b
ip link set ${P}a netns "$CT" name eth0
ip link set ${P}b netns "$PEER" name veth0
ip -n "$CT" link set eth0 up
ip -n "$PEER" link set veth0 up
ip -n "$CT" addr add 10.88.0.2/24 dev eth0
ip -n "$CT" addr add fd88::2/64 dev eth0 nodad
ip -n "$CT" route add default via 10.88.0.1
ip -n "$PEER" addr add 10.88.0.1/24 dev veth0
ip -n "$PEER" addr add fd88::1/64 dev veth0 nodad
run ip -n "$CT" -br addr show dev eth0

step "what GSO mode netsetup would use"
run "$NETSETUP" gso show --netns "/run/netns/$CT"

step "a UDP backend next to the datapath (echoes in upper case)"
ip netns exec "$DPNS" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 6000))
while True:
    d, a = s.recvfrom(65535); s.sendto(d.upper(), a)' &
pids+=($!)

step "an HTTP backend next to the datapath, a web server on the peer, one in the container, and an iperf3 server on the peer's kernel"
mkdir -p "$TMP/www"
head -c 8000000 /dev/urandom >"$TMP/www/blob"
ip netns exec "$DPNS" python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www" 8080 \
	>/dev/null 2>&1 &
pids+=($!)
ip netns exec "$PEER" python3 -m http.server --bind 10.88.0.1 --directory "$TMP/www" 8000 \
	>/dev/null 2>&1 &
pids+=($!)
echo "hello from a server inside the container" >"$TMP/www/hello"
ip netns exec "$CT" python3 -u -m http.server --bind :: --directory "$TMP/www" 8000 \
	>"$TMP/ct-server.log" 2>&1 &
pids+=($!)
wait_listen "$DPNS" 8080
wait_listen "$PEER" 8000
wait_listen "$CT" 8000
ip netns exec "$PEER" iperf3 -s -1 -B 10.88.0.1 -p 5201 >/dev/null 2>&1 &
pids+=($!)

step "netsetup run: the container's link goes to the datapath"
SPECS=(--publish udp:5353=127.0.0.1:6000 --publish tcp:80=127.0.0.1:8080
       --forward tcp:127.0.0.1:5201=10.88.0.1:5201 --egress-deny tcp:10.88.0.1:9000-9999)
echo "\$ netsetup run --netns /run/netns/$CT -- datapath --control $CTL ${SPECS[*]}"
ip netns exec "$DPNS" "$NETSETUP" run --netns "/run/netns/$CT" -- \
	"$DATAPATH" --control "$CTL" "${SPECS[@]}" &
pids=("$!" "${pids[@]}")
for _ in $(seq 100); do
	ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" >/dev/null 2>&1 && break
	sleep 0.1
done
echo "the container's kernel now holds no address on eth0, and its addresses and routes on the TUN:"
run ip -n "$CT" -br addr
run ip -n "$CT" route
echo "and it sees nothing that arrives on eth0 (sandnet's channels see everything, before this hook):"
run ip netns exec "$CT" nft list ruleset

step "a program inside the container fetches from the peer: through the TUN, sandnet's TCP, eth0"
run ip netns exec "$CT" curl -sS -o "$TMP/got" -w 'HTTP %{http_code}, %{size_download} bytes in %{time_total} s\n' \
	http://10.88.0.1:8000/blob
if cmp -s "$TMP/www/blob" "$TMP/got"; then echo "content identical"; else echo "content DIFFERS"; fi

step "the peer reaches a server inside the container, which sees the peer's own address"
run ip netns exec "$PEER" curl -sS http://10.88.0.2:8000/hello
run ip netns exec "$PEER" curl -sS "http://[fd88::2]:8000/hello"
echo "the container's server log:"
grep "GET /hello" "$TMP/ct-server.log"

step "ping from inside the container: the echo proxied by sandnet"
run ip netns exec "$CT" ping -c 3 -i 0.3 10.88.0.1
run ip netns exec "$CT" ping -6 -c 3 -i 0.3 fd88::1

step "the policy: the cloud metadata address is denied by default, and so is what a rule denies"
echo "(--egress-deny tcp:10.88.0.1:9000-9999 above; refusals are ICMP administratively prohibited)"
run ip netns exec "$CT" curl -sS --max-time 3 http://169.254.169.254/latest/meta-data/ || true
run ip netns exec "$CT" curl -sS --max-time 3 http://10.88.0.1:9000/ || true
ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" >"$TMP/stats"
echo "each refusal counted on its rule:"
sed -n '/^policy:/,$p' "$TMP/stats" | grep -E 'gress:|refused|rule '

step "fail closed: the datapath killed during a download; the metadata address still refused, service back at once"
# the cloud metadata service on the peer's side, as a cloud has it (the policy denies it by default)
ip -n "$PEER" addr add 169.254.169.254/32 dev lo
ip netns exec "$PEER" python3 -m http.server --bind 169.254.169.254 --directory "$TMP/www" 80 >/dev/null 2>&1 &
pids+=($!)
wait_listen "$PEER" 80
ip netns exec "$CT" curl -sS --limit-rate 500k -o /dev/null http://10.88.0.1:8000/blob 2>"$TMP/dl.err" &
dl=$!
sleep 1
worker=$(ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
echo "\$ kill -9 $worker   (the datapath that serves; its supervisor, netsetup's child, holds the fds)"
kill -9 "$worker"
wait "$dl"; rc=$?
echo "the download in the container ended with curl's exit status $rc: $(cat "$TMP/dl.err")"
run ip netns exec "$CT" curl -sS --max-time 3 http://169.254.169.254/hello || true
run ip netns exec "$CT" curl -sS --max-time 3 http://10.88.0.1:8000/hello
run ip netns exec "$PEER" curl -sS --max-time 3 http://10.88.0.2:8000/hello
echo "the container's kernel still holds nothing on eth0, and the fence is in place:"
run ip -n "$CT" -br addr show dev eth0
ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" >"$TMP/stats"
echo "what the supervisor says:"
sed -n '/^supervisor:/,/^[a-z_]*:$/p' "$TMP/stats" | grep -v '^[a-z_]*:$' | head -n 12

step "ping from the peer to the container: answered by sandnet"
run ip netns exec "$PEER" ping -c 3 -i 0.3 10.88.0.2
run ip netns exec "$PEER" ping -6 -c 3 -i 0.3 fd88::2
run ip -n "$PEER" neigh show dev veth0

step "UDP through the published port 5353 -> 127.0.0.1:6000"
ip netns exec "$PEER" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
for msg in (b"hello sandnet", b"x" * 3000):
    s.sendto(msg, ("10.88.0.2", 5353))
    r, a = s.recvfrom(65535)
    print(f"sent {len(msg)} bytes, got {len(r)} back from {a[0]}:{a[1]}: {r[:20]!r}")'

step "HTTP from the peer to the container's port 80: sandnet's TCP, then 127.0.0.1:8080"
run ip netns exec "$PEER" curl -sS -o "$TMP/got" -w 'HTTP %{http_code}, %{size_download} bytes in %{time_total} s\n' \
	http://10.88.0.2/blob
if cmp -s "$TMP/www/blob" "$TMP/got"; then echo "content identical"; else echo "content DIFFERS"; fi

step "iperf3 through the forward: 127.0.0.1:5201 -> sandnet's TCP -> the peer's kernel"
for _ in $(seq 50); do ip netns exec "$PEER" ss -ltn 2>/dev/null | grep -q ':5201' && break; sleep 0.1; done
echo "\$ iperf3 -c 127.0.0.1 -p 5201 -t 3   (in the datapath's netns)"
ip netns exec "$DPNS" iperf3 -c 127.0.0.1 -p 5201 -t 3 -f g --connect-timeout 3000 |
	grep -E 'sender|receiver'

step "datapath stats (the face's part: what crossed, and each connection pair)"
ip netns exec "$DPNS" "$DATAPATH" stats --control "$CTL" >"$TMP/stats"
sed -n '/^face:/,/^face_tcp:/p' "$TMP/stats" | grep -vE ': 0$' | grep -v '^face_tcp:'
step "the summary (datapath stats --all: every datapath of a folder, what it serves and what crossed)"
ip netns exec "$DPNS" "$DATAPATH" stats --all --dir "$(dirname "$CTL")" | grep -vE ': 0$'
echo "(the whole of it: datapath stats --control $CTL; as JSON with --json)"

step "clean up: the addresses go back to the container's kernel, the TUN and the nftables table go"
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null
pids=("${pids[@]:1}")
run ip -n "$CT" -br addr
run ip netns exec "$CT" nft list ruleset
