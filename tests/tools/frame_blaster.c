// SPDX-License-Identifier: MIT
/*
 * frame_blaster.c - random and mutated frames from the container's side
 *
 *   frame_blaster --iface IF --dst-mac MAC --ip4 SRC,DST --ip6 SRC,DST
 *                 [--tcp-port P] [--udp-port P] [--seconds S] [--count N]
 *                 [--seed N] [--pps N]
 *
 * Theory of operation: run in the peer's namespace (the other end of the
 * container's veth), it opens an AF_PACKET SOCK_RAW socket on IF and sends,
 * until S seconds (default 10) or N frames (default unbounded) have gone,
 * frames built from valid templates and then mutated. Everything it does is
 * drawn from one xorshift64* generator seeded with --seed (default: from the
 * clock); the seed is printed first, so a run can be repeated.
 *
 * Templates (each with correct lengths and checksums before mutation):
 * ARP request / reply / gratuitous (sometimes with odd hlen/plen), IPv4 with
 * and without options carrying ICMP echo, UDP (to --udp-port or a random
 * port), TCP (to --tcp-port or a random port; SYN, ACK, data, FIN, RST, any
 * flags; MSS/WS/SACK/timestamp/unknown options), IPv4 fragments (a few ids,
 * random offsets, MF or not, overlaps), IPv6 with ICMPv6 echo, neighbour
 * solicitation and advertisement, router advertisement, UDP, TCP, behind
 * extension headers (hop-by-hop, destination options, routing, fragment)
 * and IPv6 fragments. Destination MAC: DST (mostly), broadcast, an IPv6
 * multicast MAC or a random one; source MAC: IF's own, sometimes random.
 * What it never does is tell the datapath that the peer's own addresses
 * (SRC) live at another MAC (ARP or NDP with a random or mutated
 * link-layer address for them, fb_protect()): that poisons the datapath's
 * neighbour entry for the peer, as it would a kernel's (an unsolicited ARP
 * reply makes a Linux entry REACHABLE too), and the peer loses its answers
 * for up to 30 s, until the entry goes stale and is probed again.
 *
 * Mutations (one or more per frame; about one frame in eight is left
 * valid): bit flips anywhere or in the headers, truncation, trailing
 * garbage, a length or offset field set to 0, 0xffff or off by one, random
 * bytes in place of the payload, a wholly random frame; afterwards the IPv4
 * header checksum and the transport checksum are recomputed half of the time
 * (so that the frame gets past the checksum and into the parsers behind it).
 * Frames stay within ETH_HLEN + 1500 bytes (the veth's MTU).
 *
 * Output: "seed N", then at the end one line of counts per template kind
 * and per mutation, and "sent N frames in S s (E send errors)". Exit status:
 * 0, 2 when the socket cannot be set up.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FB_MTU		1500
#define FB_FRAME_MAX	(ETH_HLEN + FB_MTU)

enum fb_kind {
	FB_ARP, FB_ICMP4, FB_UDP4, FB_TCP4, FB_FRAG4, FB_ICMP6, FB_NDP, FB_UDP6, FB_TCP6, FB_FRAG6,
	FB_RANDOM, FB_KINDS
};
static const char *const fb_kind_names[FB_KINDS] = {
	"arp", "icmp4", "udp4", "tcp4", "frag4", "icmp6", "ndp", "udp6", "tcp6", "frag6", "random",
};
_Static_assert(sizeof(fb_kind_names) / sizeof(fb_kind_names[0]) == FB_KINDS, "a name per kind");

enum fb_mut {
	FB_M_NONE, FB_M_FLIP, FB_M_FLIP_HDR, FB_M_TRUNC, FB_M_EXTEND, FB_M_FIELD, FB_M_PAYLOAD, FB_M_MUTS
};
static const char *const fb_mut_names[FB_M_MUTS] = {
	"valid", "bitflip", "bitflip-header", "truncate", "extend", "bad-field", "random-payload",
};
_Static_assert(sizeof(fb_mut_names) / sizeof(fb_mut_names[0]) == FB_M_MUTS, "a name per mutation");

static struct {
	uint64_t rng;
	uint8_t our_mac[6], dst_mac[6];
	struct in_addr src4, dst4;
	struct in6_addr src6, dst6;
	uint16_t tcp_port, udp_port;
	unsigned long kind_count[FB_KINDS], mut_count[FB_M_MUTS];
} B;

/* xorshift64* (Vigna): small, fast, and the same sequence for the same seed */
static uint64_t fb_rand(void)
{
	B.rng ^= B.rng >> 12;
	B.rng ^= B.rng << 25;
	B.rng ^= B.rng >> 27;
	return B.rng * 0x2545F4914F6CDD1DULL;
}

