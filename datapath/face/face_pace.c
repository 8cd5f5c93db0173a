// SPDX-License-Identifier: MIT
/*
 * face_pace.c - what the face passes on leaves as spread out as it came in
 *
 * Theory of operation
 *
 * The datapath does not run when a datagram arrives, but when the scheduler
 * lets it: on a machine with two CPUs shared with the sender and the
 * receiver, a datapath set aside for a few milliseconds then reads, in one
 * turn, what arrived over those milliseconds, and would pass it on at once.
 * A receiver with the default socket buffer (208 KiB: about 90 datagrams of
 * 1400 bytes) that is not on a CPU at that instant loses the rest, where the
 * kernel's own path would have handed it the same datagrams one by one as
 * they came. So each direction of the face's UDP has a pacer: a queue of
 * items (trains, face_udp.c) in arrival order, each stamped with when its
 * first datagram arrived (a receive ring's kernel timestamp; for the TUN,
 * which has none, when it was read), that replays the gaps between
 * arrivals on departure.
 *
 * An item leaves at
 *
 *	due = last departure + (its arrival - the last one's arrival) * 3/4
 *
 * or at once when that is no later than now + FACE_PACE_SLACK_US: a
 * datapath that keeps up holds nothing, and a datagram after a pause leaves
 * at once. The 3/4 lets a queue built up by a stall drain at 4/3 of the
 * rate it arrived at, so the delay a stall added goes away; the last
 * departure never lags now by more than FACE_PACE_CATCHUP_US plus half of
 * how long the item leaving had been held, so a timer that fires late
 * releases that much more and no more (a late timer must not become a burst
 * of its own), while a pacer that the scheduler keeps from its timers still
 * catches up with what it holds. What is held waits on a precise loop timer.
 * Two bounds keep a datapath that cannot keep up from holding without end:
 * an item held for FACE_PACE_MAX_HOLD_US (the delay the pacer adds, not
 * the stall before it: that one is already spent), or a queue of more than
 * FACE_PACE_MAX_BYTES, leaves at once (an overrun, counted): then it goes as
 * it did without a pacer.
 *
 * A source without timestamps (the TUN: a read hands over, all at once,
 * what the container sent while the datapath was away) gets arrival times
 * from face_pace_arrival(). The link says when a read last found the
 * source's queue empty: what was read after that came after it. Within
 * FACE_PACE_AWAY_US of that, the datapath keeps up, and a datagram is
 * stamped when it was read (what one read got leaves together, as trains,
 * with no timer: replaying gaps made up inside each read of a 1 Gbit/s flow
 * costs a timer and a flush per train, CPU that the sender and the receiver
 * need on a machine with two). Later than that, it is a stall's backlog:
 * the bytes read over each FACE_PACE_RATE_US give the rate the source sends
 * at (the higher of the last two windows'), and consecutive datagrams are
 * stamped that far apart, never later than they were read, nor earlier than
 * the queue was last empty, nor than FACE_PACE_SPREAD_US before: the
 * backlog spreads back over the stall, and a datagram after a pause is
 * stamped as if it had come at the rate (it leaves at once). (Bounded only
 * by FACE_PACE_SPREAD_US and always spread, stamps that fell behind, as
 * while a backlog made the rate look four times what it was, stayed behind
 * for as long as the flow lasted: the next stall's backlog, stamped from
 * there, replayed a pause that had not been, then left in a burst, held too
 * long.)
 *
 * The pacer knows nothing of UDP: its owner embeds a struct face_pace_item
 * in what it queues, and sends and frees it in the callback.
 */
#include <string.h>

#include "datapath/face/face_int.h"
#include "common/out.h"

#define FACE_PACE_SLACK_US	50	/* early enough: leave now */
#define FACE_PACE_CATCHUP_US	200	/* the departure clock's lag behind now, at most */
#define FACE_PACE_MAX_HOLD_US	25000	/* an item held this long leaves at once */
#define FACE_PACE_MAX_BYTES	(4u << 20)	/* and so does any once this much is held */
#define FACE_PACE_RATE_US	8000	/* a source without timestamps: its rate over this long */
#define FACE_PACE_SPREAD_US	100000	/* its stamps, at most this far before the read */
#define FACE_PACE_AWAY_US	5000	/* its queue not emptied for longer: a backlog */

static void face_pace_timer(struct loop_timer *t);

/**
 * face_pace_init() - an empty pacer
 * @pc:		the pacer
 * @loop:	the loop whose clock and timers it uses
 * @send:	sends an item, and frees it, when its time has come
 * @flush:	sends at once what @send queued (NULL: nothing to do)
 * @ctx:	@send's and @flush's context
 */
void face_pace_init(struct face_pacer *pc, struct loop *loop, face_pace_send_fn send, face_pace_flush_fn flush,
		    void *ctx)
{
	memset(pc, 0, sizeof(*pc));
	pc->loop = loop;
	pc->send = send;
	pc->flush = flush;
	pc->ctx = ctx;
	loop_timer_init(&pc->timer, face_pace_timer, pc);
}

/* When @it may leave, by the gaps between arrivals (theory above). */
static uint64_t face_pace_due(const struct face_pacer *pc, const struct face_pace_item *it)
{
	uint64_t gap = it->arrived_us > pc->last_arr_us ? it->arrived_us - pc->last_arr_us : 0;

	return pc->last_dep_us + gap * 3 / 4;
}

