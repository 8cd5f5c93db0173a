// SPDX-License-Identifier: MIT
/*
 * loop.c - epoll and a hashed timer wheel, the only place the datapath waits
 *
 * Theory of operation
 *
 * One turn of the loop: wait in epoll_wait() until an fd is ready or the
 * earliest timer is due, call the handler of each ready fd, run every expired
 * timer, then call the turn-end hooks and the deferred frees. The stack
 * registers the hook that flushes every link (stack_turn_end()), so
 * everything a turn produced (replies to a whole receive batch) leaves in
 * one sendmmsg per link.
 *
 * Timers sit in a wheel of LOOP_WHEEL_SLOTS slots of LOOP_TICK_MS each, slot
 * chosen by expiry tick modulo the wheel size. A timer further away than one
 * revolution stays in its slot and is skipped until its expiry has come:
 * every timer is checked against the clock, never assumed due by position.
 * Arming and cancelling are O(1). Timers are one-shot; owners re-arm.
 *
 * Deferred frees: an object that an fd event or a callback still on the
 * stack may name (a service pair closed by a callback, a UDP flow recycled
 * while its socket has an event in the same batch) is unlinked at once
 * and handed to loop_defer(); the loop frees it after the turn-end hooks,
 * when nothing of the turn can reach it any more. One facility for every
 * owner.
 *
 * Busy polling (loop_set_busy_poll()): after a turn that handled an fd, the
 * next wait first polls epoll without sleeping for up to the budget. A
 * request/response turn through the container face is four wakeups of the
 * datapath in a row; on a guest each costs more than the whole poll, and an
 * answer that comes within the budget saves one (TCP_RR 1.3-1.5x here). A
 * poll that finds nothing makes the wakeups after it skip polling: none
 * after the first miss in a row, then 1, 2, 4, ... up to
 * LOOP_BUSY_BACKOFF_MAX, so that traffic whose gaps are just above the
 * budget does not pay it at every packet; a poll that finds work ends the
 * backoff. A turn that received more than LOOP_BUSY_BULK_BYTES (the links
 * report what they read, loop_count_rx()) is a bulk transfer's: its next
 * frame comes on its own, and a poll would hit every time, but only after
 * spinning on CPU that the sender and the receiver, on the same few CPUs,
 * needed (one stream 0.88x of no polling, 1.4x the CPU per byte). No poll
 * follows it, nor the LOOP_BUSY_BULK_SKIP wakeups after it; a
 * request/response turn moves a few hundred bytes and is not affected.
 * Between polls that find nothing the loop yields its CPU (sched_yield()):
 * on a machine with few CPUs the thread that would run there is often the
 * one the datapath just delivered to (the container's receiver), and it
 * runs at once instead of after the budget. With no thread waiting the
 * call returns at once. At 1 Gbit/s of UDP into the container the
 * receiver's socket lost about half as many datagrams (docs/benchmarks.md).
 * A loop with a fake clock never polls.
 *
 * Precise timers (loop_timer_arm_at_us()) are for the few deadlines that a
 * 10 ms tick would spoil: the TCP engines' one timer each (pacing, RACK's
 * reordering window, the tail loss probe: fractions of a round trip that
 * may be far below a millisecond). They sit outside the wheel in one list
 * sorted by expiry, a handful per loop, and the wait ends at the earliest
 * of them to the microsecond (epoll_pwait2()).
 *
 * Time is CLOCK_MONOTONIC in microseconds, read when the wait ends, again
 * before each further fd handler of the turn and every LOOP_CLOCK_FRAMES
 * frames received (loop_now_us(); loop_now_ms() is the same instant in
 * milliseconds): a turn can last milliseconds (a
 * big batch, a datapath at nice 10 that the scheduler set aside), and a TCP
 * engine that stamped an ACK with the turn's start would measure RTTs
 * shorter than the path's (25 ms on a 40 ms path, before). A
 * loop made with a fake clock never reads it: tests move time with
 * loop_advance_ms() or loop_advance_us(), which also run the timers that
 * came due, so timer-driven behaviour (ARP retries, reassembly timeouts) is
 * tested deterministically. They run a turn at every wheel timer's tick and
 * every precise timer's expiry and skip the time in between in one step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "datapath/loop.h"

#define LOOP_TICK_MS		10
#define LOOP_WHEEL_SLOTS	512
#define LOOP_MAX_EVENTS		64
#define LOOP_MAX_HOOKS		16
#define LOOP_BUSY_BACKOFF_MAX	64	/* wakeups without a poll after misses, at most */
#define LOOP_BUSY_BULK_BYTES	16384	/* received in a turn: bulk, no poll after it */
#define LOOP_BUSY_BULK_SKIP	4	/* ... nor after as many wakeups */
#define LOOP_WAIT_MAX_US	60000000	/* the longest sleep (nothing armed: forever) */
#define LOOP_CLOCK_FRAMES	16	/* frames received between two readings of the clock */