static uint32_t fb_below(uint32_t n)
{
	return n ? (uint32_t)(fb_rand() % n) : 0;
}

static void fb_fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)fb_rand();
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint32_t fb_sum(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t fb_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* --- what a frame looks like once built: where its headers are --------- */

struct fb_frame {
	uint8_t b[FB_FRAME_MAX + 256];
	size_t len;
	size_t l3, l4;		/* offsets; 0 when there is none */
	int family;		/* AF_INET, AF_INET6 or 0 */
	uint8_t proto;		/* transport protocol at l4 */
	size_t l4_len;		/* transport length when built */
};

static void fb_eth(struct fb_frame *f, uint16_t type)
{
	uint32_t r = fb_below(16);

	if (r == 0)
		memset(f->b, 0xff, 6);
	else if (r == 1)
		memcpy(f->b, (uint8_t[]){ 0x33, 0x33, 0xff, 0, 0, (uint8_t)fb_rand() }, 6);
	else if (r == 2)
		fb_fill(f->b, 6);
	else
		memcpy(f->b, B.dst_mac, 6);
	if (fb_below(16) == 0)
		fb_fill(f->b + 6, 6);
	else
		memcpy(f->b + 6, B.our_mac, 6);
	put16(f->b + 12, type);
	f->len = ETH_HLEN;
}

static void fb_arp(struct fb_frame *f)
{
	uint8_t *a;
	uint32_t r = fb_below(4);

	fb_eth(f, ETHERTYPE_ARP);
	a = f->b + ETH_HLEN;
	put16(a, 1);
	put16(a + 2, ETHERTYPE_IP);
	a[4] = fb_below(8) ? 6 : (uint8_t)fb_rand();
	a[5] = fb_below(8) ? 4 : (uint8_t)fb_rand();
	put16(a + 6, r == 1 ? 2 : 1);
	memcpy(a + 8, f->b + 6, 6);
	memcpy(a + 14, r == 3 ? &B.dst4 : &B.src4, 4);	/* 3: a conflict with the datapath's address */
	if (r == 1)
		memcpy(a + 18, B.dst_mac, 6);
	else
		memset(a + 18, 0, 6);
	memcpy(a + 24, r == 2 ? &B.src4 : &B.dst4, 4);	/* 2: gratuitous */
	/*
	 * A random sender: a new neighbour. A random source MAC always comes
	 * with a random sender address: the peer's own address mapped to a
	 * random MAC would only prove that ARP believes what it hears.
	 */
	if (fb_below(8) == 0 || memcmp(f->b + 6, B.our_mac, 6))
		fb_fill(a + 14, 4);
	f->len = ETH_HLEN + 28 + fb_below(4) * 8;
	memset(f->b + 42, 0, f->len - 42);
}

static void fb_ipv4(struct fb_frame *f, uint8_t proto, size_t optlen)
{
	uint8_t *ip = f->b + ETH_HLEN;

	fb_eth(f, ETHERTYPE_IP);
	ip[0] = (uint8_t)(0x40 | (5 + optlen / 4));
	ip[1] = (uint8_t)fb_below(4);
	put16(ip + 4, (uint16_t)fb_below(8));	/* a few ids: fragments of one datagram meet */
	put16(ip + 6, fb_below(4) ? 0x4000 : 0);	/* DF */
	ip[8] = fb_below(8) ? 64 : (uint8_t)fb_below(3);
	ip[9] = proto;
	memcpy(ip + 12, &B.src4, 4);
	memcpy(ip + 16, fb_below(16) ? &B.dst4 : &(struct in_addr){ htonl(0xe0000001) }, 4);
	if (optlen) {
		/* NOPs, a record-route, a timestamp or random option bytes, EOL-padded */
		fb_fill(ip + 20, optlen);
		if (fb_below(2)) {
			memset(ip + 20, 1, optlen);
			ip[20] = 7;
			ip[21] = (uint8_t)(optlen < 39 ? optlen : 39);
			ip[22] = 4;
		}
	}
	f->l3 = ETH_HLEN;
	f->l4 = ETH_HLEN + 20 + optlen;
	f->family = AF_INET;
	f->proto = proto;
}

static void fb_ipv4_finish(struct fb_frame *f)
{
	uint8_t *ip = f->b + f->l3;
	size_t ihl = (size_t)(ip[0] & 15) * 4;

	put16(ip + 2, (uint16_t)(f->len - f->l3));
	put16(ip + 10, 0);
	put16(ip + 10, fb_fold(fb_sum(0, ip, ihl)));
}

static void fb_ipv6(struct fb_frame *f, uint8_t proto)
{
	uint8_t *ip = f->b + ETH_HLEN;
	size_t off = ETH_HLEN + 40;
	uint8_t *nh = ip + 6;
	unsigned int n = fb_below(3) ? 0 : 1 + fb_below(3);

	fb_eth(f, ETHERTYPE_IPV6);
	memset(ip, 0, 40);
	ip[0] = 0x60;
	ip[7] = fb_below(8) ? 64 : 255;
	memcpy(ip + 8, &B.src6, 16);
	memcpy(ip + 24, &B.dst6, 16);
	if (fb_below(16) == 0) {
		/* all-nodes or the solicited-node group of the datapath's address */
		static const uint8_t sn[13] = { 0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff };

		memcpy(ip + 24, sn, 13);
		memcpy(ip + 37, B.dst6.s6_addr + 13, 3);
	}
	/* extension headers: hop-by-hop (first only), destination options, routing */
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *h = f->b + off;
		uint8_t type = i == 0 && fb_below(2) ? 0 : fb_below(2) ? 60 : 43;
		size_t hl = 8 * (1 + fb_below(2));

		*nh = type;
		fb_fill(h, hl);
		h[1] = (uint8_t)(hl / 8 - 1);
		if (type == 43) {
			h[2] = (uint8_t)fb_below(5);	/* routing types 0..4 */
			h[3] = (uint8_t)fb_below(2);	/* segments left */
		} else if (fb_below(2)) {
			h[2] = 1;			/* PadN over the rest */
			h[3] = (uint8_t)(hl - 4);
			memset(h + 4, 0, hl - 4);
		}
		nh = h;
		off += hl;
	}
	*nh = proto;
	f->l3 = ETH_HLEN;
	f->l4 = off;
	f->family = AF_INET6;
	f->proto = proto;
}

