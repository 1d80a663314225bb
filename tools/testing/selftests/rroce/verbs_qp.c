// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs through unmodified libibverbs and its rxe provider: RC, UC
 * and UD QPs get distinct numbers and the capacities asked for, with rings
 * the provider maps (the receive ring fills to exactly its capacity); they
 * go through the state machine as IBA allows, query reports what was set
 * (the address vector too),
 * bad transitions and values are refused, and a move to RESET drops what
 * was posted; oversized or unsupported requests are refused; a UD QP
 * attaches to a multicast group, others cannot; what a process
 * leaves open is cleaned up when it closes the device.
 *
 * Usage: verbs_qp DEVICE.  Prints KTAP; exits 0 if every case passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"

#define NR_QPS 100


static struct ibv_qp_init_attr attr(struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 100,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = 64,
		},
	};
	return a;
}

/* Posts receives until the ring is full; returns how many went in. */
static int fill_rq(struct ibv_qp *qp, char *buf)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int n = 0;

	while (n < 100000 && !ibv_post_recv(qp, &wr, &bad))
		wr.wr_id = ++n;
	return n;
}

/* Takes an RC QP from RESET to RTR, talking to @dest_qpn at its own GID @gid. */
static int rc_to_rtr(struct ibv_qp *qp, int gid, uint32_t dest_qpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0x456;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = gid;
	a.ah_attr.grh.hop_limit = 64;
	return !ibv_query_gid(qp->context, 1, gid, &a.ah_attr.grh.dgid) &&
	       !ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER);
}

/* Takes an RC QP from RESET to RTS, as rc_to_rtr(). */
static int rc_to_rts(struct ibv_qp *qp, int gid, uint32_t dest_qpn)
{
	struct ibv_qp_attr a = {};

	if (!rc_to_rtr(qp, gid, dest_qpn))
		return 0;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x789;
	a.max_rd_atomic = 4;
	return !ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * A move to RESET removes what was posted, without completions (IBA
 * 10.3.1): the receives @rc holds, and sends posted in RTR, which the
 * doorbell refuses but the ring keeps. Connected to itself again, @rc then
 * carries one send to one receive, and nothing else completes.
 */
static int reset_discards(struct ibv_qp *rc, struct ibv_cq *cq, struct ibv_mr *mr, int gid,
			  const union ibv_gid *gid_value)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 16, .lkey = mr->lkey };
	struct ibv_send_wr swr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
	}, *bad_swr;
	struct ibv_recv_wr rwr = { .wr_id = 1000, .sg_list = &sge, .num_sge = 1 }, *bad_rwr;
	struct ibv_wc wc[8];
	int i, n, err;

	if (ibv_modify_qp(rc, &qa, IBV_QP_STATE) || !rc_to_rtr(rc, gid, rc->qp_num))
		return 0;
	for (i = 0; i < 3; i++) {
		swr.wr_id = i + 1;
		err = ibv_post_send(rc, &swr, &bad_swr);
		printf("# send %d posted in RTR: %s\n", i + 1, strerror(err));
	}
	if (ibv_modify_qp(rc, &qa, IBV_QP_STATE) || !connect_rc(rc, rc->qp_num, gid_value, gid, 14, 7))
		return 0;
	swr.wr_id = 2000;
	if (ibv_post_recv(rc, &rwr, &bad_rwr) || ibv_post_send(rc, &swr, &bad_swr))
		return 0;
	n = poll_cq_for(cq, wc, 8, 2);
	for (i = 0; i < n; i++)
		printf("# completion: wr_id %llu, status %d, opcode %d\n",
		       (unsigned long long)wc[i].wr_id, wc[i].status, wc[i].opcode);
	/* The send's completion may come first or second. */
	return n == 2 && wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS &&
	       wc[0].wr_id + wc[1].wr_id == 3000 && (wc[0].wr_id == 1000 || wc[1].wr_id == 1000);
}

