// SPDX-License-Identifier: MIT
/*
 * proto_sink.c - a stand-in datapath for netsetup's tests
 *
 *   proto_sink (--listen PATH | --fd N) [--answer ok|error|error-link|badversion|minor1]
 *              [--hold SECONDS] [--user USER] [--tcp-cc CC] [--tcp-ecn ECN]
 *
 * Theory of operation: it plays the datapath's side of proto/: answers HELLO
 * (or, with --answer badversion, answers with a version nobody speaks; with
 * --answer minor1, as a datapath of protocol 1.1 that knows no FACE),
 * receives LINK messages until DONE and prints one JSON line per LINK on
 * stdout with the decoded configuration and, per channel fd, what the kernel
 * says about the socket: SO_DOMAIN, SO_TYPE, the ifindex and protocol it is
 * bound to (getsockname, sockaddr_ll), PACKET_VNET_HDR and PACKET_FANOUT. It
 * answers ACK, or ERROR on DONE (--answer error) or on the first LINK
 * (--answer error-link). After DONE it prints {"done":N} and holds the
 * connection open for --hold SECONDS (default 0) before exiting 0, so that
 * `netsetup run` sees a datapath that serves for a while.
 *
 * --listen binds PATH.tmp, listens, then renames it to PATH: a test that waits
 * for PATH to exist can connect at once. --fd is what `netsetup run` passes;
 * --user, --tcp-cc and --tcp-ecn are accepted and printed, never acted on.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/if_packet.h>

#include "proto/proto.h"

enum answer { ANSWER_OK, ANSWER_ERROR, ANSWER_ERROR_LINK, ANSWER_BADVERSION, ANSWER_MINOR1 };

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static const char *family_name(int family)
{
	return family == AF_INET ? "inet" : family == AF_INET6 ? "inet6" : "?";
}

static void json_ip(int family, const union proto_inaddr *a)
{
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(family, a->bytes, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "?");
	json_str(buf);
}

static void print_channel(int fd)
{
	struct sockaddr_ll sll = { 0 };
	socklen_t len = sizeof(int);
	int domain = -1, type = -1, vnet = -1, fanout = -1;

	getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
	len = sizeof(int);
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len);
	len = sizeof(int);
	if (getsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &vnet, &len) < 0)
		vnet = -1;
	len = sizeof(int);
	if (getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &fanout, &len) < 0)
		fanout = -1;
	len = sizeof(sll);
	if (getsockname(fd, (struct sockaddr *)&sll, &len) < 0)
		sll.sll_ifindex = -1;
	printf("{\"domain\":%d,\"type\":%d,\"ifindex\":%d,\"protocol\":%u,\"vnet_hdr\":%s,\"fanout\":%d}",
	       domain, type, sll.sll_ifindex, ntohs(sll.sll_protocol), vnet > 0 ? "true" : "false",
	       fanout);
}

static void print_link(const struct proto_link *l)
{
	unsigned int i;

	printf("{\"ifindex\":%u,\"ifname\":", l->ifindex);
	json_str(l->ifname);
	printf(",\"mac\":\"%02x:%02x:%02x:%02x:%02x:%02x\",\"mtu\":%u,\"flags\":%u,\"gso_mode\":",
	       l->mac[0], l->mac[1], l->mac[2], l->mac[3], l->mac[4], l->mac[5], l->mtu, l->flags);
	json_str(proto_gso_mode_name(l->gso_mode));
	printf(",\"gso_reason\":");
	json_str(l->gso_reason);
	printf(",\"gso_max_size\":%u,\"gso_max_segs\":%u,\"gso_ipv4_max_size\":%u,\"addrs\":[",
	       l->gso_max_size, l->gso_max_segs, l->gso_ipv4_max_size);
	for (i = 0; i < l->n_addrs; i++) {
		const struct proto_addr *a = &l->addrs[i];

		printf("%s{\"family\":\"%s\",\"local\":", i ? "," : "", family_name(a->family));
		json_ip(a->family, &a->addr);
		printf(",\"prefixlen\":%u,\"scope\":%u,\"flags\":%u}", a->prefixlen, a->scope, a->flags);
	}
	printf("],\"routes\":[");
	for (i = 0; i < l->n_routes; i++) {
		const struct proto_route *r = &l->routes[i];

		printf("%s{\"family\":\"%s\",\"dst\":", i ? "," : "", family_name(r->family));
		if (r->dst_len)
			json_ip(r->family, &r->dst);
		else
			json_str("default");
		printf(",\"dst_len\":%u,\"gateway\":", r->dst_len);
		if (r->has_gateway)
			json_ip(r->family, &r->gateway);
		else
			printf("null");
		printf(",\"metric\":%u}", r->metric);
	}
	printf("],\"neighs\":[");
	for (i = 0; i < l->n_neighs; i++) {
		const struct proto_neigh *n = &l->neighs[i];

		printf("%s{\"family\":\"%s\",\"dst\":", i ? "," : "", family_name(n->family));
		json_ip(n->family, &n->addr);
		printf(",\"lladdr\":\"%02x:%02x:%02x:%02x:%02x:%02x\"}", n->lladdr[0], n->lladdr[1],
		       n->lladdr[2], n->lladdr[3], n->lladdr[4], n->lladdr[5]);
	}
	printf("],\"channels\":[");
	for (i = 0; i < l->n_channels; i++) {
		if (i)
			putchar(',');
		print_channel(l->channel_fds[i]);
	}
	printf("]}\n");
	fflush(stdout);
}

static int listen_accept(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char tmp[sizeof(sun.sun_path)];
	int ls, sock;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		fprintf(stderr, "proto_sink: %s: path too long\n", path);
		return -1;
	}
	memcpy(sun.sun_path, tmp, strlen(tmp) + 1);
	ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	unlink(tmp);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(ls, 4) < 0 ||
	    rename(tmp, path) < 0) {
		fprintf(stderr, "proto_sink: listen on %s: %s\n", path, strerror(errno));
		return -1;
	}
	sock = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	if (sock < 0)
		fprintf(stderr, "proto_sink: accept: %s\n", strerror(errno));
	close(ls);
	unlink(path);
	return sock;
}

/* Receive the peer's HELLO and answer it with @version and @minor, as our handshake would not. */
static int answer_hello(int sock, uint8_t version, uint8_t minor, const char *software)
{
	struct proto_msg *msg = NULL, *reply;
	struct proto_why why = { 0 };
	int ret;

	ret = proto_recv(sock, &msg, &why);
	if (ret <= 0) {
		fprintf(stderr, "proto_sink: HELLO: %s\n", ret ? why.text : "peer closed");
		return -1;
	}
	reply = calloc(1, sizeof(*reply));
	if (!reply) {
		proto_msg_free(msg);
		return -1;
	}
	reply->type = PROTO_MSG_HELLO;
	reply->seq = msg->seq;
	reply->hello.n_versions = 1;
	reply->hello.versions[0] = version;
	reply->hello.minor = minor;
	snprintf(reply->hello.software, sizeof(reply->hello.software), "%s", software);
	ret = proto_send(sock, reply);
	free(reply);
	proto_msg_free(msg);
	return ret;
}