static void fb_ipv6_finish(struct fb_frame *f)
{
	put16(f->b + f->l3 + 4, (uint16_t)(f->len - f->l3 - 40));
}

/* The transport checksum, over the pseudo-header of the frame's family. */
static void fb_l4_csum(struct fb_frame *f)
{
	uint8_t *l4 = f->b + f->l4;
	size_t len = f->len - f->l4, at;
	uint32_t sum = 0;

	switch (f->proto) {
	case IPPROTO_ICMP:
		at = 2;
		break;
	case IPPROTO_ICMPV6:
		at = 2;
		break;
	case IPPROTO_UDP:
		at = 6;
		break;
	case IPPROTO_TCP:
		at = 16;
		break;
	default:
		return;
	}
	if (len < at + 2)
		return;
	put16(l4 + at, 0);
	if (f->family == AF_INET && f->proto != IPPROTO_ICMP) {
		sum = fb_sum(0, f->b + f->l3 + 12, 8);
		sum += f->proto + (uint32_t)len;
	} else if (f->family == AF_INET6) {
		sum = fb_sum(0, f->b + f->l3 + 8, 32);
		sum += f->proto + (uint32_t)len;
	}
	put16(l4 + at, fb_fold(fb_sum(sum, l4, len)));
}

static size_t fb_payload(uint8_t *p, size_t room)
{
	size_t n = fb_below(3) ? fb_below(64) : fb_below((uint32_t)room + 1);

	if (n > room)
		n = room;
	fb_fill(p, n);
	return n;
}