/*
 * Send every item whose time has come; arm the timer for the next. What
 * had to wait leaves now, not when the turn ends: the links flush their
 * queues at the end of a loop turn, and a turn that reads a backlog lasts
 * milliseconds (more in a sanitizer build), so items that came due one by
 * one during it left together, in a burst the pacer was there to prevent.
 * (A run from the timer would be flushed as its turn ends anyway; the
 * flush costs a system call only where the turn goes on. Flushing at most
 * every 250 us lost a datagram in one of five sanitizer-build runs of
 * face_udp_stall.sh, flushing each time none in eleven.)
 */
static void face_pace_run(struct face_pacer *pc)
{
	struct face_pace_item *it;
	uint64_t now = loop_now_us(pc->loop), catchup;
	bool waited = false;

	while ((it = pc->head)) {
		uint64_t due = face_pace_due(pc, it);

		if (due > now + FACE_PACE_SLACK_US) {
			if (now - it->held_us < FACE_PACE_MAX_HOLD_US && pc->bytes <= FACE_PACE_MAX_BYTES) {
				uint64_t wake = due - FACE_PACE_SLACK_US;

				if (wake > it->held_us + FACE_PACE_MAX_HOLD_US)
					wake = it->held_us + FACE_PACE_MAX_HOLD_US;
				loop_timer_arm_at_us(pc->loop, &pc->timer, wake);
				break;
			}
			pc->stats.overruns++;
			due = now;
		}
		pc->head = it->next;
		if (!pc->head)
			pc->tail = NULL;
		pc->bytes -= it->bytes;
		pc->n--;
		catchup = FACE_PACE_CATCHUP_US + (now - it->held_us) / 2;
		pc->last_dep_us = now > catchup && due < now - catchup ? now - catchup : due;
		pc->last_arr_us = it->arrived_us;
		waited |= it->held_us < now;
		pc->send(it, pc->ctx);
	}
	if (!pc->head)
		loop_timer_cancel(pc->loop, &pc->timer);
	if (waited && pc->flush)
		pc->flush(pc->ctx);
}

static void face_pace_timer(struct loop_timer *t)
{
	face_pace_run(t->ctx);
}

/**
 * face_pace_submit() - an item to send when its time comes (now, or later)
 * @pc:	the pacer
 * @it:	the item, with @arrived_us and @bytes set; the pacer holds it until
 *	it calls @send with it
 */
void face_pace_submit(struct face_pacer *pc, struct face_pace_item *it)
{
	uint64_t now = loop_now_us(pc->loop);

	if (it->arrived_us > now)
		it->arrived_us = now;
	it->held_us = now;
	if (!pc->started) {	/* the first: nothing to space it from */
		pc->started = true;
		pc->last_dep_us = now;
		pc->last_arr_us = it->arrived_us;
	}
	it->next = NULL;
	if (pc->tail)
		pc->tail->next = it;
	else
		pc->head = it;
	pc->tail = it;
	pc->bytes += it->bytes;
	pc->n++;
	face_pace_run(pc);
	if (pc->tail) {	/* in order: if anything waits, so does @it */
		pc->stats.held++;
		if (pc->n > pc->stats.most_held)
			pc->stats.most_held = pc->n;
	}
}

/**
 * face_pace_arrival() - when a datagram from a source without timestamps
 * arrived, as far as its rate tells (theory above)
 * @pc:		the pacer of its direction
 * @read_us:	when it was read
 * @after_us:	when a read last found its queue empty before (0: not known)
 * @bytes:	its size
 *
 * Return: its arrival time, loop time: no later than @read_us.
 */
uint64_t face_pace_arrival(struct face_pacer *pc, uint64_t read_us, uint64_t after_us, size_t bytes)
{
	uint64_t at = read_us;

	if (read_us - pc->rate_since_us >= FACE_PACE_RATE_US) {
		/*
		 * Bytes per millisecond over the window that ends: the rate is
		 * the higher of it and the one before, so that a window with a
		 * stall in it (nothing read for a while, the backlog read
		 * after) does not make the backlog's stamps too far apart.
		 */
		uint64_t sample = pc->rate_bytes * 1000 / (read_us - pc->rate_since_us);

		pc->rate_bpms = sample > pc->rate_prev_bpms ? sample : pc->rate_prev_bpms;
		pc->rate_prev_bpms = sample;
		pc->rate_since_us = read_us;
		pc->rate_bytes = 0;
	}
	pc->rate_bytes += bytes;
	if (pc->rate_bpms && read_us - after_us > FACE_PACE_AWAY_US) {
		at = pc->stamp_us + bytes * 1000 / pc->rate_bpms;
		if (at < after_us)
			at = after_us;
		if (read_us > FACE_PACE_SPREAD_US && at < read_us - FACE_PACE_SPREAD_US)
			at = read_us - FACE_PACE_SPREAD_US;
		if (at > read_us)
			at = read_us;
	}
	pc->stamp_us = at;
	return at;
}

/**
 * face_pace_fini() - hand back what is held, unsent
 * @pc:		the pacer
 * @drop:	frees an item
 */
void face_pace_fini(struct face_pacer *pc, void (*drop)(struct face_pace_item *it))
{
	struct face_pace_item *it;

	loop_timer_cancel(pc->loop, &pc->timer);
	while ((it = pc->head)) {
		pc->head = it->next;
		drop(it);
	}
	pc->tail = NULL;
	pc->bytes = 0;
	pc->n = 0;
}

/**
 * face_pace_print() - a pacer's figures, as the object @name
 * @pc:		the pacer
 * @o:		printer
 * @name:	the object's name
 */
void face_pace_print(const struct face_pacer *pc, struct out *o, const char *name)
{
	out_obj_begin(o, name);
	out_u64(o, "held", pc->stats.held);
	out_u64(o, "most_held", pc->stats.most_held);
	out_u64(o, "holding", pc->n);
	out_u64(o, "overruns", pc->stats.overruns);
	out_obj_end(o);
}
