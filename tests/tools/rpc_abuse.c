// SPDX-License-Identifier: MIT
/*
 * rpc_abuse.c - a misbehaving client of sandnet's unix sockets
 *
 *   rpc_abuse [--stream] SOCKET CASE
 *
 * Theory of operation: connects to SOCKET (SOCK_SEQPACKET, or SOCK_STREAM
 * with --stream: the datapath's control socket), does one bad thing, then
 * reads what the server answers for at most 5 s and prints one line:
 *   "refused: TEXT"  the server answered with a protocol ERROR
 *   "closed"         the server closed the connection (EOF or reset)
 *   "silent"         nothing within 5 s (a STREAM control socket may
 *                    ignore garbage; the caller decides if that is fine)
 *   "accepted: ..."  the server answered ACK or HELLO to the bad request
 * Exit status: 0 refused/closed/silent, 1 accepted, 2 the tool itself
 * failed. The bad things (CASE):
 *   attach-devnull  ATTACH whose netns fd is /dev/null (not a socket, not a ns)
 *   attach-pipe     ... a pipe
 *   attach-inet     ... an AF_INET socket (a socket of the wrong family)
 *   attach-uts      ... /proc/self/ns/uts (a namespace of the wrong type)
 *   attach-nofd     ATTACH without its fd
 *   attach-253      ATTACH with 253 fds (SCM_MAX_FD) instead of one
 *   attach-close    ATTACH with /dev/null, then close without reading
 *   garbage         64 random bytes
 *   garbage-253     64 random bytes with 253 fds attached
 *   short           the first 8 bytes of a valid header, then close
 *   close           connect and close at once
 *   hello-253       (datapath --listen) a valid HELLO with 253 fds attached
 *   hello-close     (datapath --listen) HELLO, then close before the answer
 *   link-devnull    (datapath --listen) handshake, then a LINK whose channel
 *                   fd is /dev/null
 *   link-inet       ... whose channel is an AF_INET UDP socket
 *   link-253        ... a LINK saying CHANNELS 1 with 253 fds attached
 * Every fd the tool passes is opened here and closed after sending, so the
 * server holds the only copy: a leak there shows in /proc/PID/fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/proto.h"

#define RA_MAX_FDS	253

static int ra_fds[RA_MAX_FDS];
static unsigned int ra_nfds;
static uint8_t ra_buf[PROTO_MSG_MAX_BYTES];

static int ra_die(const char *what)
{
	fprintf(stderr, "rpc_abuse: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void ra_add_fd(int fd)
{
	if (fd < 0)
		ra_die("opening an fd to pass");
	ra_fds[ra_nfds++] = fd;
}

static void ra_add_devnull(unsigned int n)
{
	while (n--)
		ra_add_fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
}

/* Send @len bytes with the fds collected so far, then close our copies. */
static void ra_send(int sock, const void *buf, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int) * RA_MAX_FDS)];
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	if (ra_nfds) {
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * ra_nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * ra_nfds);
		memcpy(CMSG_DATA(c), ra_fds, sizeof(int) * ra_nfds);
	}
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
		ra_die("sendmsg");
	while (ra_nfds)
		close(ra_fds[--ra_nfds]);
}

static void ra_send_msg(int sock, const struct proto_msg *m)
{
	int len = proto_encode(m, ra_buf, sizeof(ra_buf));

	if (len < 0) {
		errno = -len;
		ra_die("proto_encode");
	}
	ra_send(sock, ra_buf, (size_t)len);
}

static void ra_attach(int sock)
{
	struct proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_ATTACH;
	m.version = PROTO_VERSION_MAX;
	m.minor = PROTO_VERSION_MINOR;
	m.seq = 1;
	m.attach.netns_fd = -1;
	m.attach.channels = 1;
	ra_send_msg(sock, &m);
}

static void ra_hello(int sock)
{
	struct proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_HELLO;
	m.version = 1;
	m.minor = PROTO_VERSION_MINOR;
	m.seq = 1;
	m.hello.n_versions = 1;
	m.hello.versions[0] = PROTO_VERSION_MAX;
	m.hello.minor = PROTO_VERSION_MINOR;
	snprintf(m.hello.software, sizeof(m.hello.software), "rpc_abuse");
	ra_send_msg(sock, &m);
}

static void ra_link(int sock)
{
	static struct proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_LINK;
	m.version = PROTO_VERSION_MAX;
	m.minor = PROTO_VERSION_MINOR;
	m.seq = 2;
	m.link.ifindex = 2;
	snprintf(m.link.ifname, sizeof(m.link.ifname), "eth0");
	memcpy(m.link.mac, "\x02\x00\x00\x00\x00\x02", 6);
	m.link.mtu = 1500;
	m.link.gso_mode = PROTO_GSO_SW;
	m.link.n_channels = 1;
	m.link.channel_fds[0] = -1;
	ra_send_msg(sock, &m);
}

