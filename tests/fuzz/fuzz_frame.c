// SPDX-License-Identifier: MIT
/*
 * fuzz_frame.c - libFuzzer target for the datapath's frame input path
 *
 * Theory of operation
 *
 * Each input builds a fresh stack (datapath/net/) on a fake-clock loop with
 * one link, as tests/unit/test_datapath_stack.c does: 10.0.0.2/24 and
 * fd00::2/64 (no DAD), default route via 10.0.0.1, permanent neighbours for
 * 10.0.0.1 and fd00::1, MTU 1500, and the container face (datapath/face/)
 * on it, whose TUN is a second socketpair. The link's channel is one end of
 * a unix SOCK_DGRAM socketpair: the target writes each frame into the other
 * end and calls link_rx(), so a frame takes the real receive path
 * (recvmmsg, vnet header, UDP GSO split) into eth_input() -> ARP / IPv4 /
 * IPv6 -> ICMP / ICMPv6 / UDP / TCP, and on to the face for what is the
 * container's. A record can also go the other way, into the TUN as the
 * container's kernel (or a program in it with CAP_NET_RAW) would write it:
 * a virtio_net_hdr and an IP packet into link_rx() -> the face's checks
 * -> TCP / UDP / ICMP termination -> the outer stack. A UDP echo socket
 * listens on port 7 (any address), so a datagram to it is answered through
 * udp_sendto() and the output path. What the stack sends comes out of the
 * socketpairs and is read back in memory; nothing leaves the process.
 *
 * One input is a sequence of frames on one stack, so the state one frame
 * leaves (reassembly queues, neighbours, TCP connections, timers) meets the
 * next, and every failure reproduces from its input alone. (This target
 * absorbed fuzz_datapath_frame, which kept one stack across inputs: the same
 * path and the echo socket, but a crash that needed earlier inputs did not
 * reproduce from the saved one. Its seeds are corpus/frame/dpf_*.)
 *
 * Input layout:
 *   byte 0     bit 0: the link is in hw mode (every frame starts with a
 *              struct virtio_net_hdr, so the fuzzer can claim DATA_VALID
 *              checksums or GSO); bit 1: the face's TUN is read and
 *              written one packet per system call, as with --no-io-uring,
 *              not through an io_uring; bit 2: the policy has name rules
 *              (a deny of bad.example.com, then *.example.com and
 *              tcp:pypi.org:443 allowed), so the face reads the container's
 *              DNS queries, over UDP and TCP, and the answers coming back
 *              bind addresses; bits 3-7 unused
 *   then       records: 2 bytes little-endian frame length (modulo 9216,
 *              or with bit 15 set twice the low 15 bits: up to 64 KiB), 1 byte flags,
 *              the frame. Flag bit 0: the harness fixes the IPv4 header
 *              checksum of the frame (so that the fuzzer gets past it);
 *              bit 1: the record goes into the TUN (10 bytes of vnet header,
 *              then the IP packet), with bit 2 its source address set to the
 *              container's (10.0.0.2, or fd00::2 for IPv6) so that the face's
 *              source check lets it in;
 *              bits 4-7, when not 0: advance the clock by 2^N ms (2 ms
 *              to 32 s; the fake clock's wheel ticks every ms, so long
 *              steps cost time; 5 minutes per input at most) and run one loop turn (timers: ARP,
 *              reassembly, TCP).
 * Invariants checked with abort(), beyond "no crash, no leak, no sanitizer
 * report": every frame the stack sends has our source MAC, is at least an
 * Ethernet header and at most 14 + 65535 bytes (+ vnet header) long, and a
 * sent IPv4 header has a correct checksum and a total length within the
 * frame; what the face writes to the container is an IPv4 or IPv6 packet
 * to one of the container's addresses, whose IPv4 header checksum is right
 * and whose vnet checksum offsets lie inside it; after stack_fini() no
 * packet buffer is left (pkt_live() == 0).
 *
 * Seeds: tests/fuzz/corpus/frame/.
 */
#include <arpa/inet.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/face/face.h"
#include "datapath/link/uring.h"
#include "datapath/net/net.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/policy.h"

#define FZ_FRAME_MAX	(65535 + ETH_HLEN + 64)
/* The fake clock's wheel ticks every ms: bound one input's virtual time. */
#define FZ_CLOCK_MAX_MS	(5 * 60 * 1000)

static const uint8_t fz_our_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t fz_peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };

static struct {
	struct loop *lp;
	struct stack st;
	struct link *lk;
	struct udp_sock *echo;
	struct link *tun;
	int peer_fd, ct_fd;
	bool hw;
} F;