static void fb_icmp_echo(struct fb_frame *f, bool v6)
{
	uint8_t *h = f->b + f->l4;

	h[0] = v6 ? (fb_below(8) ? 128 : (uint8_t)fb_rand()) : (fb_below(8) ? 8 : (uint8_t)fb_below(20));
	h[1] = fb_below(8) ? 0 : (uint8_t)fb_rand();
	put16(h + 4, (uint16_t)fb_rand());
	put16(h + 6, (uint16_t)fb_rand());
	f->len = f->l4 + 8 + fb_payload(h + 8, FB_FRAME_MAX - f->l4 - 8);
}

static void fb_udp(struct fb_frame *f)
{
	uint8_t *h = f->b + f->l4;

	put16(h, (uint16_t)(1024 + fb_below(60000)));
	put16(h + 2, fb_below(2) ? B.udp_port : (uint16_t)fb_rand());
	f->len = f->l4 + 8 + fb_payload(h + 8, FB_FRAME_MAX - f->l4 - 8);
	put16(h + 4, (uint16_t)(f->len - f->l4));
}

static void fb_tcp(struct fb_frame *f)
{
	static const uint8_t flag_sets[] = { 0x02, 0x02, 0x10, 0x18, 0x11, 0x04, 0x14, 0x12, 0x01, 0x00, 0x3f };
	uint8_t *h = f->b + f->l4, *o;
	size_t optlen = 0;

	put16(h, (uint16_t)(1024 + fb_below(8)));	/* few source ports: segments meet connections */
	put16(h + 2, fb_below(4) ? B.tcp_port : (uint16_t)fb_rand());
	put32(h + 4, fb_below(2) ? (uint32_t)fb_below(4) : (uint32_t)fb_rand());
	put32(h + 8, (uint32_t)fb_rand());
	h[13] = fb_below(8) ? flag_sets[fb_below(sizeof(flag_sets))] : (uint8_t)fb_rand();
	put16(h + 14, (uint16_t)fb_rand());
	put16(h + 18, 0);
	o = h + 20;
	if (fb_below(2)) {
		/* MSS, SACK permitted, timestamps, window scale, a SACK block, or junk */
		uint32_t r = fb_below(6);

		if (r == 5) {
			optlen = 4 * (1 + fb_below(10));
			fb_fill(o, optlen);
		} else {
			o[0] = 2, o[1] = 4, put16(o + 2, (uint16_t)(fb_below(2) ? 1460 : fb_rand()));
			o[4] = 4, o[5] = 2;
			o[6] = 8, o[7] = 10, put32(o + 8, (uint32_t)fb_rand()), put32(o + 12, (uint32_t)fb_rand());
			o[16] = 1, o[17] = 3, o[18] = 3, o[19] = (uint8_t)fb_below(16);
			o[20] = 1, o[21] = 1, o[22] = 5, o[23] = 10;
			put32(o + 24, (uint32_t)fb_rand());
			put32(o + 28, (uint32_t)fb_rand());
			optlen = r == 4 ? 32 : 20;
		}
	}
	h[12] = (uint8_t)(((20 + optlen) / 4) << 4);
	f->len = f->l4 + 20 + optlen + fb_payload(h + 20 + optlen, FB_FRAME_MAX - f->l4 - 20 - optlen);
}

