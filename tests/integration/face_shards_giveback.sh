#!/usr/bin/env bash
# sandnet-test: alone (it counts the kernel's BPF programs: no other test may load one meanwhile)
# Give-back with shards (issue 20): while a container is served by two shards,
# netsetup's steering program (one, named sandnet_steer, on the TUN and on
# the link's fanout group) is in the kernel; once netsetup gives the
# container back, the multi-queue TUN is gone and so is the program. A
# datapath killed with SIGKILL is followed by one that serves with the same
# program (the supervisor keeps the fds), and give-back then ends it too.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"
. "$SANDNET_TESTS/integration/datapath_tcp_env.inc"
. "$SANDNET_TESTS/integration/face_env.inc"

progs() { python3 "$SANDNET_TESTS/lib/bpfprogs.py" sandnet_steer | sort; }
# ours: the steering programs that appeared since $before, one a line
ours() { comm -13 <(echo "$before") <(progs); }
gone() { [ -z "$(comm -12 <(echo "$1") <(progs))" ]; }

DP_NO_START=1 dp_env_up
before=$(progs)

sn_log "two shards: one steering program while the container is served"
DP_SHARDS=2 dp_start
face_check_fenced
ip netns exec "$CT" ping -c 2 -i 0.2 -W 2 10.77.0.1 >/dev/null || sn_fail "ping from the container"
mine=$(ours)
[ "$(echo "$mine" | grep -c .)" = 1 ] || sn_fail "steering programs loaded for the container: '$mine' (expected one)"
queues=$(ip netns exec "$CT" ls /sys/class/net/sn-eth0/queues | tr '\n' ' ')
[ "$queues" = "rx-0 rx-1 tx-0 tx-1 " ] || sn_fail "the TUN's queues: $queues"
sn_log "program $mine; netsetup gives the container back"
dp_env_down
face_check_gone "$CT"
sn_wait_for 5 gone "$mine" || sn_fail "steering program $mine outlived the give-back"

sn_log "again; the datapath killed: the next one serves with the same program, and give-back ends it"
before=$(progs)
DP_SHARDS=2 dp_start
mine=$(ours)
[ "$(echo "$mine" | grep -c .)" = 1 ] || sn_fail "steering programs loaded the second time: '$mine'"
kill -9 "$DP_PID"
sn_wait_for 10 sh -c "[ \"\$(ip netns exec '$DPNS' '$DATAPATH' stats --control '$DP_CTL' --json 2>/dev/null |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get(\"n_shards\", 0), d[\"supervisor\"][\"restarts\"])' 2>/dev/null)\" = '2 1' ]" ||
	sn_fail "no datapath of two shards after the first died"
[ "$(ours)" = "$mine" ] || sn_fail "the restart changed the steering programs: '$(ours)', was '$mine'"
ip netns exec "$CT" ping -c 2 -i 0.2 -W 2 10.77.0.1 >/dev/null || sn_fail "ping after the restart"
dp_env_down
face_check_gone "$CT"
sn_wait_for 5 gone "$mine" || sn_fail "steering program $mine outlived the give-back after a restart"
echo ok
