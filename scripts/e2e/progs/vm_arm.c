// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vm_arm: completion events on a live device, arm by arm.  Runs in the
 * VM (scripts/e2e/progs/vm_events.sh):
 *
 *   vm_arm DEV GID_INDEX [ITERATIONS]
 *   vm_arm DEV GID_INDEX loop ITERATIONS
 *
 * The first form runs every case below; "loop" runs only the first one,
 * arming ARMS_PER_LOOP times in each iteration, for a system call count
 * under strace (each send may ring a doorbell; no arm may cost a call).  UD datagrams go from one QP to
 * another of DEV through the device's own GID; the receive CQ has a
 * completion channel.
 *
 *  - loop: arm, send one datagram, and its event must come (none is
 *    lost), exactly one (no second event is pending after it), and its
 *    completion carries the bytes sent;
 *  - nothing completed, nothing raised: an arm with no completion gives no
 *    event; two arms before one completion give one event;
 *  - solicited only: a plain completion raises nothing, a solicited one
 *    does;
 *  - the verbs loop (ibv_req_notify_cq(3)): send, then arm, then poll;
 *    whatever the poll misses, an event reports;
 *  - an arm survives ibv_resize_cq();
 *  - the uverbs REQ_NOTIFY_CQ command (what older providers do) still
 *    arms the CQ;
 *  - threads posting to one send queue at once (the provider rings its
 *    doorbell after dropping its lock): every send completes.
 *
 * "No event" is judged only after the completion has provably arrived,
 * and "an event comes" waits generously: no wall-clock assertion.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "vm_lib.h"

#define QUIET_MS	1000	/* "no event": after the completion is in */
#define ARMS_PER_LOOP	10	/* "loop": arms per datagram */

static unsigned int events;	/* completion events received */

/* Is an event pending on the channel within @ms?  It is consumed. */
static bool event_in(struct env *e, int ms)
{
	struct ibv_cq *cq = cq_event_within(e, ms);

	if (!cq)
		return false;
	events++;
	if (cq != e->rcq) {
		fprintf(stderr, "event for another CQ\n");
		failures++;
	}
	return true;
}

/* Byte @j of datagram @i. */
static uint8_t dg_byte(unsigned int i, unsigned int j)
{
	return (uint8_t)(i * 13 + j * 7 + 1);
}

/* Send datagram @i (MSG bytes) to e->rx and wait for its send completion. */
static int send_dg(struct env *e, unsigned int i, bool solicited)
{
	uint8_t *p = e->buf + (i % NBUF) * MSG;
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = MSG,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED |
			      (solicited ? IBV_SEND_SOLICITED : 0),
		.wr.ud = { .ah = e->ah, .remote_qpn = e->rx->qp_num,
			   .remote_qkey = QKEY },
	}, *bad;
	unsigned int j;

	for (j = 0; j < MSG; j++)
		p[j] = dg_byte(i, j);
	if (ibv_post_send(e->tx, &wr, &bad))
		return -1;
	return reap(e->scq, 1);
}

/*
 * Check receive completion @wc against datagram @i and post the receive
 * again.
 */
static int check_recv(struct env *e, const struct ibv_wc *wc, unsigned int i)
{
	const uint8_t *p;
	unsigned int j;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    wc->byte_len != MSG + 40) {
		fprintf(stderr, "datagram %u: status %d opcode %d len %u\n", i,
			wc->status, wc->opcode, wc->byte_len);
		return -1;
	}
	p = e->buf + NBUF * MSG + (size_t)(wc->wr_id % NBUF) * (MSG + 40) + 40;
	for (j = 0; j < MSG; j++)
		if (p[j] != dg_byte(i, j)) {
			fprintf(stderr, "datagram %u: byte %u is %#x\n", i, j,
				p[j]);
			return -1;
		}
	return post_recvs(e, e->rx, 1);
}

