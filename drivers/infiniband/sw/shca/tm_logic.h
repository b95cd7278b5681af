/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: tag matching (IBV_SRQT_TM) - the pure part: message headers, the
 * tag list and phase counting.  No locks, no allocation: tm.c owns the
 * memory and holds srq->lock around every call; kunit/shca_kunit_tm.c
 * tests these directly.
 *
 * The list.  A TM SRQ owns max_tags tag entries, named by handles
 * 0 .. max_tags - 1 that the provider hands out.  An entry is FREE, LISTED
 * (added, waiting for a message) or BUSY (matched, its data still
 * arriving: a multi-packet eager message or a rendezvous READ).  LISTED
 * entries are kept oldest first; a message takes the oldest entry whose
 * (TMH tag & mask) == tag, so receives are consumed in the order MPI
 * requires, and each entry matches at most one message.
 *
 * Phases.  hw_cnt counts the messages the SRQ deemed unexpected (a tagged
 * message that matched nothing); sw_cnt is the count software reported
 * last (an operation with the SYNC flag).  A tag added while the two
 * differ was posted without knowing of some unexpected message that may
 * be its match, so it never matches (software finds its message among
 * the unexpected ones and deletes it); a tag added in phase stays
 * matchable until it is consumed or deleted.  Counts compare modulo
 * 2^16, as the 16-bit phase counters of hardware TM do.
 */
#ifndef SHCA_TM_LOGIC_H
#define SHCA_TM_LOGIC_H

#include <linux/list.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#include <rdma/shca-abi.h>

#define SHCA_TMH_BYTES		16
#define SHCA_RVH_BYTES		16
#define SHCA_TM_MAX_SGE		4
/* unexpected messages software may lag behind before SYNC_REQ is set */
#define SHCA_TM_MAX_SYNC_DIFF	0x3fff

/* TMH operations (infiniband/tm_types.h: enum ibv_tmh_op) */
enum shca_tmh_op {
	SHCA_TMH_NO_TAG = 0,
	SHCA_TMH_RNDV = 1,
	SHCA_TMH_FIN = 2,
	SHCA_TMH_EAGER = 3,
};

/* Tag matching header: the first 16 bytes of a TM message. */
struct shca_tmh {
	u8 opcode;
	u8 reserved[3];
	__be32 app_ctx;
	__be64 tag;
} __packed;

/* Rendezvous header, after the TMH of a RNDV request. */
struct shca_rvh {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/* What the first packet of a SEND to a TM SRQ is. */
enum shca_tm_class {
	SHCA_TMC_PLAIN,		/* not a well-formed TM message */
	SHCA_TMC_NO_TAG,	/* NO_TAG or FIN: never matched */
	SHCA_TMC_EAGER,
	SHCA_TMC_RNDV,
};

/**
 * shca_tm_classify - what a message is, from its first packet
 * @p: payload of the first packet
 * @len: its length
 * @only: the message is this one packet
 * @max_rndv: the device's max_rndv_hdr_size
 *
 * An eager message needs a whole TMH in its first packet; a rendezvous
 * request is one packet holding TMH and RVH and at most @max_rndv bytes.
 * Anything else (empty, truncated, an unknown opcode) is PLAIN.
 */
static inline enum shca_tm_class shca_tm_classify(const u8 *p, u32 len,
						  bool only, u32 max_rndv)
{
	if (!len)
		return SHCA_TMC_PLAIN;
	switch (p[0]) {
	case SHCA_TMH_NO_TAG:
	case SHCA_TMH_FIN:
		return SHCA_TMC_NO_TAG;
	case SHCA_TMH_EAGER:
		return len >= SHCA_TMH_BYTES ? SHCA_TMC_EAGER : SHCA_TMC_PLAIN;
	case SHCA_TMH_RNDV:
		if (only && len >= SHCA_TMH_BYTES + SHCA_RVH_BYTES &&
		    len <= max_rndv)
			return SHCA_TMC_RNDV;
		return SHCA_TMC_PLAIN;
	default:
		return SHCA_TMC_PLAIN;
	}
}

enum shca_tm_tag_state {
	SHCA_TM_TAG_FREE,
	SHCA_TM_TAG_LISTED,
	SHCA_TM_TAG_BUSY,
};

struct shca_tm_tag {
	struct list_head node;		/* in shca_tm_list.listed if LISTED */
	u64 tag;
	u64 mask;
	u64 wr_id;			/* recv_wr_id of its completions */
	u32 len;			/* bytes its SGEs hold */
	u8 state;			/* enum shca_tm_tag_state */
	bool armed;			/* added in phase: may match */
	u8 num_sge;
	struct shca_sge sge[SHCA_TM_MAX_SGE];
};

struct shca_tm_list {
	struct list_head listed;	/* LISTED entries, oldest first */
	struct shca_tm_tag *tags;	/* max_tags entries */
	u32 max_tags;
	u32 nlisted;
	u32 hw_cnt;			/* messages deemed unexpected */
	u32 sw_cnt;			/* last count software reported */
};

static inline void shca_tm_list_init(struct shca_tm_list *l,
				     struct shca_tm_tag *tags, u32 max_tags)
{
	u32 i;

