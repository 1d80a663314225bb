// SPDX-License-Identifier: GPL-2.0
/*
 * C wrappers of static inline functions, linked into rroce.ko.
 */

#include <linux/if_vlan.h>
#include <linux/crc32.h>
#include <net/addrconf.h>
#ifdef CONFIG_X86_64
#include <asm/fpu/api.h>
#endif

#include "helpers.h"

enum ib_mtu rroce_iboe_get_mtu(int netdev_mtu)
{
	return iboe_get_mtu(netdev_mtu);
}

struct ib_device *rroce_rdma_device_to_ibdev(struct device *device)
{
	return rdma_device_to_ibdev(device);
}

void rroce_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void rroce_dev_put(struct net_device *dev)
{
	dev_put(dev);
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

struct in_device *rroce_in_dev_get_rtnl(const struct net_device *dev)
{
	return __in_dev_get_rtnl(dev);
}

void rroce_ip_mc_dec_group(struct in_device *in_dev, __be32 addr)
{
	ip_mc_dec_group(in_dev, addr);
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

/*
 * Room in front of a RoCEv2 packet for the link, IP and UDP headers; 12
 * more than a multiple of 16, so that in a head aligned to 16 (kmalloc's,
 * or a page fragment's behind NET_SKB_PAD) an IPv4 header,
 * 28 bytes before the BTH, starts 16-byte aligned, as the CPU's carry-less
 * multiply CRC takes its input: the ICRC then starts there, not with a
 * table walk up to the next 16 bytes.
 */
#define RROCE_SKB_HEADROOM \
	(ALIGN(LL_MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr), 16) + 12)

/*
 * A packet of @len bytes at *@data, uninitialised, behind the headroom,
 * with room for @room if that is more (for rroce_skb_reuse to fill later).
 * Its head comes from the per-CPU page fragment cache, as a NIC's
 * receive buffers do: a pointer bumped within a page, freed by dropping a
 * page reference. kmalloc's 2 KiB objects, freed in the order they were
 * sent, often went back to a slab other than the CPU's, the slow path.
 * The cache does not reclaim memory (__netdev_alloc_skb takes kmalloc when
 * asked to), so kmalloc with reclaim is the fallback.
 */
struct sk_buff *rroce_alloc_skb(unsigned int len, unsigned int room, unsigned char **data)
{
	struct sk_buff *skb;
	unsigned int size;

	if (check_add_overflow(max(len, room), RROCE_SKB_HEADROOM, &size))
		return NULL;
	skb = __netdev_alloc_skb(NULL, size, GFP_NOWAIT | __GFP_NOWARN);
	skb = skb ?: alloc_skb(size, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, RROCE_SKB_HEADROOM);
	*data = skb_put(skb, len);
	return skb;
}

/*
 * Empties a packet that this device sent itself, and has handled, for the
 * next: @len bytes put behind the headroom that rroce_alloc_skb leaves,
 * returned; NULL if they do not fit. Such a packet never met the IP layer
 * (struct rroce_rx_cb's local): it holds no route, socket, destructor or
 * conntrack entry, and only the data pointers and the headers that
 * rroce_skb_set_ip_udp sets again have moved.
 */
unsigned char *rroce_skb_reuse(struct sk_buff *skb, unsigned int len)
{
	unsigned int size;

	if (check_add_overflow(len, RROCE_SKB_HEADROOM, &size) ||
	    skb_shared(skb) || skb_cloned(skb) || skb_is_nonlinear(skb) ||
	    skb_end_offset(skb) < size)
		return NULL;
	skb->data = skb->head + RROCE_SKB_HEADROOM;
	skb_reset_tail_pointer(skb);
	skb->len = 0;
	return skb_put(skb, len);
}

/* The linear data, if no clone shares it: the caller may write it. */
unsigned char *rroce_skb_own_data(struct sk_buff *skb, unsigned int *len)
{
	if (skb_cloned(skb))
		return NULL;
	*len = skb_headlen(skb);
	return skb->data;
}

int rroce_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

/*
 * A received packet from its IP header to its end, if its data is linear
 * and starts at its UDP header (as the UDP layer and our own receive queue
 * hand it over), with its IP header's length in *ip_len. *own says whether
 * the data is its own, not shared with a clone (as packet capture's may
 * be): the caller may write it then.
 */
unsigned char *rroce_skb_datagram(struct sk_buff *skb, unsigned int *len,
				  unsigned int *ip_len, bool *own)
{
	if (skb_is_nonlinear(skb) || skb->data != skb_transport_header(skb))
		return NULL;
	*own = !skb_cloned(skb);
	*ip_len = skb_transport_header(skb) - skb_network_header(skb);
	*len = skb_tail_pointer(skb) - skb_network_header(skb);
	return skb_network_header(skb);
}

/* Moves data from the IP header to the UDP header, as UDP delivers it. */
void rroce_skb_pull_to_transport(struct sk_buff *skb)
{
	__skb_pull(skb, skb_transport_offset(skb));
}

struct net *rroce_dev_net(const struct net_device *dev)
{
	return dev_net(dev);
}

struct rtable *rroce_ip_route_output_key(struct net *net, struct flowi4 *fl)
{
	return ip_route_output_key(net, fl);
}

struct dst_entry *rroce_rtable_dst(struct rtable *rt)
{
	return &rt->dst;
}

bool rroce_ipv6_mod_enabled(void)
{
	return ipv6_mod_enabled();
}

struct dst_entry *rroce_ip6_dst_lookup_flow(struct net *net, struct flowi6 *fl)
{
	return ipv6_stub->ipv6_dst_lookup_flow(net, NULL, fl, NULL);
}

int rroce_dst_error(const struct dst_entry *dst)
{
	return dst->error;
}

bool rroce_dst_dev_is_loopback(const struct dst_entry *dst)
{
	return dst->dev->flags & IFF_LOOPBACK;
}

void rroce_dst_hold(struct dst_entry *dst)
{
	dst_hold(dst);
}

struct dst_entry *rroce_dst_check(struct dst_entry *dst, u32 cookie)
{
	return dst_check(dst, cookie);
}

u32 rroce_rt6_get_cookie(struct dst_entry *dst)
{
	return rt6_get_cookie(dst_rt6_info(dst));
}

/*
 * Attaches @dst, whose reference the skb takes, to a packet of ours: it
 * forgets where it came from, carries no checksum for the device to
 * finish, and goes out of the route's device. One call for what each
 * packet needs (a call per static inline costs as much as most of them).
 */
void rroce_skb_set_route(struct sk_buff *skb, struct dst_entry *dst)
{
	skb_scrub_packet(skb, false);
	skb_clear_hash(skb);
	skb->ip_summed = CHECKSUM_NONE;
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
}

__be16 rroce_skb_protocol(const struct sk_buff *skb)
{
	return skb->protocol;
}

unsigned char *rroce_skb_push(struct sk_buff *skb, unsigned int len)
{
	return __skb_push(skb, len);
}

/*
 * Marks the IP header (IPv4 if @v4) at the data and the UDP header
 * @ip_len bytes on, with a zeroed control block for the IP layer (IPCB or
 * IP6CB), as a new packet of that protocol.
 */
void rroce_skb_set_ip_udp(struct sk_buff *skb, int ip_len, bool v4)
{
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, ip_len);
	memset(skb->cb, 0, sizeof(skb->cb));
	skb->protocol = htons(v4 ? ETH_P_IP : ETH_P_IPV6);
}

