// SPDX-License-Identifier: MIT
/*
 * state.c - the file that remembers what attach took away
 *
 * Theory of operation: attach writes, before it removes anything, one file
 * per namespace under /run/sandnet/ (SANDNET_STATE_DIR overrides it, for
 * tests), named after the namespace's nsfs identity: netns-<dev hex>-<ino>.state.
 * detach, the end of `run`, and any failure after the takeover read it back
 * and give everything to the kernel again; then it is removed. The file
 * existing means "attached": it is created with link(2) from a private
 * temporary file, which fails with EEXIST when another attach got there
 * first, so two attaches can never both win.
 *
 * The format is line-based text, one record per line, fields separated by
 * one space, so that an operator can read it:
 *
 *   sandnet-netsetup-state 1
 *   netns DEV INO
 *   link IFINDEX IFNAME ADDR_GEN_MODE ACCEPT_RA AUTOCONF        (-1: absent)
 *   face IFINDEX TUNNAME DISABLE_IPV6   (the link's container face, face.c; -1: absent)
 *   addr IFINDEX 4|6 ADDRESS PREFIXLEN SCOPE FLAGS VALID PREFERRED PEER|- BROADCAST|- LABEL|-
 *   route IFINDEX 4|6 DST|- DSTLEN GATEWAY|- METRIC TABLE PROTOCOL SCOPE TYPE PREFSRC|- INITCWND
 *                                   (INITCWND 0: none; absent in older files)
 *   datapath PID STARTTIME          (optional: a datapath that outlives its starter)
 *   owner WORD                      (optional: "cni:ID:IFNAME", "oci:ID"; no spaces)
 *   netnspath PATH                  (optional: a persistent path of the namespace)
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include "netsetup/orch/orch_int.h"

#define STATE_MAGIC "sandnet-netsetup-state"
#define STATE_VERSION 1
#define STATE_LINE_MAX 512

/**
 * ns_state_dir() - where state files live
 *
 * Return: $SANDNET_STATE_DIR or /run/sandnet.
 */
const char *ns_state_dir(void)
{
	const char *dir = getenv("SANDNET_STATE_DIR");

	return dir && dir[0] ? dir : NS_STATE_DIR;
}

/**
 * ns_state_path() - the state file of a namespace
 * @dev:	nsfs st_dev
 * @ino:	nsfs st_ino
 * @buf:	receives the path
 * @size:	size of @buf
 *
 * Return: 0 or -ENAMETOOLONG.
 */
int ns_state_path(uint64_t dev, uint64_t ino, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/netns-%llx-%llu.state", ns_state_dir(),
			 (unsigned long long)dev, (unsigned long long)ino);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static const char *ip_str(int family, const union proto_inaddr *a, char *buf, size_t size)
{
	return inet_ntop(family, a->bytes, buf, size) ?: "-";
}

static int family_num(int family)
{
	return family == AF_INET ? 4 : 6;
}

/**
 * ns_state_format() - write @st in the state file format
 * @f:		stream
 * @st:		state
 *
 * Return: 0 or -EIO.
 */
