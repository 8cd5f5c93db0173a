#!/usr/bin/env bash
# sandnet-runtime as `make install` (of this build, not rebuilt: -o all) puts it (PREFIX/bin/sandnet-runtime, a
# link to ../sbin/netsetup) passes everything but create and run through:
#  - --version, features, --help and `state` of an unknown container give
#    runc's own stdout, stderr and exit status (and crun's with --runtime
#    crun, SANDNET_RUNTIME=crun or runtime = crun in its configuration);
#  - every command with runc's global flags reaches a stand-in runtime with
#    exactly its arguments, and its stdout, stderr and exit status come back;
#  - create and run: the bundle's config.json gets the hooks naming
#    PREFIX/sbin/netsetup (the netsetup installed with it), the
#    configuration's policy after "--", before the stand-in runs;
#  - refusals name what was wrong, on stderr and as runc's JSON log line in
#    --log: a runtime that is not there, sandnet-runtime itself, a bad
#    configuration, a missing bundle, a bad io.sandnet.enable;
#  - with SYSCONFDIR under PREFIX nothing is written in /etc, and `make
#    uninstall` with the same variables removes everything but the
#    configuration (the admin's).
# No container runs here: runtime_docker and runtime_containerd run them.
. "$SANDNET_TESTS/lib/common.sh"
. "$SANDNET_TESTS/lib/netsetup.sh"

command -v runc >/dev/null || sn_skip "no runc (apt-get install runc)"
command -v crun >/dev/null || sn_skip "no crun (apt-get install crun)"
PREFIX=$SN_TMP/prefix
etc_before=$(ls -d /etc/sandnet 2>/dev/null)
make -s -C "$SANDNET_TESTS/.." -o all O="$SANDNET_BUILD" PREFIX="$PREFIX" SYSCONFDIR="$PREFIX/etc" install >"$SN_TMP/install.log" 2>&1 ||
	sn_fail "make install: $(tail -5 "$SN_TMP/install.log")"
RT=$PREFIX/bin/sandnet-runtime
[ "$(readlink "$RT")" = ../sbin/netsetup ] || sn_fail "$RT is not a link to ../sbin/netsetup: $(ls -l "$RT")"
for f in docker-daemon.json containerd-config.toml runtimeclass.yaml crio-sandnet.conf runtime.conf; do
	[ -f "$PREFIX/share/sandnet/runtime/$f" ] || sn_fail "make install: no share/sandnet/runtime/$f"
done
grep -q "\"path\": \"$PREFIX/bin/sandnet-runtime\"" "$PREFIX/share/sandnet/runtime/docker-daemon.json" ||
	sn_fail "the installed daemon.json names another sandnet-runtime"
grep -q "BinaryName = \"$PREFIX/bin/sandnet-runtime\"" "$PREFIX/share/sandnet/runtime/containerd-config.toml" ||
	sn_fail "the installed containerd config names another sandnet-runtime"
export SANDNET_RUNTIME_CONFIG=$SN_TMP/runtime.conf
: >"$SANDNET_RUNTIME_CONFIG"

# same WHAT CMD...: sandnet-runtime CMD... and runc CMD... print and exit alike
# (log lines' time stamps aside)
same() {
	local what=$1 real=$2; shift 2
	"$RT" "$@" >"$SN_TMP/a.out" 2>"$SN_TMP/a.err"; local ra=$?
	"$real" "$@" >"$SN_TMP/b.out" 2>"$SN_TMP/b.err"; local rb=$?
	sed -i 's/time="[^"]*"//' "$SN_TMP/a.err" "$SN_TMP/b.err"
	[ "$ra" = "$rb" ] || sn_fail "$what: exit status $ra, $real's $rb"
	cmp -s "$SN_TMP/a.out" "$SN_TMP/b.out" || sn_fail "$what: stdout differs: $(diff "$SN_TMP/a.out" "$SN_TMP/b.out")"
	cmp -s "$SN_TMP/a.err" "$SN_TMP/b.err" || sn_fail "$what: stderr differs: $(diff "$SN_TMP/a.err" "$SN_TMP/b.err")"
	echo "ok: $what: as $real (exit $ra, $(wc -c <"$SN_TMP/a.out") bytes out, $(wc -c <"$SN_TMP/a.err") err)"
}

sn_log "runc's own answers"
same "--version" runc --version
same "features" runc features
same "--help" runc --help
same "state of an unknown container" runc --root "$SN_TMP/runc" state "sn$$-nosuch"
same "delete of an unknown container" runc --root "$SN_TMP/runc" delete "sn$$-nosuch"
grep -q "does not exist" "$SN_TMP/a.err" || sn_fail "runc's message: $(cat "$SN_TMP/a.err")"

