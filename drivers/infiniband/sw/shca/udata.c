// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: strict udata handling shared by all verbs.
 *
 * Input: the caller names the prefix it needs; shorter input is -EINVAL,
 * non-zero bytes past the structure we know are -EOPNOTSUPP.  Output is
 * truncated to what userspace offered.
 */
#include <rdma/ib_verbs.h>

#include "shca.h"

int shca_udata_get_req(struct ib_device *ibdev, struct ib_udata *udata,
		       void *req, size_t size, size_t required)
{
	memset(req, 0, size);
	if (!udata)
		return 0;
	if (udata->inlen < required) {
		ibdev_dbg(ibdev, "udata: inlen %zu < required %zu\n",
			  udata->inlen, required);
		return -EINVAL;
	}
	if (udata->inlen > size &&
	    !ib_is_udata_cleared(udata, size, udata->inlen - size)) {
		ibdev_dbg(ibdev, "udata: unknown non-zero bytes past %zu\n",
			  size);
		return -EOPNOTSUPP;
	}
	if (ib_copy_from_udata(req, udata, min(size, udata->inlen))) {
		ibdev_dbg(ibdev, "udata: copy of request failed\n");
		return -EFAULT;
	}
	return 0;
}

/* For verbs that define no request: any non-zero input is unknown. */
int shca_udata_no_req(struct ib_device *ibdev, struct ib_udata *udata)
{
	if (!udata || !udata->inlen)
		return 0;
	if (!ib_is_udata_cleared(udata, 0, udata->inlen)) {
		ibdev_dbg(ibdev, "udata: unexpected request data (%zu bytes)\n",
			  udata->inlen);
		return -EOPNOTSUPP;
	}
	return 0;
}

int shca_udata_put_resp(struct ib_device *ibdev, struct ib_udata *udata,
			void *resp, size_t size)
{
	if (!udata || !udata->outlen)
		return 0;
	if (ib_copy_to_udata(udata, resp, min(size, udata->outlen))) {
		ibdev_dbg(ibdev, "udata: copy of response failed\n");
		return -EFAULT;
	}
	return 0;
}

/* Unknown comp_mask bits are -EOPNOTSUPP, non-zero reserved is -EINVAL. */
int shca_udata_check_cmd(struct ib_device *ibdev, const char *what,
			 u32 comp_mask, u32 known, u32 reserved)
{
	if (comp_mask & ~known) {
		ibdev_dbg(ibdev, "%s: unknown comp_mask bits %#x\n", what,
			  comp_mask & ~known);
		return -EOPNOTSUPP;
	}
	if (reserved) {
		ibdev_dbg(ibdev, "%s: reserved field not zero\n", what);
		return -EINVAL;
	}
	return 0;
}
