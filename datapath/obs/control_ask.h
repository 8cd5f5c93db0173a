/* SPDX-License-Identifier: MIT */
/*
 * control_ask.h - ask every datapath of a folder at once (control_ask.c):
 * what `datapath stats --all` and `datapath metrics` both do
 */
#ifndef SANDNET_DATAPATH_CONTROL_ASK_H
#define SANDNET_DATAPATH_CONTROL_ASK_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTROL_ASK_MAX_SOCKETS	4096		/* control sockets read at once */
#define CONTROL_ASK_MAX_BYTES	(1 << 20)	/* one datapath's answer */

/* Why a datapath gave no answer, or a folder was not read (the exporter's reason labels). */
#define CONTROL_ASK_ERR_LIST(X)	\
	X(UNREACHABLE)		\
	X(TIMEOUT)		\
	X(MALFORMED)		\
	X(BUSY)			\
	X(FOLDER)		\
	X(TOO_MANY)

#define CONTROL_ASK_X_ENUM(name) CONTROL_ASK_ERR_##name,
enum control_ask_err {
	CONTROL_ASK_OK = -1,
	CONTROL_ASK_ERR_LIST(CONTROL_ASK_X_ENUM)
	CONTROL_ASK_ERR_MAX
};

const char *control_ask_err_name(enum control_ask_err e);
int control_sockets_list(const char *dir, char ***names);
void control_sockets_free(char **names, int n);

/**
 * struct control_reply - one datapath's answer, or why there is none
 * @sock:	its control socket, relative to the folder ("x.state.ctl",
 *		"units/y.ctl")
 * @pid:	the datapath's pid in our pid namespace (SO_PEERCRED), 0 when
 *		it is not visible there or never connected
 * @text, @len:	the answer, NUL-terminated (malloc'd), when @err is OK
 * @err, @why:	CONTROL_ASK_OK, or the reason and its words
 * @fd:		the connection while asking, else -1
 */
struct control_reply {
	char sock[NAME_MAX + 1];
	pid_t pid;
	char *text;
	size_t len;
	enum control_ask_err err;
	char why[160];
	int fd;
};

/**
 * struct control_replies - every datapath of a folder
 * @r, @n:		one reply per control socket, in name order
 * @folder_err, @why:	CONTROL_ASK_OK, or why the folder was not (all) read
 */
struct control_replies {
	struct control_reply *r;
	unsigned int n;
	enum control_ask_err folder_err;
	char why[PATH_MAX + 64];
};

int control_ask_dir(const char *dir, const char *req, unsigned int timeout_ms, struct control_replies *a);
unsigned int control_ask_again(const char *dir, const char *req, unsigned int timeout_ms,
			       struct control_replies *a);
void control_replies_free(struct control_replies *a);
uint64_t control_now_ms(void);

#endif /* SANDNET_DATAPATH_CONTROL_ASK_H */
