// SPDX-License-Identifier: MIT
/*
 * gso.c - which GSO mode a link gets, and why
 *
 * Theory of operation: the datapath can hand the kernel whole TCP/UDP
 * super-frames behind a virtio_net_hdr (hw: PACKET_VNET_HDR, the kernel or
 * the device segments), split them itself and send the segments in one
 * sendmmsg (sw), or send one MTU-sized frame per segment (off). hw pays off
 * only when the link segments cheaply: tx-tcp-segmentation/tx-tcp6-segmentation
 * (what `ethtool -k` groups as tcp-segmentation-offload, minus
 * tx-tcp-accecn-segmentation, which plain TCP does not use) or
 * generic-segmentation-offload is on, and gso_max_size leaves room for a
 * frame larger than one MTU-sized frame. The decision is a pure function of
 * the scraped link and the request, so it is tested as a table:
 *
 *   request  hw possible   result
 *   auto     yes           hw
 *   auto     no            sw (reason says why not hw)
 *   hw       yes           hw
 *   hw       no            refused (reason says why and how to fix)
 *   sw, off  -             as requested
 *
 * frame_max_bytes is the largest frame the datapath may build: below the
 * link's gso_max_size (a frame at or above it is split by the kernel, or
 * dropped with PACKET_QDISC_BYPASS), at most 65535 (docs/netsetup.md: IPv6 and
 * plain IPv4 stay under 64 KiB), and at most the user's --gso-max-size. In
 * off mode it is one MTU-sized frame. frame_max_ipv4_bytes is the same
 * limit for IPv4, except in hw mode on a link whose gso_max_size and
 * gso_ipv4_max_size were both raised over 64 KiB: then IPv4 TCP frames may
 * be BIG TCP ones (IPv4 total length 0), below gso_ipv4_max_size, at most
 * 524280 bytes (the kernel's GSO_MAX_SIZE) and the user's --gso-max-size.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netsetup/kernel/kernel_int.h"

#define ETH_HDR_BYTES 14

const char *const ns_gso_request_names[NS_GSO_REQUEST_MAX] = {
	[NS_GSO_AUTO]	= "auto",
	[NS_GSO_HW]	= "hw",
	[NS_GSO_SW]	= "sw",
	[NS_GSO_OFF]	= "off",
};
_Static_assert(sizeof(ns_gso_request_names) / sizeof(ns_gso_request_names[0]) == NS_GSO_REQUEST_MAX,
	       "ns_gso_request_names must name every request");

/**
 * ns_gso_request_parse() - "auto", "hw", "sw" or "off"
 * @s:		the --gso argument
 *
 * Return: enum ns_gso_request or -EINVAL.
 */
int ns_gso_request_parse(const char *s)
{
	int i;

	for (i = 0; i < NS_GSO_REQUEST_MAX; i++)
		if (!strcmp(s, ns_gso_request_names[i]))
			return i;
	return -EINVAL;
}

/* Why hw is not possible on @l, in words; "" when it is. */
static void hw_obstacle(const struct ns_link *l, char *buf, size_t size)
{
	buf[0] = '\0';
	if (!l->feat.known)
		snprintf(buf, size, "offload features could not be read");
	else if (!l->feat.tcp_tso && !l->feat.on[NS_FEAT_GSO] && l->feat.on[NS_FEAT_TSO])
		snprintf(buf, size, "tx-tcp-segmentation, tx-tcp6-segmentation and generic-segmentation-offload are off");
	else if (!l->feat.tcp_tso && !l->feat.on[NS_FEAT_GSO])
		snprintf(buf, size, "tcp-segmentation-offload and generic-segmentation-offload are off");
	else if (l->gso_max_size <= l->mtu + ETH_HDR_BYTES)
		snprintf(buf, size, "gso_max_size %u leaves no room for a frame above the MTU (%u)",
			 l->gso_max_size, l->mtu);
}