void rroce_skb_queue_head_init(struct sk_buff_head *list)
{
	skb_queue_head_init(list);
}

void rroce_skb_queue_purge(struct sk_buff_head *list)
{
	skb_queue_purge(list);
}

/* How a queued packet came, in its control block (ours while queued). */
static_assert(sizeof(struct rroce_rx_cb) <= sizeof_field(struct sk_buff, cb));

/* The queue's lock, with interrupts off: it is taken in softirq context. */
unsigned long rroce_skb_queue_lock(struct sk_buff_head *list)
{
	unsigned long flags;

	spin_lock_irqsave(&list->lock, flags);
	return flags;
}

void rroce_skb_queue_unlock(struct sk_buff_head *list, unsigned long flags)
{
	spin_unlock_irqrestore(&list->lock, flags);
}

void rroce___skb_queue_tail(struct sk_buff_head *list, struct sk_buff *skb)
{
	__skb_queue_tail(list, skb);
}

struct sk_buff *rroce___skb_dequeue(struct sk_buff_head *list)
{
	return __skb_dequeue(list);
}

/*
 * skb_queue_splice_tail_init(), with head's length written once: it is
 * read without the lock (skb_queue_len_lockless()).
 */
void rroce_skb_queue_splice_tail_init(struct sk_buff_head *list,
				      struct sk_buff_head *head)
{
	u32 qlen = head->qlen + list->qlen;