struct loop_hook {
	loop_turn_fn fn;
	void *ctx;
};

struct loop {
	int epfd;
	bool fake_clock;
	bool stop;
	uint64_t now_us;
	uint64_t now_ms;		/* now_us / 1000 */
	uint64_t done_tick;		/* every slot up to this tick was run */
	unsigned int n_timers;		/* on the wheel */
	unsigned int n_precise;		/* on the precise list */
	uint64_t turns;
	struct loop_timer *wheel[LOOP_WHEEL_SLOTS];
	struct loop_timer *precise;	/* sorted by expires_us */
	unsigned int n_hooks;
	struct loop_hook hooks[LOOP_MAX_HOOKS];
	struct loop_defer *deferred;
	uint64_t busy_ns;		/* budget of a busy poll, 0: none */
	bool busy_armed;		/* the last turn handled an fd, and no bulk */
	size_t turn_rx_bytes;		/* received this turn (loop_count_rx()) */
	uint64_t arrived_us;		/* when the frame in hand arrived (loop_count_rx()) */
	unsigned int rx_frames_since_clock;
	unsigned int busy_skip;		/* wakeups left without a poll */
	unsigned int busy_backoff;	/* the next miss's skip */
	struct loop_busy_stats busy;
};

static uint64_t loop_clock_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void loop_set_now(struct loop *l, uint64_t now_us)
{
	l->now_us = now_us;
	l->now_ms = now_us / 1000;
}

/**
 * loop_new() - an empty loop
 * @fake_clock:	time starts at 0 and moves only with loop_advance_ms()
 *
 * Return: the loop, or NULL with errno set.
 */
struct loop *loop_new(bool fake_clock)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		free(l);
		return NULL;
	}
	l->fake_clock = fake_clock;
	loop_set_now(l, fake_clock ? 0 : loop_clock_us());
	l->done_tick = l->now_ms / LOOP_TICK_MS;
	return l;
}

static void loop_run_deferred(struct loop *l)
{
	while (l->deferred) {
		struct loop_defer *d = l->deferred;

		l->deferred = d->next;
		d->fn(d);
	}
}

/**
 * loop_defer() - free an object once the current turn is over
 * @l:		loop
 * @d:		embedded in the object, which is already unlinked from its owner
 * @fn:		frees it
 */
void loop_defer(struct loop *l, struct loop_defer *d, void (*fn)(struct loop_defer *d))
{
	d->fn = fn;
	d->next = l->deferred;
	l->deferred = d;
}

/**
 * loop_free() - free what is deferred, close the epoll fd; owners removed
 * their fds and timers
 * @l:	loop or NULL
 */
void loop_free(struct loop *l)
{
	if (!l)
		return;
	loop_run_deferred(l);
	close(l->epfd);
	free(l);
}

/**
 * loop_fd_add() - watch @fd for @events
 * @l:		loop
 * @h:		handle embedded in the owner; lives until loop_fd_del()
 * @fd:		descriptor
 * @events:	EPOLLIN, EPOLLOUT, ...
 * @fn:		handler
 * @ctx:	owner's pointer, in @h->ctx
 *
 * Return: 0 or negative errno from epoll_ctl().
 */
