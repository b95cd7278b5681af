// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Flow steering (ibv_create_flow / ibv_destroy_flow) and the send side of
 * RAW_PACKET QPs.
 *
 * The kernel decides what a rule may match (which specs, masks, flags and
 * priorities shca steers on) and refuses the rest; here we only make sure
 * that libibverbs' translation of the specs into the kernel's layout,
 * which trusts each spec's hdr.size to walk the list and copies a fixed
 * number of bytes for most types, never reads outside the spec the caller
 * described.  The command carries no driver data.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"

/*
 * The size a spec of @type must have, or 0 if libibverbs accepts several
 * (it checks those itself: IPV4_EXT, IPV6 and VXLAN specs may be longer
 * than the kernel's filter when the extra bytes are zero), or -1 for a
 * type libibverbs cannot translate.
 */
static int shca_flow_spec_size(uint32_t type)
{
	switch (type & ~(uint32_t)IBV_FLOW_SPEC_INNER) {
	case IBV_FLOW_SPEC_ETH:
		return sizeof(struct ibv_flow_spec_eth);
	case IBV_FLOW_SPEC_IPV4:
		return sizeof(struct ibv_flow_spec_ipv4);
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		return sizeof(struct ibv_flow_spec_tcp_udp);
	case IBV_FLOW_SPEC_ESP:
		return sizeof(struct ibv_flow_spec_esp);
	case IBV_FLOW_SPEC_GRE:
		return sizeof(struct ibv_flow_spec_gre);
	case IBV_FLOW_SPEC_MPLS:
		return sizeof(struct ibv_flow_spec_mpls);
	case IBV_FLOW_SPEC_ACTION_TAG:
		return sizeof(struct ibv_flow_spec_action_tag);
	case IBV_FLOW_SPEC_ACTION_DROP:
		return sizeof(struct ibv_flow_spec_action_drop);
	case IBV_FLOW_SPEC_ACTION_HANDLE:
		return sizeof(struct ibv_flow_spec_action_handle);
	case IBV_FLOW_SPEC_ACTION_COUNT:
		return sizeof(struct ibv_flow_spec_counter_action);
	case IBV_FLOW_SPEC_IPV4_EXT:
	case IBV_FLOW_SPEC_IPV6:
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
		return 0;
	default:
		return -1;
	}
}

/**
 * shca_flow_check_attr - can libibverbs translate @attr safely?
 * @attr: the rule, its num_of_specs specs following it
 *
 * Each spec must be at least a header long, and exactly as long as its
 * type's structure where that has one size.  What the rule means (types,
 * masks, flags, priority, port) is the kernel's to judge.
 *
 * Return: 0, or EINVAL for a comp_mask bit or a spec that is too short,
 * of the wrong size or of no type libibverbs knows.
 */
int shca_flow_check_attr(const struct ibv_flow_attr *attr)
{
	const uint8_t *p = (const uint8_t *)(attr + 1);
	unsigned int i;

	if (attr->comp_mask)
		return EINVAL;
	for (i = 0; i < attr->num_of_specs; i++) {
		const struct ibv_flow_spec *spec = (const void *)p;
		int want = shca_flow_spec_size(spec->hdr.type);

		if (want < 0 || spec->hdr.size < sizeof(spec->hdr) ||
		    (want && spec->hdr.size != want))
			return EINVAL;
		p += spec->hdr.size;
	}
	return 0;
}

/*
 * ibv_create_flow(3): steer what @attr matches on its port to @qp, a
 * RAW_PACKET QP (the kernel refuses other types).  CAP_NET_RAW is needed
 * (EPERM from ib_core otherwise).
 */
struct ibv_flow *shca_create_flow(struct ibv_qp *qp,
				  struct ibv_flow_attr *attr)
{
	struct ibv_flow *flow;
	int ret;

	ret = shca_flow_check_attr(attr);
	if (ret)
		goto err;
	ret = ENOMEM;
	flow = calloc(1, sizeof(*flow));
	if (!flow)
		goto err;
	ret = ibv_cmd_create_flow(qp, flow, attr, NULL, 0);
	if (ret) {
		free(flow);
		goto err;
	}
	return flow;

err:
	errno = ret;
	return NULL;
}

int shca_destroy_flow(struct ibv_flow *flow)
{
	int ret = ibv_cmd_destroy_flow(flow);

	if (!ret)
		free(flow);
	return ret;
}

/**
 * shca_raw_send_flags - the send flags a RAW_PACKET QP accepts
 * @ctx: the QP's context
 *
 * IBV_SEND_IP_CSUM (the device fills in the IPv4 header and TCP/UDP
 * checksums of the frame) only where the kernel advertises
 * IBV_RAW_PACKET_CAP_IP_CSUM.  SOLICITED and FENCE are taken, as the
 * kernel takes them, and change nothing (no responder, no reads to wait
 * for); any other flag is refused.
 *
 * Return: a mask of IBV_SEND_* bits.
 */
unsigned int shca_raw_send_flags(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr = {};
	unsigned int flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE |
			     IBV_SEND_SOLICITED | IBV_SEND_FENCE;

	if (!ibv_query_device_ex(ctx, NULL, &attr) &&
	    (attr.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM))
		flags |= IBV_SEND_IP_CSUM;
	return flags;
}
