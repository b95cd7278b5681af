// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: device and port attributes, sysfs, counters.
 *
 * Only what is implemented is advertised: basic, XRC and tag matching
 * (RC) SRQs.  Memory
 * management extensions (FRWR) and memory windows of types 1 and 2B are
 * there (mr.c, mw.c).  Atomics are IB_ATOMIC_HCA: all shca atomics
 * are serialised by one lock (mem.c), but CPU accesses are not.
 * On-demand paging (explicit ODP MRs, shca_odp.c) where ib_core has it.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "odp.h"
#include "rss_logic.h"
#include "rwq.h"
#include "roce.h"
#include "tm.h"

int shca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata)
{
	int err = shca_udata_no_req(ibdev, udata);

	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = SHCA_FW_VER_RAW;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = SHCA_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SHCA_VENDOR_ID;
	attr->vendor_part_id = 0;
	attr->hw_ver = 0;
	attr->max_qp = SHCA_MAX_QP;
	attr->max_qp_wr = SHCA_MAX_QP_WR;
	attr->max_srq = SHCA_MAX_SRQ;
	attr->max_srq_wr = SHCA_MAX_SRQ_WR;
	attr->max_srq_sge = SHCA_MAX_SGE;
	/*
	 * The RC responder generates RNR NAKs; XRC, SRQ resize; ATOMIC WRITE
	 * and FLUSH to global visibility where named (no FLUSH to
	 * persistence: compat.h).
	 */
	attr->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_XRC |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 SHCA_DEVICE_ATOMIC_WRITE |
				 SHCA_DEVICE_FLUSH_GLOBAL |
				 IB_DEVICE_RAW_IP_CSUM |	/* raw.c, in software */
				 IB_DEVICE_MANAGED_FLOW_STEERING;	/* flow.c */
	attr->raw_packet_caps = IB_RAW_PACKET_CAP_IP_CSUM |
				IB_RAW_PACKET_CAP_CVLAN_STRIPPING |	/* rwq.c */
				IB_RAW_PACKET_CAP_DELAY_DROP;		/* rwq.c */
	/* `rdma link delete` is allowed for link-created devices */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = SHCA_MAX_SGE;
	attr->max_recv_sge = SHCA_MAX_SGE;
	attr->max_sge_rd = SHCA_MAX_SGE;
	attr->max_cq = SHCA_MAX_CQ;
	attr->max_cqe = SHCA_MAX_CQE;
	attr->cq_caps.max_cq_moderation_count = SHCA_MAX_CQ_MOD_COUNT;
	attr->cq_caps.max_cq_moderation_period = SHCA_MAX_CQ_MOD_PERIOD;
	attr->max_mr = SHCA_MAX_MR;
	attr->max_mw = SHCA_MAX_MW;
	attr->max_fast_reg_page_list_len = SHCA_MAX_FRMR_PAGES;
	attr->max_pd = SHCA_MAX_PD;
	/* responder resources: max_dest_rd_atomic per QP, all QPs at once */
	attr->max_qp_rd_atom = SHCA_MAX_RD_ATOM;
	attr->max_res_rd_atom = SHCA_MAX_RD_ATOM * SHCA_MAX_QP;
	attr->max_qp_init_rd_atom = SHCA_MAX_RD_ATOM;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = SHCA_MAX_AH;
	attr->max_pkeys = 1;
	attr->max_mcast_grp = SHCA_MAX_MCG;
	attr->max_mcast_qp_attach = SHCA_MAX_MCG_QP;
	attr->max_total_mcast_qp_attach = SHCA_MAX_TOTAL_MCG_QP;
	attr->tm_caps.max_rndv_hdr_size = SHCA_TM_MAX_RNDV_HDR;
	attr->tm_caps.max_num_tags = SHCA_TM_MAX_TAGS;
	attr->tm_caps.max_ops = SHCA_TM_MAX_OPS;
	attr->tm_caps.max_sge = SHCA_TM_MAX_SGE;
	attr->tm_caps.flags = IB_TM_CAP_RNDV_RC;
	/* user WQs, indirection tables and Toeplitz RSS QPs (rwq.c) */
	attr->max_wq_type_rq = SHCA_MAX_RWQ;
	attr->rss_caps.supported_qpts = BIT(IB_QPT_RAW_PACKET);
	attr->rss_caps.max_rwq_indirection_tables = SHCA_MAX_RWQ_IND_TBL;
	attr->rss_caps.max_rwq_indirection_table_size =
		1U << SHCA_RSS_MAX_LOG_TBL;
	shca_odp_query_device(attr);
	return 0;
}

enum ib_mtu shca_active_mtu(struct shca_dev *sdev)
{
	return shca_netdev_mtu_to_ib_mtu(READ_ONCE(sdev->ndev->mtu));
}

