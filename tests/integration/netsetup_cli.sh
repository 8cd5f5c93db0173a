#!/usr/bin/env bash
# The command-line contract of netsetup, sandnet-runtime and the datapath
# (netsetup(8), datapath(8)), which scripts and units rely on:
#  - `--version` prints one line on stdout, "PROGRAM VERSION (protocol
#    MAJOR.MINOR)", with the version from the tree's VERSION file and the
#    protocol from proto/proto.h; sandnet-runtime's is --sandnet-version
#    (its --version goes to runc, whose flag it is);
#  - `--help` on every command prints a usage naming that command on
#    stdout, nothing on stderr, and exits 0;
#  - a malformed command line, for every command: exit status 2, the
#    message on stderr naming the flag, the usage after it, nothing on stdout;
#  - a refusal or failure is status 1 with one line on stderr: a
#    namespace that does not exist, `datapath stats` of a socket that is
#    not there (said once, not twice), dead sockets in the folder and one folder down
#    for `stats --all`;
#  - `netsetup serve` with a missing or broken config, an unknown user in
#    it, a --socket in a folder that does not exist or a state folder that
#    cannot be made: status 1, one line naming the file and the fix, no
#    socket or state folder left;
#  - the datapath: --control or --listen in a folder that does not exist is
#    status 2 before it listens; SIGTERM while it waits for netsetup
#    (--listen) stops it at once, status 0, its socket removed;
#  - `datapath stats --all` where nothing was ever served (no state folder)
#    says so and exits 0.
# Needs no namespace: nothing is attached.
. "$SANDNET_TESTS/lib/common.sh"

repo=$(cd "$SANDNET_TESTS/.." && pwd)
version=$(cat "$repo/VERSION")
major=$(sed -n 's/^#define PROTO_VERSION_MAX[[:space:]]*\([0-9]*\).*/\1/p' "$repo/proto/proto.h")
minor=$(sed -n 's/^#define PROTO_VERSION_MINOR[[:space:]]*\([0-9]*\).*/\1/p' "$repo/proto/proto.h")
[ -n "$version" ] && [ -n "$major" ] && [ -n "$minor" ] || sn_fail "VERSION or proto.h unreadable"
ln -s "$NETSETUP" "$SN_TMP/sandnet-runtime"

# run WANT_RC CMD...: its stdout and stderr in $SN_TMP/out and err
run() {
	local want=$1 rc; shift
	"$@" >"$SN_TMP/out" 2>"$SN_TMP/err"; rc=$?
	[ "$rc" -eq "$want" ] || sn_fail "$*: exit status $rc, expected $want; stderr: $(cat "$SN_TMP/err")"
}

