// SPDX-License-Identifier: MIT
/*
 * metrics_scrape.c - every datapath's summary of a folder, for the exporter
 *
 * Theory of operation: control_ask_dir() asks every control socket of the
 * folder for "summary json\n" at once, with one deadline (control_ask.c, as
 * `datapath stats --all` asks); here each answer becomes a target: its
 * summary parsed as a JSON object, or the reason there is none, which the
 * exposition turns into sandnet_datapath_up 0 and a count in
 * sandnet_scrape_errors_total (metrics_expo.c).
 *
 * The datapath's pid comes from SO_PEERCRED on the connection (the kernel
 * gives it in our pid namespace, 0 when it is not visible there), not from
 * the summary, which holds the pid in the datapath's own namespace; it is
 * used for the CPU time and resident memory in /proc/PID/stat. For a
 * datapath that does not answer, the container's name is read from the
 * state file next to its socket ("owner NAME", written by netsetup), so
 * that sandnet_datapath_up{container=...} 0 still names it.
 *
 * What this does NOT do: keep any state between scrapes (the exporter's
 * own counters are metrics.c's), or follow a socket outside the folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datapath/obs/control_ask.h"
#include "datapath/obs/control_proto.h"
#include "datapath/obs/metrics_scrape.h"

/* Why not, in words. */
static void __attribute__((format(printf, 3, 4)))
metrics_fail(struct metrics_target *t, enum control_ask_err err, const char *fmt, ...)
{
	va_list ap;

	t->err = err;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
}

/* The answer as a JSON object, or why not. */
static void metrics_parse(struct metrics_target *t, const struct control_reply *r)
{
	json_error_t jerr;
	const char *name;

	if (t->err != CONTROL_ASK_OK)
		return;
	t->summary = json_loadb(r->text, r->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!t->summary || !json_is_object(t->summary)) {
		char what[sizeof(jerr.text) + 48];

		snprintf(what, sizeof(what), "line %d column %d: %s", jerr.line, jerr.column,
			 t->summary ? "not a JSON object" : jerr.text);
		json_decref(t->summary);
		t->summary = NULL;
		metrics_fail(t, CONTROL_ASK_ERR_MALFORMED, "not a summary: %s", what);
		return;
	}
	name = json_string_value(json_object_get(t->summary, "name"));
	if (name && name[0])
		snprintf(t->name, sizeof(t->name), "%.*s", METRICS_NAME_MAX - 1, name);
}

/* For a datapath that did not answer: "owner NAME" of the state file next to its socket. */
static void metrics_owner(const char *dir, struct metrics_target *t)
{
	char path[PATH_MAX], line[METRICS_NAME_MAX + 16];
	size_t len = strlen(t->sock) - 4;	/* without ".ctl" */
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%.*s", dir, (int)len, t->sock) >= (int)sizeof(path))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "owner ", 6))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (line[6])
			snprintf(t->name, sizeof(t->name), "%s", line + 6);
		break;
	}
	fclose(f);
}

/**
 * metrics_proc_stat() - a process's CPU time and resident memory
 * @pid:	the process
 * @cpu_seconds: user + system time
 * @rss_bytes:	resident set size
 *
 * From /proc/PID/stat (fields 14, 15 and 24; the command name in field 2
 * may hold spaces and parentheses, so fields are counted after the last ')').
 *
 * Return: 0 or negative errno.
 */
int metrics_proc_stat(pid_t pid, double *cpu_seconds, uint64_t *rss_bytes)
{
	unsigned long long utime = 0, stime = 0;
	long long rss = 0;
	char path[64], buf[1024], *p;
	int fd, field;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	/* p + 2 is field 3 (state) */
	for (field = 3, p += 2; *p && field <= 24; field++) {
		if (field == 14)
			utime = strtoull(p, NULL, 10);
		else if (field == 15)
			stime = strtoull(p, NULL, 10);
		else if (field == 24)
			rss = strtoll(p, NULL, 10);
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
	}
	if (field <= 24)
		return -EIO;
	*cpu_seconds = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
	*rss_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
	return 0;
}

/**
 * metrics_scrape_dir() - ask every datapath whose control socket is in @dir
 * @dir:	the folder (/run/sandnet)
 * @timeout_ms:	how long the datapaths asked at once may take in all
 * @s:		filled: one target per socket, each with its summary or why not;
 *		free with metrics_scrape_free()
 *
 * A folder that does not exist has no datapath (not an error); one that
 * cannot be read sets @s->folder_err.
 *
 * Return: 0, or negative errno when @dir cannot be read or memory ran out.
 */
int metrics_scrape_dir(const char *dir, unsigned int timeout_ms, struct metrics_scrape *s)
{
	struct control_replies a;
	unsigned int i;
	int err;

	memset(s, 0, sizeof(*s));
	err = control_ask_dir(dir, CONTROL_REQ_SUMMARY_JSON, timeout_ms, &a);
	s->folder_err = a.folder_err;
	snprintf(s->why, sizeof(s->why), "%s", a.why);
	if (err) {
		control_replies_free(&a);
		return err;
	}
	s->targets = a.n ? calloc(a.n, sizeof(*s->targets)) : NULL;
	if (a.n && !s->targets) {
		control_replies_free(&a);
		return -ENOMEM;
	}
	for (i = 0; i < a.n; i++) {
		struct metrics_target *t = &s->targets[i];
		const struct control_reply *r = &a.r[i];

		snprintf(t->sock, sizeof(t->sock), "%s", r->sock);
		t->pid = r->pid;
		t->err = r->err;
		snprintf(t->why, sizeof(t->why), "%s", r->why);
		metrics_parse(t, r);
		if (!t->summary)
			metrics_owner(dir, t);
		if (t->pid > 0 && metrics_proc_stat(t->pid, &t->cpu_seconds, &t->rss_bytes) == 0)
			t->have_proc = true;
	}
	s->n = a.n;
	control_replies_free(&a);
	return 0;
}

/**
 * metrics_scrape_free() - release what metrics_scrape_dir() filled
 * @s:	the scrape
 */
void metrics_scrape_free(struct metrics_scrape *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		json_decref(s->targets[i].summary);
	free(s->targets);
	memset(s, 0, sizeof(*s));
}
