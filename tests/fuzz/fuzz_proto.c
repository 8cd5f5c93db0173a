// SPDX-License-Identifier: MIT
/*
 * fuzz_proto.c - libFuzzer target for proto_decode()
 *
 * Theory of operation
 *
 * Each input is one message as it would arrive on the socket. It is decoded
 * twice:
 *  - with no fds, as the brief of the decoder says every byte string must be
 *    survivable. A LINK then always stops at its fd count, so
 *  - once more with one AF_PACKET socket (a dup() of one opened at start),
 *    which lets a LINK declaring CHANNELS 1 reach the address, route and
 *    neighbour lists. Without CAP_NET_RAW that pass is skipped;
 *  - and when its header says ATTACH, with one network namespace fd (a
 *    dup() of /proc/self/ns/net), which lets it past its fd check to its
 *    interface, GSO mode, channels, face and shards.
 * Properties checked beyond "no crash, no sanitizer report": a refusal has a
 * positive errno and a non-empty reason; the fd is closed after a refusal or
 * after proto_msg_free() (an fd leak aborts); and a decoded message encodes
 * again and decodes to the same fields (encoder and decoder agree).
 *
 * Seeds: tests/fuzz/corpus/proto/, written by tests/fuzz/gen_proto_corpus.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "proto/proto.h"

static int fuzz_packet_fd = -1, fuzz_netns_fd = -1;
static uint8_t fuzz_buf[PROTO_MSG_MAX_BYTES];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_packet_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fuzz_packet_fd < 0)
		fprintf(stderr, "fuzz_proto: no AF_PACKET socket (%s): LINK lists stay unexplored\n",
			strerror(errno));
	fuzz_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fuzz_netns_fd < 0)
		fprintf(stderr, "fuzz_proto: no netns fd (%s): ATTACH stays at its fd check\n", strerror(errno));
	return 0;
}

static void fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz_proto: %s\n", what);
	abort();
}

static void fuzz_compare(const struct proto_msg *a, const struct proto_msg *b)
{
	if (a->type != b->type || a->seq != b->seq || a->version != b->version)
		fuzz_fail("re-decoded header differs");
	switch (a->type) {
	case PROTO_MSG_HELLO:
		if (a->hello.n_versions != b->hello.n_versions ||
		    memcmp(a->hello.versions, b->hello.versions, a->hello.n_versions) ||
		    a->hello.minor != b->hello.minor || strcmp(a->hello.software, b->hello.software))
			fuzz_fail("re-decoded HELLO differs");
		break;
	case PROTO_MSG_ERROR:
		if (a->error.err != b->error.err || strcmp(a->error.message, b->error.message))
			fuzz_fail("re-decoded ERROR differs");
		break;
	case PROTO_MSG_ATTACH:
		if (strcmp(a->attach.ifname, b->attach.ifname) || a->attach.has_gso_mode != b->attach.has_gso_mode ||
		    (a->attach.has_gso_mode && a->attach.gso_mode != b->attach.gso_mode) ||
		    a->attach.gso_mode >= PROTO_GSO_MODE_MAX || a->attach.channels != b->attach.channels ||
		    a->attach.no_face != b->attach.no_face || a->attach.shards != b->attach.shards)
			fuzz_fail("re-decoded ATTACH differs, or a GSO mode out of range");
		break;
	case PROTO_MSG_LINK: {
		const struct proto_link *x = &a->link, *y = &b->link;

		if (x->ifindex != y->ifindex || strcmp(x->ifname, y->ifname) ||
		    memcmp(x->mac, y->mac, 6) || x->mtu != y->mtu || x->flags != y->flags ||
		    x->gso_mode != y->gso_mode || strcmp(x->gso_reason, y->gso_reason) ||
		    x->gso_max_size != y->gso_max_size || x->gso_max_segs != y->gso_max_segs ||
		    x->gso_ipv4_max_size != y->gso_ipv4_max_size || x->n_channels != y->n_channels ||
		    x->n_addrs != y->n_addrs || x->n_routes != y->n_routes || x->n_neighs != y->n_neighs)
			fuzz_fail("re-decoded LINK differs");
		for (unsigned int i = 0; i < x->n_addrs; i++)
			if (x->addrs[i].family != y->addrs[i].family ||
			    x->addrs[i].prefixlen != y->addrs[i].prefixlen ||
			    x->addrs[i].scope != y->addrs[i].scope || x->addrs[i].flags != y->addrs[i].flags ||
			    memcmp(&x->addrs[i].addr, &y->addrs[i].addr, sizeof(x->addrs[i].addr)))
				fuzz_fail("re-decoded address differs");
		for (unsigned int i = 0; i < x->n_routes; i++)
			if (x->routes[i].family != y->routes[i].family ||
			    x->routes[i].dst_len != y->routes[i].dst_len ||
			    x->routes[i].has_gateway != y->routes[i].has_gateway ||
			    x->routes[i].metric != y->routes[i].metric ||
			    memcmp(&x->routes[i].gateway, &y->routes[i].gateway, sizeof(x->routes[i].gateway)))
				fuzz_fail("re-decoded route differs");
		for (unsigned int i = 0; i < x->n_neighs; i++)
			if (x->neighs[i].family != y->neighs[i].family ||
			    memcmp(&x->neighs[i].addr, &y->neighs[i].addr, sizeof(x->neighs[i].addr)) ||
			    memcmp(x->neighs[i].lladdr, y->neighs[i].lladdr, 6))
				fuzz_fail("re-decoded neighbour differs");
		break;
	}
	default:
		break;
	}
}

/* Decode once; on success, encode and decode again and compare. */
static void fuzz_one(const uint8_t *data, size_t size, const int *fds, unsigned int n_fds)
{
	struct proto_msg *msg = NULL, *again = NULL;
	struct proto_why why = { 0 };
	int len, ret, fd2 = -1;

	ret = proto_decode(data, size, fds, n_fds, &msg, &why);
	if (ret < 0) {
		if (msg || why.err <= 0 || -ret != why.err || !why.text[0])
			fuzz_fail("refusal without a message, errno or reason");
		if (n_fds && fcntl(fds[0], F_GETFD) >= 0)
			fuzz_fail("refused message left its fd open");
		return;
	}
	if (ret != 0 || !msg)
		fuzz_fail("success without a message");

	len = proto_encode(msg, fuzz_buf, sizeof(fuzz_buf));
	if (len < 0)
		fuzz_fail("a decoded message does not encode");
	if (msg->type == PROTO_MSG_LINK || msg->type == PROTO_MSG_ATTACH) {
		fd2 = dup(msg->type == PROTO_MSG_LINK ? msg->link.channel_fds[0] : msg->attach.netns_fd);
		if (fd2 < 0)
			fuzz_fail("dup");
	}
	if (proto_decode(fuzz_buf, (size_t)len, &fd2, fd2 >= 0 ? 1 : 0, &again, &why))
		fuzz_fail(why.text);
	fuzz_compare(msg, again);
	proto_msg_free(again);
	proto_msg_free(msg);
	if (n_fds && fcntl(fds[0], F_GETFD) >= 0)
		fuzz_fail("proto_msg_free() left a channel fd open");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd;

	fuzz_one(data, size, NULL, 0);
	if (fuzz_packet_fd >= 0) {
		fd = dup(fuzz_packet_fd);
		if (fd < 0)
			fuzz_fail("dup");
		fuzz_one(data, size, &fd, 1);
	}
	/* the header's type, native byte order (proto.h): magic 4, version, minor, type 2 */
	if (fuzz_netns_fd >= 0 && size >= 8 && (uint16_t)(data[6] | data[7] << 8) == PROTO_MSG_ATTACH) {
		fd = dup(fuzz_netns_fd);
		if (fd < 0)
			fuzz_fail("dup");
		fuzz_one(data, size, &fd, 1);
	}
	return 0;
}
