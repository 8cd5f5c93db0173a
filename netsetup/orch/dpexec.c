// SPDX-License-Identifier: MIT
/*
 * dpexec.c - find the datapath program before starting it
 *
 * Theory of operation: runtimes start netsetup with a PATH of their own
 * (podman's CNI plugins and OCI hooks get /usr/sbin:/usr/bin:/sbin:/bin), so
 * a datapath installed under another PREFIX is not in it, and an execvp()
 * failing in the forked child only ever said "exited with status 127". A
 * bare name (no '/') is therefore looked up first next to netsetup's own
 * binary (/proc/self/exe: the build tree puts both in one folder, `make
 * install` puts netsetup in PREFIX/sbin and the datapath in PREFIX/bin), then
 * in PATH; a name with a '/' is used as it is. Either way the result must be
 * an executable regular file, and a failure names what was tried and how to
 * fix it (@hint: the CNI configuration's "datapath", the hook's --datapath).
 * The caller then execv()s the path found, and reports an exec failure that
 * still happens (ENOEXEC, a file removed in between) through a close-on-exec
 * pipe (attach.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "netsetup/orch/orch.h"

/* 0 when @path is an executable regular file, else a negative errno. */
static int executable(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EACCES;
	return access(path, X_OK) < 0 ? -errno : 0;
}

/* Try DIR/NAME (DIR is @dir_len bytes of @dir); on success the result is in @path. */
static bool try_in(const char *dir, size_t dir_len, const char *name, char *path, size_t size)
{
	int n = snprintf(path, size, "%.*s/%s", (int)dir_len, dir, name);

	return n > 0 && (size_t)n < size && executable(path) == 0;
}

/**
 * ns_datapath_find() - the file to execute for the datapath @name
 * @name:	"datapath", or a path
 * @hint:	how the user sets the datapath, for the message; NULL: none
 * @path:	receives the file
 * @size:	size of @path
 * @e:		what failed, in words
 *
 * Return: 0, or a negative errno: -ENOENT when a bare name is found nowhere.
 */
int ns_datapath_find(const char *name, const char *hint, char *path, size_t size, struct ns_err *e)
{
	const char *sep = hint ? "; " : "", *env_path, *p, *colon;
	char self[PATH_MAX], bin[PATH_MAX];
	char *slash;
	ssize_t n;
	int err;

	if (!name || !name[0]) {
		ns_err_set(e, "the datapath's name is empty%s%s", sep, hint ? hint : "");
		return -EINVAL;
	}
	if (strchr(name, '/')) {
		err = strlen(name) < size ? executable(name) : -ENAMETOOLONG;
		if (err) {
			ns_err_set(e, "cannot execute %s: %s%s%s", name, strerror(-err), sep, hint ? hint : "");
			return err;
		}
		strcpy(path, name);
		return 0;
	}

	/* NETSETUP_DIR/NAME, then NETSETUP_DIR/../bin/NAME */
	self[0] = bin[0] = 0;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	slash = strrchr(self, '/');
	if (slash) {
		*slash = 0;
		if (try_in(self, strlen(self), name, path, size))
			return 0;
		slash = strrchr(self, '/');
		if (slash) {
			snprintf(bin, sizeof(bin), "%.*s/bin", (int)(slash - self), self);
			if (try_in(bin, strlen(bin), name, path, size))
				return 0;
		}
	}

	env_path = getenv("PATH");
	for (p = env_path; p; p = colon ? colon + 1 : NULL) {
		size_t len;

		colon = strchr(p, ':');
		len = colon ? (size_t)(colon - p) : strlen(p);
		/* An empty entry is the current folder, as execvp() has it. */
		if (len ? try_in(p, len, name, path, size) : try_in(".", 1, name, path, size))
			return 0;
	}
	if (!env_path)
		env_path = "unset";
	ns_err_set(e, "cannot execute %s: not found next to netsetup (%s%s%s) nor in PATH (%.120s%s)%s%s", name,
		   self[0] ? self : "?", bin[0] ? ", " : "", bin, env_path, strlen(env_path) > 120 ? "..." : "",
		   sep, hint ? hint : "");
	return -ENOENT;
}
