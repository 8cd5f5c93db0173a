// SPDX-License-Identifier: MIT
/*
 * privs.c - netsetup gives up what its remaining steps do not need
 *
 * Theory of operation: netsetup starts as root with every capability, but
 * each subcommand needs only a few, and fewer as it goes (the way passt
 * isolates itself in stages). A subcommand calls ns_privs_keep() at each
 * point where its needs shrink, with the set its remaining steps need
 * (NS_PRIVS_* in kernel.h; docs/security.md has the table per
 * subcommand). Each call, with libcap-ng:
 *   1. keeps, in the effective and permitted sets, the requested
 *      capabilities that we still have, and nothing else; the inheritable
 *      and ambient sets are cleared;
 *   2. empties the bounding set, when we may (CAP_SETPCAP; a systemd unit's
 *      CapabilityBoundingSet= may have taken it away already, and then the
 *      unit's bounding set stays);
 *   3. sets PR_SET_NO_NEW_PRIVS: no exec can regain anything;
 *   4. reads the sets back and fails if anything not requested is left.
 * Capabilities only ever shrink, so a later call can never re-add one.
 *
 * The datapath that `run` starts is forked before the first call: it starts
 * with root's full sets and drops them itself (datapath/proc/privdrop.c), so the
 * parent's bounding set and no_new_privs do not reach it. `serve` never
 * executes anything (`netsetup connect`, the client, executes the datapath).
 */
#include <cap-ng.h>
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include "netsetup/kernel/kernel.h"

/**
 * ns_privs_keep() - keep only @keep of our capabilities, for good
 * @keep:	bit (1 << CAP_X) for each capability to keep (NS_PRIVS_*)
 * @stage:	what is left to do, for messages: "run: waiting for the datapath"
 * @e:		error message
 *
 * Return: 0, or -EPERM when the sets could not be changed or something not
 * in @keep is left afterwards.
 */
int ns_privs_keep(uint64_t keep, const char *stage, struct ns_err *e)
{
	uint64_t have = 0;
	unsigned int cap;
	bool setpcap;
	int ret;

	capng_clear(CAPNG_SELECT_ALL);
	if (capng_get_caps_process() < 0) {
		ns_err_set(e, "%s: cannot read our capabilities", stage);
		return -EPERM;
	}
	for (cap = 0; cap < 64 && cap <= CAP_LAST_CAP; cap++) {
		if (capng_have_capability(CAPNG_PERMITTED, cap))
			have |= 1ULL << cap;
	}
	setpcap = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	keep &= have;

	capng_clear(CAPNG_SELECT_ALL);
	for (cap = 0; cap < 64 && cap <= CAP_LAST_CAP; cap++) {
		if ((keep & (1ULL << cap)) &&
		    capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, cap) < 0) {
			ns_err_set(e, "%s: capng_update(%u) failed", stage, cap);
			return -EPERM;
		}
	}
	/* The bounding set first: dropping from it needs CAP_SETPCAP, which the capset below removes. */
	if (setpcap) {
		ret = capng_apply(CAPNG_SELECT_BOUNDS);
		if (ret < 0) {
			ns_err_set(e, "%s: emptying the capability bounding set failed (capng_apply %d)",
				   stage, ret);
			return -EPERM;
		}
	}
	ret = capng_apply(CAPNG_SELECT_CAPS);
	if (ret < 0) {
		ns_err_set(e, "%s: dropping capabilities failed (capng_apply %d)", stage, ret);
		return -EPERM;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
		ns_err_set(e, "%s: clearing the ambient capabilities: %s", stage, strerror(errno));
		return -EPERM;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		ns_err_set(e, "%s: PR_SET_NO_NEW_PRIVS: %s", stage, strerror(errno));
		return -EPERM;
	}

	/* Verify: nothing beyond @keep in any set. */
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_get_caps_process() < 0) {
		ns_err_set(e, "%s: cannot read our capabilities back", stage);
		return -EPERM;
	}
	for (cap = 0; cap < 64 && cap <= CAP_LAST_CAP; cap++) {
		bool kept = keep & (1ULL << cap);

		if ((!kept && (capng_have_capability(CAPNG_EFFECTIVE, cap) ||
			       capng_have_capability(CAPNG_PERMITTED, cap))) ||
		    capng_have_capability(CAPNG_INHERITABLE, cap) ||
		    (setpcap && capng_have_capability(CAPNG_BOUNDING_SET, cap))) {
			ns_err_set(e, "%s: capability %s is still set after dropping it", stage,
				   capng_capability_to_name(cap) ? capng_capability_to_name(cap) : "?");
			return -EPERM;
		}
	}
	return 0;
}
