// SPDX-License-Identifier: MIT
/*
 * serve_conf.c - what `netsetup serve` allows, and the check of one request
 *
 * Theory of operation: the configuration is a key=value file (one setting a
 * line, '#' starts a comment, lists are separated by spaces or commas;
 * conf.c reads the lines):
 *
 *   allowed_uids = 0 1000 alice     numbers or user names
 *   allowed_gids = sandnet          numbers or group names (the peer's primary gid)
 *   allowed_interfaces = eth0       a request may name only these; absent: any
 *   gso = auto hw sw off            the GSO requests allowed ("auto": leave it to netsetup)
 *   max_channels = 4                1..64
 *   max_clients = 64                requests and attachments served at once
 *   on_datapath_exit = keep-dark    or restore: what happens to a namespace
 *                                   whose datapath dies without being stopped
 *                                   (restore opens the container: never the default)
 *   request_timeout = 10            seconds a client may take to send ATTACH
 *
 * Without a file only uid 0 may attach. Every unknown key, malformed value
 * or unknown user is refused naming the file and the line: a daemon must
 * not start with a policy other than the one written.
 *
 * ns_serve_authorize() checks one request against it: the peer's uid or
 * primary gid (from SO_PEERCRED, which the kernel fills, so it cannot be
 * forged), the link it names, the GSO mode and the channel count; the
 * message says which rule refused, so that an operator can act on it.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netsetup/front/front.h"

#define CONF_LINE_MAX 1024

/**
 * ns_serve_conf_default() - the policy without a configuration file
 * @c:		filled: uid 0 only, any link, any GSO mode, 4 channels,
 *		64 clients, keep dark when a datapath dies, 10 s request timeout
 */
void ns_serve_conf_default(struct ns_serve_conf *c)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->uids[c->n_uids++] = 0;
	for (i = 0; i < PROTO_GSO_MODE_MAX; i++)
		c->gso_allowed[i] = true;
	c->gso_auto_allowed = true;
	c->max_channels = 4;
	c->max_clients = 64;
	c->request_timeout_s = 10;
	/* fail closed: only an explicit stop gives a namespace back (docs/security.md) */
	c->keep_dark = true;
}

