/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shca: RC/UC responder state (owned by rc_resp.c). */
#ifndef SHCA_RC_RESP_H
#define SHCA_RC_RESP_H

struct shca_resp {
	u32 epsn;		/* next expected PSN */
};

#endif /* SHCA_RC_RESP_H */