	if (skb_queue_empty(list))
		return;
	__skb_queue_splice(list, head->prev, (struct sk_buff *)head);
	WRITE_ONCE(head->qlen, qlen);
	__skb_queue_head_init(list);
}

struct sk_buff *rroce_skb_peek(const struct sk_buff_head *list)
{
	return skb_peek(list);
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

/*
 * Completion vectors, one per online CPU, as a NIC has one interrupt per
 * CPU: a CQ's completion handler runs on its vector's CPU, so that the
 * polling it starts (a ULP's work or softirq) runs there too. Vectors map
 * to CPUs as drivers spread their interrupts.
 */
unsigned int rroce_num_online_cpus(void)
{
	return num_online_cpus();
}

int rroce_vector_cpu(unsigned int vector)
{
	return cpumask_local_spread(vector, NUMA_NO_NODE);
}

/*
 * Whether the caller runs on @cpu; if so it stays there, sleeping or not,
 * until rroce_unpin_cpu().
 */
bool rroce_pin_to_cpu(int cpu)
{
	migrate_disable();
	if (raw_smp_processor_id() == cpu)
		return true;
	migrate_enable();
	return false;
}

void rroce_unpin_cpu(void)
{
	migrate_enable();
}

bool rroce_queue_work_on(int cpu, struct work_struct *work)
{
	return queue_work_on(cpu, system_highpri_wq, work);
}

/*
 * The receive and kick work, which do what softirq would for a hardware
 * device: on the high-priority workers (urgent), so that a process
 * busy-polling its CQ on the same CPU does not take half of the CPU from the
 * packets it waits for; or, as softirq hands over to ksoftirqd, on the
 * ordinary ones once the receive work has been at it for a while, so that it
 * cannot starve the rest of the CPU. The receive work yields after a budget
 * of packets.
 */
bool rroce_queue_device_work(struct work_struct *work, bool urgent)
{
	return queue_work(urgent ? system_highpri_wq : system_wq, work);
}

/*
 * Arms @work to run in @delay jiffies, or sooner if it already is.
 * queue_delayed_work() alone keeps a later expiry that is pending, so one
 * QP's long timeout would hold back another's retransmission;
 * mod_delayed_work() alone would push an earlier one back. Two callers
 * racing here can still leave the later of their two expiries: the timer
 * then fires late once, and Driver::tick re-arms for whatever is still due.
 */
bool rroce_arm_delayed_work(struct delayed_work *work, unsigned long delay)
{
	unsigned long expires = jiffies + delay;

	if (queue_delayed_work(system_wq, work, delay))
		return true;
	/* Not pending on the timer: queued to run now, or just ran. */
	if (!timer_pending(&work->timer) ||
	    time_before_eq(READ_ONCE(work->timer.expires), expires))
		return false;
	return mod_delayed_work(system_wq, work, delay);
}

bool rroce_work_pending(struct work_struct *work)
{
	return work_pending(work);
}

/*
 * Called with bottom halves off, as a hardware driver's interrupt would
 * call it: the core's ib_cq_completion_softirq then polls at once on this
 * CPU, and its irq_poll is not raised from process context.
 */
void rroce_cq_comp_handler(struct ib_cq *cq)
{
	if (!cq->comp_handler)
		return;
	local_bh_disable();
	cq->comp_handler(cq, cq->cq_context);
	local_bh_enable();
}

/*
 * Pinned user memory: its pages, and copies to and from them.
 */

struct page *rroce_sg_page_iter_page(struct sg_page_iter *iter)
{
	return sg_page_iter_page(iter);
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

void *rroce_kmap_local_page(struct page *page)
{
	return kmap_local_page(page);
}

void rroce_kunmap_local(void *addr)
{
	kunmap_local(addr);
}

u64 rroce_cmpxchg64(u64 *ptr, u64 old, u64 new)
{
	return cmpxchg64(ptr, old, new);
}

u64 rroce_fetch_add64(u64 *ptr, u64 add)
{
	return atomic64_fetch_add(add, (atomic64_t *)ptr);
}

void rroce_store_release64(u64 *ptr, u64 value)
{
	smp_store_release(ptr, value);
}

void rroce_wmb(void)
{
	wmb();
}

/*
 * On-demand paging: user memory faulted in as the device touches it, under
 * the umem's mutex, which its MMU notifier also takes to unmap pages.
 * Without CONFIG_INFINIBAND_ON_DEMAND_PAGING ib_umem_odp_get() always
 * fails, so the rest is never reached.
 */

bool rroce_odp_supported(void)
{
	return IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING);
}

struct ib_umem_odp *rroce_umem_odp_get(struct ib_device *dev, unsigned long addr, size_t size,
				       int access, const struct mmu_interval_notifier_ops *ops)
{
	return ib_umem_odp_get(dev, addr, size, access, ops);
}

void rroce_umem_odp_release(struct ib_umem_odp *odp)
{
	ib_umem_odp_release(odp);
}

/*
 * An implicit umem holds the process's mm only by pointer, which its
 * children's notifiers pin; until it has one, rroce pins it itself.
 */
struct ib_umem_odp *rroce_umem_odp_alloc_implicit(struct ib_device *dev, int access)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	struct ib_umem_odp *odp = ib_umem_odp_alloc_implicit(dev, access);

