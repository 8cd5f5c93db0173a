// SPDX-License-Identifier: MIT
/*
 * svc_spec.c - the --publish / --forward SPEC grammar
 *
 * Theory of operation: a SPEC is parsed completely at start, before any
 * socket exists, and every mistake is reported with what was wrong:
 *
 *   publish:  PROTO:[ADDR:]PORT=TARGET
 *   forward:  PROTO:LISTEN=REMOTE
 *   PROTO     udp or tcp (for tcp, TARGET and LISTEN are stream sockets)
 *   ADDR      an IPv4 address or an IPv6 address in brackets
 *   PORT      1..65535
 *   TARGET, LISTEN   HOST:PORT or unix:/absolute/path; HOST is a numeric
 *             address ([v6] in brackets) or a name resolved now with
 *             getaddrinfo(), in the datapath's own netns
 *   REMOTE    ADDR:PORT, numeric: it is reached through the stack, which has
 *             no resolver
 *
 * What follows from a SPEC alike for UDP (svc_udp.c) and TCP (svc_tcp.c)
 * services is here too: a forward's local listener, bound (by the
 * supervisor, or by the service when none was given) and closed; the first
 * refusals of a new service (no memory, a publish given a local listener);
 * its row of the services table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/out.h"
#include "datapath/svc/svc.h"

static int spec_port(const char *s, uint16_t *port, char *err, size_t err_len)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 1 || v > 65535) {
		snprintf(err, err_len, "port '%s' is not a number in 1..65535", s);
		return -EINVAL;
	}
	*port = (uint16_t)v;
	return 0;
}

/* Split "HOST:PORT" / "[V6]:PORT" into host (brackets removed) and port. */
static int spec_split_hostport(const char *s, char *host, size_t host_len, const char **port,
			       char *err, size_t err_len)
{
	const char *colon;
	size_t n;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':') {
			snprintf(err, err_len, "'%s': expected [IPV6]:PORT", s);
			return -EINVAL;
		}
		n = close - s - 1;
		colon = close + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			snprintf(err, err_len, "'%s': expected HOST:PORT", s);
			return -EINVAL;
		}
		n = colon - s;
		if (memchr(s, ':', n)) {
			snprintf(err, err_len, "'%s': put an IPv6 address in brackets: [ADDR]:PORT", s);
			return -EINVAL;
		}
	}
	if (n == 0 || n >= host_len) {
		snprintf(err, err_len, "'%s': empty or too long host", s);
		return -EINVAL;
	}
	memcpy(host, s, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

/**
 * svc_endpoint_parse() - HOST:PORT or unix:/path in our own netns
 * @s:		text
 * @ep:		result
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0 or -EINVAL.
 */
int svc_endpoint_parse(const char *s, struct svc_endpoint *ep, char *err, size_t err_len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res = NULL;
	char host[256];
	const char *port_s;
	uint16_t port;
	int ret;

	memset(ep, 0, sizeof(*ep));
	if (!strncmp(s, "unix:", 5)) {
		struct sockaddr_un *sun = (struct sockaddr_un *)&ep->sa;
		const char *path = s + 5;

		if (path[0] != '/') {
			snprintf(err, err_len, "'%s': a unix socket path must be absolute", s);
			return -EINVAL;
		}
		if (strlen(path) >= sizeof(sun->sun_path)) {
			snprintf(err, err_len, "'%s': path longer than %zu bytes", s,
				 sizeof(sun->sun_path) - 1);
			return -EINVAL;
		}
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, path);
		ep->sa_len = offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
		ep->is_unix = true;
		return 0;
	}
	ret = spec_split_hostport(s, host, sizeof(host), &port_s, err, err_len);
	if (ret < 0)
		return ret;
	ret = spec_port(port_s, &port, err, err_len);
	if (ret < 0)
		return ret;
	ret = getaddrinfo(host, NULL, &hints, &res);
	if (ret || !res) {
		snprintf(err, err_len, "'%s': cannot resolve '%s': %s", s, host, gai_strerror(ret));
		return -EINVAL;
	}
	memcpy(&ep->sa, res->ai_addr, res->ai_addrlen);
	ep->sa_len = res->ai_addrlen;
	if (ep->sa.ss_family == AF_INET)
		((struct sockaddr_in *)&ep->sa)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&ep->sa)->sin6_port = htons(port);
	freeaddrinfo(res);
	return 0;
}