static void fb_ndp(struct fb_frame *f)
{
	uint8_t *h = f->b + f->l4;
	uint32_t r = fb_below(3);

	memset(h, 0, 32);
	if (r == 2) {
		/* router advertisement with a prefix information option */
		h[0] = 134;
		h[4] = 64;
		put16(h + 6, 1800);
		h[16] = 3, h[17] = 4, h[18] = 64, h[19] = 0xc0;
		put32(h + 20, 86400);
		put32(h + 24, 14400);
		memcpy(h + 32, &B.dst6, 8);
		memset(h + 40, 0, 8);
		f->len = f->l4 + 48;
	} else {
		h[0] = r ? 136 : 135;		/* NA or NS */
		if (r)
			h[4] = 0x20;		/* override */
		memcpy(h + 8, fb_below(4) ? &B.dst6 : &B.src6, 16);
		h[24] = r ? 2 : 1;
		h[25] = 1;
		memcpy(h + 26, B.our_mac, 6);	/* never the peer's address on a random MAC (see fb_arp) */
		f->len = f->l4 + 32;
	}
	f->b[f->l3 + 7] = 255;
}

/* One fragment of a datagram of a few ids: offsets and MF random, payload 8-aligned. */
static void fb_frag4(struct fb_frame *f)
{
	uint8_t *ip = f->b + ETH_HLEN;
	size_t n = 8 * (1 + fb_below(150));

	fb_ipv4(f, fb_below(2) ? IPPROTO_UDP : IPPROTO_ICMP, 0);
	put16(ip + 6, (uint16_t)((fb_below(2) ? 0x2000 : 0) | fb_below(fb_below(4) ? 200 : 8192)));
	if (n > FB_FRAME_MAX - f->l4)
		n = (FB_FRAME_MAX - f->l4) & ~(size_t)7;
	fb_fill(f->b + f->l4, n);
	f->len = f->l4 + n;
}

static void fb_frag6(struct fb_frame *f)
{
	uint8_t *h;
	size_t n = 8 * (1 + fb_below(150));

	fb_ipv6(f, 44);
	h = f->b + f->l4;
	h[0] = fb_below(2) ? IPPROTO_UDP : IPPROTO_ICMPV6;
	h[1] = 0;
	put16(h + 2, (uint16_t)((fb_below(fb_below(4) ? 200 : 8192) << 3) | fb_below(2)));
	put32(h + 4, fb_below(8));
	f->l4 += 8;
	if (n > FB_FRAME_MAX - f->l4)
		n = (FB_FRAME_MAX - f->l4) & ~(size_t)7;
	fb_fill(f->b + f->l4, n);
	f->len = f->l4 + n;
	f->proto = 44;
}

static enum fb_kind fb_build(struct fb_frame *f)
{
	enum fb_kind k = (enum fb_kind)fb_below(FB_KINDS);