static int conf_number(const char *v, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;

	if (!v[0] || v[0] < '0' || v[0] > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(v, &end, 10);
	if (errno || *end || *out < min || *out > max)
		return -ERANGE;
	return 0;
}

/* One item of a list setting; returns a message fragment on failure. */
static const char *conf_item(struct ns_serve_conf *c, const char *key, const char *item)
{
	unsigned long n;
	int mode;

	if (!strcmp(key, "allowed_uids")) {
		struct passwd *pw;

		if (c->n_uids >= NS_SERVE_MAX_IDS)
			return "too many uids";
		if (conf_number(item, 0, 0xfffffffe, &n) == 0)
			c->uids[c->n_uids++] = n;
		else if ((pw = getpwnam(item)))
			c->uids[c->n_uids++] = pw->pw_uid;
		else
			return "no such user (create it, or take it out of the list; the package's sysusers.d "
			       "file makes the user sandnet)";
	} else if (!strcmp(key, "allowed_gids")) {
		struct group *gr;

		if (c->n_gids >= NS_SERVE_MAX_IDS)
			return "too many gids";
		if (conf_number(item, 0, 0xfffffffe, &n) == 0)
			c->gids[c->n_gids++] = n;
		else if ((gr = getgrnam(item)))
			c->gids[c->n_gids++] = gr->gr_gid;
		else
			return "no such group";
	} else if (!strcmp(key, "allowed_interfaces")) {
		if (c->n_ifaces >= NS_MAX_IFACES)
			return "too many interfaces";
		if (strlen(item) >= IFNAMSIZ)
			return "not an interface name";
		snprintf(c->ifaces[c->n_ifaces++], IFNAMSIZ, "%s", item);
	} else if (!strcmp(key, "gso")) {
		if (!strcmp(item, "auto")) {
			c->gso_auto_allowed = true;
		} else {
			mode = proto_gso_mode_parse(item);
			if (mode < 0)
				return "expected auto, hw, sw or off";
			c->gso_allowed[mode] = true;
		}
	} else {
		return "unknown key";
	}
	return NULL;
}

/**
 * ns_serve_conf_parse() - read a configuration file over the defaults
 * @f:		the file
 * @name:	its name, for messages
 * @c:		starts from ns_serve_conf_default(); a list key replaces the default list
 * @e:		"FILE line N: ..." on failure
 *
 * Return: 0 or -EINVAL.
 */
int ns_serve_conf_parse(FILE *f, const char *name, struct ns_serve_conf *c, struct ns_err *e)
{
	char line[CONF_LINE_MAX], *key, *val, *item, *save;
	unsigned int lineno = 0;
	unsigned long n;
	const char *why;
	int r;

	ns_serve_conf_default(c);
	while ((r = ns_conf_next(f, name, line, sizeof(line), &lineno, &key, &val, e)) > 0) {
		if (!strcmp(key, "max_channels") || !strcmp(key, "max_clients") ||
		    !strcmp(key, "request_timeout")) {
			bool chan = !strcmp(key, "max_channels"), timeout = !strcmp(key, "request_timeout");
			unsigned long max = chan ? PROTO_MAX_CHANNELS : timeout ? 3600 : 4096;

			if (conf_number(val, 1, max, &n)) {
				ns_err_set(e, "%s line %u: %s '%s': expected a number 1..%lu", name, lineno,
					   key, val, max);
				return -EINVAL;
			}
			if (timeout)
				c->request_timeout_s = n;
			else if (chan)
				c->max_channels = n;
			else
				c->max_clients = n;
			continue;
		}
		if (!strcmp(key, "on_datapath_exit")) {
			if (strcmp(val, "restore") && strcmp(val, "keep-dark")) {
				ns_err_set(e, "%s line %u: on_datapath_exit '%s': expected restore or keep-dark",
					   name, lineno, val);
				return -EINVAL;
			}
			c->keep_dark = !strcmp(val, "keep-dark");
			continue;
		}
		/* A list: the file's list replaces the default one. */
		if (!strcmp(key, "allowed_uids"))
			c->n_uids = 0;
		else if (!strcmp(key, "allowed_gids"))
			c->n_gids = 0;
		else if (!strcmp(key, "allowed_interfaces"))
			c->n_ifaces = 0;
		else if (!strcmp(key, "gso")) {
			memset(c->gso_allowed, 0, sizeof(c->gso_allowed));
			c->gso_auto_allowed = false;
		} else {
			ns_err_set(e, "%s line %u: unknown key '%s'", name, lineno, key);
			return -EINVAL;
		}
		for (item = strtok_r(val, " ,\t", &save); item; item = strtok_r(NULL, " ,\t", &save)) {
			why = conf_item(c, key, item);
			if (why) {
				ns_err_set(e, "%s line %u: %s '%s': %s", name, lineno, key, item, why);
				return -EINVAL;
			}
		}
	}
	return r;
}

/**
 * ns_serve_authorize() - may this peer make this request?
 * @c:		the policy
 * @cred:	the peer, from SO_PEERCRED
 * @req:	its ATTACH
 * @e:		which rule refused, in words
 *
 * Return: 0, -EPERM (who), -EINVAL (what was asked).
 */
int ns_serve_authorize(const struct ns_serve_conf *c, const struct ucred *cred,
		       const struct proto_attach *req, struct ns_err *e)
{
	unsigned int i, channels = req->channels ? req->channels : 1;
	bool ok = false;

	for (i = 0; i < c->n_uids && !ok; i++)
		ok = c->uids[i] == cred->uid;
	for (i = 0; i < c->n_gids && !ok; i++)
		ok = c->gids[i] == cred->gid;
	if (!ok) {
		ns_err_set(e, "uid %u gid %u (pid %d) is not allowed to attach (allowed_uids, allowed_gids)",
			   (unsigned int)cred->uid, (unsigned int)cred->gid, (int)cred->pid);
		return -EPERM;
	}
	if (c->n_ifaces) {
		if (!req->ifname[0]) {
			ns_err_set(e, "the request names no interface, but only %s%s may be attached (allowed_interfaces)",
				   c->ifaces[0], c->n_ifaces > 1 ? " and others" : "");
			return -EINVAL;
		}
		for (ok = false, i = 0; i < c->n_ifaces && !ok; i++)
			ok = !strcmp(c->ifaces[i], req->ifname);
		if (!ok) {
			ns_err_set(e, "interface %s is not allowed (allowed_interfaces)", req->ifname);
			return -EINVAL;
		}
	}
	if (req->has_gso_mode ? !c->gso_allowed[req->gso_mode] : !c->gso_auto_allowed) {
		ns_err_set(e, "GSO mode %s is not allowed (gso)",
			   req->has_gso_mode ? proto_gso_mode_name(req->gso_mode) : "auto");
		return -EINVAL;
	}
	if (channels > c->max_channels) {
		ns_err_set(e, "%u channels asked, at most %u allowed (max_channels)", channels,
			   c->max_channels);
		return -EINVAL;
	}
	/* a shard reads one channel per link: shards cost channels too */
	if (req->shards > c->max_channels) {
		ns_err_set(e, "%u shards asked, each a channel per link, at most %u allowed (max_channels)",
			   req->shards, c->max_channels);
		return -EINVAL;
	}
	return 0;
}
