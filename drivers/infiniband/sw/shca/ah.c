// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: address handles.
 *
 * create_ah/destroy_ah may be called in atomic context when
 * RDMA_CREATE_AH_SLEEPABLE / RDMA_DESTROY_AH_SLEEPABLE is not set: only
 * GFP_ATOMIC allocations and the xarray's spinlock are used then.
 */
#include <rdma/ib_verbs.h>

#include "shca.h"

int shca_ah_attr_check(struct ib_device *ibdev,
		       const struct rdma_ah_attr *attr)
{
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE) {
		ibdev_dbg(ibdev, "ah: attr type %d is not RoCE\n", attr->type);
		return -EINVAL;
	}
	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH)) {
		ibdev_dbg(ibdev, "ah: RoCE needs a GRH\n");
		return -EINVAL;
	}
	if (rdma_ah_get_port_num(attr) != 1) {
		ibdev_dbg(ibdev, "ah: bad port %u\n", rdma_ah_get_port_num(attr));
		return -EINVAL;
	}
	return 0;
}

static int shca_ah_publish(struct shca_dev *sdev, struct shca_ah *ah,
			   gfp_t gfp)
{
	unsigned long flags;
	int err;

	xa_lock_irqsave(&sdev->ahs, flags);
	err = __xa_alloc(&sdev->ahs, &ah->handle, ah, XA_LIMIT(1, SHCA_MAX_AH),
			 gfp);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	if (err)
		ibdev_dbg(&sdev->ibdev, "ah: no handle left (%d)\n", err);
	return err == -EBUSY ? -ENOMEM : err;
}

static void shca_ah_unpublish(struct shca_dev *sdev, struct shca_ah *ah)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ahs, flags);
	__xa_erase(&sdev->ahs, ah->handle);
	xa_unlock_irqrestore(&sdev->ahs, flags);
}

/* Context: atomic unless RDMA_CREATE_AH_SLEEPABLE is set in init->flags. */
int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibah->device);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							      GFP_ATOMIC;
	struct shca_create_ah_resp resp = {};
	struct shca_ah *ah = to_sah(ibah);
	int err;

	err = shca_udata_no_req(&sdev->ibdev, udata);
	if (!err)
		err = shca_ah_attr_check(&sdev->ibdev, init->ah_attr);
	if (err)
		goto err_out;

	ah->attr = *init->ah_attr;
	ah->attr.grh.sgid_attr = NULL;
	err = shca_ah_publish(sdev, ah, gfp);
	if (err)
		goto err_out;

	resp.ah_handle = ah->handle;
	err = shca_udata_put_resp(&sdev->ibdev, udata, &resp, sizeof(resp));
	if (err)
		goto err_unpublish;
	return 0;

err_unpublish:
	shca_ah_unpublish(sdev, ah);
err_out:
	shca_stat_inc(sdev, SHCA_STAT_CREATE_AH_ERR);
	return err;
}

/* Context: any; does not sleep. */
int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_sah(ibah)->attr;
	return 0;
}

/* Context: atomic unless RDMA_DESTROY_AH_SLEEPABLE is set in @flags. */
int shca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct shca_dev *sdev = to_sdev(ibah->device);

	shca_ah_unpublish(sdev, to_sah(ibah));
	return 0;
}
