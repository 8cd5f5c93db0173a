#!/usr/bin/env bash
# The running datapath holds no capability (effective, permitted, bounding,
# ambient), runs as the requested uid/gid with no supplementary groups and
# no_new_privs set, yet still serves (ping) and still binds its control
# socket (made before the drop).
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/integration/datapath_env.inc"

check_status() {
	local want_uid=$1 want_gid=$2 st=/proc/$DP_PID/status
	cat "$st" | grep -E '^(Uid|Gid|Groups|Cap|NoNewPrivs)'
	for f in CapEff CapPrm CapBnd CapAmb CapInh; do
		v=$(awk -v f="$f:" '$1 == f { print $2 }' "$st")
		[ "$v" = 0000000000000000 ] || sn_fail "$f is $v, expected all zero"
	done
	read -r _ r e s fs < <(grep '^Uid:' "$st")
	[ "$r $e $s $fs" = "$want_uid $want_uid $want_uid $want_uid" ] || sn_fail "uids $r $e $s $fs, expected $want_uid"
	read -r _ r e s fs < <(grep '^Gid:' "$st")
	[ "$r $e $s $fs" = "$want_gid $want_gid $want_gid $want_gid" ] || sn_fail "gids $r $e $s $fs, expected $want_gid"
	[ -z "$(grep '^Groups:' "$st" | cut -f2 | tr -d ' ')" ] || sn_fail "supplementary groups left"
	[ "$(awk '$1 == "NoNewPrivs:" { print $2 }' "$st")" = 1 ] || sn_fail "NoNewPrivs is not set"
}

sn_log "default user: nobody"
dp_env_up
check_status "$(id -u nobody)" "$(id -g nobody)"
ip netns exec "$PEER" ping -c 1 -W 2 10.77.0.2 >/dev/null || sn_fail "no ping as nobody"
[ "$(dp_stat "d['uid']")" = "$(id -u nobody)" ] || sn_fail "stats report another uid"

sn_log "--user daemon"
dp_env_down
dp_env_reset
DP_USER=daemon dp_env_up
check_status "$(id -u daemon)" "$(id -g daemon)"
ip netns exec "$PEER" ping -c 1 -W 2 10.77.0.2 >/dev/null || sn_fail "no ping as daemon"
dp_env_down
echo ok
