/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C wrappers of the static inline functions and macros the Rust abstractions
 * need: Rust can only call functions that exist as symbols.
 */
#ifndef RROCE_HELPERS_H
#define RROCE_HELPERS_H

#include <crypto/hash.h>
#include <linux/idr.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/llist.h>
#include <linux/mmu_notifier.h>
#include <linux/netdevice.h>
#include <linux/sched/mm.h>
#include <linux/vmalloc.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

enum ib_mtu rroce_iboe_get_mtu(int netdev_mtu);

struct ib_device *rroce_rdma_device_to_ibdev(struct device *device);

void rroce_dev_hold(struct net_device *dev);
void rroce_dev_put(struct net_device *dev);
bool rroce_netif_oper_up(const struct net_device *dev);
bool rroce_is_vlan_dev(const struct net_device *dev);
void rroce_netdev_eui64(const struct net_device *dev, u8 *eui);
struct net_device *rroce_netdev_notifier_info_to_dev(void *info);
struct in_device *rroce_in_dev_get_rtnl(const struct net_device *dev);
void rroce_ip_mc_dec_group(struct in_device *in_dev, __be32 addr);

void rroce_kfree_skb(struct sk_buff *skb);

void *rroce_vmalloc_user(unsigned long size);

struct ib_ucontext *rroce_attrs_ucontext(struct uverbs_attr_bundle *attrs);
struct ib_udata *rroce_attrs_udata(struct uverbs_attr_bundle *attrs);
struct ib_ucontext *rroce_udata_ucontext(struct ib_udata *udata);

struct sk_buff *rroce_alloc_skb(unsigned int len, unsigned int room, unsigned char **data);
unsigned char *rroce_skb_reuse(struct sk_buff *skb, unsigned int len);
int rroce_skb_linearize(struct sk_buff *skb);
unsigned char *rroce_skb_own_data(struct sk_buff *skb, unsigned int *len);
unsigned char *rroce_skb_datagram(struct sk_buff *skb, unsigned int *len,
				  unsigned int *ip_len, bool *own);
void rroce_skb_pull_to_transport(struct sk_buff *skb);
extern bool rroce_capture_loopback;
extern bool rroce_congestion_control;
void rroce_skb_tap(struct sk_buff *skb, struct net_device *dev);
struct net *rroce_dev_net(const struct net_device *dev);
struct rtable *rroce_ip_route_output_key(struct net *net, struct flowi4 *fl);
struct dst_entry *rroce_rtable_dst(struct rtable *rt);
bool rroce_ipv6_mod_enabled(void);
struct dst_entry *rroce_ip6_dst_lookup_flow(struct net *net, struct flowi6 *fl);
int rroce_dst_error(const struct dst_entry *dst);
bool rroce_dst_dev_is_loopback(const struct dst_entry *dst);
void rroce_dst_hold(struct dst_entry *dst);
struct dst_entry *rroce_dst_check(struct dst_entry *dst, u32 cookie);
u32 rroce_rt6_get_cookie(struct dst_entry *dst);
void rroce_skb_set_route(struct sk_buff *skb, struct dst_entry *dst);
__be16 rroce_skb_protocol(const struct sk_buff *skb);
unsigned char *rroce_skb_push(struct sk_buff *skb, unsigned int len);
void rroce_skb_set_ip_udp(struct sk_buff *skb, int ip_len, bool v4);
void rroce_skb_queue_head_init(struct sk_buff_head *list);
void rroce_skb_queue_purge(struct sk_buff_head *list);
/* A queued packet: when it arrived, in jiffies, and whether this device
 * sent it to itself. */
struct rroce_rx_cb {
	unsigned long stamp;
	bool local;
};

unsigned long rroce_skb_queue_lock(struct sk_buff_head *list);
void rroce_skb_queue_unlock(struct sk_buff_head *list, unsigned long flags);
void rroce___skb_queue_tail(struct sk_buff_head *list, struct sk_buff *skb);
struct sk_buff *rroce___skb_dequeue(struct sk_buff_head *list);
void rroce_skb_queue_splice_tail_init(struct sk_buff_head *list,
				      struct sk_buff_head *head);