	if (!IS_ERR(odp))
		mmgrab(odp->umem.owning_mm);
	return odp;
#else
	return ERR_PTR(-EOPNOTSUPP);
#endif
}

void rroce_umem_odp_release_implicit(struct ib_umem_odp *odp)
{
	struct mm_struct *mm = odp->umem.owning_mm;

	ib_umem_odp_release(odp);
	mmdrop(mm);
}

struct ib_umem_odp *rroce_umem_odp_alloc_child(struct ib_umem_odp *root, unsigned long addr,
					       size_t size,
					       const struct mmu_interval_notifier_ops *ops)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	return ib_umem_odp_alloc_child(root, addr, size, ops);
#else
	return ERR_PTR(-EOPNOTSUPP);
#endif
}

int rroce_umem_odp_map_and_lock(struct ib_umem_odp *odp, u64 addr, u64 len, bool write,
				bool fault)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	u64 access = ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);

	return ib_umem_odp_map_dma_and_lock(odp, addr, len, access, fault);
#else
	return -EOPNOTSUPP;
#endif
}

void rroce_umem_odp_unmap(struct ib_umem_odp *odp, u64 start, u64 end)
{
#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
	ib_umem_odp_unmap_dma_pages(odp, start, end);
#endif
}

void rroce_umem_odp_lock(struct ib_umem_odp *odp)
{
	mutex_lock(&odp->umem_mutex);
}

void rroce_umem_odp_unlock(struct ib_umem_odp *odp)
{
	mutex_unlock(&odp->umem_mutex);
}

unsigned long rroce_umem_odp_start(struct ib_umem_odp *odp)
{
	return ib_umem_start(odp);
}

bool rroce_mmu_notifier_range_blockable(const struct mmu_notifier_range *range)
{
	return mmu_notifier_range_blockable(range);
}

void rroce_mmu_interval_set_seq(struct mmu_interval_notifier *mni, unsigned long seq)
{
	mmu_interval_set_seq(mni, seq);
}