sn_log "crun named three ways"
# (crun makes its --root folder whatever it is asked: the test's, not /run/crun)
CR=(--root "$SN_TMP/crun" --version)
"$RT" --runtime crun "${CR[@]}" >"$SN_TMP/c1" && crun "${CR[@]}" >"$SN_TMP/c0" && cmp -s "$SN_TMP/c0" "$SN_TMP/c1" ||
	sn_fail "--runtime crun --version: $(cat "$SN_TMP/c1")"
grep -q "^crun version" "$SN_TMP/c0" || sn_fail "crun --version: $(cat "$SN_TMP/c0")"
SANDNET_RUNTIME=crun "$RT" "${CR[@]}" >"$SN_TMP/c2" && cmp -s "$SN_TMP/c0" "$SN_TMP/c2" || sn_fail "SANDNET_RUNTIME=crun"
echo "runtime = $(command -v crun)   # the real one" >"$SANDNET_RUNTIME_CONFIG"
"$RT" "${CR[@]}" >"$SN_TMP/c3" && cmp -s "$SN_TMP/c0" "$SN_TMP/c3" || sn_fail "runtime = crun in the configuration"
# the command line wins over the file
"$RT" --runtime runc --version | grep -q "^runc version" || sn_fail "--runtime runc over the file's crun"
: >"$SANDNET_RUNTIME_CONFIG"

sn_log "every command reaches a stand-in runtime as it was given"
cat >"$SN_TMP/fake-runtime" <<'EOF'
#!/bin/sh
# prints its arguments one a line, and the hooks of a bundle it is given; exits 42
for a in "$@"; do echo "arg:$a"; done
prev=
for a in "$@"; do
	case $prev in --bundle|-b) python3 -c 'import json,sys; print("hooks:" + json.dumps(json.load(open(sys.argv[1] + "/config.json")).get("hooks"), sort_keys=True))' "$a";; esac
	prev=$a
done
echo "to stderr" >&2
exit 42
EOF
chmod +x "$SN_TMP/fake-runtime"
G=(--root /run/x --log "$SN_TMP/log.json" --log-format json --systemd-cgroup)
for cmd in "start c1" "state c1" "kill c1 KILL" "delete --force c1" "exec --process /p.json -d c1" "ps c1" \
	"events --stats c1" "update --memory 1000 c1" "features" "pause c1" "checkpoint c1"; do
	# shellcheck disable=SC2086
	"$RT" --runtime "$SN_TMP/fake-runtime" "${G[@]}" $cmd >"$SN_TMP/f.out" 2>"$SN_TMP/f.err"
	rc=$?
	[ "$rc" = 42 ] || sn_fail "$cmd: exit status $rc, not the runtime's 42"
	[ "$(cat "$SN_TMP/f.err")" = "to stderr" ] || sn_fail "$cmd: stderr $(cat "$SN_TMP/f.err")"
	# shellcheck disable=SC2086
	[ "$(cat "$SN_TMP/f.out")" = "$(printf 'arg:%s\n' "${G[@]}" $cmd)" ] ||
		sn_fail "$cmd: the runtime got $(cat "$SN_TMP/f.out")"
done
echo "ok: start state kill delete exec ps events update features pause checkpoint passed through"

sn_log "create and run: the hooks name the installed netsetup"
B=$SN_TMP/bundle
mkdir -p "$B"
(cd "$B" && crun spec) || sn_fail "crun spec"
python3 - "$B/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["hooks"] = {"prestart": [{"path": "/bin/true", "args": ["true"]}]}
c["annotations"] = {"sandnet.policy": "ingress-deny=tcp:any:22"}
json.dump(c, open(sys.argv[1], "w"))
EOF
cp "$B/config.json" "$SN_TMP/config.orig"
echo "policy = egress-deny=10.0.0.0/8" >"$SANDNET_RUNTIME_CONFIG"
"$RT" --runtime "$SN_TMP/fake-runtime" --root /run/x create --bundle "$B" --pid-file /p c2 >"$SN_TMP/f.out" 2>&1
[ $? = 42 ] || sn_fail "create: $(cat "$SN_TMP/f.out")"
grep '^hooks:' "$SN_TMP/f.out" | sed 's/^hooks://' | python3 -c '
import json, sys
h = json.load(sys.stdin)
netsetup, statedir = sys.argv[1:]
assert h["prestart"] == [{"path": "/bin/true", "args": ["true"]}], h
c, p = h["createRuntime"][0], h["poststop"][0]
assert c["path"] == netsetup and p["path"] == netsetup, (c, p)
assert c["args"] == ["netsetup", "oci-hook", "create", "--none-ok", "--", "--egress-deny", "10.0.0.0/8"], c
assert p["args"] == ["netsetup", "oci-hook", "poststop"], p
assert "SANDNET_STATE_DIR=" + statedir in c["env"], c
print("ok: the runtime saw", c["args"], "at", c["path"])' "$PREFIX/sbin/netsetup" "$SANDNET_STATE_DIR" ||
	sn_fail "the hooks in config.json: $(cat "$SN_TMP/f.out")"
