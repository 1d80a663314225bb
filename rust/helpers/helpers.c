// SPDX-License-Identifier: GPL-2.0
/*
 * C wrappers of static inline functions, linked into rroce.ko.
 */

#include <linux/if_vlan.h>
#include <net/addrconf.h>

#include "helpers.h"

int rroce_ib_mtu_enum_to_int(enum ib_mtu mtu)
{
	return ib_mtu_enum_to_int(mtu);
}

enum ib_mtu rroce_iboe_get_mtu(int netdev_mtu)
{
	return iboe_get_mtu(netdev_mtu);
}

void rroce_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void rroce_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

void rroce_ib_device_hold(struct ib_device *dev)
{
	refcount_inc(&dev->refcount);
}

bool rroce_netif_oper_up(const struct net_device *dev)
{
	return netif_running(dev) && netif_carrier_ok(dev);
}

bool rroce_is_vlan_dev(const struct net_device *dev)
{
	return is_vlan_dev(dev);
}

void rroce_netdev_eui64(const struct net_device *dev, u8 *eui)
{
	addrconf_addr_eui48(eui, dev->dev_addr);
}

struct net_device *rroce_netdev_notifier_info_to_dev(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

/*
 * A kernel UDP socket on @port of the initial network namespace whose
 * datagrams go to @rcv (udp_sock_create() is static inline, and its
 * configuration has bitfields Rust cannot set).
 */
int rroce_udp_tunnel_open(bool ipv6, u16 port, udp_tunnel_encap_rcv_t rcv,
			  struct socket **sockp)
{
	struct udp_port_cfg udp_cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(port),
	};
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.encap_type = 1,
		.encap_rcv = rcv,
	};
	int err;

	err = udp_sock_create(&init_net, &udp_cfg, sockp);
	if (err)
		return err;
	setup_udp_tunnel_sock(&init_net, *sockp, &tnl_cfg);
	return 0;
}

void rroce_kfree_skb(struct sk_buff *skb)
{
	kfree_skb(skb);
}

/* The user context and driver data of a uverbs command; none for kernel callers. */
struct ib_ucontext *rroce_attrs_ucontext(struct uverbs_attr_bundle *attrs)
{
	return attrs ? attrs->context : NULL;
}

struct ib_udata *rroce_attrs_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}

/* A macro, so that memory allocation profiling charges the caller. */
void *rroce_vmalloc_user(unsigned long size)
{
	return vmalloc_user(size);
}

/* The user context of a command's driver udata (rdma_udata_to_drv_context). */
struct ib_ucontext *rroce_udata_ucontext(struct ib_udata *udata)
{
	return udata ? container_of(udata, struct uverbs_attr_bundle, driver_udata)->context :
		       NULL;
}

/*
 * The data path: socket buffers, routes and IP output.
 */

/* Room in front of a RoCEv2 packet for the link, IP and UDP headers. */
#define RROCE_HEADROOM (LL_MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr))

/* A buffer of @len zeroed bytes with room for the headers in front. */
struct sk_buff *rroce_skb_alloc(unsigned int len)
{
	struct sk_buff *skb = alloc_skb(RROCE_HEADROOM + len, GFP_KERNEL);

	if (!skb)
		return NULL;
	skb_reserve(skb, RROCE_HEADROOM);
	memset(skb_put(skb, len), 0, len);
	return skb;
}

unsigned char *rroce_skb_data(struct sk_buff *skb, unsigned int *len)
{
	*len = skb_headlen(skb);
	return skb->data;
}

int rroce_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

/* The IP header of a received or built packet: network to transport header. */
unsigned char *rroce_skb_ip_header(struct sk_buff *skb, unsigned int *len)
{
	*len = skb_transport_header(skb) - skb_network_header(skb);
	return skb_network_header(skb);
}

/* Moves data from the IP header to the UDP header, as UDP delivers it. */
void rroce_skb_pull_to_transport(struct sk_buff *skb)
{
	__skb_pull(skb, skb_transport_offset(skb));
}

