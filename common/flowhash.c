// SPDX-License-Identifier: MIT
/*
 * flowhash.c - the steering hash (flowhash.h), as C and as a BPF program
 *
 * The C form reads the packet exactly as the program does, load for load:
 * host byte order (what BPF_LD_ABS gives), no validation the program does
 * not do, and shard 0 for a read past the end. The program is written as
 * instructions because it is about 110 of them and needs no map, no helper and no
 * relocation (docs/dependencies.md, "No libbpf").
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/flowhash.h"

#define IP4_PROTO	9
#define IP4_FRAG	6
#define IP4_SRC		12
#define IP4_DST		16
#define IP4_FRAG_MASK	0x3fff	/* MF and the offset */
#define IP6_NEXT	6
#define IP6_SRC		8
#define IP6_HLEN	40
#define ICMP_HLEN	8	/* the quoted packet follows */

static uint32_t fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bU;
	h ^= h >> 13;
	h *= 0xc2b2ae35U;
	h ^= h >> 16;
	return h;
}

static unsigned int flowhash_finish(uint32_t addrs, uint32_t tcp, uint32_t seed, unsigned int n)
{
	return fmix32(addrs ^ seed ^ tcp) % n;
}

/* The TCP term: ports XORed, above the protocol. */
static uint32_t flowhash_tcp(uint16_t sport, uint16_t dport)
{
	return (uint32_t)(sport ^ dport) << 16 | IPPROTO_TCP;
}

/* A bounded reader that fails the way an out-of-bounds BPF load does. */
struct flowhash_rd {
	const uint8_t *p;
	size_t len;
	bool fault;
};

static uint32_t rd(struct flowhash_rd *r, size_t off, size_t size)
{
	uint32_t v = 0;
	size_t i;

	if (r->fault || off > r->len || size > r->len - off) {
		r->fault = true;
		return 0;
	}
	for (i = 0; i < size; i++)
		v = v << 8 | r->p[off + i];
	return v;
}

static uint32_t rd_addrs6(struct flowhash_rd *r, size_t base)
{
	uint32_t x = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		x ^= rd(r, base + IP6_SRC + 4 * i, 4);
	return x;
}

/**
 * flowhash_packet() - the shard the steering program picks for a packet
 * @l3:		the packet from its IP header on
 * @len:	its length
 * @seed:	the container's steering secret
 * @n_shards:	1..FLOWHASH_MAX_SHARDS
 *
 * Return: 0..@n_shards-1.
 */
unsigned int flowhash_packet(const uint8_t *l3, size_t len, uint32_t seed, unsigned int n_shards)
{
	struct flowhash_rd r = { .p = l3, .len = len };
	uint32_t addrs, tcp = 0, type;
	size_t l4;

	switch (rd(&r, 0, 1) >> 4) {
	case 4:
		l4 = (rd(&r, 0, 1) & 0xf) * 4;
		addrs = rd(&r, IP4_SRC, 4) ^ rd(&r, IP4_DST, 4);
		switch (rd(&r, IP4_PROTO, 1)) {
		case IPPROTO_TCP:
			if (rd(&r, IP4_FRAG, 2) & IP4_FRAG_MASK)
				break;
			tcp = flowhash_tcp(rd(&r, l4, 2), rd(&r, l4 + 2, 2));
			break;
		case IPPROTO_ICMP:
			type = rd(&r, l4, 1);
			if (type != 3 && type != 11 && type != 12)
				break;
			l4 += ICMP_HLEN;
			addrs = rd(&r, l4 + IP4_SRC, 4) ^ rd(&r, l4 + IP4_DST, 4);
			if (rd(&r, l4 + IP4_PROTO, 1) != IPPROTO_TCP)
				break;
			l4 += (rd(&r, l4, 1) & 0xf) * 4;
			tcp = flowhash_tcp(rd(&r, l4, 2), rd(&r, l4 + 2, 2));
			break;
		}
		break;
	case 6:
		addrs = rd_addrs6(&r, 0);
		switch (rd(&r, IP6_NEXT, 1)) {
		case IPPROTO_TCP:
			tcp = flowhash_tcp(rd(&r, IP6_HLEN, 2), rd(&r, IP6_HLEN + 2, 2));
			break;
		case IPPROTO_ICMPV6:
			type = rd(&r, IP6_HLEN, 1);
			if (type < 1 || type > 4)
				break;
			l4 = IP6_HLEN + ICMP_HLEN;
			addrs = rd_addrs6(&r, l4);
			if (rd(&r, l4 + IP6_NEXT, 1) != IPPROTO_TCP)
				break;
			l4 += IP6_HLEN;
			tcp = flowhash_tcp(rd(&r, l4, 2), rd(&r, l4 + 2, 2));
			break;
		}
		break;
	default:
		return 0;
	}
	if (r.fault)
		return 0;
	return flowhash_finish(addrs, tcp, seed, n_shards);
}

