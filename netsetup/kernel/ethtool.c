// SPDX-License-Identifier: MIT
/*
 * ethtool.c - a link's offload features, by name
 *
 * Theory of operation: the kernel numbers its feature bits differently from
 * one version to the next, so we never use bit positions: we ask for the
 * names. First choice is ethtool's generic netlink family ("ethtool",
 * ETHTOOL_MSG_FEATURES_GET, verbose bitsets that carry each bit's name);
 * when the family is not there (kernel < 5.6) we fall back to the SIOCETHTOOL
 * ioctls (ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS for the names of
 * ETH_SS_FEATURES, ETHTOOL_GFEATURES for the active bits). The environment
 * variable SANDNET_ETHTOOL=ioctl forces the fallback so tests can compare
 * both paths.
 *
 * Kernel feature names are grouped under the names `ethtool -k` prints
 * (ns_feature_names[]): a group is "on" when any of its members is active,
 * which is how ethtool itself shows them (tx-checksumming: on with
 * tx-checksum-ipv4: off [fixed] on a veth).
 *
 * Both paths run in the caller's current network namespace: the netlink
 * socket and the ioctl socket are opened here, after the caller entered it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/sockios.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "netsetup/kernel/kernel_int.h"

const char *const ns_feature_names[NS_FEAT_MAX] = {
	[NS_FEAT_TX_CSUM]	= "tx-checksumming",
	[NS_FEAT_SG]		= "scatter-gather",
	[NS_FEAT_TSO]		= "tcp-segmentation-offload",
	[NS_FEAT_GSO]		= "generic-segmentation-offload",
	[NS_FEAT_GRO]		= "generic-receive-offload",
	[NS_FEAT_TX_UDP_SEG]	= "tx-udp-segmentation",
};
_Static_assert(sizeof(ns_feature_names) / sizeof(ns_feature_names[0]) == NS_FEAT_MAX,
	       "ns_feature_names must name every enum ns_feature");

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

/**
 * ns_feature_of_kernel_name() - the ethtool group a kernel feature belongs to
 * @name:	kernel feature name, e.g. "tx-tcp6-segmentation"
 *
 * The patterns are ethtool's: tx-checksum-*, tx-scatter-gather*,
 * tx-tcp*-segmentation, tx-generic-segmentation, rx-gro, tx-udp-segmentation.
 *
 * Return: an enum ns_feature, or -ENOENT for a feature we do not report.
 */
int ns_feature_of_kernel_name(const char *name)
{
	if (has_prefix(name, "tx-checksum-"))
		return NS_FEAT_TX_CSUM;
	if (has_prefix(name, "tx-scatter-gather"))
		return NS_FEAT_SG;
	if (has_prefix(name, "tx-tcp") && has_suffix(name, "-segmentation"))
		return NS_FEAT_TSO;
	if (!strcmp(name, "tx-generic-segmentation"))
		return NS_FEAT_GSO;
	if (!strcmp(name, "rx-gro"))
		return NS_FEAT_GRO;
	if (!strcmp(name, "tx-udp-segmentation"))
		return NS_FEAT_TX_UDP_SEG;
	return -ENOENT;
}

static void feature_set(struct ns_features *f, const char *name, bool on)
{
	int i = ns_feature_of_kernel_name(name);

	if (i >= 0 && on)
		f->on[i] = true;
	if (on && (!strcmp(name, "tx-tcp-segmentation") || !strcmp(name, "tx-tcp6-segmentation")))
		f->tcp_tso = true;
}

/* Parse the verbose bitset ETHTOOL_A_FEATURES_ACTIVE of one reply. */
static int features_reply_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1];
	struct nlattr *bs[ETHTOOL_A_BITSET_MAX + 1];
	struct nlattr *bit[ETHTOOL_A_BITSET_BIT_MAX + 1];
	struct ns_features *f = arg;
	struct nlattr *pos;
	bool nomask;
	int rem;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, ETHTOOL_A_FEATURES_MAX, NULL) < 0 ||
	    !tb[ETHTOOL_A_FEATURES_ACTIVE])
		return NL_SKIP;
	if (nla_parse_nested(bs, ETHTOOL_A_BITSET_MAX, tb[ETHTOOL_A_FEATURES_ACTIVE], NULL) < 0 ||
	    !bs[ETHTOOL_A_BITSET_BITS])
		return NL_SKIP;
	/* Without a mask the list holds exactly the bits that are set. */
	nomask = bs[ETHTOOL_A_BITSET_NOMASK] != NULL;
	nla_for_each_nested(pos, bs[ETHTOOL_A_BITSET_BITS], rem) {
		if (nla_type(pos) != ETHTOOL_A_BITSET_BITS_BIT ||
		    nla_parse_nested(bit, ETHTOOL_A_BITSET_BIT_MAX, pos, NULL) < 0 ||
		    !bit[ETHTOOL_A_BITSET_BIT_NAME])
			continue;
		feature_set(f, nla_get_string(bit[ETHTOOL_A_BITSET_BIT_NAME]),
			    nomask || bit[ETHTOOL_A_BITSET_BIT_VALUE]);
	}
	f->known = true;
	return NL_OK;
}