/* Wait for the receive completion of datagram @i and check it. */
static int recv_dg(struct env *e, unsigned int i)
{
	struct ibv_wc wc;

	if (one_wc(e->rcq, &wc) < 0)
		return -1;
	return check_recv(e, &wc, i);
}

/* The CQ must be empty now. */
static bool rcq_empty(struct env *e)
{
	struct ibv_wc wc;

	return ibv_poll_cq(e->rcq, 1, &wc) == 0;
}

/* Arm @arms times (one arm), send one datagram: @n times. */
static void test_loop(struct env *e, unsigned int n, unsigned int arms,
		      unsigned int *next)
{
	unsigned int i, k, lost = 0, extra = 0, bad = 0;

	for (i = 0; i < n; i++, (*next)++) {
		for (k = 0; k < arms; k++)
			if (ibv_req_notify_cq(e->rcq, 0))
				bad++;
		if (bad || send_dg(e, *next, false)) {
			bad++;
			break;
		}
		if (!event_in(e, EVENT_WAIT_MS)) {
			lost++;
			break;
		}
		if (recv_dg(e, *next) || !rcq_empty(e)) {
			bad++;
			break;
		}
		if (event_in(e, 0))
			extra++;
	}
	CHECK(!lost && !extra && !bad);
	printf("%s - arm/event loop: %u of %u datagrams (%u arms each), %u lost events, %u extra events, %u bad completions\n",
	       !lost && !extra && !bad ? "ok" : "not ok", i, n, arms, lost,
	       extra, bad);
}

/* The verdict of case @name: its TAP line, and a failure counted. */
static void verdict(bool ok, const char *name)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", name);
	CHECK(ok);
}

/* Datagram *@next sent (solicited or not) and received; true if both went. */
static bool dg_through(struct env *e, unsigned int *next, bool solicited)
{
	bool ok = send_dg(e, *next, solicited) == 0;

	ok &= recv_dg(e, (*next)++) == 0;
	return ok;
}

/* dg_through(), with the event it raises waited for between the two. */
static bool dg_event(struct env *e, unsigned int *next, bool solicited)
{
	bool ok = send_dg(e, *next, solicited) == 0;

	ok &= event_in(e, EVENT_WAIT_MS);
	ok &= recv_dg(e, (*next)++) == 0;
	return ok;
}

static void test_quiet(struct env *e, unsigned int *next)
{
	bool ok = true;

	/* armed, nothing completes: no event */
	ok &= ibv_req_notify_cq(e->rcq, 0) == 0;
	ok &= !event_in(e, QUIET_MS);
	/* the arm is still there: the next completion raises it */
	ok &= dg_event(e, next, false);
	ok &= !event_in(e, QUIET_MS);
	verdict(ok, "an arm with nothing completed raises no event until a completion");

	/* two arms, two completions: one event (it disarms) */
	ok = ibv_req_notify_cq(e->rcq, 0) == 0;
	ok &= ibv_req_notify_cq(e->rcq, 0) == 0;
	ok &= dg_through(e, next, false);
	ok &= dg_through(e, next, false);
	ok &= event_in(e, EVENT_WAIT_MS);
	ok &= !event_in(e, QUIET_MS);
	verdict(ok, "two arms then two completions: one event");

	/* not armed: a completion raises nothing */
	ok = dg_through(e, next, false);
	ok &= !event_in(e, QUIET_MS);
	verdict(ok, "no arm, no event");
}

static void test_solicited(struct env *e, unsigned int *next)
{
	bool ok = true;

	ok &= ibv_req_notify_cq(e->rcq, 1) == 0;
	ok &= dg_through(e, next, false);
	ok &= !event_in(e, QUIET_MS);
	ok &= dg_event(e, next, true);
	ok &= !event_in(e, QUIET_MS);
	verdict(ok, "solicited only: a plain completion raises nothing, a solicited one does");

	/* SOLICITED then NEXT: NEXT wins */
	ok = ibv_req_notify_cq(e->rcq, 1) == 0;
	ok &= ibv_req_notify_cq(e->rcq, 0) == 0;
	ok &= dg_event(e, next, false);
	verdict(ok, "an arm for any completion after a solicited-only one");
}