sn_log "--version"
for p in "netsetup:$NETSETUP --version" "datapath:$DATAPATH --version" \
	 "sandnet-runtime:$SN_TMP/sandnet-runtime --sandnet-version"; do
	name=${p%%:*}
	run 0 ${p#*:}
	want="$name $version (protocol $major.$minor)"
	[ "$(cat "$SN_TMP/out")" = "$want" ] || sn_fail "${p#*:}: printed '$(cat "$SN_TMP/out")', expected '$want'"
	[ ! -s "$SN_TMP/err" ] || sn_fail "${p#*:}: wrote to stderr: $(cat "$SN_TMP/err")"
	echo "ok: $want"
done

sn_log "--help on every command"
while read -r prog cmd; do
	# shellcheck disable=SC2086
	run 0 $prog $cmd --help
	grep -q "usage: .*${cmd:-}" "$SN_TMP/out" || grep -q "^ *${prog##*/} ${cmd}" "$SN_TMP/out" ||
		sn_fail "$prog $cmd --help: no usage of '$cmd' on stdout: $(head -n 3 "$SN_TMP/out")"
	[ ! -s "$SN_TMP/err" ] || sn_fail "$prog $cmd --help: wrote to stderr: $(cat "$SN_TMP/err")"
	echo "ok: ${prog##*/} $cmd --help"
done <<EOF
$NETSETUP gso show
$NETSETUP attach
$NETSETUP run
$NETSETUP detach
$NETSETUP restart
$NETSETUP serve
$NETSETUP connect
$NETSETUP oci-hook
$DATAPATH
$DATAPATH stats
$DATAPATH ss
$DATAPATH metrics
EOF

run 0 "$NETSETUP" attach -h
grep -q "usage: " "$SN_TMP/out" || sn_fail "netsetup attach -h: no usage"
echo "ok: netsetup attach -h"

sn_log "a malformed command line: status 2, the flag named, stdout empty"
while read -r prog args; do
	# shellcheck disable=SC2086
	run 2 $prog $args
	grep -q -e '--bogus\|bogus' "$SN_TMP/err" || sn_fail "$prog $args: stderr does not name the flag: $(cat "$SN_TMP/err")"
	[ ! -s "$SN_TMP/out" ] || sn_fail "$prog $args: wrote to stdout: $(cat "$SN_TMP/out")"
	echo "ok: ${prog##*/} $args: $(head -n 1 "$SN_TMP/err")"
done <<EOF
$NETSETUP bogus
$NETSETUP gso show --bogus
$NETSETUP attach --bogus
$NETSETUP run --bogus
$NETSETUP detach --bogus
$NETSETUP restart --bogus
$NETSETUP serve --bogus
$NETSETUP connect --bogus
$NETSETUP oci-hook --bogus
$DATAPATH --bogus
$DATAPATH stats --bogus
$DATAPATH ss --bogus
$DATAPATH metrics --bogus
EOF

sn_log "failures: status 1, one line"
one_line() {
	[ "$(wc -l <"$SN_TMP/err")" -eq 1 ] || sn_fail "$1: not one line on stderr: $(cat "$SN_TMP/err")"
	grep -q -e "$2" "$SN_TMP/err" || sn_fail "$1: stderr does not say '$2': $(cat "$SN_TMP/err")"
	echo "ok: $1: $(cat "$SN_TMP/err")"
}
run 1 "$NETSETUP" detach --netns "/run/netns/${SN_PREFIX}none"
one_line "detach of a missing netns" "${SN_PREFIX}none"
run 1 "$DATAPATH" stats --control "$SN_TMP/no.sock"
one_line "stats of a missing socket" "no.sock"
mkdir -p "$SN_TMP/state/units"
# one in the folder, one a folder down (where datapath@.service's go)
for s in x.state.ctl units/y.ctl; do
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$SN_TMP/state/$s"
done
run 1 "$DATAPATH" stats --all --dir "$SN_TMP/state"
[ "$(grep -c 'x.state.ctl' "$SN_TMP/err")" -eq 1 ] && [ "$(grep -c 'units/y.ctl' "$SN_TMP/err")" -eq 1 ] ||
	sn_fail "stats --all: each dead socket not said exactly once: $(cat "$SN_TMP/err")"
grep -q "2 of 2 datapaths did not answer" "$SN_TMP/err" || sn_fail "stats --all: $(cat "$SN_TMP/err")"
echo "ok: stats --all with a dead socket: $(tr '\n' '|' <"$SN_TMP/err")"

sn_log "serve: a configuration or a path that cannot work stops it at once, saying which and the fix"
printf 'allowed_uids = 0 %snobody\n' "$SN_PREFIX" >"$SN_TMP/nouser.conf"
printf 'allowed_uids = 0\nmax_channels = lots\n' >"$SN_TMP/broken.conf"
printf 'allowed_uids = 0\n' >"$SN_TMP/good.conf"
serve_refused() {
	local what=$1 words=$2; shift 2
	run 1 timeout 10 "$NETSETUP" serve "$@"
	one_line "$what" "$words"
	[ ! -e "$SN_TMP/serve.sock" ] || sn_fail "$what: a socket was left behind"
	[ ! -e "$SN_TMP/serve-state" ] || sn_fail "$what: a state folder was made"
}
export SANDNET_STATE_DIR=$SN_TMP/serve-state
serve_refused "a missing config" "missing.conf: No such file or directory (the package .* put one there" \
	--socket "$SN_TMP/serve.sock" --config "$SN_TMP/missing.conf"
serve_refused "an unknown user in it" "nouser.conf line 1: allowed_uids '${SN_PREFIX}nobody': no such user (create it" \
	--socket "$SN_TMP/serve.sock" --config "$SN_TMP/nouser.conf"
serve_refused "a broken config" "broken.conf line 2: max_channels 'lots'" \
	--socket "$SN_TMP/serve.sock" --config "$SN_TMP/broken.conf"
serve_refused "a --socket in a folder that does not exist" "no/such/serve.sock: .*its folder does not exist" \
	--socket "$SN_TMP/no/such/serve.sock" --config "$SN_TMP/good.conf"
SANDNET_STATE_DIR=$SN_TMP/no/state serve_refused "a state folder whose parent does not exist" \
	"state folder $SN_TMP/no/state: No such file or directory (.*tmpfiles" \
	--socket "$SN_TMP/serve.sock" --config "$SN_TMP/good.conf"
unset SANDNET_STATE_DIR

sn_log "the datapath: a --control or --listen folder that is not there, and a stop while it waits"
run 2 "$DATAPATH" --listen "$SN_TMP/dp.sock" --control "$SN_TMP/no/such/dp.ctl"
one_line "--control in a missing folder" "--control $SN_TMP/no/such/dp.ctl: the folder $SN_TMP/no/such does not exist (create it"
[ ! -e "$SN_TMP/dp.sock" ] || sn_fail "--control in a missing folder: the datapath listened anyway"
run 2 "$DATAPATH" --listen "$SN_TMP/no/dp.sock"
one_line "--listen in a missing folder" "--listen $SN_TMP/no/dp.sock: the folder $SN_TMP/no does not exist"
"$DATAPATH" --listen "$SN_TMP/dp.sock" 2>"$SN_TMP/err" &
dp=$!
sn_wait_for 5 test -S "$SN_TMP/dp.sock" || sn_fail "datapath --listen: no socket"
kill -TERM "$dp"
sn_wait_for 5 sh -c "! kill -0 $dp 2>/dev/null" || { kill -9 "$dp"; sn_fail "datapath --listen ignores SIGTERM while it waits"; }
wait "$dp"; rc=$?
[ "$rc" -eq 0 ] || sn_fail "datapath --listen stopped while waiting: exit status $rc"
[ ! -e "$SN_TMP/dp.sock" ] || sn_fail "datapath --listen stopped while waiting: its socket is left"
one_line "SIGTERM while it waits for netsetup" "stopped before netsetup connected"

sn_log "nothing served"
run 0 "$DATAPATH" stats --all --dir "$SN_TMP/never"
grep -q "no datapath" "$SN_TMP/out" || sn_fail "stats --all of a missing folder: $(cat "$SN_TMP/out")"
run 0 "$DATAPATH" stats --all --json --dir "$SN_TMP/never"
[ "$(cat "$SN_TMP/out")" = "[]" ] || sn_fail "stats --all --json of a missing folder: $(cat "$SN_TMP/out")"
echo "ok: nothing served: $(cat "$SN_TMP/out")"
echo "netsetup_cli: versions, help, exit statuses and messages as documented"
