/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the datapath's one event loop: epoll for fds, a timer wheel for time
 * and a short list of precise timers
 * (theory of operation in loop.c)
 */
#ifndef SANDNET_DATAPATH_LOOP_H
#define SANDNET_DATAPATH_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct loop_fd;
struct loop_timer;

typedef void (*loop_fd_fn)(struct loop_fd *h, uint32_t events);
typedef void (*loop_timer_fn)(struct loop_timer *t);
typedef void (*loop_turn_fn)(void *ctx);

/**
 * struct loop_fd - an fd watched by the loop; embedded in its owner
 * @fd:		the descriptor
 * @events:	EPOLL* mask currently registered
 * @fn:		called with the ready events
 * @ctx:	owner's pointer
 */
struct loop_fd {
	int fd;
	uint32_t events;
	loop_fd_fn fn;
	void *ctx;
};

/**
 * struct loop_timer - a one-shot timer; embedded in its owner, re-armed by it
 * @next:	slot chain
 * @pprev:	slot chain back pointer; NULL when not armed
 * @expires_ms:	loop time at which @fn runs
 * @expires_us:	the same to the microsecond (a precise timer)
 * @precise:	armed with loop_timer_arm_at_us(): off the wheel
 * @fn:		callback
 * @ctx:	owner's pointer
 */
struct loop_timer {
	struct loop_timer *next;
	struct loop_timer **pprev;
	uint64_t expires_ms;
	uint64_t expires_us;
	bool precise;
	loop_timer_fn fn;
	void *ctx;
};

/**
 * struct loop_defer - an object to free once the current turn is over;
 * embedded in its owner
 * @next:	the loop's list
 * @fn:		frees the owner
 */
struct loop_defer {
	struct loop_defer *next;
	void (*fn)(struct loop_defer *d);
};

/* The object a struct loop_defer is embedded in, from a deferred free's @d. */
#define loop_defer_owner(d, type, member) ((type *)((char *)(d) - offsetof(type, member)))

/**
 * struct loop_busy_stats - what busy polling found
 * @polls:	epoll_wait() calls without sleeping
 * @hits:	busy polls that found an event
 * @misses:	busy polls that spent their budget and slept after all
 * @bulk_turns:	turns with events that received too much to poll after them
 */
struct loop_busy_stats {
	uint64_t polls, hits, misses, bulk_turns;
};

struct loop *loop_new(bool fake_clock);
void loop_set_busy_poll(struct loop *l, unsigned int usec);
unsigned int loop_busy_poll_us(const struct loop *l);
void loop_count_rx(struct loop *l, size_t bytes, uint64_t arrived_us);
uint64_t loop_arrived_us(const struct loop *l);
uint64_t loop_realtime_offset_us(const struct loop *l);
struct loop_busy_stats loop_busy_stats(const struct loop *l);
void loop_free(struct loop *l);
int loop_fd_add(struct loop *l, struct loop_fd *h, int fd, uint32_t events,
		loop_fd_fn fn, void *ctx);
int loop_fd_mod(struct loop *l, struct loop_fd *h, uint32_t events);
void loop_fd_del(struct loop *l, struct loop_fd *h);
void loop_timer_init(struct loop_timer *t, loop_timer_fn fn, void *ctx);
void loop_timer_arm(struct loop *l, struct loop_timer *t, uint64_t delay_ms);
void loop_timer_arm_at_us(struct loop *l, struct loop_timer *t, uint64_t when_us);
void loop_timer_cancel(struct loop *l, struct loop_timer *t);
static inline bool loop_timer_armed(const struct loop_timer *t)
{
	return t->pprev != 0;
}
int loop_on_turn_end(struct loop *l, loop_turn_fn fn, void *ctx);
void loop_off_turn_end(struct loop *l, loop_turn_fn fn, void *ctx);
void loop_defer(struct loop *l, struct loop_defer *d, void (*fn)(struct loop_defer *d));
uint64_t loop_now_ms(const struct loop *l);
uint64_t loop_now_us(const struct loop *l);
void loop_advance_ms(struct loop *l, uint64_t ms);
void loop_advance_us(struct loop *l, uint64_t us);
int loop_run_once(struct loop *l, int max_wait_ms);
int loop_run(struct loop *l);
void loop_stop(struct loop *l);
uint64_t loop_turns(const struct loop *l);

#endif /* SANDNET_DATAPATH_LOOP_H */
