/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the programs that drive a live shca device in the VM
 * (busy_all, verbs_fault, verbs_fuzz, vm_arm, vm_events, vm_hostile,
 * vm_limits, wq_busy), on top of e2e_lib.h: finding the device, one
 * process, UD QPs that talk to each other through the device's own GID,
 * polling with generous bounds, completion and async events, and a flow
 * rule on a destination MAC.
 */
#ifndef SHCA_VM_LIB_H
#define SHCA_VM_LIB_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "e2e_lib.h"

#define QKEY		0x11111111u
#define MSG		64
#define NBUF		32
#define EVENT_WAIT_MS	120000

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s (errno %d)\n",         \
				__FILE__, __LINE__, #cond, errno);             \
			failures++;                                            \
		}                                                              \
	} while (0)

/*
 * buf: NBUF send slots of MSG bytes, then NBUF receive slots of MSG + 40
 * (room for the GRH), all registered as mr.
 */
struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *tx, *rx;
	struct ibv_ah *ah;
	union ibv_gid gid;
	int gid_index;
	unsigned int recv_posted;
};

struct ibv_qp *ud_qp(struct env *e, struct ibv_cq *scq, struct ibv_cq *rcq,
		     struct ibv_srq *srq);
struct ibv_ah *make_ah(struct env *e, const union ibv_gid *dgid);
int post_recvs(struct env *e, struct ibv_qp *qp, unsigned int n);
int reap(struct ibv_cq *cq, int n);
int post_ud_send(struct env *e, struct ibv_qp *qp, struct ibv_ah *ah,
		 uint32_t qpn, uint64_t wr_id);
int send_n(struct env *e, struct ibv_ah *ah, uint32_t qpn, int n);
int one_wc(struct ibv_cq *cq, struct ibv_wc *wc);
struct ibv_cq *cq_event_within(struct env *e, int ms);
bool async_event_within(struct env *e, enum ibv_event_type want);
struct ibv_device *find_dev(const char *dev_name);
int setup(struct env *e, const char *dev_name);
bool env_moves_data(const char *dev_name, int gid_index);
struct ibv_flow *mac_flow(struct ibv_qp *qp, const uint8_t *mac);

#endif