/*
 * Routes a packet from @saddr to @daddr (IPv4-mapped for IPv4) out of
 * @ndev, and attaches the route to it. Returns 1 if the destination is a
 * local address, 0 if the packet is to go out, or a negative errno.
 */
int rroce_skb_route(struct sk_buff *skb, struct net_device *ndev,
		    const struct in6_addr *saddr, const struct in6_addr *daddr)
{
	struct net *net = dev_net(ndev);
	struct dst_entry *dst;
	bool v4 = ipv6_addr_v4mapped(daddr);

	if (v4 != ipv6_addr_v4mapped(saddr))
		return -EINVAL;
	if (v4) {
		struct flowi4 fl = {
			.flowi4_oif = ndev->ifindex,
			.saddr = saddr->s6_addr32[3],
			.daddr = daddr->s6_addr32[3],
			.flowi4_proto = IPPROTO_UDP,
		};
		struct rtable *rt = ip_route_output_key(net, &fl);

		if (IS_ERR(rt))
			return PTR_ERR(rt);
		dst = &rt->dst;
	} else {
		struct flowi6 fl = {
			.flowi6_oif = ndev->ifindex,
			.saddr = *saddr,
			.daddr = *daddr,
			.flowi6_proto = IPPROTO_UDP,
		};

		if (!ipv6_mod_enabled())
			return -EAFNOSUPPORT;
		dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl, NULL);
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		if (dst->error) {
			int err = dst->error;

			dst_release(dst);
			return err;
		}
	}

	skb_scrub_packet(skb, false);
	skb_clear_hash(skb);
	skb_dst_set(skb, dst);
	skb->ip_summed = CHECKSUM_NONE;
	skb->dev = dst->dev;
	return (dst->dev->flags & IFF_LOOPBACK) ? 1 : 0;
}

unsigned char *rroce_skb_push(struct sk_buff *skb, unsigned int len)
{
	return __skb_push(skb, len);
}

void rroce_skb_reset_network_header(struct sk_buff *skb)
{
	skb_reset_network_header(skb);
}

void rroce_skb_set_transport_header(struct sk_buff *skb, int offset)
{
	skb_set_transport_header(skb, offset);
}

/* The IP layer's control block: IPCB or IP6CB, zeroed for a new packet. */
void rroce_skb_clear_cb(struct sk_buff *skb)
{
	memset(skb->cb, 0, sizeof(skb->cb));
}

void rroce_skb_set_protocol(struct sk_buff *skb, __be16 protocol)
{
	skb->protocol = protocol;
}

void rroce_ip_select_ident(struct sk_buff *skb)
{
	__ip_select_ident(dev_net(skb_dst(skb)->dev), ip_hdr(skb), 1);
}

/* Sends a packet rroce_skb_route() prepared; consumes it. */
int rroce_skb_ip_output(struct sk_buff *skb)
{
	struct net *net = dev_net(skb_dst(skb)->dev);
	int err;

	if (skb->protocol == htons(ETH_P_IP))
		err = ip_local_out(net, skb->sk, skb);
	else
		err = ip6_local_out(net, skb->sk, skb);
	return net_xmit_eval(err);
}

void rroce_skb_queue_head_init(struct sk_buff_head *list)
{
	skb_queue_head_init(list);
}

void rroce_skb_queue_purge(struct sk_buff_head *list)
{
	skb_queue_purge(list);
}

u32 rroce_skb_queue_len_lockless(const struct sk_buff_head *list)
{
	return skb_queue_len_lockless(list);
}

/*
 * Queues a received packet, stamped with the jiffies it arrived at. Its
 * control block is ours: the UDP tunnel has handed it over, or we built it.
 */
void rroce_skb_queue_stamped(struct sk_buff_head *list, struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(unsigned long) > sizeof(skb->cb));
	*(unsigned long *)skb->cb = jiffies;
	skb_queue_tail(list, skb);
}

/*
 * Dequeues the oldest packet of @list and, under the same lock, records its
 * stamp in @handling (0 if there is none): while it is being handled, it is
 * in neither place otherwise.
 */