struct page *rroce_virt_dma_to_page(u64 dma_addr)
{
	return ib_virt_dma_to_page(dma_addr);
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

unsigned int rroce_crypto_shash_descsize(struct crypto_shash *tfm)
{
	return crypto_shash_descsize(tfm);
}

void rroce_crypto_free_shash(struct crypto_shash *tfm)
{
	crypto_free_shash(tfm);
}

#ifdef CONFIG_X86_64
/* crc32_copy_x86_64.S */
u32 rroce_crc32_fold_copy(u32 crc, const u8 *head, size_t head_len, u8 *dst,
			  const u8 *src, size_t len);
u32 rroce_crc32_fold_copy_avx2(u32 crc, const u8 *head, size_t head_len,
			       u8 *dst, const u8 *src, size_t len);
u32 rroce_crc32_fold(u32 crc, const u8 *p, size_t len);
u32 rroce_crc32_fold_avx2(u32 crc, const u8 *p, size_t len);
#endif

#ifdef CONFIG_X86_64
/*
 * How rroce_crc32() and rroce_crc32_copy() compute, chosen once per load by
 * rroce_crc32_select(): by the table (crc32_le(), after the copy), or by
 * our folds, with SSE's or AVX2's loads and stores.
 */
enum rroce_crc_form { RROCE_CRC_TABLE, RROCE_CRC_SSE, RROCE_CRC_AVX2 };
static enum rroce_crc_form rroce_crc_form __read_mostly;

#define CRC_TIMED_LEN 1024
#define CRC_TIMED_ROUNDS 64

/*
 * The best of three times of CRC_TIMED_ROUNDS rounds in the form set, each
 * a KiB hashed and a KiB hashed as its last 960 bytes are copied.
 */
static u64 rroce_crc_ns(u8 *buf)
{
	u8 *dst = buf + CRC_TIMED_LEN;
	u64 best = U64_MAX;
	u32 seen = 0;
	int i, j;

	for (i = 0; i < 3; i++) {
		u64 t;

		preempt_disable();
		t = ktime_get_ns();
		for (j = 0; j < CRC_TIMED_ROUNDS; j++)
			seen ^= rroce_crc32(0, buf, CRC_TIMED_LEN) ^
				rroce_crc32_copy(0, buf, 64, dst, buf + 64,
						 CRC_TIMED_LEN - 64);
		t = ktime_get_ns() - t;
		preempt_enable();
		best = min(best, t);
	}
	/* The table's crc32_le() is __pure: its results must be used. */
	OPTIMIZER_HIDE_VAR(seen);
	return best;
}

/* As the crc32 parameter names them. */
static const char *const rroce_crc_names[] = { "table", "sse", "avx2" };

/* The form the crc32 parameter names, or -1 for the fastest. */
static int rroce_crc_asked = -1;

static bool rroce_crc_available(enum rroce_crc_form form)
{
	switch (form) {
	case RROCE_CRC_TABLE:
		return true;
	case RROCE_CRC_SSE:
		/* The last block's pblendvb is SSE4.1's. */
		return boot_cpu_has(X86_FEATURE_PCLMULQDQ) &&
		       boot_cpu_has(X86_FEATURE_XMM4_1);
	case RROCE_CRC_AVX2:
		return rroce_crc_available(RROCE_CRC_SSE) &&
		       boot_cpu_has(X86_FEATURE_AVX2);
	}
	return false;
}

/*
 * Each form is timed and the fastest taken, as the kernel's xor and raid6
 * choose theirs, unless the crc32 parameter names one. A fold takes fewer
 * instructions than the table, and on real CPUs a tenth of its time, but
 * an emulated PCLMULQDQ is slow: under QEMU's TCG a 1 KiB fold took three
 * times as long as the table. And AVX2's form, with fewer instructions
 * than SSE's, took 41 ns against 37 on a Xeon with AVX-512.
 */
static void rroce_crc32_choose(void)
{
	enum rroce_crc_form form, best = RROCE_CRC_TABLE;
	u64 ns[ARRAY_SIZE(rroce_crc_names)];
	char times[64];
	size_t n = 0;
	u8 *buf;

	if (rroce_crc_asked >= 0) {
		form = rroce_crc_asked;
		if (rroce_crc_available(form)) {
			WRITE_ONCE(rroce_crc_form, form);
			pr_info("rroce: CRC-32 by %s, as the crc32 parameter asks\n",
				rroce_crc_names[form]);
			return;
		}
		pr_warn("rroce: this CPU has no %s form of the CRC-32; taking the fastest\n",
			rroce_crc_names[form]);
	}
	buf = kzalloc(2 * CRC_TIMED_LEN, GFP_KERNEL);
	if (!buf) {
		WRITE_ONCE(rroce_crc_form,
			   rroce_crc_available(RROCE_CRC_SSE) ? RROCE_CRC_SSE :
								RROCE_CRC_TABLE);
		return;
	}
	for (form = RROCE_CRC_TABLE; form <= RROCE_CRC_AVX2; form++) {
		if (!rroce_crc_available(form))
			break;
		WRITE_ONCE(rroce_crc_form, form);
		ns[form] = rroce_crc_ns(buf);
		if (ns[form] < ns[best])
			best = form;
		n += scnprintf(times + n, sizeof(times) - n, " %s %llu",
			       rroce_crc_names[form], ns[form] / CRC_TIMED_ROUNDS);
	}
	kfree(buf);
	WRITE_ONCE(rroce_crc_form, best);
	pr_info("rroce: CRC-32 by %s, the fastest here; ns per KiB hashed and KiB copied:%s\n",
		rroce_crc_names[best], times);
}

static int rroce_crc_param_set(const char *val, const struct kernel_param *kp)
{
	int form = sysfs_match_string(rroce_crc_names, val);

	if (form < 0 && !sysfs_streq(val, "auto"))
		return -EINVAL;
	rroce_crc_asked = form < 0 ? -1 : form;
	return 0;
}

static int rroce_crc_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", rroce_crc_asked < 0 ? "auto" :
					rroce_crc_names[rroce_crc_asked]);
}