/* Print what the server did; return the exit status. */
static int ra_answer(int sock)
{
	struct timeval tv = { .tv_sec = 5 };
	struct proto_msg *msg = NULL;
	struct proto_why why = { 0 };
	int ret;

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ret = proto_recv(sock, &msg, &why);
	if (ret == 0 || ret == -ECONNRESET || ret == -EPIPE) {
		puts("closed");
		return 0;
	}
	if (ret == -EAGAIN || ret == -EWOULDBLOCK) {
		puts("silent");
		return 0;
	}
	if (ret < 0) {
		/* Not a protocol message (a control socket's text): the server answered. */
		printf("closed (%s)\n", why.text[0] ? why.text : strerror(-ret));
		return 0;
	}
	if (msg->type == PROTO_MSG_ERROR) {
		printf("refused: %s\n", msg->error.message);
		proto_msg_free(msg);
		return 0;
	}
	printf("accepted: %s\n", proto_msg_type_name(msg->type));
	proto_msg_free(msg);
	return 1;
}

static int ra_handshake(int sock)
{
	struct proto_msg *msg = NULL;
	struct proto_why why = { 0 };
	int ret;

	ra_hello(sock);
	ret = proto_recv(sock, &msg, &why);
	if (ret <= 0 || msg->type != PROTO_MSG_HELLO) {
		fprintf(stderr, "rpc_abuse: no HELLO answer (%d %s)\n", ret, why.text);
		if (ret > 0)
			proto_msg_free(msg);
		exit(2);
	}
	proto_msg_free(msg);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int type = SOCK_SEQPACKET, sock, pfd[2];
	const char *path, *what;
	uint8_t junk[64];

	if (argc > 1 && !strcmp(argv[1], "--stream")) {
		type = SOCK_STREAM;
		argc--;
		argv++;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: rpc_abuse [--stream] SOCKET CASE\n");
		return 2;
	}
	path = argv[1];
	what = argv[2];
	if (strlen(path) >= sizeof(sun.sun_path))
		return 2;
	strcpy(sun.sun_path, path);
	sock = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		ra_die(path);
	srandom(42);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)random();

	if (!strcmp(what, "attach-devnull")) {
		ra_add_devnull(1);
		ra_attach(sock);
	} else if (!strcmp(what, "attach-pipe")) {
		if (pipe2(pfd, O_CLOEXEC) < 0)
			ra_die("pipe");
		ra_add_fd(pfd[0]);
		close(pfd[1]);
		ra_attach(sock);
	} else if (!strcmp(what, "attach-inet")) {
		ra_add_fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
		ra_attach(sock);
	} else if (!strcmp(what, "attach-uts")) {
		ra_add_fd(open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC));
		ra_attach(sock);
	} else if (!strcmp(what, "attach-nofd")) {
		ra_attach(sock);
	} else if (!strcmp(what, "attach-253")) {
		ra_add_fd(open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
		ra_add_devnull(RA_MAX_FDS - 1);
		ra_attach(sock);
	} else if (!strcmp(what, "attach-close")) {
		ra_add_devnull(1);
		ra_attach(sock);
		close(sock);
		puts("closed (by us)");
		return 0;
	} else if (!strcmp(what, "garbage")) {
		ra_send(sock, junk, sizeof(junk));
	} else if (!strcmp(what, "garbage-253")) {
		ra_add_devnull(RA_MAX_FDS);
		ra_send(sock, junk, sizeof(junk));
	} else if (!strcmp(what, "short")) {
		struct proto_hdr h = { .magic = PROTO_MAGIC, .version = 1, .type = PROTO_MSG_HELLO,
				       .length = 64, .seq = 1 };

		ra_send(sock, &h, 8);
		close(sock);
		puts("closed (by us)");
		return 0;
	} else if (!strcmp(what, "close")) {
		close(sock);
		puts("closed (by us)");
		return 0;
	} else if (!strcmp(what, "hello-253")) {
		ra_add_devnull(RA_MAX_FDS);
		ra_hello(sock);
	} else if (!strcmp(what, "hello-close")) {
		ra_hello(sock);
		close(sock);
		puts("closed (by us)");
		return 0;
	} else if (!strcmp(what, "link-devnull")) {
		ra_handshake(sock);
		ra_add_devnull(1);
		ra_link(sock);
	} else if (!strcmp(what, "link-inet")) {
		ra_handshake(sock);
		ra_add_fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
		ra_link(sock);
	} else if (!strcmp(what, "link-253")) {
		ra_handshake(sock);
		ra_add_devnull(RA_MAX_FDS);
		ra_link(sock);
	} else {
		fprintf(stderr, "rpc_abuse: unknown case '%s'\n", what);
		return 2;
	}
	return ra_answer(sock);
}