/*
 * The loop of ibv_req_notify_cq(3), with the datagram sent before the
 * arm, so its completion races with it: arm, poll, and while the poll
 * finds nothing, wait for an event, arm again and poll again.  What the
 * poll after an arm misses, an event reports.  An event may come for a
 * completion a poll already took (its CQE was written after our arm but
 * before the poll); the loop treats it as the verbs API says, as a hint:
 * such stale events pile up in the channel and are waited through.
 */
static void test_race(struct env *e, unsigned int n, unsigned int *next)
{
	unsigned int i, by_poll = 0, by_event = 0, lost = 0, bad = 0;
	struct ibv_wc wc;

	for (i = 0; i < n && !lost && !bad; i++, (*next)++) {
		unsigned int waits = 0;
		int r;

		if (send_dg(e, *next, false) || ibv_req_notify_cq(e->rcq, 0)) {
			bad++;
			break;
		}
		r = ibv_poll_cq(e->rcq, 1, &wc);
		while (r == 0 && waits <= n + 8) {
			if (!event_in(e, EVENT_WAIT_MS)) {
				lost++;
				break;
			}
			waits++;
			if (ibv_req_notify_cq(e->rcq, 0))
				break;
			r = ibv_poll_cq(e->rcq, 1, &wc);
		}
		if (lost)
			break;
		if (r != 1 || check_recv(e, &wc, *next)) {
			bad++;
			break;
		}
		if (waits)
			by_event++;
		else
			by_poll++;
	}
	/* the last arm is still set: let a completion take it */
	if (!lost && !bad) {
		bad += send_dg(e, *next, false) ? 1 : 0;
		bad += recv_dg(e, (*next)++) ? 1 : 0;
		while (event_in(e, QUIET_MS))
			;
	}
	CHECK(!lost && !bad);
	printf("%s - arm racing completions: %u of %u found by the poll after the arm, %u after an event, %u lost, %u bad\n",
	       !lost && !bad ? "ok" : "not ok", by_poll, n, by_event, lost,
	       bad);
}

static void test_resize(struct env *e, unsigned int *next)
{
	bool ok = true;

	ok &= rcq_empty(e);
	ok &= ibv_req_notify_cq(e->rcq, 0) == 0;
	ok &= ibv_resize_cq(e->rcq, 200) == 0;
	ok &= e->rcq->cqe >= 200;
	ok &= dg_event(e, next, false);
	/* and arming the resized CQ works as before */
	ok &= ibv_req_notify_cq(e->rcq, 0) == 0;
	ok &= dg_event(e, next, false);
	ok &= !event_in(e, QUIET_MS);
	verdict(ok, "an arm survives ibv_resize_cq()");
}

/* Arm with the uverbs write command, as a provider without the word does. */
static int arm_by_command(struct env *e)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_req_notify_cq req;
	} cmd = {
		.hdr = { .command = IB_USER_VERBS_CMD_REQ_NOTIFY_CQ,
			 .in_words = sizeof(cmd) / 4 },
		.req = { .cq_handle = e->rcq->handle },
	};

	return write(e->ctx->cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd) ? 0 : -1;
}

static void test_command(struct env *e, unsigned int *next)
{
	bool ok = true;

	ok &= arm_by_command(e) == 0;
	ok &= dg_event(e, next, false);
	ok &= !event_in(e, QUIET_MS);
	verdict(ok, "the REQ_NOTIFY_CQ command arms the CQ too");
}

#define POSTERS		4
/* sends not yet polled, plus one per poster: within the SQ and the CQ */
#define IN_FLIGHT	24

struct poster {
	struct env *e;
	unsigned int n;
	unsigned int failed;
};

/* Sends posted and polled by test_threads(), shared by its threads. */
static unsigned int threads_posted, threads_done;

