// SPDX-License-Identifier: MIT
/*
 * privdrop.c - give up every privilege for good, before the first packet
 *
 * Theory of operation: the datapath is started as root (netsetup runs it)
 * only so that it can be handed its configuration and bind its sockets (the
 * control socket in /run/sandnet, low ports). Once that is done, privdrop():
 *   1. looks up USER (default nobody) while /etc is still readable;
 *   2. with libcap-ng, clears every capability (effective, permitted,
 *      inheritable), the bounding set and the ambient set, drops the
 *      supplementary groups and changes gid then uid (capng_change_id()
 *      does these in the right order with PR_SET_KEEPCAPS held only across
 *      the change);
 *   3. sets PR_SET_NO_NEW_PRIVS so no exec can ever regain anything;
 *   4. reads the result back and fails if any capability is left or the
 *      ids are not the requested ones.
 * Not root at start (a developer's run): the id change is skipped when USER
 * is the current user, and the capability sets are still cleared.
 * Under a sanitizer build the process is made dumpable again after the uid
 * change: LeakSanitizer reads /proc/self through ptrace rules that a
 * non-dumpable process fails.
 */
#include <cap-ng.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "datapath/proc/proc.h"

#if defined(__SANITIZE_ADDRESS__)
#define PRIVDROP_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PRIVDROP_SANITIZER 1
#endif
#endif

/**
 * privdrop() - become @user with no capability, for good
 * @user:	user name or numeric uid; NULL for "nobody"
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, or negative errno with @err filled (the caller must exit).
 */
int privdrop(const char *user, char *err, size_t err_len)
{
	struct passwd *pw;
	bool setpcap;
	uid_t uid;
	gid_t gid;
	int ret;

	if (!user)
		user = "nobody";
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		char *end;
		unsigned long v = strtoul(user, &end, 10);

		if (*user && !*end) {
			pw = getpwuid((uid_t)v);
			uid = (uid_t)v;
			gid = pw ? pw->pw_gid : (gid_t)v;
		} else {
			snprintf(err, err_len, "--user %s: no such user", user);
			return -ENOENT;
		}
	} else {
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}

	capng_clear(CAPNG_SELECT_ALL);
	/*
	 * Root staying root (datapath metrics under its unit) changes no id:
	 * the unit's empty bounding set leaves it no CAP_SETGID to do so with.
	 */
	if (geteuid() == 0 && (uid != 0 || gid != getgid())) {
		ret = capng_change_id((int)uid, (int)gid,
				      CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING | CAPNG_CLEAR_AMBIENT);
		if (ret) {
			snprintf(err, err_len, "--user %s: changing to uid %u gid %u failed (capng_change_id %d)",
				 user, (unsigned int)uid, (unsigned int)gid, ret);
			return -EPERM;
		}
	} else {
		if (uid != getuid()) {
			snprintf(err, err_len, "--user %s: not root, cannot change to uid %u",
				 user, (unsigned int)uid);
			return -EPERM;
		}
		/*
		 * Root staying root clears its bounding set too, when it may
		 * (CAP_SETPCAP); under a unit whose bounding set is empty already
		 * it may not, and need not.
		 */
		capng_get_caps_process();
		setpcap = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
		capng_clear(CAPNG_SELECT_ALL);
		if (capng_apply(uid == 0 && setpcap ? CAPNG_SELECT_BOTH : CAPNG_SELECT_CAPS) < 0) {
			snprintf(err, err_len, "clearing capabilities failed");
			return -EPERM;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		ret = -errno;
		snprintf(err, err_len, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return ret;
	}
#ifdef PRIVDROP_SANITIZER
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
	/* Verify: nothing left, and the ids are the ones asked for. */
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_get_caps_process() < 0 ||
	    capng_have_capabilities(CAPNG_SELECT_BOTH) != CAPNG_NONE) {
		snprintf(err, err_len, "capabilities are still set after dropping them");
		return -EPERM;
	}
	if (geteuid() != uid || getuid() != uid || getegid() != gid || getgid() != gid) {
		snprintf(err, err_len, "uid/gid are %u/%u, expected %u/%u", (unsigned int)geteuid(),
			 (unsigned int)getegid(), (unsigned int)uid, (unsigned int)gid);
		return -EPERM;
	}
	return 0;
}