/* Return: 0, -EOPNOTSUPP when the ethtool family is missing, other -errno. */
static int features_netlink(int ifindex, const char *ifname, struct ns_features *f,
			    struct ns_err *e)
{
	struct nl_msg *msg = NULL;
	struct nl_sock *sk;
	struct nlattr *hdr;
	int family, err;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	err = genl_connect(sk);
	if (err < 0) {
		err = -EOPNOTSUPP;
		goto out;
	}
	family = genl_ctrl_resolve(sk, ETHTOOL_GENL_NAME);
	if (family < 0) {
		err = -EOPNOTSUPP;
		goto out;
	}
	msg = nlmsg_alloc();
	if (!msg) {
		err = -ENOMEM;
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 ETHTOOL_MSG_FEATURES_GET, ETHTOOL_GENL_VERSION) ||
	    !(hdr = nla_nest_start(msg, ETHTOOL_A_FEATURES_HEADER)) ||
	    nla_put_u32(msg, ETHTOOL_A_HEADER_DEV_INDEX, ifindex) < 0) {
		err = -ENOMEM;
		goto out;
	}
	nla_nest_end(msg, hdr);
	nl_socket_disable_auto_ack(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, features_reply_cb, f);
	err = nl_send_auto(sk, msg);
	if (err >= 0)
		err = nl_recvmsgs_default(sk);
	if (err < 0) {
		ns_err_set(e, "link %s: ethtool netlink: reading features: %s", ifname,
			   nl_geterror(err));
		err = -EIO;
		goto out;
	}
	err = f->known ? 0 : -EIO;
	if (err)
		ns_err_set(e, "link %s: ethtool netlink: no feature list in the reply", ifname);
	else
		f->source = "netlink";
out:
	nlmsg_free(msg);
	nl_socket_free(sk);
	return err;
}

static int features_ioctl(const char *ifname, struct ns_features *f, struct ns_err *e)
{
	struct ethtool_sset_info *sset = NULL;
	struct ethtool_gstrings *strings = NULL;
	struct ethtool_gfeatures *feats = NULL;
	struct ifreq ifr;
	unsigned int n, blocks, i;
	int fd, err;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		ns_err_set(e, "link %s: ethtool ioctl socket: %s", ifname, strerror(errno));
		return err;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);

	sset = calloc(1, sizeof(*sset) + sizeof(uint32_t));
	if (!sset)
		goto nomem;
	sset->cmd = ETHTOOL_GSSET_INFO;
	sset->sset_mask = 1ULL << ETH_SS_FEATURES;
	ifr.ifr_data = (void *)sset;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		goto ioerr;
	n = sset->sset_mask ? sset->data[0] : 0;
	if (!n || n > 4096) {
		err = -EOPNOTSUPP;
		ns_err_set(e, "link %s: ethtool ioctl: no feature names", ifname);
		goto out;
	}
	strings = calloc(1, sizeof(*strings) + (size_t)n * ETH_GSTRING_LEN);
	blocks = (n + 31) / 32;
	feats = calloc(1, sizeof(*feats) + blocks * sizeof(feats->features[0]));
	if (!strings || !feats)
		goto nomem;
	strings->cmd = ETHTOOL_GSTRINGS;
	strings->string_set = ETH_SS_FEATURES;
	strings->len = n;
	ifr.ifr_data = (void *)strings;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		goto ioerr;
	feats->cmd = ETHTOOL_GFEATURES;
	feats->size = blocks;
	ifr.ifr_data = (void *)feats;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		goto ioerr;
	for (i = 0; i < n && i < strings->len; i++) {
		char name[ETH_GSTRING_LEN + 1];

		memcpy(name, strings->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = '\0';
		feature_set(f, name, feats->features[i / 32].active & (1u << (i % 32)));
	}
	f->known = true;
	f->source = "ioctl";
	err = 0;
	goto out;
ioerr:
	err = -errno;
	ns_err_set(e, "link %s: ethtool ioctl: %s", ifname, strerror(errno));
	goto out;
nomem:
	err = -ENOMEM;
	ns_err_set(e, "link %s: ethtool: out of memory", ifname);
out:
	free(feats);
	free(strings);
	free(sset);
	close(fd);
	return err;
}

/**
 * ns_ethtool_features() - read a link's offload features
 * @ifindex:	link index (netlink path)
 * @ifname:	link name (ioctl path, messages)
 * @f:		filled
 * @e:		error message
 *
 * Runs in the caller's current network namespace.
 *
 * Return: 0 or -errno.
 */
int ns_ethtool_features(int ifindex, const char *ifname, struct ns_features *f, struct ns_err *e)
{
	const char *force = getenv("SANDNET_ETHTOOL");
	int err = -EOPNOTSUPP;

	memset(f, 0, sizeof(*f));
	if (!force || strcmp(force, "ioctl"))
		err = features_netlink(ifindex, ifname, f, e);
	if (err == -EOPNOTSUPP) {
		memset(f, 0, sizeof(*f));
		err = features_ioctl(ifname, f, e);
	}
	return err;
}
