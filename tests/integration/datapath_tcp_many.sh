#!/usr/bin/env bash
# 200 concurrent connections through --publish tcp: the peer opens all of
# them before any data flows (beyond the SYN backlog of 128 the stack would
# answer with SYN cookies), then each sends 64 KiB to an echo backend in the
# datapath's netns, half-closes and reads it back; every byte compared, every
# pair closed gracefully.
. "$SANDNET_TESTS/lib/common.sh"
DP_SHARDS_ANY=1
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"

N=200
dp_env_up --publish tcp:80=127.0.0.1:8080

ip netns exec "$DPNS" python3 - <<'PY' &
import asyncio
async def echo(r, w):
    while True:
        d = await r.read(65536)
        if not d:
            break
        w.write(d)
        await w.drain()
    w.close()
async def main():
    srv = await asyncio.start_server(echo, "127.0.0.1", 8080, backlog=1024)
    await srv.serve_forever()
asyncio.run(main())
PY
sn_on_exit "kill $!"
tcp_wait_listen "$DPNS" 8080

ip netns exec "$PEER" timeout 50 python3 - "$N" <<'PY' || sn_fail "concurrent connections failed"
import asyncio, os, sys, time
n = int(sys.argv[1])
async def main():
    t0 = time.time()
    conns = await asyncio.gather(*(asyncio.wait_for(asyncio.open_connection("10.77.0.2", 80), 20)
                                   for _ in range(n)))
    print(f"{n} connections open in {time.time() - t0:.2f} s")
    async def one(r, w):
        data = os.urandom(65536)
        w.write(data)
        await w.drain()
        w.write_eof()
        got = await asyncio.wait_for(r.read(-1), 30)
        w.close()
        return got == data
    ok = await asyncio.gather(*(one(r, w) for r, w in conns))
    print(f"{sum(ok)} of {n} echoed 64 KiB intact in {time.time() - t0:.2f} s")
    sys.exit(0 if all(ok) else 1)
asyncio.run(main())
PY
accepted=$(dp_stat "d['services'][0]['accepted']")
closed=$(dp_stat "d['services'][0]['closed']")
echo "accepted $accepted, closed gracefully $closed; syncookies ok: $(dp_stat "d['tcp']['syncookies_ok']")"
[ "$accepted" -eq "$N" ] || sn_fail "accepted $accepted of $N"
sn_wait_for 5 sh -c "[ \$(ip netns exec '$DPNS' '$DATAPATH' stats --control '$DP_CTL' --json | python3 -c \"import json,sys; print(json.load(sys.stdin)['services'][0]['closed'])\") -eq $N ]" ||
	sn_fail "only $(dp_stat "d['services'][0]['closed']") of $N pairs closed"
errors=$(dp_stat "d['services'][0]['errors'] + d['services'][0]['connect_failed']")
[ "$errors" -eq 0 ] || sn_fail "service errors: $errors"
dp_env_down
echo ok