/**
 * flowhash_flow() - the shard that owns a flow, for a port the datapath picks
 * @family:	AF_INET or AF_INET6
 * @protocol:	IPPROTO_TCP, or another (then the ports do not count)
 * @saddr, @daddr: struct in_addr or struct in6_addr, network order
 * @sport, @dport: host order
 * @seed, @n_shards: as for flowhash_packet()
 *
 * Return: 0..@n_shards-1; the same for a flow and its reverse.
 */
unsigned int flowhash_flow(int family, int protocol, const void *saddr, const void *daddr,
			   uint16_t sport, uint16_t dport, uint32_t seed, unsigned int n_shards)
{
	uint32_t s[4], d[4], addrs = 0;
	unsigned int i, words = family == AF_INET6 ? 4 : 1;

	memcpy(s, saddr, 4 * words);
	memcpy(d, daddr, 4 * words);
	for (i = 0; i < words; i++)
		addrs ^= ntohl(s[i]) ^ ntohl(d[i]);
	return flowhash_finish(addrs, protocol == IPPROTO_TCP ? flowhash_tcp(sport, dport) : 0,
			       seed, n_shards);
}

/*
 * The program. R6 holds the context (BPF_LD_ABS needs it there), R7 the
 * offset of what the indirect loads read, R8 the address term, R9 the TCP
 * term; every load is relative to the network header (SKF_NET_OFF), which
 * is offset 0 on a TUN and past the Ethernet header in a fanout group.
 */
enum { R0, R1, R2, R3, R4, R5, R6, R7, R8, R9 };

#define NET(off)	(SKF_NET_OFF + (off))

enum label { L_V4, L_V6, L_V4_TCP, L_V4_ICMP, L_V4_QUOTE, L_V6_ICMP, L_PORTS, L_MIX, L_MAX };

struct asm_ctx {
	struct bpf_insn *insn;
	size_t n, max;
	/* Forward jumps waiting for their label: instruction index per label. */
	int fix[L_MAX][12];
	unsigned int n_fix[L_MAX];
	bool overflow;
};

static void emit(struct asm_ctx *a, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (a->n == a->max) {
		a->overflow = true;
		return;
	}
	a->insn[a->n++] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src,
					    .off = off, .imm = imm };
}

static void ld_abs(struct asm_ctx *a, uint8_t size, int32_t off)
{
	emit(a, BPF_LD | BPF_ABS | size, 0, 0, 0, NET(off));
}

static void ld_ind(struct asm_ctx *a, uint8_t size, int32_t off)
{
	emit(a, BPF_LD | BPF_IND | size, 0, R7, 0, NET(off));
}

static void alu_imm(struct asm_ctx *a, uint8_t op, uint8_t dst, int32_t imm)
{
	emit(a, BPF_ALU | op | BPF_K, dst, 0, 0, imm);
}

static void alu_reg(struct asm_ctx *a, uint8_t op, uint8_t dst, uint8_t src)
{
	emit(a, BPF_ALU | op | BPF_X, dst, src, 0, 0);
}