	memset(f, 0, sizeof(*f));
	switch (k) {
	case FB_ARP:
		fb_arp(f);
		return k;
	case FB_ICMP4:
	case FB_UDP4:
	case FB_TCP4:
		fb_ipv4(f, k == FB_ICMP4 ? IPPROTO_ICMP : k == FB_UDP4 ? IPPROTO_UDP : IPPROTO_TCP,
			fb_below(4) ? 0 : 4 * (1 + fb_below(10)));
		if (k == FB_ICMP4)
			fb_icmp_echo(f, false);
		else if (k == FB_UDP4)
			fb_udp(f);
		else
			fb_tcp(f);
		break;
	case FB_FRAG4:
		fb_frag4(f);
		break;
	case FB_ICMP6:
	case FB_NDP:
	case FB_UDP6:
	case FB_TCP6:
		fb_ipv6(f, k == FB_UDP6 ? IPPROTO_UDP : k == FB_TCP6 ? IPPROTO_TCP : IPPROTO_ICMPV6);
		if (k == FB_ICMP6)
			fb_icmp_echo(f, true);
		else if (k == FB_NDP)
			fb_ndp(f);
		else if (k == FB_UDP6)
			fb_udp(f);
		else
			fb_tcp(f);
		break;
	case FB_FRAG6:
		fb_frag6(f);
		break;
	default:
		fb_eth(f, (uint16_t)(fb_below(2) ? fb_rand() : fb_below(2) ? ETHERTYPE_IP : ETHERTYPE_IPV6));
		f->len = ETH_HLEN + fb_below(FB_MTU + 1);
		fb_fill(f->b + ETH_HLEN, f->len - ETH_HLEN);
		return k;
	}
	if (f->family == AF_INET)
		fb_ipv4_finish(f);
	else
		fb_ipv6_finish(f);
	fb_l4_csum(f);
	f->l4_len = f->len - f->l4;
	return k;
}

static void fb_flip(struct fb_frame *f, size_t span)
{
	unsigned int n = 1 + fb_below(8);

	if (!span)
		return;
	while (n--) {
		size_t at = fb_below((uint32_t)span);

		f->b[at] ^= (uint8_t)(1u << fb_below(8));
	}
}

/* A 16-bit length/offset field of the frame's headers set to an extreme or off by one. */
static void fb_bad_field(struct fb_frame *f)
{
	static const size_t v4[] = { 2, 6 }, udp[] = { 4 }, tcp[] = { 12 }, v6[] = { 4 };
	uint16_t vals[] = { 0, 0xffff, 1, 7, 8, 20, 40 };
	size_t at;

	if (!f->l3) {
		put16(f->b + 12, (uint16_t)fb_rand());
		return;
	}
	switch (fb_below(3)) {
	case 0:
		at = f->l3 + (f->family == AF_INET ? v4[fb_below(2)] : v6[0]);
		break;
	case 1:
		if (f->family == AF_INET) {
			/* IHL */
			f->b[f->l3] = (uint8_t)(0x40 | fb_below(16));
			return;
		}
		at = f->l3 + 4;
		break;
	default:
		if (f->proto == IPPROTO_TCP && f->len >= f->l4 + 20) {
			f->b[f->l4 + tcp[0]] = (uint8_t)(fb_below(16) << 4);
			return;
		}
		if (f->proto != IPPROTO_UDP || f->len < f->l4 + 8)
			return;
		at = f->l4 + udp[0];
		break;
	}
	if (at + 2 > f->len)
		return;
	if (fb_below(2)) {
		uint16_t cur = (uint16_t)(f->b[at] << 8 | f->b[at + 1]);

		put16(f->b + at, (uint16_t)(cur + (fb_below(2) ? 1 : -1)));
	} else {
		put16(f->b + at, vals[fb_below(sizeof(vals) / sizeof(vals[0]))]);
	}
}

static enum fb_mut fb_mutate(struct fb_frame *f)
{
	enum fb_mut m = fb_below(8) == 0 ? FB_M_NONE : (enum fb_mut)(1 + fb_below(FB_M_MUTS - 1));
	size_t hdr = f->l4 ? f->l4 + 20 : ETH_HLEN + 28;
	size_t n;