static int spec_addr(const char *s, struct net_addr *a, char *err, size_t err_len)
{
	char buf[64];
	size_t n = strlen(s);

	if (s[0] == '[') {
		if (n < 3 || s[n - 1] != ']' || n - 2 >= sizeof(buf)) {
			snprintf(err, err_len, "'%s': expected [IPV6]", s);
			return -EINVAL;
		}
		memcpy(buf, s + 1, n - 2);
		buf[n - 2] = '\0';
		if (net_addr_parse(buf, a) < 0 || a->family != AF_INET6) {
			snprintf(err, err_len, "'%s' is not an IPv6 address", buf);
			return -EINVAL;
		}
		return 0;
	}
	if (net_addr_parse(s, a) < 0 || a->family != AF_INET) {
		snprintf(err, err_len, "'%s' is not an IPv4 address (IPv6 goes in brackets)", s);
		return -EINVAL;
	}
	return 0;
}

/**
 * svc_spec_parse() - parse one --publish or --forward SPEC
 * @text:	the SPEC
 * @kind:	which option it came with
 * @spec:	result
 * @err:	reason on failure ("--publish udp:x=y: port 'x' is not ...")
 * @err_len:	size of @err
 *
 * Return: 0, or -EINVAL for a bad SPEC.
 */
int svc_spec_parse(const char *text, enum svc_kind kind, struct svc_spec *spec, char *err,
		   size_t err_len)
{
	const char *opt = kind == SVC_PUBLISH ? "--publish" : "--forward";
	char buf[256], why[1024];
	char *left, *right, *eq;
	int ret = -EINVAL;

	memset(spec, 0, sizeof(spec[0]));
	spec->kind = kind;
	snprintf(spec->text, sizeof(spec->text), "%s", text);
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, err_len, "%s: SPEC longer than %zu bytes", opt, sizeof(buf) - 1);
		return -EINVAL;
	}
	strcpy(buf, text);
	if (!strncmp(buf, "udp:", 4)) {
		spec->proto = IPPROTO_UDP;
	} else if (!strncmp(buf, "tcp:", 4)) {
		spec->proto = IPPROTO_TCP;
	} else {
		snprintf(err, err_len, "%s %s: expected udp:... or tcp:... (PROTO:%s)", opt, text,
			 kind == SVC_PUBLISH ? "[ADDR:]PORT=TARGET" : "LISTEN=REMOTE");
		return -EINVAL;
	}
	left = buf + 4;
	eq = strchr(left, '=');
	if (!eq || !eq[1]) {
		snprintf(err, err_len, "%s %s: missing '=%s'", opt, text,
			 kind == SVC_PUBLISH ? "TARGET" : "REMOTE");
		return -EINVAL;
	}
	*eq = '\0';
	right = eq + 1;
	why[0] = '\0';
	if (kind == SVC_PUBLISH) {
		char *colon = left[0] == '[' ? strstr(left, "]:") : strrchr(left, ':');

		if (colon) {
			if (left[0] == '[')
				colon++;
			*colon = '\0';
			ret = spec_addr(left, &spec->addr, why, sizeof(why));
			if (!ret)
				ret = spec_port(colon + 1, &spec->port, why, sizeof(why));
		} else {
			ret = spec_port(left, &spec->port, why, sizeof(why));
		}
		if (!ret)
			ret = svc_endpoint_parse(right, &spec->target, why, sizeof(why));
	} else {
		char host[64];
		const char *port_s;

		ret = svc_endpoint_parse(left, &spec->listen, why, sizeof(why));
		if (!ret)
			ret = spec_split_hostport(right, host, sizeof(host), &port_s, why, sizeof(why));
		if (!ret && net_addr_parse(host, &spec->remote) < 0) {
			snprintf(why, sizeof(why), "REMOTE '%s' must be a numeric address", host);
			ret = -EINVAL;
		}
		if (!ret)
			ret = spec_port(port_s, &spec->remote_port, why, sizeof(why));
	}
	if (ret)
		snprintf(err, err_len, "%s %s: %s", opt, text, why);
	return ret;
}

/**
 * svc_listen_open() - bind a forward's local socket (and listen, for TCP)
 * @spec:	a parsed --forward
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Done before privileges are dropped, by the supervisor (supervise.c): the
 * LISTEN socket may be a low port or live in a root-owned folder, and it
 * outlives each datapath, so that a client that connects while a new one
 * starts waits in the backlog instead of being refused.
 *
 * Return: the socket, or negative errno with @err filled.
 */