	INIT_LIST_HEAD(&l->listed);
	l->tags = tags;
	l->max_tags = max_tags;
	l->nlisted = 0;
	l->hw_cnt = 0;
	l->sw_cnt = 0;
	for (i = 0; i < max_tags; i++) {
		INIT_LIST_HEAD(&tags[i].node);
		tags[i].state = SHCA_TM_TAG_FREE;
	}
}

static inline bool shca_tm_phase_eq(u32 a, u32 b)
{
	return (u16)a == (u16)b;
}

static inline bool shca_tm_tag_matches(u64 msg_tag, u64 tag, u64 mask)
{
	return (msg_tag & mask) == tag;
}

/* The entry behind @handle, or NULL if there is none. */
static inline struct shca_tm_tag *shca_tm_at(struct shca_tm_list *l,
					     u32 handle)
{
	return handle < l->max_tags ? &l->tags[handle] : NULL;
}

static inline u32 shca_tm_handle(const struct shca_tm_list *l,
				 const struct shca_tm_tag *t)
{
	return t - l->tags;
}

/* An operation with the SYNC flag reports software's count. */
static inline void shca_tm_sync(struct shca_tm_list *l, bool sync, u32 cnt)
{
	if (sync)
		l->sw_cnt = cnt;
}

/* Does an operation's completion ask for a SYNC (phases differ)? */
static inline bool shca_tm_sync_req(const struct shca_tm_list *l)
{
	return !shca_tm_phase_eq(l->sw_cnt, l->hw_cnt);
}

/* Does an unexpected message's completion ask for a SYNC? */
static inline bool shca_tm_unexp_sync_req(const struct shca_tm_list *l)
{
	return (u16)(l->hw_cnt - l->sw_cnt) > SHCA_TM_MAX_SYNC_DIFF;
}

/**
 * shca_tm_add - list a FREE entry (its buffer fields already filled)
 * Return: false if @handle names no entry or one that is not FREE.
 */
static inline bool shca_tm_add(struct shca_tm_list *l, u32 handle, u64 tag,
			       u64 mask, u64 wr_id)
{
	struct shca_tm_tag *t = shca_tm_at(l, handle);

	if (!t || t->state != SHCA_TM_TAG_FREE)
		return false;
	t->tag = tag;
	t->mask = mask;
	t->wr_id = wr_id;
	t->armed = shca_tm_phase_eq(l->sw_cnt, l->hw_cnt);
	t->state = SHCA_TM_TAG_LISTED;
	list_add_tail(&t->node, &l->listed);
	l->nlisted++;
	return true;
}

/**
 * shca_tm_del - unlist a LISTED entry and free it
 * Return: false if @handle names no LISTED entry (never added, deleted
 * already, or consumed by a message meanwhile).
 */
static inline bool shca_tm_del(struct shca_tm_list *l, u32 handle)
{
	struct shca_tm_tag *t = shca_tm_at(l, handle);

	if (!t || t->state != SHCA_TM_TAG_LISTED)
		return false;
	list_del_init(&t->node);
	l->nlisted--;
	t->state = SHCA_TM_TAG_FREE;
	return true;
}

/**
 * shca_tm_match - a tagged message arrived
 * Return: the oldest matchable entry for @msg_tag, now BUSY; or NULL (the
 * caller counts the message with shca_tm_unexpected() once it delivered
 * it to an ordinary receive WQE).
 */
static inline struct shca_tm_tag *shca_tm_match(struct shca_tm_list *l,
						u64 msg_tag)
{
	struct shca_tm_tag *t;

	list_for_each_entry(t, &l->listed, node) {
		if (!t->armed || !shca_tm_tag_matches(msg_tag, t->tag, t->mask))
			continue;
		list_del_init(&t->node);
		l->nlisted--;
		t->state = SHCA_TM_TAG_BUSY;
		return t;
	}
	return NULL;
}

/* A tagged message that matched nothing was delivered as unexpected. */
static inline void shca_tm_unexpected(struct shca_tm_list *l)
{
	l->hw_cnt++;
}

/* A BUSY entry's message is done with (delivered or failed). */
static inline void shca_tm_release(struct shca_tm_tag *t)
{
	t->state = SHCA_TM_TAG_FREE;
}

#endif /* SHCA_TM_LOGIC_H */
