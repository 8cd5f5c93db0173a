// SPDX-License-Identifier: MIT
/*
 * fuzz_datapath_frame.c - any bytes as a received frame, into the whole stack
 *
 * One stack is built at the first call (fake clock, one link whose channel
 * is a socketpair, IPv4 and IPv6 addresses, a UDP echo socket on port 7, a
 * permanent neighbour so replies really go out) and kept across inputs, so
 * state built by one input (reassembly queues, neighbours) meets the next.
 * Input layout: byte 0 selects the vnet flags (hw-mode receive, checksum
 * trusted or not) and byte 1 how far the clock moves afterwards (timers:
 * reassembly timeouts, neighbour retries, DAD); the rest is the frame.
 * Whatever the stack sends is read back and discarded.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/net/net.h"

static struct loop *fz_loop;
static struct stack fz_st;
static struct link *fz_link;
static int fz_peer = -1;
static struct udp_sock *fz_echo;

static void fz_echo_recv(struct udp_sock *s, const struct net_addr *src, uint16_t sport,
			 const struct net_addr *dst, const uint8_t *data, size_t len)
{
	udp_sendto(s, dst, src, sport, data, len);
}

static void fz_init(void)
{
	static struct proto_link cfg;
	struct proto_route r = { .family = AF_INET, .has_gateway = true };
	struct proto_neigh n = { .family = AF_INET, .lladdr = { 2, 0, 0, 0, 0, 1 } };
	char err[256];
	int sv[2], err_no;

	fz_loop = loop_new(true);
	if (!fz_loop || stack_init(&fz_st, fz_loop) < 0 ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) < 0)
		abort();
	fz_peer = sv[1];
	cfg.ifindex = 2;
	strcpy(cfg.ifname, "eth0");
	memcpy(cfg.mac, (uint8_t[]){ 2, 0, 0, 0, 0, 2 }, 6);
	cfg.mtu = 1500;
	cfg.gso_mode = PROTO_GSO_HW;
	cfg.n_channels = 1;
	cfg.channel_fds[0] = sv[0];
	cfg.n_addrs = 2;
	cfg.addrs[0].family = AF_INET;
	inet_pton(AF_INET, "10.0.0.2", &cfg.addrs[0].addr.v4);
	cfg.addrs[0].prefixlen = 24;
	cfg.addrs[1].family = AF_INET6;
	inet_pton(AF_INET6, "fd00::2", &cfg.addrs[1].addr.v6);
	cfg.addrs[1].prefixlen = 64;
	fz_link = link_new(&fz_st, &cfg, err, sizeof(err));
	if (!fz_link || stack_add_link(&fz_st, fz_link) < 0)
		abort();
	inet_pton(AF_INET, "10.0.0.1", &r.gateway.v4);
	route_add(&fz_st, fz_link, &r);
	n.addr.v4 = r.gateway.v4;
	neigh_add_permanent(&fz_st, fz_link, &n);
	n.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::1", &n.addr.v6);
	neigh_add_permanent(&fz_st, fz_link, &n);
	if (stack_start(&fz_st) < 0)
		abort();
	fz_echo = udp_open(&fz_st, NULL, 7, fz_echo_recv, NULL, &err_no);
}

static void fz_drain(void)
{
	static uint8_t buf[70000];

	link_tx_flush(fz_link);
	while (recv(fz_peer, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
	/* a full socketpair makes the link wait for EPOLLOUT: let it go on */
	fz_link->tx_blocked = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkt *p;

	if (!fz_loop)
		fz_init();
	if (size < 2 || size - 2 > LINK_RX_BYTES)
		return 0;
	p = pkt_alloc(size - 2);
	if (!p)
		return 0;
	memcpy(pkt_put(p, size - 2), data + 2, size - 2);
	p->vnet.flags = data[0] & (VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID);
	link_input_frame(fz_link, p);
	pkt_free(p);
	fz_drain();
	if (data[1] & 0x80) {
		loop_advance_ms(fz_loop, (uint64_t)(data[1] & 0x7f) * 500);
		fz_drain();
	}
	return 0;
}