grep -q "^arg:--pid-file$" "$SN_TMP/f.out" || sn_fail "create's arguments: $(cat "$SN_TMP/f.out")"
# run, from the bundle as the current folder: the same, once
cp "$SN_TMP/config.orig" "$B/config.json"
(cd "$B" && "$RT" --runtime "$SN_TMP/fake-runtime" run -d c3) >"$SN_TMP/f.out" 2>&1
(cd "$B" && "$RT" --runtime "$SN_TMP/fake-runtime" create c3) >>"$SN_TMP/f.out" 2>&1
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hooks"]["createRuntime"]))' "$B/config.json")" = 1 ] ||
	sn_fail "run then create added the hooks twice: $(cat "$B/config.json")"
: >"$SANDNET_RUNTIME_CONFIG"

sn_log "refusals"
refused() {
	local what=$1 words=$2; shift 2
	rm -f "$SN_TMP/log.json"
	ns_expect_fail "$what" "$words" -- "$RT" "$@"
	[ "$("$RT" "$@" >/dev/null 2>&1; echo $?)" = 1 ] || sn_fail "$what: not exit status 1"
}
refused "a runtime that is not there" "sandnet-runtime: cannot execute $SN_TMP/nothing: No such file or directory" \
	--runtime "$SN_TMP/nothing" state x
refused "a runtime that is not a program" "cannot execute $SN_TMP/runtime.conf: Permission denied" \
	--runtime "$SN_TMP/runtime.conf" state x
refused "itself" "the OCI runtime $RT is sandnet-runtime itself" --runtime "$RT" state x
refused "--runtime without its value" "--runtime: missing its value" --runtime
refused "a bad --policy" "--policy 'egress=1.2.3.4': expected egress-allow=RULE" --policy egress=1.2.3.4 state x
echo "runtim = crun" >"$SANDNET_RUNTIME_CONFIG"
refused "a bad configuration" "$SANDNET_RUNTIME_CONFIG line 1: unknown key 'runtim' \\(runtime, policy\\)" state x
: >"$SANDNET_RUNTIME_CONFIG"
SANDNET_RUNTIME_CONFIG=$SN_TMP/none.conf refused "a configuration that is not there" \
	"$SN_TMP/none.conf: No such file or directory" state x
ns_expect_fail "no runc, no crun" "no OCI runtime: neither runc nor crun is next to netsetup or in PATH" -- \
	env PATH=/nonexistent "$RT" state x
refused "a bundle without config.json" \
	"$SN_TMP/nowhere/config.json: No such file or directory \\(the bundle is --bundle DIR, or the current folder\\)" \
	--log "$SN_TMP/log.json" --log-format json create --bundle "$SN_TMP/nowhere" c4
python3 -c '
import json, sys
e = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert e["level"] == "error" and "nowhere/config.json: No such file" in e["msg"] and e["time"], e
print("ok: --log has", e)' "$SN_TMP/log.json" || sn_fail "the JSON log line: $(cat "$SN_TMP/log.json")"
python3 - "$B/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["annotations"] = {"io.sandnet.enable": "perhaps"}
c.pop("hooks", None)
json.dump(c, open(sys.argv[1], "w"))
EOF
cp "$B/config.json" "$SN_TMP/config.perhaps"
refused "io.sandnet.enable=perhaps" "annotation io.sandnet.enable 'perhaps': expected true or false" \
	--runtime "$SN_TMP/fake-runtime" create --bundle "$B" c5
cmp -s "$B/config.json" "$SN_TMP/config.perhaps" || sn_fail "a refused create changed config.json"
[ -z "$(ls "$B" | grep -v '^config.json$')" ] || sn_fail "a refused create left: $(ls "$B")"
echo "sandnet-runtime: runc's and crun's answers, every command passed through, the hooks on create and run"

sn_log "make uninstall: everything make install put under PREFIX goes but the configuration"
[ "$(ls -d /etc/sandnet 2>/dev/null)" = "$etc_before" ] || sn_fail "make install with SYSCONFDIR under PREFIX wrote /etc/sandnet"
[ -f "$PREFIX/etc/sandnet/netsetup.conf" ] && [ -f "$PREFIX/etc/sandnet/runtime.conf" ] ||
	sn_fail "make install: no SYSCONFDIR/sandnet/{netsetup,runtime}.conf"
make -s -C "$SANDNET_TESTS/.." O="$SANDNET_BUILD" PREFIX="$PREFIX" SYSCONFDIR="$PREFIX/etc" uninstall \
	>"$SN_TMP/uninstall.log" 2>&1 || sn_fail "make uninstall: $(tail -5 "$SN_TMP/uninstall.log")"
left=$(cd "$PREFIX" && find . \( -type f -o -type l \) | sort)
[ "$left" = "$(printf './etc/sandnet/netsetup.conf\n./etc/sandnet/runtime.conf')" ] ||
	sn_fail "make uninstall left: $left"
echo "ok: make uninstall left only the configuration"