int loop_fd_add(struct loop *l, struct loop_fd *h, int fd, uint32_t events,
		loop_fd_fn fn, void *ctx)
{
	struct epoll_event ev = { .events = events, .data.ptr = h };

	h->fd = fd;
	h->events = events;
	h->fn = fn;
	h->ctx = ctx;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

/**
 * loop_fd_mod() - change the events watched (e.g. add EPOLLOUT on EAGAIN)
 * Return: 0 or negative errno.
 */
int loop_fd_mod(struct loop *l, struct loop_fd *h, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = h };

	if (h->events == events)
		return 0;
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, h->fd, &ev) < 0)
		return -errno;
	h->events = events;
	return 0;
}

/**
 * loop_fd_del() - stop watching; the caller closes the fd
 */
void loop_fd_del(struct loop *l, struct loop_fd *h)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, h->fd, NULL);
	h->events = 0;
}

/**
 * loop_timer_init() - prepare an unarmed timer
 */
void loop_timer_init(struct loop_timer *t, loop_timer_fn fn, void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->ctx = ctx;
}

/**
 * loop_timer_cancel() - disarm; harmless on an unarmed timer
 */
void loop_timer_cancel(struct loop *l, struct loop_timer *t)
{
	if (!t->pprev)
		return;
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->next = NULL;
	t->pprev = NULL;
	if (t->precise)
		l->n_precise--;
	else
		l->n_timers--;
}

/**
 * loop_timer_arm() - run @t->fn once, @delay_ms from now (re-arms if armed)
 *
 * The timer runs at the first wheel tick (LOOP_TICK_MS) at or after its
 * time.
 */
void loop_timer_arm(struct loop *l, struct loop_timer *t, uint64_t delay_ms)
{
	uint64_t tick;
	struct loop_timer **slot;

	loop_timer_cancel(l, t);
	t->precise = false;
	t->expires_ms = l->now_ms + delay_ms;
	tick = (t->expires_ms + LOOP_TICK_MS - 1) / LOOP_TICK_MS;
	if (tick <= l->done_tick)
		tick = l->done_tick + 1;
	slot = &l->wheel[tick % LOOP_WHEEL_SLOTS];
	t->next = *slot;
	if (t->next)
		t->next->pprev = &t->next;
	t->pprev = slot;
	*slot = t;
	l->n_timers++;
}

/**
 * loop_timer_arm_at_us() - run @t->fn once at @when_us, to the microsecond
 * @l:		loop
 * @t:		the timer (re-armed if armed, on the wheel or here)
 * @when_us:	loop time (loop_now_us()); in the past: the next turn
 *
 * For the few timers whose precision matters (top comment): each costs a
 * walk of the sorted list.
 */
void loop_timer_arm_at_us(struct loop *l, struct loop_timer *t, uint64_t when_us)
{
	struct loop_timer **pp = &l->precise;

	loop_timer_cancel(l, t);
	t->precise = true;
	t->expires_us = when_us;
	t->expires_ms = when_us / 1000;
	while (*pp && (*pp)->expires_us <= when_us)
		pp = &(*pp)->next;
	t->next = *pp;
	if (t->next)
		t->next->pprev = &t->next;
	t->pprev = pp;
	*pp = t;
	l->n_precise++;
}

/*
 * Run every precise timer that was due when the run began; one that its
 * callback arms again for a time already past runs in the next turn.
 */
static void loop_run_precise(struct loop *l)
{
	unsigned int n = 0;
	struct loop_timer *t;

	for (t = l->precise; t && t->expires_us <= l->now_us; t = t->next)
		n++;
	while (n-- && (t = l->precise) && t->expires_us <= l->now_us) {
		loop_timer_cancel(l, t);
		t->fn(t);
	}
}