static uint8_t fz_buf[FZ_FRAME_MAX];
static struct policy fz_policy;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_frame: %s\n", what);
	abort();
}

static uint16_t fz_sum(const uint8_t *b, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void fz_echo_recv(struct udp_sock *s, const struct net_addr *src, uint16_t sport,
			 const struct net_addr *dst, const uint8_t *data, size_t len)
{
	udp_sendto(s, dst, src, sport, data, len);
}

static void fz_setup(bool hw, bool names)
{
	struct proto_link *cfg = calloc(1, sizeof(*cfg));
	struct proto_route r = { .family = AF_INET, .has_gateway = true };
	struct proto_neigh n = { .family = AF_INET };
	char err[256];
	int sv[2], err_no;

	struct proto_face face = { .ifindex = 3, .ifname = "sn-eth0", .mtu = 1500, .offloads = 0x67 };

	if (!cfg)
		fz_fail("calloc");
	memset(&F, 0, sizeof(F));
	F.hw = hw;
	F.lp = loop_new(true);
	if (!F.lp)
		fz_fail("loop_new");
	loop_advance_ms(F.lp, 2000);	/* the wheel ticks every ms: keep it short */
	if (stack_init(&F.st, F.lp))
		fz_fail("stack_init");
	/* small tables: each input builds both engines anew (the caps' own paths meet sooner) */
	F.st.limits.max_conns = 256;
	F.st.limits.max_half_open = 32;
	F.st.limits.max_timewait = 32;
	F.st.limits.tcp_mem = 16u << 20;
	F.st.limits.udp_flows = 64;
	F.st.limits.udp_flows_per_source = 16;
	if (tcp_stack_set_limits(tcp_glue_stack(&F.st), 256, 32, 32, 16u << 20))
		fz_fail("tcp_stack_set_limits");
	/* a policy, so that its refusals (ICMP administratively prohibited) meet the inputs too */
	memset(&fz_policy, 0, sizeof(fz_policy));
	if (policy_add(&fz_policy, POLICY_EGRESS, POLICY_DENY, "tcp:10.0.0.0/24:7000-7999", err, sizeof(err)) ||
	    policy_add(&fz_policy, POLICY_EGRESS, POLICY_DENY, "udp:[fd00::/64]:53", err, sizeof(err)) ||
	    policy_add(&fz_policy, POLICY_INGRESS, POLICY_DENY, "udp:any:5000-5999", err, sizeof(err)) ||
	    policy_add(&fz_policy, POLICY_INGRESS, POLICY_DENY, "tcp:10.0.0.1:1-1023", err, sizeof(err)) ||
	    policy_add(&fz_policy, POLICY_INGRESS, POLICY_DENY, "icmp:fd00::1", err, sizeof(err)))
		fz_fail(err);
	/* name rules: the face reads the container's DNS, and egress is refused
	 * but to what an answer bound (a deny before the wildcard, as users write) */
	if (names && (policy_add(&fz_policy, POLICY_EGRESS, POLICY_DENY, "bad.example.com", err, sizeof(err)) ||
		      policy_add(&fz_policy, POLICY_EGRESS, POLICY_ALLOW, "*.example.com", err, sizeof(err)) ||
		      policy_add(&fz_policy, POLICY_EGRESS, POLICY_ALLOW, "tcp:pypi.org:443", err, sizeof(err))))
		fz_fail(err);
	if (policy_finish(&fz_policy, err, sizeof(err)))
		fz_fail(err);
	F.st.policy = &fz_policy;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		fz_fail("socketpair");
	F.peer_fd = sv[1];
	cfg->ifindex = 2;
	strcpy(cfg->ifname, "eth0");
	memcpy(cfg->mac, fz_our_mac, 6);
	cfg->mtu = 1500;
	cfg->gso_mode = hw ? PROTO_GSO_HW : PROTO_GSO_SW;
	cfg->n_channels = 1;
	cfg->channel_fds[0] = sv[0];
	cfg->n_addrs = 2;
	cfg->addrs[0].family = AF_INET;
	inet_pton(AF_INET, "10.0.0.2", &cfg->addrs[0].addr.v4);
	cfg->addrs[0].prefixlen = 24;
	cfg->addrs[1].family = AF_INET6;
	inet_pton(AF_INET6, "fd00::2", &cfg->addrs[1].addr.v6);
	cfg->addrs[1].prefixlen = 64;
	cfg->addrs[1].flags = 0x02;	/* IFA_F_NODAD */
	F.lk = link_packet_new(F.st.loop, cfg, err, sizeof(err));
	if (!F.lk)
		fz_fail(err);
	if (stack_add_link(&F.st, F.lk))
		fz_fail("stack_add_link");
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		fz_fail("socketpair (TUN)");
	face.n_fds = 1;
	face.fds[0] = sv[0];
	F.ct_fd = sv[1];
	if (face_add(&F.st, F.lk, &face, err, sizeof(err)))
		fz_fail(err);
	F.tun = F.st.inner[0];
	inet_pton(AF_INET, "10.0.0.1", &r.gateway.v4);
	if (route_add(&F.st, F.lk, &r))
		fz_fail("route_add");
	inet_pton(AF_INET, "10.0.0.1", &n.addr.v4);
	memcpy(n.lladdr, fz_peer_mac, 6);
	if (neigh_add_permanent(&F.st, F.lk, &n))
		fz_fail("neigh_add_permanent");
	n.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::1", &n.addr.v6);
	if (neigh_add_permanent(&F.st, F.lk, &n))
		fz_fail("neigh_add_permanent v6");
	free(cfg);
	if (stack_start(&F.st) || face_start(face_of(&F.st)))
		fz_fail("stack_start");
	F.echo = udp_open(&F.st, NULL, 7, fz_echo_recv, NULL, &err_no);
	if (!F.echo)
		fz_fail("udp_open(7)");
	link_tx_flush(F.lk);
}

/* Read back and check what the face wrote to the container. */
static void fz_drain_tun(void)
{
	struct virtio_net_hdr vh;
	ssize_t n;

	while ((n = recv(F.ct_fd, fz_buf, sizeof(fz_buf), MSG_DONTWAIT)) >= 0) {
		const uint8_t *ip = fz_buf + sizeof(vh);
		size_t len;

		if ((size_t)n < sizeof(vh) + IPV4_HLEN)
			fz_fail("the face wrote less than a vnet and an IPv4 header");
		memcpy(&vh, fz_buf, sizeof(vh));
		len = (size_t)n - sizeof(vh);
		if ((vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && (size_t)vh.csum_start + vh.csum_offset + 2 > len)
			fz_fail("the face's checksum offsets lie outside its packet");
		if ((ip[0] >> 4) == 4) {
			if (fz_sum(ip, IPV4_HLEN) || (ip[0] & 15) != 5)
				fz_fail("the face wrote a bad IPv4 header");
			if (memcmp(ip + 16, "\x0a\x00\x00\x02", 4))
				fz_fail("the face wrote to another address than the container's");
		} else if ((ip[0] >> 4) == 6) {
			static const uint8_t c6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

			if (len < IPV6_HLEN || memcmp(ip + 24, c6, 16))
				fz_fail("the face wrote a bad IPv6 header or to another address");
		} else {
			fz_fail("the face wrote a packet of no IP version");
		}
	}
}

/* The container writes @len bytes ([vnet][IP]) into the TUN. */
static void fz_from_container(uint8_t *f, size_t len, bool own_source)
{
	uint8_t *ip = f + sizeof(struct virtio_net_hdr);

	if (len < sizeof(struct virtio_net_hdr) + 1)
		return;
	if (own_source && (ip[0] >> 4) == 4 && len >= sizeof(struct virtio_net_hdr) + IPV4_HLEN)
		memcpy(ip + 12, "\x0a\x00\x00\x02", 4);
	if (own_source && (ip[0] >> 4) == 6 && len >= sizeof(struct virtio_net_hdr) + IPV6_HLEN) {
		static const uint8_t c6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

		memcpy(ip + 8, c6, 16);
	}
	if (send(F.ct_fd, f, len, 0) == (ssize_t)len)
		link_rx(&F.tun->ch[0]);
}

/* Read back and check everything the stack sent. */
static void fz_drain(void)
{
	size_t off = F.hw ? sizeof(struct virtio_net_hdr) : 0;
	ssize_t n;

	while ((n = recv(F.peer_fd, fz_buf, sizeof(fz_buf), MSG_DONTWAIT)) >= 0) {
		const uint8_t *f = fz_buf + off;
		size_t len;

		if ((size_t)n < off + 14)
			fz_fail("sent frame shorter than an Ethernet header");
		len = (size_t)n - off;
		if (len > 14 + 65535)
			fz_fail("sent frame longer than 64 KiB");
		if (memcmp(f + 6, fz_our_mac, 6))
			fz_fail("sent frame with a foreign source MAC");
		if ((f[12] << 8 | f[13]) == ETHERTYPE_IPV4) {
			size_t ihl, tot;

			if (len < 14 + IPV4_HLEN)
				fz_fail("sent IPv4 frame shorter than its header");
			ihl = (size_t)(f[14] & 15) * 4;
			tot = (size_t)(f[16] << 8 | f[17]);
			if ((f[14] >> 4) != 4 || ihl < IPV4_HLEN || len < 14 + ihl)
				fz_fail("sent IPv4 header malformed");
			if (fz_sum(f + 14, ihl))
				fz_fail("sent IPv4 header checksum wrong");
			/* A GSO frame (hw mode) may carry a total length of 0 or its first segment's. */
			if (!F.hw && tot > len - 14)
				fz_fail("sent IPv4 total length beyond the frame");
		}
	}
}

/* The IPv4 header checksum of the packet at @ip (@len bytes), made right. */
static void fz_fix_ipv4_at(uint8_t *ip, size_t len)
{
	size_t ihl = (size_t)(ip[0] & 15) * 4;
	uint16_t s;

	if ((ip[0] >> 4) != 4 || ihl < IPV4_HLEN || len < ihl)
		return;
	ip[10] = ip[11] = 0;
	s = fz_sum(ip, ihl);
	ip[10] = (uint8_t)(s >> 8);
	ip[11] = (uint8_t)s;
}

static void fz_fix_ipv4(uint8_t *f, size_t len)
{
	size_t off = F.hw ? sizeof(struct virtio_net_hdr) : 0;

	if (len < off + 14 + IPV4_HLEN || (f[off + 12] << 8 | f[off + 13]) != ETHERTYPE_IPV4)
		return;
	fz_fix_ipv4_at(f + off + 14, len - off - 14);
}

/*
 * One stack built and freed before fuzzing: one-time allocations (libsodium,
 * stdio) then happen outside an input, so libFuzzer's per-input malloc/free
 * balance does not start a full LeakSanitizer pass after every input.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t none[1] = { 0 };

	(void)argc;
	(void)argv;
	LLVMFuzzerTestOneInput(none, sizeof(none));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int clock_ms = 0;
	size_t i = 1;

	if (size < 1)
		return 0;
	/* bit 1: the face's TUN without the io_uring (setting one up is most of
	 * an input's cost), one readv()/writev() per packet as with
	 * --no-io-uring; both paths meet the inputs */
	link_uring_refuse(data[0] & 2 ? "fuzz_frame: an input without the ring" : NULL);
	fz_setup(data[0] & 1, data[0] & 4);
	fz_drain();
	while (i + 3 <= size) {
		size_t len = (size_t)(data[i] | data[i + 1] << 8);
		uint8_t flags = data[i + 2];

		if (len & 0x8000)
			len = (len & 0x7fff) * 2;
		else
			len %= 9216;
		i += 3;
		if (len > size - i)
			len = size - i;
		if (len > sizeof(fz_buf))
			len = sizeof(fz_buf);
		memcpy(fz_buf, data + i, len);
		i += len;
		if (flags & 2) {
			if ((flags & 1) && len >= sizeof(struct virtio_net_hdr) + IPV4_HLEN)
				fz_fix_ipv4_at(fz_buf + sizeof(struct virtio_net_hdr), len - sizeof(struct virtio_net_hdr));
			fz_from_container(fz_buf, len, flags & 4);
			stack_links_flush(&F.st);
		} else {
			if (flags & 1)
				fz_fix_ipv4(fz_buf, len);
			if (send(F.peer_fd, fz_buf, len, 0) == (ssize_t)len) {
				link_rx(&F.lk->ch[0]);
				link_tx_flush(F.lk);
			}
		}
		loop_run_once(F.lp, 0);	/* the turn's end: the face moves bytes, the links flush */
		fz_drain();
		fz_drain_tun();
		if ((flags >> 4) && clock_ms + (1U << (flags >> 4)) <= FZ_CLOCK_MAX_MS) {
			clock_ms += 1U << (flags >> 4);
			loop_advance_ms(F.lp, 1ULL << (flags >> 4));
			loop_run_once(F.lp, 0);
			link_tx_flush(F.lk);
			fz_drain();
			fz_drain_tun();
		}
	}
	udp_close(F.echo);
	stack_fini(&F.st);
	policy_release(&fz_policy);
	loop_free(F.lp);
	close(F.peer_fd);
	close(F.ct_fd);
	if (pkt_live() != 0)
		fz_fail("packet buffers left after stack_fini()");
	pkt_pool_drain();
	return 0;
}
