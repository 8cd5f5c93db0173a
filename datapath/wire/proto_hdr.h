/* SPDX-License-Identifier: MIT */
/*
 * proto_hdr.h - wire layouts and sizes of the Ethernet and IP-layer headers,
 * shared by every layer that parses or builds them (the links' vnet.c, the
 * stack, the face). Fields are in network byte order; every access to
 * packet bytes still goes through pkt_peek()/pkt_pull().
 */
#ifndef SANDNET_DATAPATH_PROTO_HDR_H
#define SANDNET_DATAPATH_PROTO_HDR_H

#include <netinet/in.h>
#include <stdint.h>

#define ETHERTYPE_IPV4	0x0800
#define ETHERTYPE_ARP	0x0806
#define ETHERTYPE_IPV6	0x86dd

#define IPV4_HLEN	20
#define IPV6_HLEN	40
#define UDP_HLEN	8
#define TCP_HLEN	20
#define TCP_MAX_HLEN	60
#define IPV4_MAX_LEN	65535
#define UDP_MAX_PAYLOAD_V4 (IPV4_MAX_LEN - IPV4_HLEN - UDP_HLEN)	/* 65507 */

struct ipv4_hdr {
	uint8_t ver_ihl;
	uint8_t tos;
	uint16_t tot_len;
	uint16_t id;
	uint16_t frag_off;
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum;
	uint32_t saddr;
	uint32_t daddr;
} __attribute__((packed));

#define IPV4_DF		0x4000
#define IPV4_MF		0x2000
#define IPV4_OFFMASK	0x1fff

struct ipv6_hdr {
	uint32_t ver_tc_flow;
	uint16_t payload_len;
	uint8_t nexthdr;
	uint8_t hop_limit;
	struct in6_addr saddr;
	struct in6_addr daddr;
} __attribute__((packed));

struct udp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;
	uint16_t csum;
} __attribute__((packed));

struct icmp_hdr {
	uint8_t type;
	uint8_t code;
	uint16_t csum;
	uint32_t rest;		/* id+seq, unused, or next-hop MTU */
} __attribute__((packed));

#define ICMP_ECHOREPLY		0
#define ICMP_DEST_UNREACH	3
#define ICMP_ECHO		8
#define ICMP_TIME_EXCEEDED	11
#define ICMP_PARAMETERPROB	12
#define ICMP_PROT_UNREACH	2
#define ICMP_PORT_UNREACH	3
#define ICMP_FRAG_NEEDED	4
#define ICMP_PKT_FILTERED	13	/* communication administratively prohibited */

#define ICMP6_DST_UNREACH	1
#define ICMP6_PACKET_TOO_BIG	2
#define ICMP6_TIME_EXCEEDED	3
#define ICMP6_PARAM_PROB	4
#define ICMP6_ECHO_REQUEST	128
#define ICMP6_ECHO_REPLY	129
#define ND_ROUTER_SOLICIT	133
#define ND_ROUTER_ADVERT	134
#define ND_NEIGHBOR_SOLICIT	135
#define ND_NEIGHBOR_ADVERT	136
#define ND_REDIRECT		137
#define ICMP6_DST_UNREACH_ADMIN	1	/* communication administratively prohibited */
#define ICMP6_DST_UNREACH_NOPORT 4
#define ICMP6_PARAMPROB_NEXTHEADER 1

#endif /* SANDNET_DATAPATH_PROTO_HDR_H */
