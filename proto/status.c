// SPDX-License-Identifier: MIT
/*
 * status.c - the supervisor's states and its status file: the one writer
 * and the one reader
 *
 * Theory of operation
 *
 * After the handoff, what netsetup learns of a container's datapath it learns
 * from the status file (STATEFILE.status) whose fd it gave the supervisor
 * with DONE (docs/protocol.md, minor 3). The supervisor (datapath/supervise.c)
 * writes it with proto_status_write(); netsetup (netsetup/orch/dpproc.c: CNI CHECK,
 * `netsetup restart`, run and serve) reads it with proto_status_read(). The
 * format (docs/datapath.md "The status file") is text:
 *
 *   sandnet-datapath-status 1
 *   state serving
 *   supervisor PID / datapath PID / restarts N / deaths N
 *   last_death UNIXMS PID CAUSE	(when deaths is not 0)
 *   reason TEXT			(when dark)
 *   end
 *
 * The writer rewrites the file whole at every change, at offset 0 and cut to
 * its length, "end" last; a reader that sees no "end" (a rewrite in progress),
 * or nothing yet, reads again a few times, 2 ms apart.
 *
 * The reader parses bytes an unprivileged process wrote, as untrusted input:
 * the first line exactly, lines of known shape and bounded length (a longer
 * one, one with a NUL or one cut off without its newline refuses the whole
 * file), numbers in range; a key it does not know is skipped (a newer
 * supervisor's), and so is a state word it does not know but which has the
 * shape of one (PROTO_DP_STATE_MAX). It never trusts the file's size: it
 * reads line by line and stops at "end".
 *
 * The states' names are also what the control socket says (supervisor.state)
 * and the metrics' sandnet_datapath_status labels: one table here for all.
 *
 * What it does not do: keep the file's fd or path (the callers do), or exit.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/status.h"

#define STATUS_MAGIC_LINE	"sandnet-datapath-status 1\n"
#define STATUS_LINE_MAX		768	/* with the newline and the NUL: longer than any line the writer makes */
#define STATUS_READ_TRIES	5

static const char *const proto_dp_state_names[] = {
	[PROTO_DP_STARTING] = "starting",
	[PROTO_DP_SERVING] = "serving",
	[PROTO_DP_RESTARTING] = "restarting",
	[PROTO_DP_DARK] = "dark",
	[PROTO_DP_STOPPED] = "stopped",
};
_Static_assert(sizeof(proto_dp_state_names) / sizeof(proto_dp_state_names[0]) == PROTO_DP_STATE_MAX,
	       "a name for every supervisor state");

/**
 * proto_dp_state_name() - the word for a supervisor's state
 * @state:	enum proto_dp_state
 *
 * Return: "starting", "serving", "restarting", "dark", "stopped" or "unknown"
 */
const char *proto_dp_state_name(unsigned int state)
{
	return state < PROTO_DP_STATE_MAX ? proto_dp_state_names[state] : "unknown";
}

/**
 * proto_dp_state_parse() - the state a word names
 * @name:	"starting", "serving", "restarting", "dark" or "stopped"
 *
 * Return: enum proto_dp_state, or -EINVAL
 */
int proto_dp_state_parse(const char *name)
{
	for (unsigned int i = 0; i < PROTO_DP_STATE_MAX; i++)
		if (!strcmp(name, proto_dp_state_names[i]))
			return (int)i;
	return -EINVAL;
}

/**
 * proto_status_format() - the status file's text
 * @s:		what to say; @s->state must be a known state
 * @buf:	receives the text (not NUL-terminated when it fills @buf)
 * @size:	room in @buf; PROTO_STATUS_MAX_BYTES always suffices
 *
 * Return: its length, -EINVAL for an unknown state, -ENOBUFS when it does
 * not fit.
 */
int proto_status_format(const struct proto_status *s, char *buf, size_t size)
{
	size_t n;
	int len;

	if (s->state >= PROTO_DP_STATE_MAX)
		return -EINVAL;
	len = snprintf(buf, size, STATUS_MAGIC_LINE "state %s\nsupervisor %d\ndatapath %d\nrestarts %u\ndeaths %u\n",
		       proto_dp_state_names[s->state], (int)s->supervisor, (int)s->datapath, s->restarts,
		       s->deaths);
	if (len < 0 || (size_t)len >= size)
		return -ENOBUFS;
	n = (size_t)len;
	if (s->deaths) {
		len = snprintf(buf + n, size - n, "last_death %s\n", s->last_death);
		if (len < 0 || (size_t)len >= size - n)
			return -ENOBUFS;
		n += (size_t)len;
	}
	if (s->state == PROTO_DP_DARK) {
		len = snprintf(buf + n, size - n, "reason %s\n", s->reason);
		if (len < 0 || (size_t)len >= size - n)
			return -ENOBUFS;
		n += (size_t)len;
	}
	len = snprintf(buf + n, size - n, "end\n");
	if (len < 0 || (size_t)len > size - n)
		return -ENOBUFS;
	return (int)(n + (size_t)len);
}