static uint32_t frame_limit(const struct ns_link *l, enum proto_gso_mode mode, uint32_t user_max)
{
	uint32_t max = NS_FRAME_MAX_BYTES;

	if (mode == PROTO_GSO_OFF)
		return l->mtu + ETH_HDR_BYTES;
	if (l->gso_max_size && l->gso_max_size - 1 < max)
		max = l->gso_max_size - 1;
	if (user_max && user_max < max)
		max = user_max;
	if (max < l->mtu + ETH_HDR_BYTES)
		max = l->mtu + ETH_HDR_BYTES;
	return max;
}

static uint32_t frame_limit_ipv4(const struct ns_link *l, uint32_t user_max)
{
	uint32_t max;

	if (l->mode != PROTO_GSO_HW || l->gso_max_size <= NS_FRAME_MAX_BYTES + 1 ||
	    l->gso_ipv4_max_size <= NS_FRAME_MAX_BYTES + 1)
		return l->frame_max_bytes;
	max = l->gso_ipv4_max_size - 1;
	if (max > NS_BIG_FRAME_MAX_BYTES)
		max = NS_BIG_FRAME_MAX_BYTES;
	if (user_max && user_max < max)
		max = user_max;
	return max < l->frame_max_bytes ? l->frame_max_bytes : max;
}

/**
 * ns_gso_decide() - choose the GSO mode of one link
 * @l:		scraped link with its features; ->mode, ->mode_refused,
 *		->reason, ->frame_max_bytes and ->frame_max_ipv4_bytes are set
 * @req:	what the user asked for
 * @user_max_bytes: --gso-max-size, 0 for none
 *
 * Return: 0, or -EOPNOTSUPP when @req is hw and the link cannot do it
 * (->reason says why and how to fix it).
 */
int ns_gso_decide(struct ns_link *l, enum ns_gso_request req, uint32_t user_max_bytes)
{
	char why[160];
	const char *what;

	hw_obstacle(l, why, sizeof(why));
	what = l->feat.tcp_tso ? "tcp-segmentation-offload" : "generic-segmentation-offload";
	l->mode_refused = false;
	switch (req) {
	case NS_GSO_AUTO:
		if (!why[0]) {
			l->mode = PROTO_GSO_HW;
			snprintf(l->reason, sizeof(l->reason), "auto: %s is on and gso_max_size is %u",
				 what, l->gso_max_size);
		} else {
			l->mode = PROTO_GSO_SW;
			snprintf(l->reason, sizeof(l->reason), "auto: %s", why);
		}
		break;
	case NS_GSO_HW:
		l->mode = PROTO_GSO_HW;
		if (!why[0]) {
			snprintf(l->reason, sizeof(l->reason), "requested; %s is on and gso_max_size is %u",
				 what, l->gso_max_size);
			break;
		}
		l->mode_refused = true;
		if (l->feat.known && !l->feat.tcp_tso && !l->feat.on[NS_FEAT_GSO])
			snprintf(l->reason, sizeof(l->reason), "GSO mode hw refused: %s (ethtool -K %s tso on gso on)",
				 why, l->ifname);
		else if (l->feat.known)
			snprintf(l->reason, sizeof(l->reason),
				 "GSO mode hw refused: %s (ip link set %s gso_max_size 65536)", why, l->ifname);
		else
			snprintf(l->reason, sizeof(l->reason), "GSO mode hw refused: %s", why);
		l->frame_max_bytes = 0;
		l->frame_max_ipv4_bytes = 0;
		return -EOPNOTSUPP;
	case NS_GSO_SW:
		l->mode = PROTO_GSO_SW;
		snprintf(l->reason, sizeof(l->reason), "requested");
		break;
	case NS_GSO_OFF:
	default:
		l->mode = PROTO_GSO_OFF;
		snprintf(l->reason, sizeof(l->reason), "requested");
		break;
	}
	l->frame_max_bytes = frame_limit(l, l->mode, user_max_bytes);
	l->frame_max_ipv4_bytes = frame_limit_ipv4(l, user_max_bytes);
	return 0;
}
