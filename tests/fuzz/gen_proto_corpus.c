// SPDX-License-Identifier: MIT
/*
 * gen_proto_corpus.c - write the seed corpus of fuzz_proto
 *
 * Theory of operation
 *
 * The seeds in tests/fuzz/corpus/proto/ are committed; this program is how
 * they were made, so that they can be made again when the format grows. Valid
 * messages come from proto_encode(); malformed ones are those messages with
 * bytes patched, or attributes written with libnl behind a hand-made header.
 * LINK seeds declare CHANNELS 1 so that fuzz_proto's second pass (one fd
 * attached) decodes them all the way. Not part of the build:
 *
 *   cc -std=gnu11 -D_GNU_SOURCE -I. $(pkg-config --cflags libnl-3.0) \
 *      tests/fuzz/gen_proto_corpus.c proto/*.c $(pkg-config --libs libnl-3.0) \
 *      -o /tmp/gen_proto_corpus && /tmp/gen_proto_corpus tests/fuzz/corpus/proto
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "proto/proto.h"

static const char *gen_dir;
static uint8_t gen_buf[PROTO_MSG_MAX_BYTES];

static int gen_write(const char *name, const void *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", gen_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "gen_proto_corpus: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return 0;
}

static size_t gen_encode(const struct proto_msg *msg)
{
	int len = proto_encode(msg, gen_buf, sizeof(gen_buf));

	if (len < 0) {
		fprintf(stderr, "gen_proto_corpus: encode %s: %s\n", proto_msg_type_name(msg->type),
			strerror(-len));
		exit(1);
	}
	return (size_t)len;
}

static void gen_link(struct proto_link *l)
{
	static const uint8_t mac[6] = { 0x02, 0x42, 0xac, 0x11, 0x00, 0x02 };

	memset(l, 0, sizeof(*l));
	l->ifindex = 2;
	snprintf(l->ifname, sizeof(l->ifname), "eth0");
	memcpy(l->mac, mac, 6);
	l->mtu = 1500;
	l->flags = 0x1043;
	l->gso_mode = PROTO_GSO_HW;
	snprintf(l->gso_reason, sizeof(l->gso_reason), "tso on");
	l->gso_max_size = 65536;
	l->gso_max_segs = 65535;
	l->gso_ipv4_max_size = 65536;
	l->n_channels = 1;
	l->n_addrs = 2;
	l->addrs[0] = (struct proto_addr){ .family = AF_INET, .prefixlen = 24, .flags = 0x80 };
	inet_pton(AF_INET, "10.88.0.2", &l->addrs[0].addr.v4);
	l->addrs[1] = (struct proto_addr){ .family = AF_INET6, .prefixlen = 64, .scope = 0 };
	inet_pton(AF_INET6, "2001:db8::2", &l->addrs[1].addr.v6);
	l->n_routes = 3;
	l->routes[0] = (struct proto_route){ .family = AF_INET, .has_gateway = true, .metric = 100 };
	inet_pton(AF_INET, "10.88.0.1", &l->routes[0].gateway.v4);
	l->routes[1] = (struct proto_route){ .family = AF_INET, .dst_len = 16 };
	inet_pton(AF_INET, "172.16.0.0", &l->routes[1].dst.v4);
	l->routes[2] = (struct proto_route){ .family = AF_INET6, .dst_len = 48, .has_gateway = true };
	inet_pton(AF_INET6, "2001:db8:1::", &l->routes[2].dst.v6);
	inet_pton(AF_INET6, "fe80::1", &l->routes[2].gateway.v6);
	l->n_neighs = 2;
	l->neighs[0].family = AF_INET;
	inet_pton(AF_INET, "10.88.0.1", &l->neighs[0].addr.v4);
	memcpy(l->neighs[0].lladdr, mac, 6);
	l->neighs[1].family = AF_INET6;
	inet_pton(AF_INET6, "fe80::1", &l->neighs[1].addr.v6);
	memcpy(l->neighs[1].lladdr, mac, 6);
}

/* Header + the attributes of @nl into gen_buf. */
static size_t gen_finish(struct nl_msg *nl, uint16_t type, uint8_t minor)
{
	struct nlmsghdr *nlh = nlmsg_hdr(nl);
	struct proto_hdr h = { .magic = PROTO_MAGIC, .version = 1, .minor = minor, .type = type };
	size_t len = sizeof(h) + (size_t)nlmsg_datalen(nlh);

	h.length = (uint32_t)len;
	h.seq = 1;
	memcpy(gen_buf, &h, sizeof(h));
	memcpy(gen_buf + sizeof(h), nlmsg_data(nlh), len - sizeof(h));
	nlmsg_free(nl);
	return len;
}