static const struct kernel_param_ops rroce_crc_param_ops = {
	.set = rroce_crc_param_set,
	.get = rroce_crc_param_get,
};

/*
 * How the ICRC's CRC-32 is computed: auto (the fastest form, timed when the
 * first device is added), or table, sse or avx2 where the CPU has them.
 * Read once per load, so only at load.
 */
module_param_cb(crc32, &rroce_crc_param_ops, NULL, 0444);
MODULE_PARM_DESC(crc32, "auto (the fastest, timed), table, sse or avx2");
#endif

/*
 * Chooses how rroce_crc32() and rroce_crc32_copy() compute, on the first
 * call of a load; returns whether they are for this CPU (else the crypto
 * API's crc32 is). Not DO_ONCE_SLEEPABLE(): the work it leaves to turn its
 * static key off holds the module, and an rmmod right after would fail.
 */
bool rroce_crc32_select(void)
{
#ifdef CONFIG_X86_64
	static DEFINE_MUTEX(choosing);
	static bool chosen;

	mutex_lock(&choosing);
	if (!chosen)
		rroce_crc32_choose();
	chosen = true;
	mutex_unlock(&choosing);
	return true;
#else
	return false;
#endif
}

/* Whether rroce_crc32_copy() hashes the bytes as it copies them. */
bool rroce_crc32_copy_folds(void)
{
#ifdef CONFIG_X86_64
	return READ_ONCE(rroce_crc_form) != RROCE_CRC_TABLE;
#else
	return false;
#endif
}

/*
 * crc32_le(crc, head ++ src) for a head_len that is a multiple of 64, with
 * src copied to dst: the whole 64-byte blocks in one pass that reads each
 * byte once, where the CPU allows it, and the rest after the copy. Each
 * CRC covers the bytes as copied, which another CPU may be changing in src.
 */
