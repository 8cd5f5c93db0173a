/* SPDX-License-Identifier: MIT */
/*
 * uring.h - batches of readv()/writev() on a device in one system call
 * (theory of operation in uring.c)
 */
#ifndef SANDNET_DATAPATH_LINK_URING_H
#define SANDNET_DATAPATH_LINK_URING_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#define LINK_URING_DEPTH	64	/* operations per batch at most */

struct link_uring;

struct link_uring *link_uring_new(const int *fds, unsigned int n_fds, char *err, size_t err_len);
void link_uring_free(struct link_uring *u);
int link_uring_readv(struct link_uring *u, unsigned int file, struct iovec (*iov)[2], unsigned int n,
		     ssize_t *res);
int link_uring_writev(struct link_uring *u, unsigned int file, struct iovec (*iov)[3],
		      const unsigned int *iovcnt, unsigned int n, ssize_t *res);
void link_uring_refuse(const char *why);

#endif /* SANDNET_DATAPATH_LINK_URING_H */