/* Answer HELLO with version 99 only, then wait for the peer to give up. */
static int answer_badversion(int sock)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg;

	if (answer_hello(sock, 99, 0, "proto_sink badversion"))
		return 1;
	/* Drain what the peer answers (ERROR) until it closes. */
	while (proto_recv(sock, &msg, &why) > 0)
		proto_msg_free(msg);
	printf("{\"badversion_sent\":true}\n");
	return 0;
}

static int serve(int sock, enum answer answer, unsigned int hold_s)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg;
	unsigned int links = 0;
	uint8_t version;
	int ret;

	if (answer == ANSWER_BADVERSION)
		return answer_badversion(sock);
	if (answer == ANSWER_MINOR1) {
		/* an older datapath: our major, minor 1 (no FACE) */
		if (answer_hello(sock, PROTO_VERSION_MAX, 1, "proto_sink minor1"))
			return 1;
	} else if (proto_handshake(sock, false, "proto_sink", 0, &version, NULL, &why)) {
		fprintf(stderr, "proto_sink: handshake: %s\n", why.text);
		return 1;
	}
	for (;;) {
		ret = proto_recv(sock, &msg, &why);
		if (ret < 0) {
			fprintf(stderr, "proto_sink: refused a message: %s\n", why.text);
			continue;
		}
		if (ret == 0) {
			fprintf(stderr, "proto_sink: peer closed before DONE\n");
			return 1;
		}
		if (msg->type == PROTO_MSG_LINK) {
			print_link(&msg->link);
			if (answer == ANSWER_ERROR_LINK) {
				proto_send_error(sock, msg->seq, EINVAL, "proto_sink refuses link %s as told",
						 msg->link.ifname);
				proto_msg_free(msg);
				return 0;
			}
			links++;
			proto_send_ack(sock, msg->seq);
		} else if (msg->type == PROTO_MSG_DONE) {
			if (answer == ANSWER_ERROR)
				proto_send_error(sock, msg->seq, EIO, "proto_sink refuses DONE as told");
			else
				proto_send_ack(sock, msg->seq);
			proto_msg_free(msg);
			break;
		} else {
			proto_send_error(sock, msg->seq, EPROTO, "proto_sink: unexpected %s",
					 proto_msg_type_name(msg->type));
		}
		proto_msg_free(msg);
	}
	printf("{\"done\":%u}\n", links);
	fflush(stdout);
	if (answer == ANSWER_OK && hold_s)
		sleep(hold_s);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "fd", required_argument, NULL, 'f' },
		{ "answer", required_argument, NULL, 'a' },
		{ "hold", required_argument, NULL, 'h' },
		{ "user", required_argument, NULL, 'u' },
		{ "tcp-cc", required_argument, NULL, 'c' },
		{ "tcp-ecn", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	enum answer answer = ANSWER_OK;
	const char *listen_path = NULL;
	unsigned int hold_s = 0;
	int fd = -1, opt, sock, ret;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			listen_path = optarg;
			break;
		case 'f':
			fd = atoi(optarg);
			break;
		case 'a':
			if (!strcmp(optarg, "ok"))
				answer = ANSWER_OK;
			else if (!strcmp(optarg, "error"))
				answer = ANSWER_ERROR;
			else if (!strcmp(optarg, "error-link"))
				answer = ANSWER_ERROR_LINK;
			else if (!strcmp(optarg, "badversion"))
				answer = ANSWER_BADVERSION;
			else if (!strcmp(optarg, "minor1"))
				answer = ANSWER_MINOR1;
			else
				goto usage;
			break;
		case 'h':
			hold_s = (unsigned int)atoi(optarg);
			break;
		case 'u':
		case 'c':
		case 'e':
			/* what netsetup passed, for the test to compare */
			printf("{\"%s\":", opt == 'u' ? "user" : opt == 'c' ? "tcp-cc" : "tcp-ecn");
			json_str(optarg);
			printf("}\n");
			break;
		default:
			goto usage;
		}
	}
	if ((!listen_path) == (fd < 0) || optind != argc)
		goto usage;
	setvbuf(stdout, NULL, _IOLBF, 0);
	sock = listen_path ? listen_accept(listen_path) : fd;
	if (sock < 0)
		return 1;
	ret = serve(sock, answer, hold_s);
	close(sock);
	return ret;
usage:
	fprintf(stderr, "usage: proto_sink (--listen PATH | --fd N) [--answer ok|error|error-link|badversion|minor1]"
			" [--hold SECONDS] [--user USER] [--tcp-cc CC] [--tcp-ecn ECN]\n");
	return 2;
}
