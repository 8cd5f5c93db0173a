/* SPDX-License-Identifier: MIT */
/*
 * limits.h - the resource caps: their options, their shares, and giving
 * them to a stack (limits.c)
 */
#ifndef SANDNET_DATAPATH_LIMITS_H
#define SANDNET_DATAPATH_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "datapath/net/net.h"

int limits_parse(struct stack_limits *lim, const char *opt, const char *val, char *err, size_t err_len);
int limits_apply(struct stack *st, const struct stack_limits *lim);
struct option;
#define LIMITS_OPTIONS_MAX	31	/* the caps' long options the command line has room for */
unsigned int limits_options(struct option *o, unsigned int room);
void limits_usage(FILE *f);
void limits_share(const struct stack_limits *total, unsigned int n, struct stack_limits *share);
int limits_memory_limit(uint64_t *bytes);
bool limits_fit_memory(struct stack_limits *lim, uint64_t mem);

#endif /* SANDNET_DATAPATH_LIMITS_H */