int ns_state_format(FILE *f, const struct ns_state *st)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], c[INET6_ADDRSTRLEN];
	unsigned int i;

	fprintf(f, "%s %d\n", STATE_MAGIC, STATE_VERSION);
	fprintf(f, "netns %llx %llu\n", (unsigned long long)st->dev, (unsigned long long)st->ino);
	if (st->datapath_pid > 0)
		fprintf(f, "datapath %d %llu\n", (int)st->datapath_pid, st->datapath_start);
	if (st->owner[0])
		fprintf(f, "owner %s\n", st->owner);
	if (st->netns_path[0])
		fprintf(f, "netnspath %s\n", st->netns_path);
	for (i = 0; i < st->n_links; i++) {
		const struct ns_state_link *l = &st->links[i];

		fprintf(f, "link %d %s %d %d %d\n", l->ifindex, l->ifname, l->addr_gen_mode,
			l->accept_ra, l->autoconf);
		if (l->face)
			fprintf(f, "face %d %s %d\n", l->ifindex, l->face_tun, l->disable_ipv6);
	}
	for (i = 0; i < st->n_addrs; i++) {
		const struct ns_addr *ad = &st->addrs[i];
		int fam = ad->a.family;

		fprintf(f, "addr %d %d %s %u %u %u %u %u %s %s %s\n", ad->ifindex, family_num(fam),
			ip_str(fam, &ad->a.addr, a, sizeof(a)), ad->a.prefixlen, ad->a.scope,
			ad->a.flags, ad->valid_lft, ad->preferred_lft,
			ad->has_peer ? ip_str(fam, &ad->peer, b, sizeof(b)) : "-",
			ad->has_broadcast ? ip_str(fam, &ad->broadcast, c, sizeof(c)) : "-",
			ad->label[0] ? ad->label : "-");
	}
	for (i = 0; i < st->n_routes; i++) {
		const struct ns_route *r = &st->routes[i];
		int fam = r->r.family;

		fprintf(f, "route %d %d %s %u %s %u %u %u %u %u %s %u\n", r->ifindex, family_num(fam),
			r->r.dst_len ? ip_str(fam, &r->r.dst, a, sizeof(a)) : "-", r->r.dst_len,
			r->r.has_gateway ? ip_str(fam, &r->r.gateway, b, sizeof(b)) : "-",
			r->r.metric, r->table, r->protocol, r->scope, r->type,
			r->has_prefsrc ? ip_str(fam, &r->prefsrc, c, sizeof(c)) : "-", r->initcwnd);
	}
	return ferror(f) ? -EIO : 0;
}

static int parse_family(int num)
{
	return num == 4 ? AF_INET : num == 6 ? AF_INET6 : -1;
}

static bool parse_ip(int family, const char *s, union proto_inaddr *a)
{
	memset(a, 0, sizeof(*a));
	return inet_pton(family, s, a->bytes) == 1;
}