int svc_listen_open(const struct svc_spec *spec, char *err, size_t err_len)
{
	int type = spec->proto == IPPROTO_TCP ? SOCK_STREAM : SOCK_DGRAM, one = 1, fd, ret;

	fd = socket(spec->listen.sa.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && type == SOCK_STREAM && !spec->listen.is_unix)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (const struct sockaddr *)&spec->listen.sa, spec->listen.sa_len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, SVC_LISTEN_BACKLOG) < 0)) {
		ret = -errno;
		snprintf(err, err_len, "--forward %s: bind the listening socket: %s", spec->text, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

/**
 * svc_listen_close() - close a forward's local listener, and remove its socket file
 * @loop:	the loop @lfd is registered in, or NULL if the service never started
 * @lfd:	the listener's loop registration
 * @fd:		the listening socket, or -1 (a publish has none)
 * @spec:	the service's SPEC
 * @owned:	the service bound it: a unix LISTEN path is unlinked (one the
 *		supervisor bound stays for the next datapath)
 *
 * Shared by the UDP and TCP services, whose local listeners live and die alike.
 */
void svc_listen_close(struct loop *loop, struct loop_fd *lfd, int fd, const struct svc_spec *spec, bool owned)
{
	if (fd < 0)
		return;
	if (loop)
		loop_fd_del(loop, lfd);
	close(fd);
	if (owned && spec->listen.is_unix)
		unlink(((const struct sockaddr_un *)&spec->listen.sa)->sun_path);
}

/**
 * svc_opt() - the option that makes a service of @spec's kind, for messages
 * @spec:	the service's SPEC
 *
 * Return: "--publish" or "--forward"
 */
const char *svc_opt(const struct svc_spec *spec)
{
	return spec->kind == SVC_PUBLISH ? "--publish" : "--forward";
}

/**
 * svc_new_alloc() - the zeroed memory of a new UDP or TCP service
 * @size:	its size
 * @spec:	its SPEC, for the message
 * @listen_fd:	the local listener it was given, closed on failure; or -1
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: the memory, or NULL with @err set and @listen_fd closed.
 */
void *svc_new_alloc(size_t size, const struct svc_spec *spec, int listen_fd, char *err, size_t err_len)
{
	void *s = calloc(1, size);

	if (!s) {
		snprintf(err, err_len, "%s %s: out of memory", svc_opt(spec), spec->text);
		if (listen_fd >= 0)
			close(listen_fd);
	}
	return s;
}

/**
 * svc_listen_check() - refuse a local listener given to a publish
 * @spec:	the new service's SPEC
 * @listen_fd:	the listener it was given, or -1
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, or -EINVAL with @err set.
 */
int svc_listen_check(const struct svc_spec *spec, int listen_fd, char *err, size_t err_len)
{
	if (spec->kind == SVC_PUBLISH && listen_fd >= 0) {
		snprintf(err, err_len, "%s %s: a publish has no local listener", svc_opt(spec), spec->text);
		return -EINVAL;
	}
	return 0;
}

/**
 * svc_listen_ready() - a forward's local listener: the one the supervisor
 * bound, or bound here now (svc_listen_open())
 * @spec:	the forward's SPEC
 * @listen_fd:	the listener, -1 to bind it; receives the one bound
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, or a negative errno with @err set.
 */
int svc_listen_ready(const struct svc_spec *spec, int *listen_fd, char *err, size_t err_len)
{
	if (*listen_fd < 0)
		*listen_fd = svc_listen_open(spec, err, err_len);
	return *listen_fd < 0 ? *listen_fd : 0;
}

/**
 * svc_stats_row() - one row of the services table: the kind, the SPEC and
 * the counters summed over the service's instances
 * @o:		the printer
 * @spec:	the service's SPEC
 * @names:	the counters' keys
 * @sum:	their values
 * @n:		how many
 */
void svc_stats_row(struct out *o, const struct svc_spec *spec, const char *const *names, const uint64_t *sum,
		   unsigned int n)
{
	out_obj_begin(o, NULL);
	out_str(o, "kind", spec->kind == SVC_PUBLISH ? "publish" : "forward");
	out_str(o, "spec", spec->text);
	for (unsigned int i = 0; i < n; i++)
		out_u64(o, names[i], sum[i]);
	out_obj_end(o);
}
