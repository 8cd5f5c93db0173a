// SPDX-License-Identifier: MIT
/*
 * fuzz_netsetup_parsers.c - libFuzzer target for netsetup's text parsers
 *
 * Theory of operation
 *
 * netsetup runs as root and reads text from users and runtimes. The first
 * byte of an input picks the parser, the second the CNI command (ignored by
 * the others), the rest is the parser's input:
 *   0  the command line: ns_opts_parse() (opts.c) on the rest split at NUL
 *      bytes into argv (at most 64 arguments, "netsetup" first)
 *   1  the serve configuration: ns_serve_conf_parse() (serve_conf.c) on the
 *      rest as a file, up to a 0xff byte; what follows it is an ATTACH and
 *      its peer (uid, gid, gso, channels, shards, interface name) that
 *      ns_serve_authorize() judges by the configuration
 *   2  the CNI network configuration: ns_cni_main() (cni.c) with the rest on
 *      stdin and CNI_COMMAND chosen by the second byte among VERSION, DEL,
 *      ADD, CHECK and an unknown command; CNI_CONTAINERID is unset, so ADD
 *      reads and checks its whole configuration (datapath, its arguments,
 *      the TCP settings, publish, forward, policy, gso, face, channels,
 *      shards) and then stops at the environment check, and DEL stops there
 *      after the JSON was decoded and checked: nothing is attached, no
 *      state file read
 *   3  the OCI hook: ns_oci_check() (oci.c; the parsing half of
 *      ns_oci_main(), attaching nothing) with the rest split at the first
 *      0xff byte into arguments (NUL-separated) and the state JSON on stdin
 *   4  the state file netsetup writes for every attachment and reads back to
 *      give the namespace back: ns_state_parse() (state.c)
 * Properties checked beyond "no crash, no leak, no sanitizer report": a
 * refusal is a negative errno with a non-empty message; a parsed serve
 * configuration keeps its counts within their arrays and its numbers within
 * the documented ranges; a parsed state file formats (ns_state_format())
 * and parses again to the same counts and ids; and the CNI plugin always answers with exactly one
 * JSON document and exit status 0 or 1 (an error object when 1).
 *
 * Seeds: tests/fuzz/corpus/netsetup_parsers/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <jansson.h>

#include "netsetup/front/front.h"
#include "netsetup/orch/orch_int.h"

#define FZ_MAX_ARGS	64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_netsetup_parsers: %s\n", what);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	unsetenv("CNI_CONTAINERID");
	unsetenv("CNI_NETNS");
	unsetenv("CNI_IFNAME");
	/* The parsers' own messages would flood the log. */
	if (!freopen("/dev/null", "w", stdout))
		fz_fail("stdout to /dev/null");
	return 0;
}

/* Split @buf (NUL-terminated at @len) at NUL bytes into @argv after @first. */
static int fz_split(char *buf, size_t len, const char *first, char **argv)
{
	int argc = 0;
	size_t i = 0;

	argv[argc++] = (char *)first;
	while (i < len && argc < FZ_MAX_ARGS) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	return argc;
}

static void fz_refusal(int err, const struct ns_err *e)
{
	if (err >= 0)
		fz_fail("refusal with a non-negative return");
	if (!e->text[0])
		fz_fail("refusal without a message");
}

static void fz_opts(char *buf, size_t len)
{
	char *argv[FZ_MAX_ARGS + 1];
	struct ns_err e = { .text = "" };
	struct ns_opts o;
	int argc, err;

	argc = fz_split(buf, len, "netsetup", argv);
	err = ns_opts_parse(argc, argv, &o, &e);
	if (err) {
		fz_refusal(err, &e);
		return;
	}
	if (o.cmd >= NS_CMD_MAX || o.n_ifaces > NS_MAX_IFACES)
		fz_fail("parsed options out of range");
	if (o.cmd == NS_CMD_RUN && (!o.child_argv || !o.child_argv[0]))
		fz_fail("run without a datapath to execute");
}

