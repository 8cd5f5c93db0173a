// SPDX-License-Identifier: MIT
/*
 * steer.c - load the steering program and attach it to the container's TUN
 *	     and to a link's fanout group
 *
 * The program (common/flowhash.c) returns the shard of a packet; the kernel
 * takes it as the TUN queue (TUNSETSTEERINGEBPF) and as the fanout member
 * (PACKET_FANOUT_EBPF through PACKET_FANOUT_DATA) that receives it. Loading
 * needs CAP_BPF or CAP_SYS_ADMIN, which netsetup has and the datapath never
 * gets; the kernel keeps the program for as long as a TUN queue or a fanout
 * socket holds it, so netsetup closes its fd once it is attached.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>

#include "common/flowhash.h"
#include "netsetup/kernel/kernel_int.h"

/* Load again with the verifier's log, whose last line says why; a refusal
 * for want of a capability has none. */
static void steer_explain(union bpf_attr *attr, int err, struct ns_err *e)
{
	size_t size = 1 << 16;
	char *log = calloc(1, size), *last = NULL;
	int fd;

	if (log && err != -EPERM) {
		attr->log_buf = (uintptr_t)log;
		attr->log_size = (uint32_t)size;
		attr->log_level = 1;
		fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, attr, sizeof(*attr));
		if (fd >= 0)
			close(fd);
		while ((last = strrchr(log, '\n')) && last[1] == '\0')
			*last = '\0';
		last = last ? last + 1 : log;
	}
	ns_err_set(e, "steering program: BPF_PROG_LOAD: %s%s%s", strerror(-err),
		   last && *last ? ": " : (err == -EPERM ? " (needs CAP_BPF or CAP_SYS_ADMIN)" : ""),
		   last && *last ? last : "");
	free(log);
}

/**
 * ns_steer_load() - load the steering program for @n_shards shards
 * @seed:	the container's steering secret (given to the datapath too)
 * @n_shards:	2..FLOWHASH_MAX_SHARDS
 * @e:		error message, naming what the kernel refused
 *
 * Return: the program's fd (O_CLOEXEC), or -errno.
 */
int ns_steer_load(uint32_t seed, unsigned int n_shards, struct ns_err *e)
{
	struct bpf_insn insn[FLOWHASH_PROG_MAX];
	union bpf_attr attr;
	int n, fd;

	n = flowhash_prog(insn, FLOWHASH_PROG_MAX, seed, n_shards);
	if (n < 0) {
		ns_err_set(e, "steering program for %u shards: %s", n_shards, strerror(-n));
		return n;
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uintptr_t)insn;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t)"Dual MIT/GPL";
	memcpy(attr.prog_name, "sandnet_steer", sizeof("sandnet_steer"));
	fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0) {
		int err = -errno;

		steer_explain(&attr, err, e);
		return err;
	}
	return fd;
}

/**
 * ns_steer_tun() - make @prog_fd pick the queue of what the container sends
 * @tun_fd:	any queue of the multi-queue TUN
 * @prog_fd:	from ns_steer_load()
 * @e:		error message
 *
 * Return: 0 or -errno.
 */
int ns_steer_tun(int tun_fd, int prog_fd, struct ns_err *e)
{
	if (ioctl(tun_fd, TUNSETSTEERINGEBPF, &prog_fd) < 0) {
		ns_err_set(e, "container face: TUNSETSTEERINGEBPF: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/**
 * ns_steer_fanout() - make @prog_fd pick the member of a fanout group
 * @sock_fd:	a member of a PACKET_FANOUT_EBPF group
 * @prog_fd:	from ns_steer_load()
 * @e:		error message
 *
 * Return: 0 or -errno.
 */
int ns_steer_fanout(int sock_fd, int prog_fd, struct ns_err *e)
{
	if (setsockopt(sock_fd, SOL_PACKET, PACKET_FANOUT_DATA, &prog_fd, sizeof(prog_fd)) < 0) {
		ns_err_set(e, "channel: PACKET_FANOUT_DATA: %s", strerror(errno));
		return -errno;
	}
	return 0;
}