/* A conditional (or, with op BPF_JA, plain) jump to a label further down. */
static void jump(struct asm_ctx *a, uint8_t op, uint8_t reg, int32_t imm, enum label to)
{
	if (a->n_fix[to] == sizeof(a->fix[to]) / sizeof(a->fix[to][0])) {
		a->overflow = true;
		return;
	}
	a->fix[to][a->n_fix[to]++] = (int)a->n;
	emit(a, BPF_JMP | op | BPF_K, reg, 0, 0, imm);
}

static void label(struct asm_ctx *a, enum label l)
{
	unsigned int i;

	for (i = 0; i < a->n_fix[l]; i++)
		a->insn[a->fix[l][i]].off = (int16_t)(a->n - a->fix[l][i] - 1);
	a->n_fix[l] = 0;
}

/* R0 = the bytes at @off of the network header, or of R7 + @off. */
static void ld(struct asm_ctx *a, bool indirect, uint8_t size, int32_t off)
{
	if (indirect)
		ld_ind(a, size, off);
	else
		ld_abs(a, size, off);
}

/* R8 = the XOR of the eight address words of an IPv6 header, R0 its next header. */
static void addrs6(struct asm_ctx *a, bool indirect)
{
	unsigned int i;

	alu_imm(a, BPF_MOV, R8, 0);
	for (i = 0; i < 8; i++) {
		ld(a, indirect, BPF_W, IP6_SRC + 4 * i);
		alu_reg(a, BPF_XOR, R8, R0);
	}
	ld(a, indirect, BPF_B, IP6_NEXT);
}

/* R8 = the XOR of an IPv4 header's addresses, R0 its protocol. */
static void addrs4(struct asm_ctx *a, bool indirect)
{
	ld(a, indirect, BPF_W, IP4_SRC);
	alu_reg(a, BPF_MOV, R8, R0);
	ld(a, indirect, BPF_W, IP4_DST);
	alu_reg(a, BPF_XOR, R8, R0);
	ld(a, indirect, BPF_B, IP4_PROTO);
}

/**
 * flowhash_prog() - the steering program for TUNSETSTEERINGEBPF and
 *		     PACKET_FANOUT_EBPF (BPF_PROG_TYPE_SOCKET_FILTER)
 * @insn, @max:	where it goes
 * @seed, @n_shards: as for flowhash_packet(); the program returns the shard
 *
 * Return: the instruction count, or -EINVAL for a shard count out of range,
 * -ENOSPC when @max is too small.
 */