/*
 * The daemon's check of an ATTACH against the configuration @c: the peer
 * (uid, gid) and the request (its gso mode in range, as proto_decode()
 * leaves it) from @req's bytes, zeros where it is short. An answer of 0 must
 * be what every rule allows; a refusal is -EPERM (who) or -EINVAL (what)
 * with words.
 */
static void fz_authorize(const struct ns_serve_conf *c, const uint8_t *req, size_t len)
{
	uint8_t b[12 + IFNAMSIZ] = { 0 };
	struct ns_err e = { .text = "" };
	struct proto_attach a = { .netns_fd = -1 };
	struct ucred cred = { .pid = 1 };
	bool who = false, iface = !c->n_ifaces;
	unsigned int i, channels;
	int err;

	if (len)
		memcpy(b, req, len < sizeof(b) ? len : sizeof(b));
	memcpy(&cred.uid, b, 4);
	memcpy(&cred.gid, b + 4, 4);
	a.has_gso_mode = b[8] & 1;
	a.gso_mode = (enum proto_gso_mode)(b[9] % PROTO_GSO_MODE_MAX);
	a.channels = b[10];
	a.shards = b[11];
	memcpy(a.ifname, b + 12, IFNAMSIZ - 1);
	channels = a.channels ? a.channels : 1;
	err = ns_serve_authorize(c, &cred, &a, &e);
	if (err && ((err != -EPERM && err != -EINVAL) || !e.text[0]))
		fz_fail("an ATTACH refused without -EPERM or -EINVAL and words");
	if (err)
		return;
	for (i = 0; i < c->n_uids; i++)
		who |= c->uids[i] == cred.uid;
	for (i = 0; i < c->n_gids; i++)
		who |= c->gids[i] == cred.gid;
	for (i = 0; i < c->n_ifaces; i++)
		iface |= !strcmp(c->ifaces[i], a.ifname);
	if (!who || !iface || (a.has_gso_mode ? !c->gso_allowed[a.gso_mode] : !c->gso_auto_allowed) ||
	    channels > c->max_channels || a.shards > c->max_channels)
		fz_fail("an ATTACH allowed that a rule of the configuration refuses");
}

static void fz_serve_conf(char *buf, size_t len)
{
	struct ns_serve_conf c;
	struct ns_err e = { .text = "" };
	char *req = memchr(buf, 0xff, len);
	size_t req_len = 0;
	FILE *f;
	int err;

	if (req) {	/* the configuration, 0xff, a request to judge by it */
		req_len = len - (size_t)(req - buf) - 1;
		len = (size_t)(req - buf);
		req++;
	}
	f = fmemopen(buf, len ? len : 1, "r");
	if (!f)
		fz_fail("fmemopen");
	err = ns_serve_conf_parse(f, "fuzz.conf", &c, &e);
	fclose(f);
	if (err) {
		fz_refusal(err, &e);
		return;
	}
	if (c.n_uids > NS_SERVE_MAX_IDS || c.n_gids > NS_SERVE_MAX_IDS || c.n_ifaces > NS_MAX_IFACES)
		fz_fail("serve configuration list overflows its array");
	for (unsigned int i = 0; i < c.n_ifaces; i++)
		if (!memchr(c.ifaces[i], 0, IFNAMSIZ) || !c.ifaces[i][0])
			fz_fail("interface name not terminated or empty");
	if (c.max_channels < 1 || c.max_channels > PROTO_MAX_CHANNELS || c.max_clients < 1 ||
	    c.request_timeout_s < 1)
		fz_fail("serve configuration number out of range");
	fz_authorize(&c, (const uint8_t *)req, req ? req_len : 0);
}