struct sk_buff *rroce_skb_dequeue_stamped(struct sk_buff_head *list,
					  unsigned long *handling)
{
	struct sk_buff *skb;
	unsigned long flags;

	spin_lock_irqsave(&list->lock, flags);
	skb = __skb_dequeue(list);
	*handling = skb ? *(unsigned long *)skb->cb : 0;
	spin_unlock_irqrestore(&list->lock, flags);
	return skb;
}

/*
 * The stamp of the packet being handled, else of the oldest on @list, else
 * @now: every packet that arrived before it has been handled.
 */
unsigned long rroce_skb_queue_oldest(struct sk_buff_head *list,
				     const unsigned long *handling,
				     unsigned long now)
{
	struct sk_buff *skb;
	unsigned long flags;

	spin_lock_irqsave(&list->lock, flags);
	skb = skb_peek(list);
	if (*handling)
		now = *handling;
	else if (skb)
		now = *(unsigned long *)skb->cb;
	spin_unlock_irqrestore(&list->lock, flags);
	return now;
}

/*
 * Work items and completion handlers.
 */

void rroce_init_work(struct work_struct *work, work_func_t func)
{
	INIT_WORK(work, func);
}

void rroce_init_delayed_work(struct delayed_work *work, work_func_t func)
{
	INIT_DELAYED_WORK(work, func);
}

bool rroce_queue_work(struct work_struct *work)
{
	return queue_work(system_wq, work);
}

bool rroce_queue_delayed_work(struct delayed_work *work, unsigned long delay)
{
	return queue_delayed_work(system_wq, work, delay);
}

unsigned long rroce_usecs_to_jiffies(unsigned int us)
{
	return usecs_to_jiffies(us);
}

unsigned long rroce_jiffies(void)
{
	return jiffies;
}

void rroce_cq_comp_handler(struct ib_cq *cq)
{
	if (cq->comp_handler)
		cq->comp_handler(cq, cq->cq_context);
}

/*
 * Pinned user memory: its pages, and copies to and from them.
 */

/* Calls @fn for each page of @umem, in order; stops at a nonzero return. */
int rroce_umem_for_each_page(struct ib_umem *umem, int (*fn)(void *ctx, struct page *page),
			     void *ctx)
{
	struct sg_page_iter iter;
	int err;

	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		err = fn(ctx, sg_page_iter_page(&iter));
		if (err)
			return err;
	}
	return 0;
}

unsigned long rroce_umem_offset(struct ib_umem *umem)
{
	return ib_umem_offset(umem);
}

bool rroce_virt_addr_valid(const void *addr)
{
	return virt_addr_valid(addr);
}

struct page *rroce_virt_to_page(const void *addr)
{
	return virt_to_page(addr);
}

/* Copies @len bytes at @offset in @page to (@to_page) or from @buf. */
void rroce_page_copy(struct page *page, unsigned int offset, void *buf, unsigned int len,
		     bool to_page)
{
	void *va = kmap_local_page(page);

	if (to_page)
		memcpy(va + offset, buf, len);
	else
		memcpy(buf, va + offset, len);
	kunmap_local(va);
}

/*
 * The IB atomics on an aligned u64 at @offset in @page: compare and swap if
 * @cmp_swap, else fetch and add. Returns the original value.
 */
u64 rroce_page_atomic(struct page *page, unsigned int offset, bool cmp_swap, u64 compare,
		      u64 swap_add)
{
	u64 *va = kmap_local_page(page) + offset;
	u64 orig;

	if (cmp_swap)
		orig = cmpxchg64(va, compare, swap_add);
	else
		orig = atomic64_fetch_add(swap_add, (atomic64_t *)va);
	kunmap_local(va);
	return orig;
}

struct net_device *rroce_skb_dev(struct sk_buff *skb)
{
	return skb->dev;
}

/* A lock-free list, for work posted from any context (llist.h). */
bool rroce_llist_add(struct llist_node *node, struct llist_head *head)
{
	return llist_add(node, head);
}

struct llist_node *rroce_llist_del_all(struct llist_head *head)
{
	return llist_del_all(head);
}

bool rroce_mod_delayed_work(struct delayed_work *work, unsigned long delay)
{
	return mod_delayed_work(system_wq, work, delay);
}