struct sk_buff *rroce_skb_peek(const struct sk_buff_head *list);

void rroce_init_work(struct work_struct *work, work_func_t func);
void rroce_init_delayed_work(struct delayed_work *work, work_func_t func);
bool rroce_queue_device_work(struct work_struct *work, bool urgent);
bool rroce_arm_delayed_work(struct delayed_work *work, unsigned long delay);
bool rroce_work_pending(struct work_struct *work);
void rroce_cq_comp_handler(struct ib_cq *cq);

struct page *rroce_sg_page_iter_page(struct sg_page_iter *iter);
unsigned long rroce_umem_offset(struct ib_umem *umem);
bool rroce_virt_addr_valid(const void *addr);
struct page *rroce_virt_to_page(const void *addr);
void *rroce_kmap_local_page(struct page *page);
void rroce_kunmap_local(void *addr);
u64 rroce_cmpxchg64(u64 *ptr, u64 old, u64 new);
u64 rroce_fetch_add64(u64 *ptr, u64 add);
void rroce_store_release64(u64 *ptr, u64 value);
void rroce_wmb(void);

/* On-demand paging (ib_umem_odp.h). */
bool rroce_odp_supported(void);
struct ib_umem_odp *rroce_umem_odp_get(struct ib_device *dev, unsigned long addr, size_t size,
				       int access, const struct mmu_interval_notifier_ops *ops);
void rroce_umem_odp_release(struct ib_umem_odp *odp);
struct ib_umem_odp *rroce_umem_odp_alloc_implicit(struct ib_device *dev, int access);
void rroce_umem_odp_release_implicit(struct ib_umem_odp *odp);
struct ib_umem_odp *rroce_umem_odp_alloc_child(struct ib_umem_odp *root, unsigned long addr,
					       size_t size,
					       const struct mmu_interval_notifier_ops *ops);
int rroce_umem_odp_map_and_lock(struct ib_umem_odp *odp, u64 addr, u64 len, bool write,
				bool fault);
void rroce_umem_odp_unmap(struct ib_umem_odp *odp, u64 start, u64 end);
void rroce_umem_odp_lock(struct ib_umem_odp *odp);
void rroce_umem_odp_unlock(struct ib_umem_odp *odp);
unsigned long rroce_umem_odp_start(struct ib_umem_odp *odp);
bool rroce_mmu_notifier_range_blockable(const struct mmu_notifier_range *range);
void rroce_mmu_interval_set_seq(struct mmu_interval_notifier *mni, unsigned long seq);
struct page *rroce_virt_dma_to_page(u64 dma_addr);

struct net_device *rroce_skb_dev(struct sk_buff *skb);

bool rroce_llist_add(struct llist_node *node, struct llist_head *head);
struct llist_node *rroce_llist_del_all(struct llist_head *head);
bool rroce_mod_delayed_work(struct delayed_work *work, unsigned long delay);

unsigned int rroce_crypto_shash_descsize(struct crypto_shash *tfm);
void rroce_crypto_free_shash(struct crypto_shash *tfm);
bool rroce_crc32_select(void);
bool rroce_crc32_copy_folds(void);
u32 rroce_crc32_copy(u32 crc, const u8 *head, size_t head_len, u8 *dst,
		     const u8 *src, size_t len);
u32 rroce_crc32(u32 crc, const u8 *p, size_t len);

/* Completion vectors: one per online CPU. */
unsigned int rroce_num_online_cpus(void);
int rroce_vector_cpu(unsigned int vector);
bool rroce_pin_to_cpu(int cpu);
void rroce_unpin_cpu(void);
bool rroce_queue_work_on(int cpu, struct work_struct *work);

/* ID allocation (idr.h). */
void rroce_ida_init(struct ida *ida);
int rroce_ida_alloc(struct ida *ida, unsigned int min, unsigned int max);

/* Interrupts off on the local CPU (irqflags.h). */
unsigned long rroce_local_irq_save(void);
void rroce_local_irq_restore(unsigned long flags);

#endif