/* create_fails: creating a QP with @a fails with @want (0: any errno). */
static int create_fails(struct ibv_pd *pd, struct ibv_qp_init_attr a, int want)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, &a);
	if (qp) {
		ibv_destroy_qp(qp);
		return 0;
	}
	printf("# errno %d (%s)\n", errno, strerror(errno));
	return want ? errno == want : errno != 0;
}

/*
 * A UD QP attaches to a group twice (which is once) and detaches once;
 * detaching again, an RC QP, and a unicast GID are EINVAL. (Traffic to
 * groups: data_multicast.)
 */
static int mcast_verbs(struct ibv_qp *ud, struct ibv_qp *rc)
{
	union ibv_gid group = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 } };
	union ibv_gid unicast = { .raw = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 } };
	int ok;

	ok = !ibv_attach_mcast(ud, &group, 0) && !ibv_attach_mcast(ud, &group, 0) &&
	     !ibv_detach_mcast(ud, &group, 0);
	ok &= ibv_detach_mcast(ud, &group, 0) == EINVAL;
	ok &= ibv_attach_mcast(rc, &group, 0) == EINVAL;
	ok &= ibv_attach_mcast(ud, &unicast, 0) == EINVAL;
	return ok;
}

int main(int argc, char **argv)
{
	static struct ibv_qp *qps[NR_QPS];
	static uint32_t qpns[NR_QPS];
	struct ibv_qp *rc, *uc, *ud, *again;
	struct ibv_qp_init_attr a, qa_init;
	struct ibv_qp_attr qa;
	struct ibv_device_attr dev_attr;
	static char buf[4096];
	int n, gid;
	union ibv_gid gid_value;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	int i, ok;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..18\n");
	ctx = open_device(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	gid = ctx ? ipv4_gid(ctx, &gid_value) : -1;
	report(ctx && pd && cq && gid >= 0, "open the device, allocate a PD and a CQ, find an IPv4 GID");
	if (!pd || !cq)
		return 1;

	a = attr(cq, IBV_QPT_RC);
	rc = ibv_create_qp(pd, &a);
	report(rc && rc->qp_num >= 16 && a.cap.max_send_wr >= 64 && a.cap.max_recv_wr >= 100 &&
	       a.cap.max_send_sge >= 4 && a.cap.max_recv_sge >= 4 && a.cap.max_inline_data >= 64,
	       "an RC QP, with at least the capacities asked for");
	if (!rc)
		return 1;
	printf("# qpn %u, send_wr %u, recv_wr %u\n", rc->qp_num, a.cap.max_send_wr,
	       a.cap.max_recv_wr);

	/* Receives may only be posted from INIT on (IBA C10-97.2.1). */
	report(rc_to_rts(rc, gid, rc->qp_num), "RESET, INIT, RTR, RTS, looped back to itself");
	n = fill_rq(rc, buf);
	printf("# %d receives posted\n", n);
	report(n == (int)a.cap.max_recv_wr, "the receive ring takes exactly max_recv_wr receives");

	memset(&qa, 0, sizeof(qa));
	report(!ibv_query_qp(rc, &qa, IBV_QP_STATE, &qa_init) && qa.qp_state == IBV_QPS_RTS &&
	       qa.path_mtu == IBV_MTU_1024 && qa.dest_qp_num == rc->qp_num &&
	       qa.rq_psn == 0x456 && qa.sq_psn == 0x789 && qa.max_dest_rd_atomic == 4 &&
	       qa.max_rd_atomic == 4 && qa.min_rnr_timer == 12 && qa.timeout == 14 &&
	       qa.retry_cnt == 7 && qa.rnr_retry == 7 && qa.port_num == 1 &&
	       qa.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) &&
	       qa_init.cap.max_recv_wr == a.cap.max_recv_wr,
	       "query reports every attribute that was set");
	report(qa.ah_attr.is_global && qa.ah_attr.port_num == 1 &&
	       qa.ah_attr.grh.sgid_index == gid && qa.ah_attr.grh.hop_limit == 64 &&
	       !memcmp(&qa.ah_attr.grh.dgid, &gid_value, sizeof(gid_value)),
	       "query reports the address vector: destination GID, source GID index, hop limit");

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	errno = ibv_modify_qp(rc, &qa, IBV_QP_STATE);
	report(errno == EINVAL, "RTS back to RTR: EINVAL");
	qa.qp_state = IBV_QPS_RTS;
	qa.timeout = 32;
	errno = ibv_modify_qp(rc, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT);
	report(errno == EINVAL, "a timeout beyond 31: EINVAL");
	report(mr && reset_discards(rc, cq, mr, gid, &gid_value),
	       "RESET drops posted requests: the next connection sees none of them");
	qa.qp_state = IBV_QPS_ERR;
	report(!ibv_modify_qp(rc, &qa, IBV_QP_STATE), "RTS to ERR");

	a = attr(cq, IBV_QPT_UC);
	a.sq_sig_all = 1;
	uc = ibv_create_qp(pd, &a);
	a = attr(cq, IBV_QPT_UD);
	ud = ibv_create_qp(pd, &a);
	report(uc && ud && uc->qp_num != rc->qp_num && ud->qp_num != rc->qp_num &&
	       uc->qp_num != ud->qp_num, "UC and UD QPs, with distinct numbers");
	/* uverbs copies what the driver leaves of its kmalloc'd attributes. */
	memset(&qa_init, 0xa5, sizeof(qa_init));
	ok = uc && !ibv_query_qp(uc, &qa, IBV_QP_STATE, &qa_init) && qa_init.sq_sig_all == 1;
	memset(&qa_init, 0xa5, sizeof(qa_init));
	ok &= !ibv_query_qp(rc, &qa, IBV_QP_STATE, &qa_init) && qa_init.sq_sig_all == 0;
	report(ok, "query reports whether a QP signals every request: UC yes, RC no");

	ok = 1;
	for (i = 0; i < NR_QPS && ok; i++) {
		a = attr(cq, IBV_QPT_RC);
		a.cap.max_send_wr = 1 + i * 97 % 8000;
		ok = (qps[i] = ibv_create_qp(pd, &a)) != NULL;
		qpns[i] = ok ? qps[i]->qp_num : 0;
	}
	for (i = 0; i < NR_QPS && ok; i++)
		ok = !ibv_destroy_qp(qps[i]);
	/*
	 * QP numbers are given out in turn, as rxe's: one just given back is
	 * not taken again at once (a peer's CM would refuse the new QP's
	 * connection as stale while it still holds the old one's).
	 */
	a = attr(cq, IBV_QPT_RC);
	again = ok ? ibv_create_qp(pd, &a) : NULL;
	ok = again != NULL;
	for (i = 0; i < NR_QPS && ok; i++)
		ok = again->qp_num != qpns[i];
	if (again) {
		printf("# after QPs %u to %u, QP %u\n", qpns[0], qpns[NR_QPS - 1], again->qp_num);
		ok &= !ibv_destroy_qp(again);
	}
	report(ok, "100 QPs of assorted sizes created and destroyed; the next takes none of their numbers");

	/* One more WR than the device reports it takes. */
	a = attr(cq, IBV_QPT_RC);
	ok = !ibv_query_device(ctx, &dev_attr);
	a.cap.max_send_wr = dev_attr.max_qp_wr + 1;
	ok &= create_fails(pd, a, EINVAL);
	a = attr(cq, IBV_QPT_RC);
	a.cap.max_recv_sge = 33;
	ok &= create_fails(pd, a, EINVAL);
	a = attr(cq, IBV_QPT_RC);
	a.cap.max_inline_data = 4096;
	ok &= create_fails(pd, a, EINVAL);
	report(ok, "more WRs, SGEs or inline data than the device has: EINVAL");

	report(create_fails(pd, attr(cq, IBV_QPT_RAW_PACKET), 0), "a raw packet QP: refused");

	report(ud && mcast_verbs(ud, rc), "multicast: attach, detach, and what they refuse");

	report(!ibv_destroy_qp(uc) && !ibv_destroy_qp(ud), "destroy the UC and UD QPs");

	/* The RC QP, its CQ and PD are left for the kernel to clean up. */
	report(!ibv_close_device(ctx), "close the device with a QP still open");
	return failed ? 1 : 0;
}
