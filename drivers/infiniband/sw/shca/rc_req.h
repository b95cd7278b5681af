/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shca: RC/UC requester and completer state (owned by rc_req.c). */
#ifndef SHCA_RC_REQ_H
#define SHCA_RC_REQ_H

struct shca_req {
	u32 psn;		/* next PSN to send */
};

#endif /* SHCA_RC_REQ_H */