/* Post @n signaled sends from one thread, waiting while the SQ is full. */
static void *poster_run(void *arg)
{
	struct poster *p = arg;
	struct env *e = p->e;
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = MSG,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = e->ah, .remote_qpn = e->rx->qp_num,
			   .remote_qkey = QKEY },
	}, *bad;
	unsigned int i, spins = 0;

	for (i = 0; i < p->n;) {
		int r;

		/* a send is outstanding until polled: never overrun the CQ */
		if (__atomic_load_n(&threads_posted, __ATOMIC_ACQUIRE) -
		    __atomic_load_n(&threads_done, __ATOMIC_ACQUIRE) >=
		    IN_FLIGHT && spins++ < 100000000) {
			sched_yield();
			continue;
		}
		__atomic_fetch_add(&threads_posted, 1, __ATOMIC_ACQ_REL);
		r = ibv_post_send(e->tx, &wr, &bad);
		if (r) {
			__atomic_fetch_sub(&threads_posted, 1, __ATOMIC_ACQ_REL);
			if (r == ENOMEM && spins++ < 100000000) {
				sched_yield();
				continue;
			}
			p->failed++;
			break;
		}
		i++;
	}
	return NULL;
}

/*
 * POSTERS threads post @n sends each into e->tx; this thread polls the
 * send CQ.  A doorbell lost between the posters (each rings it after
 * dropping the SQ lock, if the engine's flag is clear) would leave sends
 * that never complete.
 */
static void test_threads(struct env *e, unsigned int n)
{
	struct poster p[POSTERS];
	pthread_t t[POSTERS];
	unsigned int i, done = 0, bad = 0, want = POSTERS * n, idle = 0;
	struct ibv_wc wc[16];

	for (i = 0; i < POSTERS; i++) {
		p[i] = (struct poster){ .e = e, .n = n };
		if (pthread_create(&t[i], NULL, poster_run, &p[i]))
			p[i].failed = n;
	}
	while (done < want && idle < 600000) {
		int r = ibv_poll_cq(e->scq, 16, wc);

		if (r < 0)
			break;
		if (!r) {
			usleep(200);
			idle++;
			continue;
		}
		idle = 0;
		done += (unsigned int)r;
		__atomic_store_n(&threads_done, done, __ATOMIC_RELEASE);
		while (r--)
			bad += wc[r].status != IBV_WC_SUCCESS;
	}
	for (i = 0; i < POSTERS; i++) {
		pthread_join(t[i], NULL);
		bad += p[i].failed;
	}
	CHECK(done == want && !bad);
	printf("%s - %d threads posting to one SQ: %u of %u sends completed, %u failed\n",
	       done == want && !bad ? "ok" : "not ok", POSTERS, done, want,
	       bad);
}

int main(int argc, char **argv)
{
	static struct env e;
	unsigned int n = 200, next = 0;
	bool loop_only = false;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV GID_INDEX [[loop] N]\n",
			argv[0]);
		return 2;
	}
	if (argc == 5 && !strcmp(argv[3], "loop")) {
		loop_only = true;
		n = (unsigned int)atoi(argv[4]);
	} else if (argc == 4) {
		n = (unsigned int)atoi(argv[3]);
	}
	e.gid_index = atoi(argv[2]);
	if (setup(&e, argv[1])) {
		perror("setup");
		return 1;
	}
	/* setup posted 6 receives; each completion checked posts one more */
	test_loop(&e, n, loop_only ? ARMS_PER_LOOP : 1, &next);
	if (!loop_only) {
		test_quiet(&e, &next);
		test_solicited(&e, &next);
		test_race(&e, n, &next);
		test_resize(&e, &next);
		test_command(&e, &next);
		test_threads(&e, n);
	}
	printf("# %u completion events\n", events);
	if (failures) {
		printf("not ok - vm_arm: %d failure(s)\n", failures);
		return 1;
	}
	printf("ok - vm_arm: all passed\n");
	return 0;
}
