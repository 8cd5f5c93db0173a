/* SPDX-License-Identifier: MIT */
/*
 * flowhash.h - which shard owns a packet: one symmetric hash, in C and in BPF
 *
 * A sharded datapath (issue 20, docs/architecture.md "Shards") must see both
 * halves of a conversation on one shard: what the container sends through
 * the TUN and what the network answers on the link. The kernel picks the
 * TUN queue and the link's fanout socket by running a BPF program that
 * netsetup loads (TUNSETSTEERINGEBPF, PACKET_FANOUT_EBPF); the datapath
 * picks its own ports with the same function in C. Both forms live here,
 * next to each other, and a unit test runs the program in the kernel
 * (BPF_PROG_TEST_RUN) against the C form on every kind of packet.
 *
 * The hash, on the IP header at the network offset:
 *   - the XOR of the source and destination address (for IPv6 of their
 *     eight words): the same both ways;
 *   - TCP only, and only an IPv4 segment that is not a fragment: the XOR
 *     of the ports and the protocol. Everything else goes by its address
 *     pair alone, because a fragment carries no ports and the container's
 *     kernel may fragment any UDP datagram it sends through the TUN;
 *   - an ICMP or ICMPv6 error goes by the packet it quotes, so it reaches
 *     the shard of the connection it is about;
 *   - XORed with a per-container secret @seed, mixed (murmur3's fmix32), and
 *     taken modulo the shard count.
 * A packet the program cannot read (not IP, shorter than a header) goes to
 * shard 0, which is what a BPF load out of bounds returns.
 */
#ifndef SANDNET_COMMON_FLOWHASH_H
#define SANDNET_COMMON_FLOWHASH_H

#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>

#define FLOWHASH_MAX_SHARDS	64
/* Instructions in the program; flowhash_prog() checks that it fits. */
#define FLOWHASH_PROG_MAX	128

unsigned int flowhash_packet(const uint8_t *l3, size_t len, uint32_t seed, unsigned int n_shards);
unsigned int flowhash_flow(int family, int protocol, const void *saddr, const void *daddr,
			   uint16_t sport, uint16_t dport, uint32_t seed, unsigned int n_shards);
int flowhash_prog(struct bpf_insn *insn, size_t max, uint32_t seed, unsigned int n_shards);

#endif /* SANDNET_COMMON_FLOWHASH_H */