/* Run every timer whose slot the clock has passed and whose time has come. */
static void loop_run_timers(struct loop *l)
{
	uint64_t now_tick = l->now_ms / LOOP_TICK_MS;
	uint64_t tick, last = now_tick;

	if (now_tick - l->done_tick > LOOP_WHEEL_SLOTS)
		l->done_tick = now_tick - LOOP_WHEEL_SLOTS;
	for (tick = l->done_tick + 1; tick <= last; tick++) {
		struct loop_timer **slot = &l->wheel[tick % LOOP_WHEEL_SLOTS];
		struct loop_timer *t, *next;

		/* Timers armed from a callback land in a later slot. */
		l->done_tick = tick;
		t = *slot;
		/* A callback may arm timers into this very slot; they carry a
		 * later expiry and stay, because only due timers are taken. */
		while (t) {
			next = t->next;
			if (t->expires_ms <= l->now_ms) {
				loop_timer_cancel(l, t);
				t->fn(t);
				/* the chain may have changed under us: restart */
				next = *slot;
			}
			t = next;
			while (t && t->expires_ms > l->now_ms)
				t = t->next;
		}
	}
	l->done_tick = now_tick;
	loop_run_precise(l);
}

/* Microseconds until the earliest armed timer (a wheel timer: its tick), -1 if none. */
static int64_t loop_next_wait_us(const struct loop *l)
{
	uint64_t best = UINT64_MAX;
	unsigned int i;

	if (l->n_timers) {
		for (i = 1; i <= LOOP_WHEEL_SLOTS; i++) {
			const struct loop_timer *t = l->wheel[(l->done_tick + i) % LOOP_WHEEL_SLOTS];

			for (; t; t = t->next)
				if (t->expires_ms < best)
					best = t->expires_ms;
			if (best != UINT64_MAX && best <= l->now_ms + (uint64_t)i * LOOP_TICK_MS)
				break;
		}
		/* A timer runs when the clock reaches its slot's tick: wait for that. */
		best = (best + LOOP_TICK_MS - 1) / LOOP_TICK_MS * LOOP_TICK_MS * 1000;
	}
	if (l->precise && l->precise->expires_us < best)
		best = l->precise->expires_us;
	if (best == UINT64_MAX)
		return -1;
	if (best <= l->now_us)
		return 0;
	if (best - l->now_us > LOOP_WAIT_MAX_US)
		return LOOP_WAIT_MAX_US;
	return (int64_t)(best - l->now_us);
}

/**
 * loop_on_turn_end() - call @fn(@ctx) at the end of every turn
 * Return: 0, or -ENOSPC when LOOP_MAX_HOOKS are taken.
 */
int loop_on_turn_end(struct loop *l, loop_turn_fn fn, void *ctx)
{
	if (l->n_hooks >= LOOP_MAX_HOOKS)
		return -ENOSPC;
	l->hooks[l->n_hooks].fn = fn;
	l->hooks[l->n_hooks].ctx = ctx;
	l->n_hooks++;
	return 0;
}

/**
 * loop_off_turn_end() - remove a hook added with loop_on_turn_end()
 * @l:		loop
 * @fn:		the hook's function
 * @ctx:	its context; the first hook with both is removed, order kept
 */
void loop_off_turn_end(struct loop *l, loop_turn_fn fn, void *ctx)
{
	unsigned int i;

	for (i = 0; i < l->n_hooks; i++) {
		if (l->hooks[i].fn == fn && l->hooks[i].ctx == ctx) {
			memmove(&l->hooks[i], &l->hooks[i + 1], (l->n_hooks - i - 1) * sizeof(l->hooks[0]));
			l->n_hooks--;
			return;
		}
	}
}

/**
 * loop_now_ms() - the loop's time, read at the start of the turn
 */
uint64_t loop_now_ms(const struct loop *l)
{
	return l->now_ms;
}

/**
 * loop_now_us() - the same instant in microseconds
 */
uint64_t loop_now_us(const struct loop *l)
{
	return l->now_us;
}

/**
 * loop_turns() - how many turns the loop has run (stats)
 */
uint64_t loop_turns(const struct loop *l)
{
	return l->turns;
}

static void loop_turn_end(struct loop *l)
{
	unsigned int i;

	for (i = 0; i < l->n_hooks; i++)
		l->hooks[i].fn(l->hooks[i].ctx);
	loop_run_deferred(l);
}

