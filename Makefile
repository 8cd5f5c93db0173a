# sandnet - build, test, demo, benchmark, install.
#
#   make                 build build/netsetup and build/datapath
#   make check           install missing Debian packages, then build and run every
#                        test twice (plain, then ASan+UBSan) and the fuzz targets briefly
#   make demo            run the main job on a demo network it creates itself
#   make bench           UDP, TCP, container-face, nginx and WAN (delay and loss)
#                        benchmarks next to the kernel (docs/benchmarks.md)
#   make fuzz            run every libFuzzer target for FUZZ_SECONDS each
#   make install         PREFIX=/usr/local DESTDIR=
#
# O= names the output folder; SANITIZE=1 builds with ASan+UBSan, SANITIZE=thread
# with ThreadSanitizer (make tsan: the tests that run stacks in threads).

O		?= build
SANITIZE	?= 0
FUZZ_SECONDS	?= 60
PREFIX		?= /usr/local
DESTDIR		?=
JOBS		:= $(shell nproc 2>/dev/null || echo 1)

ifeq ($(origin CC),default)
CC		:= gcc
endif
PKGS		:= libnl-3.0 libnl-route-3.0 libnl-genl-3.0 libcap-ng libsodium jansson libsystemd libseccomp libnftables liburing
PKG_CFLAGS	:= $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS	:= $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_LIBS	:= $(shell pkg-config --libs check 2>/dev/null)

CFLAGS		?= -O2 -g
CFLAGS		+= -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. $(PKG_CFLAGS)
LDLIBS		+= $(PKG_LIBS) -lpthread

ifeq ($(SANITIZE),1)
SAN_FLAGS	:= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CFLAGS		+= $(SAN_FLAGS)
LDFLAGS		+= $(SAN_FLAGS)
endif
ifeq ($(SANITIZE),thread)
SAN_FLAGS	:= -fsanitize=thread -fno-omit-frame-pointer
CFLAGS		+= $(SAN_FLAGS)
LDFLAGS		+= $(SAN_FLAGS)
endif
ifeq ($(SANITIZE),fuzz)
CFLAGS		+= -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
LDFLAGS		+= -fsanitize=fuzzer,address,undefined
endif