int flowhash_prog(struct bpf_insn *insn, size_t max, uint32_t seed, unsigned int n_shards)
{
	struct asm_ctx a = { .insn = insn, .max = max };

	if (n_shards < 1 || n_shards > FLOWHASH_MAX_SHARDS)
		return -EINVAL;
	emit(&a, BPF_ALU64 | BPF_MOV | BPF_X, R6, R1, 0, 0);
	alu_imm(&a, BPF_MOV, R9, 0);
	ld_abs(&a, BPF_B, 0);
	alu_imm(&a, BPF_RSH, R0, 4);
	jump(&a, BPF_JEQ, R0, 4, L_V4);
	jump(&a, BPF_JEQ, R0, 6, L_V6);
	alu_imm(&a, BPF_MOV, R0, 0);
	emit(&a, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	label(&a, L_V4);
	ld_abs(&a, BPF_B, 0);
	alu_imm(&a, BPF_AND, R0, 0xf);
	alu_imm(&a, BPF_LSH, R0, 2);
	emit(&a, BPF_ALU64 | BPF_MOV | BPF_X, R7, R0, 0, 0);
	addrs4(&a, false);
	jump(&a, BPF_JEQ, R0, IPPROTO_TCP, L_V4_TCP);
	jump(&a, BPF_JEQ, R0, IPPROTO_ICMP, L_V4_ICMP);
	jump(&a, BPF_JA, 0, 0, L_MIX);

	label(&a, L_V4_TCP);
	ld_abs(&a, BPF_H, IP4_FRAG);
	alu_imm(&a, BPF_AND, R0, IP4_FRAG_MASK);
	jump(&a, BPF_JNE, R0, 0, L_MIX);
	jump(&a, BPF_JA, 0, 0, L_PORTS);

	label(&a, L_V4_ICMP);
	/* Types 3, 11 and 12 quote the packet; anything else goes by addresses. */
	ld_ind(&a, BPF_B, 0);
	jump(&a, BPF_JEQ, R0, 3, L_V4_QUOTE);
	jump(&a, BPF_JEQ, R0, 11, L_V4_QUOTE);
	jump(&a, BPF_JEQ, R0, 12, L_V4_QUOTE);
	jump(&a, BPF_JA, 0, 0, L_MIX);

	label(&a, L_V4_QUOTE);
	alu_imm(&a, BPF_ADD, R7, ICMP_HLEN);
	addrs4(&a, true);
	jump(&a, BPF_JNE, R0, IPPROTO_TCP, L_MIX);
	ld_ind(&a, BPF_B, 0);
	alu_imm(&a, BPF_AND, R0, 0xf);
	alu_imm(&a, BPF_LSH, R0, 2);
	emit(&a, BPF_ALU64 | BPF_ADD | BPF_X, R7, R0, 0, 0);
	jump(&a, BPF_JA, 0, 0, L_PORTS);

	label(&a, L_V6);
	emit(&a, BPF_ALU64 | BPF_MOV | BPF_K, R7, 0, 0, IP6_HLEN);
	addrs6(&a, false);
	jump(&a, BPF_JEQ, R0, IPPROTO_TCP, L_PORTS);
	jump(&a, BPF_JEQ, R0, IPPROTO_ICMPV6, L_V6_ICMP);
	jump(&a, BPF_JA, 0, 0, L_MIX);

	label(&a, L_V6_ICMP);
	ld_abs(&a, BPF_B, IP6_HLEN);
	jump(&a, BPF_JEQ, R0, 0, L_MIX);
	jump(&a, BPF_JGT, R0, 4, L_MIX);
	emit(&a, BPF_ALU64 | BPF_MOV | BPF_K, R7, 0, 0, IP6_HLEN + ICMP_HLEN);
	addrs6(&a, true);
	jump(&a, BPF_JNE, R0, IPPROTO_TCP, L_MIX);
	emit(&a, BPF_ALU64 | BPF_ADD | BPF_K, R7, 0, 0, IP6_HLEN);

	label(&a, L_PORTS);
	ld_ind(&a, BPF_H, 0);
	alu_reg(&a, BPF_MOV, R9, R0);
	ld_ind(&a, BPF_H, 2);
	alu_reg(&a, BPF_XOR, R9, R0);
	alu_imm(&a, BPF_LSH, R9, 16);
	alu_imm(&a, BPF_OR, R9, IPPROTO_TCP);

	label(&a, L_MIX);
	alu_imm(&a, BPF_XOR, R8, (int32_t)seed);
	alu_reg(&a, BPF_XOR, R8, R9);
	alu_reg(&a, BPF_MOV, R0, R8);
	alu_imm(&a, BPF_RSH, R0, 16);
	alu_reg(&a, BPF_XOR, R8, R0);
	alu_imm(&a, BPF_MUL, R8, (int32_t)0x85ebca6bU);
	alu_reg(&a, BPF_MOV, R0, R8);
	alu_imm(&a, BPF_RSH, R0, 13);
	alu_reg(&a, BPF_XOR, R8, R0);
	alu_imm(&a, BPF_MUL, R8, (int32_t)0xc2b2ae35U);
	alu_reg(&a, BPF_MOV, R0, R8);
	alu_imm(&a, BPF_RSH, R0, 16);
	alu_reg(&a, BPF_XOR, R8, R0);
	alu_imm(&a, BPF_MOD, R8, (int32_t)n_shards);
	alu_reg(&a, BPF_MOV, R0, R8);
	emit(&a, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	if (a.overflow)
		return -ENOSPC;
	return (int)a.n;
}