/**
 * loop_advance_us() - fake clock only: move time and run what came due
 * @l:	loop made with a fake clock
 * @us:	microseconds
 */
void loop_advance_us(struct loop *l, uint64_t us)
{
	uint64_t end = l->now_us + us;

	/*
	 * A turn at each wheel timer's tick and each precise timer's expiry,
	 * in order (timers armed by callbacks then run in order too), and none
	 * in between: time with no timer due passes in one step, as an idle
	 * loop sleeps through it. A wheel timer due now runs at the next tick,
	 * as in a real loop; a precise one a microsecond later.
	 */
	while (l->now_us < end) {
		int64_t next = loop_next_wait_us(l);
		uint64_t step = end - l->now_us;

		if (next >= 0 && (uint64_t)next < step) {
			step = (uint64_t)next;
			if (!step)
				step = l->precise && l->precise->expires_us <= l->now_us ? 1 : LOOP_TICK_MS * 1000;
		}
		if (step > end - l->now_us)
			step = end - l->now_us;
		loop_set_now(l, l->now_us + step);
		loop_run_timers(l);
		loop_turn_end(l);
	}
}

/**
 * loop_advance_ms() - loop_advance_us() in milliseconds
 * @l:	loop made with a fake clock
 * @ms:	milliseconds
 */
void loop_advance_ms(struct loop *l, uint64_t ms)
{
	loop_advance_us(l, ms * 1000);
}

static uint64_t loop_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/**
 * loop_set_busy_poll() - poll for up to @usec before sleeping (top comment)
 * @l:		loop
 * @usec:	the budget, 0 (the default) for none
 */
void loop_set_busy_poll(struct loop *l, unsigned int usec)
{
	l->busy_ns = l->fake_clock ? 0 : (uint64_t)usec * 1000;
}

/**
 * loop_count_rx() - a frame a link read: for busy polling (top comment),
 * and when it arrived
 * @l:		loop
 * @bytes:	its bytes
 * @arrived_us:	when the kernel received it, in loop time, if the link knows
 *		(a receive ring's timestamp); 0: when it was read
 *
 * Every LOOP_CLOCK_FRAMES frames the clock is read again: a handler that
 * drains a full ring takes long enough for the turn's time to go stale.
 */
void loop_count_rx(struct loop *l, size_t bytes, uint64_t arrived_us)
{
	l->turn_rx_bytes += bytes;
	if (++l->rx_frames_since_clock >= LOOP_CLOCK_FRAMES && !l->fake_clock) {
		l->rx_frames_since_clock = 0;
		loop_set_now(l, loop_clock_us());
	}
	l->arrived_us = arrived_us && arrived_us <= l->now_us ? arrived_us : l->now_us;
}

/**
 * loop_arrived_us() - when the frame a link is handing up arrived
 * @l:	loop
 *
 * What the last loop_count_rx() said, never later than now: a datapath that
 * the scheduler set aside reads, all at once, frames that arrived over
 * milliseconds, and what it passes on should leave as spread out as they
 * came.
 */
uint64_t loop_arrived_us(const struct loop *l)
{
	return l->arrived_us ? l->arrived_us : l->now_us;	/* loop_count_rx() kept it <= now */
}

/**
 * loop_realtime_offset_us() - what to subtract from a CLOCK_REALTIME stamp
 * (a receive ring's) to make it loop time; 0 with a fake clock
 * @l:	loop
 */
uint64_t loop_realtime_offset_us(const struct loop *l)
{
	struct timespec rt;
	uint64_t mono;

	if (l->fake_clock)
		return 0;
	mono = loop_clock_us();
	clock_gettime(CLOCK_REALTIME, &rt);
	return (uint64_t)rt.tv_sec * 1000000 + (uint64_t)rt.tv_nsec / 1000 - mono;
}

/** loop_busy_poll_us() - the budget loop_set_busy_poll() gave */
unsigned int loop_busy_poll_us(const struct loop *l)
{
	return (unsigned int)(l->busy_ns / 1000);
}