	switch (m) {
	case FB_M_NONE:
		break;
	case FB_M_FLIP:
		fb_flip(f, f->len);
		break;
	case FB_M_FLIP_HDR:
		fb_flip(f, hdr < f->len ? hdr : f->len);
		break;
	case FB_M_TRUNC:
		f->len = fb_below((uint32_t)f->len);
		break;
	case FB_M_EXTEND:
		n = 1 + fb_below(200);
		if (f->len + n > FB_FRAME_MAX)
			n = FB_FRAME_MAX - f->len;
		fb_fill(f->b + f->len, n);
		f->len += n;
		break;
	case FB_M_FIELD:
		fb_bad_field(f);
		break;
	case FB_M_PAYLOAD:
		if (f->l4 && f->len > f->l4)
			fb_fill(f->b + f->l4, f->len - f->l4);
		else if (f->len > ETH_HLEN)
			fb_fill(f->b + ETH_HLEN, f->len - ETH_HLEN);
		break;
	default:
		break;
	}
	/* Half of the mutated IP frames get their checksums made right again. */
	if (m != FB_M_NONE && f->family && fb_below(2)) {
		if (f->family == AF_INET && f->len >= f->l3 + 20) {
			size_t ihl = (size_t)(f->b[f->l3] & 15) * 4;

			if (ihl >= 20 && f->l3 + ihl <= f->len) {
				put16(f->b + f->l3 + 10, 0);
				put16(f->b + f->l3 + 10, fb_fold(fb_sum(0, f->b + f->l3, ihl)));
			}
		}
		if (f->l4 && f->len > f->l4)
			fb_l4_csum(f);
	}
	return m;
}

/* The transport checksum of the frame as it is now is right. */
static bool fb_l4_csum_ok(const struct fb_frame *f)
{
	size_t len = f->len - f->l4;
	uint32_t sum = fb_sum(0, f->b + f->l3 + 8, 32) + f->proto + (uint32_t)len;

	return fb_fold(fb_sum(sum, f->b + f->l4, len)) == 0;
}

/*
 * Keep the peer's own bindings true after a mutation: an ARP sender that is
 * SRC4 has our MAC; an NDP message from SRC6 (or an NA for it) carries our
 * MAC in its link-layer address options, its checksum made right again when
 * it was right before. A mutation elsewhere in these frames stays.
 */
static void fb_protect(struct fb_frame *f)
{
	uint8_t *h = f->b + f->l4;
	size_t at;
	bool ok;

	if (f->len >= 42 && f->b[12] == 0x08 && f->b[13] == 0x06 && !memcmp(f->b + 28, &B.src4, 4)) {
		memcpy(f->b + 22, B.our_mac, 6);
		return;
	}
	if (f->family != AF_INET6 || f->proto != IPPROTO_ICMPV6 || f->len < f->l4 + 24 ||
	    (h[0] != 134 && h[0] != 135 && h[0] != 136))
		return;
	if (memcmp(f->b + f->l3 + 8, &B.src6, 16) && (h[0] != 136 || memcmp(h + 8, &B.src6, 16)))
		return;
	ok = fb_l4_csum_ok(f);
	for (at = f->l4 + (h[0] == 134 ? 16 : 24); at + 8 <= f->len && f->b[at + 1]; at += 8 * (size_t)f->b[at + 1]) {
		if ((f->b[at] == 1 || f->b[at] == 2) && f->b[at + 1] == 1)
			memcpy(f->b + at + 2, B.our_mac, 6);
	}
	if (ok)
		fb_l4_csum(f);
}