static int parse_link(const char *line, struct ns_state *st)
{
	struct ns_state_link l, *grown;
	char name[64];

	memset(&l, 0, sizeof(l));
	if (sscanf(line, "link %d %63s %d %d %d", &l.ifindex, name, &l.addr_gen_mode,
		   &l.accept_ra, &l.autoconf) != 5 || l.ifindex <= 0 || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	snprintf(l.ifname, sizeof(l.ifname), "%s", name);
	grown = reallocarray(st->links, st->n_links + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	st->links = grown;
	st->links[st->n_links++] = l;
	return 0;
}

/* A face line belongs to the link line with its index, which comes first. */
static int parse_face(const char *line, struct ns_state *st)
{
	char name[64];
	int ifindex, dis;
	unsigned int i;

	if (sscanf(line, "face %d %63s %d", &ifindex, name, &dis) != 3 || strlen(name) >= IFNAMSIZ ||
	    strncmp(name, NS_FACE_PREFIX, strlen(NS_FACE_PREFIX)) || dis < -1 || dis > 1)
		return -EINVAL;
	for (i = 0; i < st->n_links; i++) {
		if (st->links[i].ifindex == ifindex && !st->links[i].face) {
			st->links[i].face = true;
			snprintf(st->links[i].face_tun, sizeof(st->links[i].face_tun), "%s", name);
			st->links[i].disable_ipv6 = dis;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_addr(const char *line, struct ns_state *st)
{
	char ip[64], peer[64], brd[64], label[64];
	unsigned int plen, scope;
	struct ns_addr a, *grown;
	int fam;

	memset(&a, 0, sizeof(a));
	if (sscanf(line, "addr %d %d %63s %u %u %u %u %u %63s %63s %63s", &a.ifindex, &fam, ip, &plen,
		   &scope, &a.a.flags, &a.valid_lft, &a.preferred_lft, peer, brd, label) != 11)
		return -EINVAL;
	fam = parse_family(fam);
	if (fam < 0 || a.ifindex <= 0 || plen > (fam == AF_INET ? 32u : 128u) || scope > 255 ||
	    !parse_ip(fam, ip, &a.a.addr) || strlen(label) >= IFNAMSIZ)
		return -EINVAL;
	a.a.family = fam;
	a.a.prefixlen = plen;
	a.a.scope = scope;
	if (strcmp(peer, "-")) {
		if (!parse_ip(fam, peer, &a.peer))
			return -EINVAL;
		a.has_peer = true;
	}
	if (strcmp(brd, "-")) {
		if (fam != AF_INET || !parse_ip(fam, brd, &a.broadcast))
			return -EINVAL;
		a.has_broadcast = true;
	}
	if (strcmp(label, "-"))
		snprintf(a.label, sizeof(a.label), "%s", label);
	grown = reallocarray(st->addrs, st->n_addrs + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	st->addrs = grown;
	st->addrs[st->n_addrs++] = a;
	return 0;
}

static int parse_route(const char *line, struct ns_state *st)
{
	char dst[64], gw[64], src[64];
	unsigned int dlen, proto, scope, type;
	struct ns_route r, *grown;
	const char *rest;
	int fam, n = 0;

	memset(&r, 0, sizeof(r));
	if (sscanf(line, "route %d %d %63s %u %63s %u %u %u %u %u %63s%n", &r.ifindex, &fam, dst,
		   &dlen, gw, &r.r.metric, &r.table, &proto, &scope, &type, src, &n) != 11)
		return -EINVAL;
	/* files written before the 12th field (the route's initcwnd) end here */
	rest = line + n;
	rest += strspn(rest, " ");
	if (*rest && *rest != '\n') {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(rest, &end, 10);
		if (!isdigit((unsigned char)*rest) || errno || v > UINT32_MAX || (*end && *end != '\n'))
			return -EINVAL;
		r.initcwnd = (uint32_t)v;
	}
	fam = parse_family(fam);
	if (fam < 0 || r.ifindex <= 0 || dlen > (fam == AF_INET ? 32u : 128u) || proto > 255 ||
	    scope > 255 || type > 255)
		return -EINVAL;
	r.r.family = fam;
	r.r.dst_len = dlen;
	r.protocol = proto;
	r.scope = scope;
	r.type = type;
	if (strcmp(dst, "-") ? !parse_ip(fam, dst, &r.r.dst) : dlen != 0)
		return -EINVAL;
	if (strcmp(gw, "-")) {
		if (!parse_ip(fam, gw, &r.r.gateway))
			return -EINVAL;
		r.r.has_gateway = true;
	}
	if (strcmp(src, "-")) {
		if (!parse_ip(fam, src, &r.prefsrc))
			return -EINVAL;
		r.has_prefsrc = true;
	}
	grown = reallocarray(st->routes, st->n_routes + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	st->routes = grown;
	st->routes[st->n_routes++] = r;
	return 0;
}

/**
 * ns_state_parse() - read the state file format
 * @f:		stream
 * @st:		filled; ns_state_free() it, also after a failure
 * @e:		error message, naming the line
 *
 * Return: 0, -EINVAL on a malformed line or header, -ENOMEM.
 */
int ns_state_parse(FILE *f, struct ns_state *st, struct ns_err *e)
{
	char line[STATE_LINE_MAX];
	unsigned long long dev, ino;
	unsigned int lineno = 0;
	int version, err;
	bool have_netns = false;

	memset(st, 0, sizeof(*st));
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			ns_err_set(e, "state file line %u: too long", lineno);
			return -EINVAL;
		}
		if (lineno == 1) {
			if (sscanf(line, STATE_MAGIC " %d", &version) != 1 || version != STATE_VERSION) {
				ns_err_set(e, "state file: not a version %d netsetup state file", STATE_VERSION);
				return -EINVAL;
			}
			continue;
		}
		if (!strncmp(line, "netns ", 6)) {
			if (sscanf(line, "netns %llx %llu", &dev, &ino) != 2)
				goto bad;
			st->dev = dev;
			st->ino = ino;
			have_netns = true;
			continue;
		}
		if (!strncmp(line, "datapath ", 9)) {
			int pid;

			if (sscanf(line, "datapath %d %llu", &pid, &st->datapath_start) != 2 || pid <= 0)
				goto bad;
			st->datapath_pid = pid;
			continue;
		}
		if (!strncmp(line, "owner ", 6) || !strncmp(line, "netnspath ", 10)) {
			bool own = line[0] == 'o';
			char *v = strchr(line, ' ') + 1;
			size_t n = strcspn(v, "\n");
			size_t max = own ? sizeof(st->owner) : sizeof(st->netns_path);

			if (n == 0 || n >= max || memchr(v, ' ', n))
				goto bad;
			memcpy(own ? st->owner : st->netns_path, v, n);
			(own ? st->owner : st->netns_path)[n] = 0;
			continue;
		}
		if (!strncmp(line, "link ", 5))
			err = parse_link(line, st);
		else if (!strncmp(line, "face ", 5))
			err = parse_face(line, st);
		else if (!strncmp(line, "addr ", 5))
			err = parse_addr(line, st);
		else if (!strncmp(line, "route ", 6))
			err = parse_route(line, st);
		else
			goto bad;
		if (err == -ENOMEM) {
			ns_err_set(e, "state file: out of memory");
			return err;
		}
		if (err)
			goto bad;
	}
	if (lineno == 0 || !have_netns) {
		ns_err_set(e, "state file: %s", lineno ? "no netns line" : "empty");
		return -EINVAL;
	}
	return 0;
bad:
	ns_err_set(e, "state file line %u: malformed: %.*s", lineno, (int)strcspn(line, "\n"), line);
	return -EINVAL;
}

/**
 * ns_state_write() - create the state file; fails if it exists
 * @path:	from ns_state_path()
 * @st:		what attach is about to take
 * @e:		error message
 *
 * Return: 0, -EEXIST when the namespace is already attached, other -errno.
 */
int ns_state_write(const char *path, const struct ns_state *st, struct ns_err *e)
{
	char tmp[PATH_MAX];
	FILE *f = NULL;
	int fd, err;

	if (mkdir(ns_state_dir(), 0700) < 0 && errno != EEXIST) {
		err = -errno;
		ns_err_set(e, "state directory %s: %s", ns_state_dir(), strerror(errno));
		return err;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		ns_err_set(e, "state file %s: path too long", path);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		err = -errno;
		ns_err_set(e, "state file %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto err_unlink;
	}
	err = ns_state_format(f, st);
	if (fflush(f) || fsync(fd))
		err = -errno ?: -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		ns_err_set(e, "state file %s: write: %s", tmp, strerror(-err));
		goto err_unlink;
	}
	if (link(tmp, path) < 0) {
		err = -errno;
		if (err == -EEXIST)
			ns_err_set(e, "the namespace is already attached (state file %s); run netsetup detach first",
				   path);
		else
			ns_err_set(e, "state file %s: %s", path, strerror(errno));
		goto err_unlink;
	}
	unlink(tmp);
	return 0;
err_unlink:
	unlink(tmp);
	return err;
}

/**
 * ns_state_read() - read a state file
 * @path:	from ns_state_path()
 * @st:		filled; ns_state_free() it, also after a failure
 * @e:		error message
 *
 * Return: 0, -ENOENT when the namespace is not attached, other -errno.
 */
int ns_state_read(const char *path, struct ns_state *st, struct ns_err *e)
{
	struct ns_err pe = { .text = "" };
	FILE *f;
	int err;

	memset(st, 0, sizeof(*st));
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		if (err == -ENOENT)
			ns_err_set(e, "the namespace is not attached (no state file %s)", path);
		else
			ns_err_set(e, "state file %s: %s", path, strerror(errno));
		return err;
	}
	err = ns_state_parse(f, st, &pe);
	fclose(f);
	if (err)
		ns_err_set(e, "%s: %s", path, pe.text);
	return err;
}