/** loop_busy_stats() - what busy polling found (stats) */
struct loop_busy_stats loop_busy_stats(const struct loop *l)
{
	return l->busy;
}

/*
 * The busy poll before a wait of @wait_us (-1: none due): events into @evs
 * until one comes, the budget is spent or a timer is due. Return: as
 * epoll_wait().
 */
static int loop_busy_poll(struct loop *l, struct epoll_event *evs, int64_t wait_us)
{
	uint64_t start, end;
	int n;

	if (!l->busy_ns || !l->busy_armed || !wait_us)
		return 0;
	if (l->busy_skip) {
		l->busy_skip--;
		return 0;
	}
	start = loop_clock_ns();
	end = start + l->busy_ns;
	if (wait_us > 0 && end > start + (uint64_t)wait_us * 1000)
		end = start + (uint64_t)wait_us * 1000;
	do {
		l->busy.polls++;
		n = epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, 0);
		if (!n)
			sched_yield();	/* a thread waiting for this CPU runs now (top comment) */
	} while (!n && loop_clock_ns() < end);
	if (n < 0)
		return n;
	if (n) {
		l->busy.hits++;
		l->busy_backoff = 0;
		return n;
	}
	l->busy.misses++;
	l->busy_skip = l->busy_backoff;
	l->busy_backoff = l->busy_backoff ? l->busy_backoff * 2 : 1;
	if (l->busy_backoff > LOOP_BUSY_BACKOFF_MAX)
		l->busy_backoff = LOOP_BUSY_BACKOFF_MAX;
	return 0;
}

/**
 * loop_run_once() - one turn: wait, dispatch fds, run timers, turn-end hooks
 * @l:			loop
 * @max_wait_ms:	upper bound on the wait, -1 for none
 *
 * Return: number of fd events handled, or negative errno from epoll_wait().
 */
int loop_run_once(struct loop *l, int max_wait_ms)
{
	struct epoll_event evs[LOOP_MAX_EVENTS];
	int64_t wait_us = loop_next_wait_us(l);
	int n, i;

	if (max_wait_ms >= 0 && (wait_us < 0 || wait_us > (int64_t)max_wait_ms * 1000))
		wait_us = (int64_t)max_wait_ms * 1000;
	n = loop_busy_poll(l, evs, wait_us);
	if (!n) {
		struct timespec ts = { .tv_sec = wait_us / 1000000, .tv_nsec = wait_us % 1000000 * 1000 };

		/* to the microsecond: a precise timer may be due long before the next millisecond */
		n = epoll_pwait2(l->epfd, evs, LOOP_MAX_EVENTS, wait_us < 0 ? NULL : &ts, NULL);
	}
	if (n < 0 && errno != EINTR)
		return -errno;
	if (n < 0)
		n = 0;
	l->turn_rx_bytes = 0;
	if (!l->fake_clock)
		loop_set_now(l, loop_clock_us());
	l->turns++;
	for (i = 0; i < n; i++) {
		struct loop_fd *h = evs[i].data.ptr;

		/* each handler's packets at their own time (top comment) */
		if (i && !l->fake_clock)
			loop_set_now(l, loop_clock_us());
		h->fn(h, evs[i].events);
	}
	loop_run_timers(l);
	loop_turn_end(l);
	l->busy_armed = n > 0;
	if (n > 0 && l->turn_rx_bytes > LOOP_BUSY_BULK_BYTES) {
		l->busy.bulk_turns++;
		if (l->busy_skip < LOOP_BUSY_BULK_SKIP)
			l->busy_skip = LOOP_BUSY_BULK_SKIP;
	}
	return n;
}

/**
 * loop_run() - turn until loop_stop()
 * Return: 0, or negative errno when epoll fails.
 */
int loop_run(struct loop *l)
{
	int ret;

	l->stop = false;
	while (!l->stop) {
		ret = loop_run_once(l, -1);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/**
 * loop_stop() - make loop_run() return after the current turn
 */
void loop_stop(struct loop *l)
{
	l->stop = true;
}