static int fb_mac_parse(const char *s, uint8_t mac[6])
{
	unsigned int v[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

static int fb_pair(const char *s, int af, void *a, void *b)
{
	char buf[128], *comma;

	snprintf(buf, sizeof(buf), "%s", s);
	comma = strchr(buf, ',');
	if (!comma)
		return -1;
	*comma = 0;
	return inet_pton(af, buf, a) == 1 && inet_pton(af, comma + 1, b) == 1 ? 0 : -1;
}

static double fb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fb_usage(void)
{
	fprintf(stderr, "usage: frame_blaster --iface IF --dst-mac MAC --ip4 SRC,DST --ip6 SRC,DST\n"
			"                     [--tcp-port P] [--udp-port P] [--seconds S] [--count N]\n"
			"                     [--seed N] [--pps N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", required_argument, NULL, 'i' }, { "dst-mac", required_argument, NULL, 'm' },
		{ "ip4", required_argument, NULL, '4' }, { "ip6", required_argument, NULL, '6' },
		{ "tcp-port", required_argument, NULL, 't' }, { "udp-port", required_argument, NULL, 'u' },
		{ "seconds", required_argument, NULL, 's' }, { "count", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 'S' }, { "pps", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *iface = NULL;
	double seconds = 10, start, now;
	unsigned long count = 0, sent = 0, errors = 0, pps = 0;
	bool have_mac = false, have4 = false, have6 = false;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	static struct fb_frame f;
	struct ifreq ifr;
	int fd, c;

	B.rng = 0;
	B.tcp_port = 80;
	B.udp_port = 5000;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			iface = optarg;
			break;
		case 'm':
			if (fb_mac_parse(optarg, B.dst_mac))
				return fb_usage();
			have_mac = true;
			break;
		case '4':
			if (fb_pair(optarg, AF_INET, &B.src4, &B.dst4))
				return fb_usage();
			have4 = true;
			break;
		case '6':
			if (fb_pair(optarg, AF_INET6, &B.src6, &B.dst6))
				return fb_usage();
			have6 = true;
			break;
		case 't':
			B.tcp_port = (uint16_t)strtoul(optarg, NULL, 10);
			break;
		case 'u':
			B.udp_port = (uint16_t)strtoul(optarg, NULL, 10);
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'c':
			count = strtoul(optarg, NULL, 10);
			break;
		case 'S':
			B.rng = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			pps = strtoul(optarg, NULL, 10);
			break;
		default:
			return fb_usage();
		}
	}
	if (!iface || !have_mac || !have4 || !have6 || optind != argc)
		return fb_usage();
	if (!B.rng) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		B.rng = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 48);
	}
	printf("seed %llu\n", (unsigned long long)B.rng);
	fflush(stdout);

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "frame_blaster: socket(AF_PACKET): %s\n", strerror(errno));
		return 2;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		fprintf(stderr, "frame_blaster: %s: SIOCGIFHWADDR: %s\n", iface, strerror(errno));
		return 2;
	}
	memcpy(B.our_mac, ifr.ifr_hwaddr.sa_data, 6);
	sll.sll_ifindex = (int)if_nametoindex(iface);
	sll.sll_halen = 6;
	if (!sll.sll_ifindex) {
		fprintf(stderr, "frame_blaster: %s: no such interface\n", iface);
		return 2;
	}

	start = now = fb_now();
	while ((!count || sent + errors < count) && now - start < seconds) {
		enum fb_kind k = fb_build(&f);
		enum fb_mut m = k == FB_RANDOM ? FB_M_NONE : fb_mutate(&f);

		fb_protect(&f);

		B.kind_count[k]++;
		B.mut_count[m]++;
		if (f.len < ETH_HLEN)
			f.len = ETH_HLEN + (f.len & 1);	/* the kernel wants at least a link header */
		memcpy(sll.sll_addr, f.b, 6);
		if (sendto(fd, f.b, f.len, 0, (struct sockaddr *)&sll, sizeof(sll)) == (ssize_t)f.len)
			sent++;
		else
			errors++;
		if (((sent + errors) & 63) == 0) {
			now = fb_now();
			if (pps && (double)(sent + errors) > (now - start) * (double)pps) {
				struct timespec ts = { 0, 64 * 1000000000L / (long)pps };

				if (ts.tv_nsec >= 1000000000L)
					ts = (struct timespec){ 0, 999999999L };
				nanosleep(&ts, NULL);
			}
		}
	}
	now = fb_now();
	printf("kinds:");
	for (c = 0; c < FB_KINDS; c++)
		printf(" %s %lu", fb_kind_names[c], B.kind_count[c]);
	printf("\nmutations:");
	for (c = 0; c < FB_M_MUTS; c++)
		printf(" %s %lu", fb_mut_names[c], B.mut_count[c]);
	printf("\nsent %lu frames in %.1f s (%lu send errors)\n", sent, now - start, errors);
	close(fd);
	return 0;
}
