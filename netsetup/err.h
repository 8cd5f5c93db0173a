/* SPDX-License-Identifier: MIT */
/*
 * err.h - what every area of netsetup shares: the error message
 *
 * netsetup is three areas, each a folder with its own header (docs/architecture.md):
 * kernel/ talks to the kernel, orch/ joins those steps to a datapath,
 * front/ holds the front ends that a user, a runtime or systemd calls. A
 * folder includes its own header and those of the areas below it, never one
 * above: front/ -> orch/ -> kernel/. This header is below them all.
 *
 * Every function returns 0 (or a count) on success or a negative errno, and
 * writes what went wrong, in words, to the struct ns_err it was given, so
 * that main() prints one message a user can act on (err.c).
 */
#ifndef SANDNET_NETSETUP_ERR_H
#define SANDNET_NETSETUP_ERR_H

#include <stdbool.h>

#define NS_ERR_MAX		512

/**
 * struct ns_err - the message main() prints when a step fails
 * @text:	"netns /run/netns/x: not a network namespace file"
 * @usage:	the command line was malformed (exit status 2, not 1)
 */
struct ns_err {
	char text[NS_ERR_MAX];
	bool usage;
};

void ns_err_set(struct ns_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ns_err_usage(struct ns_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* SANDNET_NETSETUP_ERR_H */
