#!/usr/bin/env bash
# The man pages and README.md name every option and command the code parses,
# and nothing the code does not (issue 40: docs that stand alone and true).
#
# Read from the sources, not from a usage string:
#   - long options: every `struct option` table ({ "name", ..._argument }),
#     every "--flag" a strcmp() compares an argument with, and the words
#     sandnet-runtime compares a stripped flag name with (strcmp(name, ...))
#     or steps over (rt_value_flags[]);
#   - commands: strcmp(argv[N], "word") and strcmp(c, "word") (netsetup's and
#     the datapath's subcommands, the OCI hook's stages), the CNI commands
#     (strcmp(c.command, ...)) and the ones sandnet-runtime acts on
#     (strcmp(rt.cmd, ...)).
# Each must be named in its man page (netsetup/front/*.c: docs/man/netsetup.8,
# netsetup/front/runtime.c: docs/man/sandnet-runtime.8, datapath/*.c:
# docs/man/datapath.8); a subcommand in the page's SYNOPSIS. The other way
# round, every --flag those pages and README.md name must be in some parser,
# or be another program's (FOREIGN below, by program). Needs no namespace and no build (SANDNET_SRC: another tree to check).
# One line per mismatch; exit 1 if there is any.
. "$SANDNET_TESTS/lib/common.sh"
SRC=${SANDNET_SRC:-$SANDNET_TESTS/..}
cd "$SRC" || sn_fail "no source tree at $SRC"

# parser files -> their man page
NETSETUP_SRC="netsetup/front/opts.c netsetup/front/main.c netsetup/front/serve.c netsetup/front/connect.c
netsetup/front/oci.c netsetup/front/cni.c"
RUNTIME_SRC="netsetup/front/runtime.c"
DATAPATH_SRC="datapath/main.c datapath/proc/limits.c datapath/proc/config.c datapath/obs/metrics.c"
# other programs' flags the docs show in their examples
FOREIGN="dockerd:--add-runtime docker,podman:--network docker,podman:--runtime podman:--network-backend
podman:--hooks-dir podman:--annotation ctr:--runc-binary ctr:--with-ns ctr:--rootfs systemctl:--now"

errors=0
mismatch() { echo "MISMATCH: $*"; errors=$((errors + 1)); }

for f in $NETSETUP_SRC $RUNTIME_SRC $DATAPATH_SRC docs/man/netsetup.8 docs/man/datapath.8 \
	docs/man/sandnet-runtime.8 README.md; do
	[ -f "$f" ] || sn_fail "missing $SRC/$f"
done

# long_opts FILE: one --flag a line
long_opts() {
	grep -oE '\{ *"[a-z0-9][a-z0-9-]*", *(no|required|optional)_argument' "$1" |
		sed -E 's/^\{ *"([^"]+)".*/--\1/'
	grep -E 'strn?cmp *\(' "$1" | grep -oE '"--[a-z0-9][a-z0-9-]*"' | tr -d '"'
	grep -oE 'strcmp *\(name, *"[a-z][a-z0-9-]+"\)' "$1" | grep -oE '"[^"]+"' | sed -E 's/"(.*)"/--\1/'
	sed -n '/rt_value_flags\[\] *= *{/,/};/p' "$1" | grep -oE '"[a-z][a-z0-9-]+"' | sed -E 's/"(.*)"/--\1/'
}

# commands FILE: "word" a line
commands() {
	grep -oE 'strcmp *\((argv\[[0-9]+\]|c|c\.command|rt(\.|->)cmd), *"[A-Za-z][A-Za-z-]*"\)' "$1" |
		grep -oE '"[^"]+"' | tr -d '"'
}

# roff FILE: the page as text, font changes and escaped dashes undone
roff() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em/ /g' "$1"; }
synopsis() { roff "$1" | awk '/^\.SH /{ on = ($2 == "SYNOPSIS") ; next } on'; }

# names TEXT WORD: WORD appears in TEXT as a whole word (a flag: not a prefix of a longer one)
names() { grep -qE -- "(^|[^A-Za-z0-9-])$2([^A-Za-z0-9-]|\$)" <<<"$1"; }

all_flags=$(for f in $NETSETUP_SRC $RUNTIME_SRC $DATAPATH_SRC; do long_opts "$f"; done | sort -u)
[ -n "$all_flags" ] || sn_fail "no option found in the parsers: has the way they are written changed?"

# check PAGE FILES...: every option and command of FILES is named in PAGE
check() {
	local page=$1 text syn f flag word n=0; shift
	text=$(roff "$page")
	syn=$(synopsis "$page")
	for f in "$@"; do
		for flag in $(long_opts "$f" | sort -u); do
			n=$((n + 1))
			names "$text" "$flag" || mismatch "$page does not name $flag ($f parses it)"
		done
		for word in $(commands "$f" | sort -u); do
			n=$((n + 1))
			# the CNI commands and those sandnet-runtime acts on: in the page's text;
			# a subcommand or an OCI hook stage: in its SYNOPSIS
			if [[ $word == [A-Z]* || $f == netsetup/front/runtime.c ]]; then
				names "$text" "$word" || mismatch "$page does not name the command '$word' ($f)"
			else
				names "$syn" "$word" || mismatch "$page: its SYNOPSIS does not name the command '$word' ($f)"
			fi
		done
	done
	echo "$page: $n options and commands of $* looked for"
}
check docs/man/netsetup.8 $NETSETUP_SRC
check docs/man/sandnet-runtime.8 $RUNTIME_SRC
check docs/man/datapath.8 $DATAPATH_SRC

# The other way: what the pages and the README name exists.
for doc in docs/man/netsetup.8 docs/man/sandnet-runtime.8 docs/man/datapath.8 README.md; do
	n=0
	for flag in $( (if [[ $doc == *.8 ]]; then roff "$doc"; else cat "$doc"; fi) |
			grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u); do
		n=$((n + 1))
		grep -qxF -- "$flag" <<<"$all_flags" && continue
		grep -qE -- "(^|[[:space:]])[a-z,]+:$flag([[:space:]]|\$)" <<<"$FOREIGN" && continue
		mismatch "$doc names $flag, which no option parser has (nor is it another program's flag in FOREIGN)"
	done
	echo "$doc: $n flags checked against the parsers"
done

[ "$errors" -eq 0 ] || sn_fail "$errors mismatches between the option parsers and the docs (above)"
echo "the man pages and README.md match the option parsers"