/* The port is active when the netdev is up and has carrier. */
enum ib_port_state shca_port_state(struct shca_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;

	if (netif_running(ndev) && netif_carrier_ok(ndev) &&
	    shca_active_mtu(sdev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

int shca_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr)
{
	struct shca_dev *sdev = to_sdev(ibdev);
	enum ib_mtu mtu = shca_active_mtu(sdev);
	int err;

	memset(attr, 0, sizeof(*attr));
	attr->state = shca_port_state(sdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = mtu ? mtu : IB_MTU_256;
	attr->gid_tbl_len = SHCA_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = 1U << 31;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;

	err = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	if (err)
		ibdev_dbg(ibdev, "no ethernet speed: %d\n", err);
	return 0;
}

int shca_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index) {
		ibdev_dbg(ibdev, "pkey index %u out of range\n", index);
		return -EINVAL;
	}
	*pkey = SHCA_PKEY_DEFAULT;
	return 0;
}

int shca_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = SHCA_GID_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/* RoCE: the port runs over Ethernet, whatever the node type says. */
enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

void shca_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", SHCA_FW_VER);
}

static const struct rdma_stat_desc shca_stat_descs[] = {
#define SHCA_STAT(id, str) { .name = str },
#include "stats.h"
#undef SHCA_STAT
};

/**
 * shca_stat_name - the `rdma statistic` name of counter @stat
 * @stat: enum shca_stat
 *
 * Context: any.
 * Return: the name, or "?" for a value that names no counter.
 */
const char *shca_stat_name(int stat)
{
	if (stat < 0 || stat >= SHCA_NUM_STATS)
		return "?";
	return shca_stat_descs[stat].name;
}

/* The port's counters and each QP counter: one layout, one index each. */
static struct rdma_hw_stats *shca_alloc_stats(void)
{
	BUILD_BUG_ON(ARRAY_SIZE(shca_stat_descs) != SHCA_NUM_STATS);
	return rdma_alloc_hw_stats_struct(shca_stat_descs, SHCA_NUM_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static void shca_read_stats(struct rdma_hw_stats *stats, const atomic64_t *v)
{
	int i;

	for (i = 0; i < SHCA_NUM_STATS; i++)
		stats->value[i] = atomic64_read(&v[i]);
}

struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return shca_alloc_stats();
}

int shca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	shca_read_stats(stats, to_sdev(ibdev)->stats);
	return SHCA_NUM_STATS;
}

/*
 * QP counters, ib_core's binding (`rdma statistic qp set ... auto`,
 * `rdma statistic qp bind`): ib_core allocates each rdma_counter and
 * calls these in process context with counter->lock held.  A counter's
 * values are indexed like the port's (ib_core adds them up by index),
 * and while a QP is bound its events count only there
 * (shca_qp_stat_add()).
 */
struct rdma_hw_stats *shca_counter_alloc_stats(struct rdma_counter *counter)
{
	return shca_alloc_stats();
}

/*
 * The driver's side of @counter, made at its first bind (rdma_counter.id
 * is 0 until then; ib_core frees a counter whose first bind failed
 * without calling counter_dealloc).  Charged to the binding task: in
 * auto mode, the owner of the QP going to INIT.
 */
static struct shca_counter *shca_counter_get(struct shca_dev *sdev,
					     struct rdma_counter *counter)
{
	struct shca_counter *c;
	u32 id;

	if (counter->id)
		return xa_load(&sdev->counters, counter->id);
	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return NULL;
	if (xa_alloc(&sdev->counters, &id, c, xa_limit_32b, GFP_KERNEL)) {
		kfree(c);
		return NULL;
	}
	counter->id = id;
	return c;
}

int shca_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct shca_dev *sdev = to_sdev(ibqp->device);
	struct shca_counter *c;

	lockdep_assert_held(&counter->lock);
	c = shca_counter_get(sdev, counter);
	if (!c)
		return -ENOMEM;
	rcu_assign_pointer(to_sqp(ibqp)->qcnt, c);
	ibqp->counter = counter;
	return 0;
}

/*
 * Context: process, the QP's counter's lock held.  An event counted by a
 * path that read the pointer just before still lands in the old counter,
 * which outlives it (kfree_rcu()).
 */
int shca_counter_unbind_qp(struct ib_qp *ibqp)
{
	RCU_INIT_POINTER(to_sqp(ibqp)->qcnt, NULL);
	ibqp->counter = NULL;
	return 0;
}

int shca_counter_update_stats(struct rdma_counter *counter)
{
	struct shca_dev *sdev = to_sdev(counter->device);
	struct shca_counter *c;

	lockdep_assert_held(&counter->lock);
	c = xa_load(&sdev->counters, counter->id);	/* none before a bind */
	if (c)
		shca_read_stats(counter->stats, c->v);
	return 0;
}

/*
 * Context: process, after ib_core read the counter a last time into the
 * port's history: no QP is bound to it any more.
 */
int shca_counter_dealloc(struct rdma_counter *counter)
{
	struct shca_dev *sdev = to_sdev(counter->device);
	struct shca_counter *c;

	if (!counter->id)
		return 0;
	c = xa_erase(&sdev->counters, counter->id);
	if (c)
		kfree_rcu(c, rcu);
	return 0;
}

static ssize_t shca_abi_version_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", SHCA_UVERBS_ABI_VERSION);
}

static struct device_attribute shca_abi_attr = {
	.attr = { .name = SHCA_SYSFS_ABI_ATTR, .mode = 0444 },
	.show = shca_abi_version_show,
};

static struct attribute *shca_attrs[] = {
	&shca_abi_attr.attr,
	NULL
};

const struct attribute_group shca_attr_group = {
	.attrs = shca_attrs,
};
