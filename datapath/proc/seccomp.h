/* SPDX-License-Identifier: MIT */
/*
 * seccomp.h - the datapath's system call allow-list (seccomp.c)
 */
#ifndef SANDNET_DATAPATH_SECCOMP_H
#define SANDNET_DATAPATH_SECCOMP_H

#include <stddef.h>

int dp_seccomp_install(char *err, size_t err_len);

#endif