u32 rroce_crc32_copy(u32 crc, const u8 *head, size_t head_len, u8 *dst,
		     const u8 *src, size_t len)
{
	size_t bulk = len & ~(size_t)63;

#ifdef CONFIG_X86_64
	enum rroce_crc_form form = READ_ONCE(rroce_crc_form);

	if (head_len + bulk && !(head_len & 63) && form != RROCE_CRC_TABLE &&
	    irq_fpu_usable()) {
		kernel_fpu_begin();
		if (form == RROCE_CRC_AVX2)
			crc = rroce_crc32_fold_copy_avx2(crc, head, head_len,
							 dst, src, bulk);
		else
			crc = rroce_crc32_fold_copy(crc, head, head_len, dst,
						    src, bulk);
		kernel_fpu_end();
		head_len = 0;
	} else
#endif
		bulk = 0;
	if (head_len)
		crc = crc32_le(crc, head, head_len);
	if (len == bulk)
		return crc;
	memcpy(dst + bulk, src + bulk, len - bulk);
	return crc32_le(crc, dst + bulk, len - bulk);
}

/*
 * crc32_le(crc, p) by carry-less multiplication where the CPU has it and
 * the FPU may be taken: from 16 bytes on, at any alignment, where the
 * crypto API's crc32-pclmul walks the table for the bytes before a 16-byte
 * boundary and after the last whole block, and for anything under 79.
 */
u32 rroce_crc32(u32 crc, const u8 *p, size_t len)
{
#ifdef CONFIG_X86_64
	enum rroce_crc_form form = READ_ONCE(rroce_crc_form);

	if (len >= 16 && form != RROCE_CRC_TABLE && irq_fpu_usable()) {
		kernel_fpu_begin();
		if (form == RROCE_CRC_AVX2)
			crc = rroce_crc32_fold_avx2(crc, p, len);
		else
			crc = rroce_crc32_fold(crc, p, len);
		kernel_fpu_end();
		return crc;
	}
#endif
	return crc32_le(crc, p, len);
}

/* ID allocation, with sleeping allocations (idr.h). */
void rroce_ida_init(struct ida *ida)
{
	ida_init(ida);
}

int rroce_ida_alloc(struct ida *ida, unsigned int min, unsigned int max)
{
	return ida_alloc_range(ida, min, max, GFP_KERNEL);
}

/*
 * Packets the device sends to itself never reach its netdev. With this on,
 * a copy of each goes to the netdev's packet taps (tcpdump, Wireshark), as
 * if it had left through the netdev; off, it costs a load and a branch.
 */
bool rroce_capture_loopback;
module_param_named(capture_loopback, rroce_capture_loopback, bool, 0644);
MODULE_PARM_DESC(capture_loopback,
		 "Show packets between QPs of one device to packet capture on its netdev");

/*
 * Congestion control (DCQCN's reaction point): packets leave ECN-capable
 * and a CNP slows the QP it names down. On by default, as on RoCE NICs;
 * what a new device starts with, each device's sysfs congestion_control
 * turns it on and off.
 */
bool rroce_congestion_control = true;
module_param_named(congestion_control, rroce_congestion_control, bool, 0644);
MODULE_PARM_DESC(congestion_control,
		 "Whether new devices send ECN-capable packets and slow a QP down for the CNPs it gets");

/*
 * Shows @skb, whose data starts at its IP header, to @dev's packet taps if
 * any listen: a copy with a link-layer header from and to @dev itself.
 */
void rroce_skb_tap(struct sk_buff *skb, struct net_device *dev)
{
	struct sk_buff *copy;

	if (!dev_nit_active(dev))
		return;
	copy = skb_copy_expand(skb, LL_RESERVED_SPACE(dev), 0, GFP_ATOMIC);
	if (!copy)
		return;
	copy->dev = dev;
	skb_reset_network_header(copy);
	if (dev_hard_header(copy, dev, ntohs(copy->protocol), dev->dev_addr,
			    dev->dev_addr, copy->len) >= 0) {
		skb_reset_mac_header(copy);
		/* Taps expect what the transmit path gives them: BHs off. */
		local_bh_disable();
		dev_queue_xmit_nit(copy, dev);
		local_bh_enable();
	}
	consume_skb(copy);
}

unsigned long rroce_local_irq_save(void)
{
	unsigned long flags;

	local_irq_save(flags);
	return flags;
}

void rroce_local_irq_restore(unsigned long flags)
{
	local_irq_restore(flags);
}