# Each program's main.c stays out of its archive so that unit tests and fuzz
# targets can link everything else.
PROTO_SRC	:= $(sort $(wildcard proto/*.c))
COMMON_SRC	:= $(sort $(wildcard common/*.c))
NETSETUP_SRC	:= $(sort $(filter-out netsetup/main.c,$(wildcard netsetup/*.c)))
DATAPATH_SRC	:= $(sort $(filter-out datapath/main.c,$(shell find datapath -name '*.c' 2>/dev/null)))
UNIT_SRC	:= $(sort $(wildcard tests/unit/test_*.c))
TOOL_SRC	:= $(sort $(wildcard tests/tools/*.c))
FUZZ_SRC	:= $(sort $(wildcard tests/fuzz/fuzz_*.c))

# Objects live under $(O)/obj/ so that $(O)/netsetup (a program) and the
# folder of netsetup/*.o never collide.
obj		= $(patsubst %.c,$(O)/obj/%.o,$(1))
LIBPROTO	:= $(O)/libproto.a
LIBCOMMON	:= $(O)/libcommon.a
LIBNETSETUP	:= $(O)/libnetsetup.a
LIBDATAPATH	:= $(O)/libdatapath.a
LIBS_ALL	:= $(LIBNETSETUP) $(LIBDATAPATH) $(LIBCOMMON) $(LIBPROTO)
PROGRAMS	:= $(O)/netsetup $(O)/datapath
UNIT_BINS	:= $(patsubst tests/unit/%.c,$(O)/tests/unit/%,$(UNIT_SRC))
TOOL_BINS	:= $(patsubst tests/tools/%.c,$(O)/tests/tools/%,$(TOOL_SRC))
FUZZ_BINS	:= $(patsubst tests/fuzz/%.c,$(O)/tests/fuzz/%,$(FUZZ_SRC))

.PHONY: all deps check check-long test tsan unit-bins tools fuzz fuzz-bins demo bench install clean
.DELETE_ON_ERROR:

all: $(PROGRAMS)

$(O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIBPROTO): $(call obj,$(PROTO_SRC))
$(LIBCOMMON): $(call obj,$(COMMON_SRC))
$(LIBNETSETUP): $(call obj,$(NETSETUP_SRC))
$(LIBDATAPATH): $(call obj,$(DATAPATH_SRC))
$(O)/lib%.a:
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(O)/netsetup: $(O)/obj/netsetup/main.o $(LIBNETSETUP) $(LIBCOMMON) $(LIBPROTO)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(O)/datapath: $(O)/obj/datapath/main.o $(LIBDATAPATH) $(LIBCOMMON) $(LIBPROTO)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# A unit test links the module its name starts with: test_proto_*, test_common_*,
# test_netsetup_*, test_datapath_*; so one module's work in progress never breaks
# another's tests. common/ (the printer) is shared by netsetup and the datapath.
$(O)/tests/unit/test_proto%: $(O)/obj/tests/unit/test_proto%.o $(LIBPROTO)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)
$(O)/tests/unit/test_common%: $(O)/obj/tests/unit/test_common%.o $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)
$(O)/tests/unit/test_netsetup%: $(O)/obj/tests/unit/test_netsetup%.o $(LIBNETSETUP) $(LIBCOMMON) $(LIBPROTO)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)
$(O)/tests/unit/test_datapath%: $(O)/obj/tests/unit/test_datapath%.o $(LIBDATAPATH) $(LIBCOMMON) $(LIBPROTO)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)
# Test tools speak the protocol and nothing else of ours.
$(O)/tests/tools/%: $(O)/obj/tests/tools/%.o $(LIBPROTO)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# A proto fuzz target links proto alone, so that clang never has to build the
# other modules for it.
$(filter $(O)/tests/fuzz/fuzz_proto%,$(FUZZ_BINS)): $(O)/tests/fuzz/%: $(O)/obj/tests/fuzz/%.o $(LIBPROTO)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(O)/tests/fuzz/%: $(O)/obj/tests/fuzz/%.o $(LIBS_ALL)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

unit-bins: $(UNIT_BINS)
tools: $(TOOL_BINS)

deps:
	@scripts/install-deps.sh

# One build's tests: unit (Check) and integration (root, namespaces).
# SANDNET_SANITIZED tells the tests they run under the sanitizers: the long
# transfers then move 256 MiB instead of 1 GiB (the plain build moves 1 GiB).
test: all unit-bins tools
	SANDNET_SANITIZED=$(if $(filter 1,$(SANITIZE)),1,) tests/run-tests.sh $(abspath $(O))

# The scenarios that run with any shard count (DP_SHARDS_ANY in
# tests/integration/datapath_env.inc) run with one shard in the plain pass
# and two in the ASan one: both counts, and no minute more (issue 20). The
# others run with the default, one shard per CPU, unless they ask.
# The builds use every CPU (-j: 21 s against 44 s for the plain one); the
# tests then run as tests/run-tests.sh schedules them.
check: deps
	SANDNET_TEST_SHARDS=1 $(MAKE) -j$(JOBS) O=build test
	SANDNET_TEST_SHARDS=2 $(MAKE) -j$(JOBS) O=build/asan SANITIZE=1 test
	$(MAKE) -j$(JOBS) tsan
	$(MAKE) -j$(JOBS) fuzz FUZZ_SECONDS=5

# What runs stacks in threads at once (shards, issue 20), under ThreadSanitizer:
# the unit test of two TCP simulations in two threads, the pause of shards for
# their counters (test_datapath_control), and a container served
# by two shards (face_shards, whose checks also fail on a sanitizer report in
# the datapath's log). A data race fails them.
TSAN_TESTS	:= test_datapath_tcp_sim test_datapath_control
TSAN_INTEGRATION := face_shards
tsan:
	$(MAKE) O=build/tsan SANITIZE=thread all tools $(addprefix build/tsan/tests/unit/,$(TSAN_TESTS))
	set -e; for t in $(TSAN_TESTS); do \
		echo "tsan: $$t"; TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/unit/$$t; done
	SANDNET_SANITIZED=1 TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
		tests/run-tests.sh $(abspath build/tsan) $(addprefix integration/,$(TSAN_INTEGRATION))

# The long transfers issue 5 asks for, too slow for every CI run: 1 GiB each
# way at 1 % and 5 % loss, and 1 GiB through the impairment relay (the 0 %
# run is part of `make check`). About 15 minutes in all.
check-long: deps
	$(MAKE) O=build all unit-bins tools
	LOSS_PCT=1 tests/run-tests.sh $(abspath build) datapath_tcp_1g
	LOSS_PCT=5 tests/run-tests.sh $(abspath build) datapath_tcp_1g
	SIZE_MB=1024 tests/run-tests.sh $(abspath build) datapath_tcp_relay

fuzz-bins: $(FUZZ_BINS)
fuzz: deps
	$(MAKE) O=build/fuzz SANITIZE=fuzz CC=clang fuzz-bins
	tests/fuzz/run.sh $(abspath build/fuzz) $(FUZZ_SECONDS)

demo: deps all
	@if [ -x scripts/demo.sh ]; then scripts/demo.sh $(abspath $(O)); \
	else echo "make demo: scripts/demo.sh is missing"; exit 1; fi

bench: deps all tools
	bench/csum.sh $(abspath $(O))
	bench/run.sh $(abspath $(O))
	bench/tcp.sh $(abspath $(O))
	bench/face.sh $(abspath $(O))
	bench/nginx.sh $(abspath $(O))
	bench/udp.sh $(abspath $(O))
	bench/wan.sh $(abspath $(O))

install: all
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(O)/netsetup $(DESTDIR)$(PREFIX)/sbin/netsetup
	install -m 0755 $(O)/datapath $(DESTDIR)$(PREFIX)/bin/datapath
	for m in docs/man/*.8; do [ -e "$$m" ] && install -m 0644 "$$m" $(DESTDIR)$(PREFIX)/share/man/man8/; done; true
	# systemd units name /usr/local in the tree; installed ones name PREFIX.
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system $(DESTDIR)$(PREFIX)/lib/cni \
		$(DESTDIR)$(PREFIX)/share/doc/sandnet
	for u in dist/systemd/*.service dist/systemd/*.socket; do \
		sed 's#/usr/local#$(PREFIX)#g' "$$u" > $(DESTDIR)$(PREFIX)/lib/systemd/system/$$(basename "$$u"); done
	install -m 0644 dist/systemd/netsetup.conf $(DESTDIR)$(PREFIX)/share/doc/sandnet/netsetup.conf.example
	# The CNI plugin is netsetup under the name "sandnet" (docs/runtime.md),
	# in PREFIX/lib/cni: one of podman's default cni_plugin_dirs for /usr/local and /usr.
	ln -sf ../../sbin/netsetup $(DESTDIR)$(PREFIX)/lib/cni/sandnet
	# The OCI runtime for Docker, containerd/CRI and CRI-O is netsetup under the
	# name "sandnet-runtime" too; examples of their configurations beside.
	ln -sf ../sbin/netsetup $(DESTDIR)$(PREFIX)/bin/sandnet-runtime
	install -d $(DESTDIR)$(PREFIX)/share/sandnet/runtime
	for r in dist/runtime/*; do \
		sed 's#/usr/local#$(PREFIX)#g' "$$r" > $(DESTDIR)$(PREFIX)/share/sandnet/runtime/$$(basename "$$r"); done
	# oci-hooks(5) files, enabled per container by io.sandnet.enable=true; an example
	# conflist (bridge, then sandnet); the documentation.
	install -d $(DESTDIR)$(PREFIX)/share/containers/oci/hooks.d $(DESTDIR)$(PREFIX)/share/sandnet/cni
	for h in dist/oci/hooks.d/*.json; do \
		sed 's#/usr/local#$(PREFIX)#g' "$$h" > $(DESTDIR)$(PREFIX)/share/containers/oci/hooks.d/$$(basename "$$h"); done
	install -m 0644 dist/cni/*.conflist $(DESTDIR)$(PREFIX)/share/sandnet/cni/
	install -m 0644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/sandnet/

# build/ and any other O= folder given (relative paths only: never O=/ or O=..)
clean:
	rm -rf build $(filter-out /% ..%,$(O))

-include $(shell find $(O) -name '*.d' 2>/dev/null)