static struct nl_msg *gen_start(void)
{
	struct nl_msg *nl = nlmsg_alloc_size(PROTO_MSG_MAX_BYTES);

	if (!nl || !nlmsg_put(nl, 0, 0, 0, 0, 0))
		exit(1);
	return nl;
}

static void gen_link_mandatory(struct nl_msg *nl)
{
	nla_put_u32(nl, PROTO_LINK_IFINDEX, 3);
	nla_put_string(nl, PROTO_LINK_IFNAME, "veth0");
	nla_put(nl, PROTO_LINK_MAC, 6, "\x02\x00\x00\x00\x00\x01");
	nla_put_u32(nl, PROTO_LINK_MTU, 1500);
	nla_put_u8(nl, PROTO_LINK_GSO_MODE, PROTO_GSO_OFF);
	nla_put_u32(nl, PROTO_LINK_CHANNELS, 1);
}

static void gen_patch_u32(size_t off, uint32_t v)
{
	memcpy(gen_buf + off, &v, 4);
}

int main(int argc, char **argv)
{
	struct proto_msg *msg = calloc(1, sizeof(*msg));
	struct nl_msg *nl;
	struct nlattr *list, *e;
	size_t len;

	if (argc != 2 || !msg) {
		fprintf(stderr, "usage: gen_proto_corpus DIR\n");
		return 2;
	}
	gen_dir = argv[1];

	/* Valid messages, one of each type. */
	msg->type = PROTO_MSG_HELLO;
	msg->hello.n_versions = 1;
	msg->hello.versions[0] = 1;
	snprintf(msg->hello.software, sizeof(msg->hello.software), "sandnet-netsetup 0.1");
	gen_write("hello", gen_buf, gen_encode(msg));
	msg->hello.n_versions = 4;
	memcpy(msg->hello.versions, "\x01\x02\x03\x09", 4);
	msg->hello.minor = 3;
	gen_write("hello_many", gen_buf, gen_encode(msg));

	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_LINK;
	msg->seq = 1;
	gen_link(&msg->link);
	len = gen_encode(msg);
	gen_write("link_full", gen_buf, len);
	/* ... and that LINK with its last attribute cut (length fixed up), and with 2 channels. */
	gen_patch_u32(8, (uint32_t)(len - 3));
	gen_write("bad_link_truncated", gen_buf, len - 3);
	msg->link.n_channels = 2;
	gen_write("link_2channels", gen_buf, gen_encode(msg));

	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_DONE;
	msg->seq = 2;
	len = gen_encode(msg);
	gen_write("done", gen_buf, len);
	msg->type = PROTO_MSG_ACK;
	gen_write("ack", gen_buf, gen_encode(msg));
	msg->type = PROTO_MSG_ERROR;
	msg->error.err = EINVAL;
	snprintf(msg->error.message, sizeof(msg->error.message),
		 "LINK eth0: attribute MTU: 40 is out of range 68..65535");
	gen_write("error", gen_buf, gen_encode(msg));

	/* ATTACH (fuzz_proto decodes it once more with a netns fd), full and bare. */
	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_ATTACH;
	msg->seq = 3;
	msg->attach.netns_fd = -1;
	snprintf(msg->attach.ifname, sizeof(msg->attach.ifname), "eth0");
	msg->attach.has_gso_mode = true;
	msg->attach.gso_mode = PROTO_GSO_SW;
	msg->attach.channels = 2;
	msg->attach.shards = 2;
	gen_write("attach", gen_buf, gen_encode(msg));
	memset(&msg->attach, 0, sizeof(msg->attach));
	msg->attach.netns_fd = -1;
	msg->attach.no_face = true;
	gen_write("attach_min", gen_buf, gen_encode(msg));

	/* LINK with only the mandatory attributes, and with a newer minor's extras. */
	nl = gen_start();
	gen_link_mandatory(nl);
	gen_write("link_min", gen_buf, gen_finish(nl, PROTO_MSG_LINK, 0));
	nl = gen_start();
	gen_link_mandatory(nl);
	nla_put_u32(nl, 200, 7);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	e = nla_nest_start(nl, PROTO_LINK_ADDR + 1);
	nla_put_u8(nl, 1, 1);
	nla_nest_end(nl, e);
	e = nla_nest_start(nl, PROTO_LINK_ADDR);
	nla_put_u8(nl, PROTO_ADDR_FAMILY, AF_INET);
	nla_put(nl, PROTO_ADDR_ADDRESS, 4, "\x0a\x00\x00\x01");
	nla_put_u8(nl, PROTO_ADDR_PREFIXLEN, 8);
	nla_put_u16(nl, 40, 1);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	gen_write("link_newer_minor", gen_buf, gen_finish(nl, PROTO_MSG_LINK, 9));

	/* Malformed: header problems on a DONE. */
	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_DONE;
	len = gen_encode(msg);
	gen_write("bad_short", gen_buf, 8);
	gen_patch_u32(0, 0x54454e53);
	gen_write("bad_magic", gen_buf, len);
	len = gen_encode(msg);
	gen_buf[4] = 2;
	gen_write("bad_version", gen_buf, len);
	len = gen_encode(msg);
	gen_patch_u32(8, 20);
	gen_write("bad_length", gen_buf, len);
	len = gen_encode(msg);
	gen_buf[6] = PROTO_MSG_MAX;
	gen_write("bad_type", gen_buf, len);

	/* Malformed attributes. */
	nl = gen_start();
	gen_link_mandatory(nl);
	nla_put(nl, PROTO_LINK_GSO_REASON, 4, "none");
	gen_write("bad_string_no_nul", gen_buf, gen_finish(nl, PROTO_MSG_LINK, 0));
	nl = gen_start();
	nla_put_u32(nl, PROTO_LINK_IFINDEX, 3);
	nla_put_string(nl, PROTO_LINK_IFNAME, "veth0");
	nla_put(nl, PROTO_LINK_MAC, 6, "\x02\x00\x00\x00\x00\x01");
	nla_put_u32(nl, PROTO_LINK_MTU, 40);
	nla_put_u8(nl, PROTO_LINK_GSO_MODE, PROTO_GSO_OFF);
	nla_put_u32(nl, PROTO_LINK_CHANNELS, 1);
	gen_write("bad_mtu", gen_buf, gen_finish(nl, PROTO_MSG_LINK, 0));
	nl = gen_start();
	gen_link_mandatory(nl);
	list = nla_nest_start(nl, PROTO_LINK_ROUTES);
	e = nla_nest_start(nl, PROTO_LINK_ROUTE);
	nla_put_u8(nl, PROTO_ROUTE_FAMILY, AF_INET6);
	nla_put(nl, PROTO_ROUTE_DST, 16, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\0");
	nla_put_u8(nl, PROTO_ROUTE_DST_LEN, 129);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	gen_write("bad_route_prefix", gen_buf, gen_finish(nl, PROTO_MSG_LINK, 0));
	nl = gen_start();
	list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
	nla_put_u32(nl, PROTO_HELLO_VERSION, 1);
	nla_nest_end(nl, list);
	gen_write("bad_hello_version_size", gen_buf, gen_finish(nl, PROTO_MSG_HELLO, 0));
	nl = gen_start();
	nla_put_u32(nl, PROTO_ERROR_ERRNO, 0);
	nla_put_string(nl, PROTO_ERROR_MESSAGE, "x");
	gen_write("bad_error_errno", gen_buf, gen_finish(nl, PROTO_MSG_ERROR, 0));

	free(msg);
	return 0;
}