/**
 * proto_status_write() - rewrite the status file whole
 * @fd:		the status file, open for writing (DONE's)
 * @s:		what to say
 *
 * Return: 0, or a negative errno (-EIO for a short write).
 */
int proto_status_write(int fd, const struct proto_status *s)
{
	char buf[PROTO_STATUS_MAX_BYTES];
	ssize_t done;
	int len;

	/* the other lines and the keys take under 200 bytes */
	_Static_assert(sizeof(((struct proto_status *)0)->last_death) +
		       sizeof(((struct proto_status *)0)->reason) + 200 <= PROTO_STATUS_MAX_BYTES,
		       "the longest status file fits");
	len = proto_status_format(s, buf, sizeof(buf));
	if (len < 0)
		return len;
	done = pwrite(fd, buf, (size_t)len, 0);
	if (done < 0)
		return -errno;
	if (done != len)
		return -EIO;
	if (ftruncate(fd, len) < 0)
		return -errno;
	return 0;
}

/*
 * One "KEY VALUE" line into @s (@has_state set by "state"); false for a line
 * that is not one.
 */
static bool status_line(char *line, struct proto_status *s, bool *has_state)
{
	char *val = strchr(line, ' ');
	unsigned int u;
	int i, state;

	if (!val)
		return false;
	*val++ = '\0';
	if (!strcmp(line, "state")) {
		/* a word of a-z that fits a name, known or a newer supervisor's */
		for (i = 0; val[i]; i++)
			if (val[i] < 'a' || val[i] > 'z')
				return false;
		if (i == 0 || i >= 16)
			return false;
		state = proto_dp_state_parse(val);
		s->state = state < 0 ? PROTO_DP_STATE_MAX : (enum proto_dp_state)state;
		*has_state = true;
	} else if (!strcmp(line, "supervisor") || !strcmp(line, "datapath")) {
		if (sscanf(val, "%u", &u) != 1 || u > INT_MAX)
			return false;
		*(line[0] == 's' ? &s->supervisor : &s->datapath) = (pid_t)u;
	} else if (!strcmp(line, "restarts") || !strcmp(line, "deaths")) {
		if (sscanf(val, "%u", &u) != 1)
			return false;
		*(line[0] == 'r' ? &s->restarts : &s->deaths) = u;
	} else if (!strcmp(line, "last_death")) {
		snprintf(s->last_death, sizeof(s->last_death), "%s", val);
	} else if (!strcmp(line, "reason")) {
		snprintf(s->reason, sizeof(s->reason), "%s", val);
	}
	/* a key of a newer supervisor is skipped */
	return true;
}

/**
 * proto_status_parse() - read a status file once
 * @f:		the file, at its start
 * @s:		filled (zeroed first)
 *
 * Return: 0; -EAGAIN when the file is empty or has no "end" or no state yet
 * (a rewrite in progress: read again); -EINVAL when it is not a status file
 * (another first line, a line too long, cut off or not KEY VALUE, a number
 * out of range).
 */
int proto_status_parse(FILE *f, struct proto_status *s)
{
	bool ended = false, has_state = false;
	char line[STATUS_LINE_MAX];

	memset(s, 0, sizeof(*s));
	if (!fgets(line, sizeof(line), f))
		return -EAGAIN;
	if (strcmp(line, STATUS_MAGIC_LINE))
		return -EINVAL;
	while (!ended && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		if (line[n] != '\n')
			return -EINVAL;	/* longer than any line a supervisor writes, a NUL, or cut off */
		line[n] = '\0';
		if (!strcmp(line, "end"))
			ended = true;
		else if (!status_line(line, s, &has_state))
			return -EINVAL;
	}
	return ended && has_state ? 0 : -EAGAIN;
}

/**
 * proto_status_read() - what a datapath's supervisor last wrote
 * @path:	the status file (STATEFILE.status)
 * @s:		filled
 *
 * The supervisor rewrites the file whole, "end" last: a read that sees
 * nothing or no "end" (a rewrite in progress) reads again, a few times.
 *
 * Return: 0; -ENOENT (no status file: a datapath too old to write one, or
 * none started yet) or another errno of opening it, -EAGAIN (nothing whole
 * written), -EINVAL (not a status file).
 */
int proto_status_read(const char *path, struct proto_status *s)
{
	struct timespec tick = { 0, 2 * 1000 * 1000 };
	unsigned int attempt;
	FILE *f;
	int err;

	for (attempt = 0; attempt < STATUS_READ_TRIES; attempt++) {
		f = fopen(path, "re");
		if (!f) {
			err = -errno;
			memset(s, 0, sizeof(*s));
			return err;
		}
		err = proto_status_parse(f, s);
		fclose(f);
		if (err != -EAGAIN)
			return err;
		nanosleep(&tick, NULL);
	}
	return -EAGAIN;
}