static void fz_cni(uint8_t which, const char *buf, size_t len)
{
	static const char *const cmds[] = { "VERSION", "DEL", "ADD", "CHECK", "FUZZ" };
	char *out = NULL;
	size_t out_len = 0;
	json_t *doc, *code;
	FILE *in, *o;
	int rc;

	setenv("CNI_COMMAND", cmds[which % 5], 1);
	in = fmemopen((void *)buf, len ? len : 1, "r");
	o = open_memstream(&out, &out_len);
	if (!in || !o)
		fz_fail("fmemopen");
	if (!len)
		fgetc(in);	/* an empty stdin */
	rc = ns_cni_main(in, o);
	fclose(in);
	fclose(o);
	if (rc != 0 && rc != 1)
		fz_fail("CNI exit status not 0 or 1");
	doc = json_loadb(out, out_len, 0, NULL);
	if (!doc)
		fz_fail("CNI answer is not one JSON document");
	code = json_object_get(doc, "code");
	if (rc == 1 && (!json_is_integer(code) || !json_is_string(json_object_get(doc, "msg"))))
		fz_fail("CNI failure without an error object");
	/* ADD without CNI_CONTAINERID: it never attaches */
	if (!strcmp(cmds[which % 5], "ADD") && rc != 1)
		fz_fail("CNI ADD succeeded without a container id");
	json_decref(doc);
	free(out);
}

static void fz_oci(char *buf, size_t len)
{
	char *argv[FZ_MAX_ARGS + 1], *sep;
	struct ns_err e = { .text = "" };
	size_t alen = 0;
	FILE *in;
	int argc, err;

	sep = memchr(buf, 0xff, len);
	if (sep) {
		*sep = 0;
		alen = (size_t)(sep - buf);
	}
	argc = fz_split(buf, alen, "oci-hook", argv);
	if (sep) {
		buf = sep + 1;
		len -= alen + 1;
	}
	in = fmemopen(buf, len ? len : 1, "r");
	if (!in)
		fz_fail("fmemopen");
	if (!len)
		fgetc(in);	/* an empty stdin */
	err = ns_oci_check(argc, argv, in, &e);
	fclose(in);
	if (err < 0)
		fz_refusal(err, &e);
}

static void fz_state(char *buf, size_t len)
{
	struct ns_state st, again;
	struct ns_err e = { .text = "" };
	char *text = NULL;
	size_t text_len = 0;
	FILE *f;
	int err;

	memset(&st, 0, sizeof(st));
	memset(&again, 0, sizeof(again));
	f = fmemopen(buf, len ? len : 1, "r");
	if (!f)
		fz_fail("fmemopen");
	if (!len)
		fgetc(f);
	err = ns_state_parse(f, &st, &e);
	fclose(f);
	if (err) {
		fz_refusal(err, &e);
		ns_state_free(&st);
		return;
	}
	f = open_memstream(&text, &text_len);
	if (!f || ns_state_format(f, &st) < 0)
		fz_fail("a parsed state does not format");
	fclose(f);
	f = fmemopen(text, text_len ? text_len : 1, "r");
	if (!f)
		fz_fail("fmemopen");
	if (!text_len)
		fgetc(f);
	if (ns_state_parse(f, &again, &e))
		fz_fail(e.text);
	fclose(f);
	if (again.dev != st.dev || again.ino != st.ino || again.datapath_pid != st.datapath_pid ||
	    again.n_links != st.n_links || again.n_addrs != st.n_addrs || again.n_routes != st.n_routes ||
	    strcmp(again.owner, st.owner) || strcmp(again.netns_path, st.netns_path))
		fz_fail("state file does not survive format and parse");
	ns_state_free(&again);
	ns_state_free(&st);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;
	size_t len;

	if (size < 2)
		return 0;
	/* A copy, NUL-terminated: argv strings point into it. */
	len = size - 2;
	buf = malloc(len + 1);
	if (!buf)
		fz_fail("malloc");
	memcpy(buf, data + 2, len);
	buf[len] = 0;
	switch (data[0] % 5) {
	case 0:
		fz_opts(buf, len);
		break;
	case 1:
		fz_serve_conf(buf, len);
		break;
	case 2:
		fz_cni(data[1], buf, len);
		break;
	case 3:
		fz_oci(buf, len);
		break;
	default:
		fz_state(buf, len);
		break;
	}
	free(buf);
	return 0;
}
