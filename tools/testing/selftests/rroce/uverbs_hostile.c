// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile uverbs commands against an rroce device, without libibverbs: raw
 * write()s of struct ib_uverbs_cmd_hdr (and ib_uverbs_ex_cmd_hdr) to its
 * /dev/infiniband/uverbsN.  Each malformed, short or out-of-order command
 * must fail with the errno ib_uverbs gives it, and a seeded fuzzer checks
 * that random commands only ever fail with errnos ib_uverbs can return.
 * The harness checks that the kernel logged no warning meanwhile.
 *
 * The expected errnos come from drivers/infiniband/core of Linux 6.12:
 * ib_uverbs_write() and verify_hdr() in uverbs_main.c, uapi_get_method() in
 * rdma_core.h, the handlers in uverbs_cmd.c; the comments name the check.
 *
 *   uverbs_hostile [IBDEV [SEED]]     default: rroce0, a fixed seed
 *
 * Prints KTAP and exits 0 if every case passed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

#define PLAN		37
#define FUZZ_CALLS	2000
#define FUZZ_BATCH	100	/* calls per uverbs fd */
#define FUZZ_IN_WORDS	48	/* payload bound, in u32s (legacy) */
#define FUZZ_OUT_WORDS	64	/* response bound, in u32s (legacy) */
#define FUZZ_SEED	0x72726f6365ULL

/* A kernel address: access_ok() refuses it before anything is copied. */
#define KERNEL_ADDR	0xffff888000000000ULL
/* Unmapped in every process: the first page is never mapped. */
#define UNMAPPED_ADDR	16ULL

static char uverbs_path[64];
static int ktap_n, ktap_failed;
static long page_size;

static void ktap(bool ok, const char *fmt, ...)
{
	va_list ap;

	ktap_n++;
	if (!ok)
		ktap_failed++;
	printf("%sok %d - ", ok ? "" : "not ", ktap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static const char *err_name(int err)
{
	const char *name;

	if (!err)
		return "success";
	name = strerrorname_np(err);
	return name ? name : "unknown errno";
}

/* got: 0 or -errno from uv_write(); want: 0 or an errno. */
static void expect(int got, int want, const char *desc)
{
	if (-got == want)
		ktap(true, "%s: %s", desc, err_name(want));
	else
		ktap(false, "%s: got %s, want %s", desc, err_name(-got),
		     err_name(want));
}

static __u64 ptr(const void *p)
{
	return (uintptr_t)p;
}

/*
 * Finds /dev/infiniband/uverbsN of IBDEV through the uverbs class in sysfs:
 * the ib_device itself does not name its char device.
 */
static int find_uverbs(const char *ibdev)
{
	char name[64];
	glob_t g;
	size_t i;
	int found = -1;

	if (glob("/sys/class/infiniband_verbs/uverbs*/ibdev", 0, NULL, &g))
		return -1;
	for (i = 0; i < g.gl_pathc && found < 0; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (!f)
			continue;
		if (fscanf(f, "%63s", name) == 1 && !strcmp(name, ibdev)) {
			/* .../infiniband_verbs/uverbsN/ibdev */
			const char *dir = strstr(g.gl_pathv[i], "/uverbs");

			snprintf(uverbs_path, sizeof(uverbs_path),
				 "/dev/infiniband%.*s",
				 (int)(strrchr(g.gl_pathv[i], '/') - dir), dir);
			found = 0;
		}
		fclose(f);
	}
	globfree(&g);
	return found;
}

static int uv_open(void)
{
	int fd = open(uverbs_path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("# open %s: %s\n", uverbs_path, strerror(errno));
		exit(1);
	}
	return fd;
}

/* 0 if the whole buffer was taken, else -errno. */
static int uv_write(int fd, const void *buf, size_t len)
{
	ssize_t n = write(fd, buf, len);

	if (n < 0)
		return -errno;
	/* ib_uverbs_write() returns the full count on success, never less. */
	return n == (ssize_t)len ? 0 : -EMSGSIZE;
}

/*
 * A legacy command with explicit header words: the header, then LEN bytes
 * of REQ, in one write().  The words are in units of 4 bytes, and in_words
 * counts the header too.
 */
static int uv_raw(int fd, __u32 command, __u16 in_words, __u16 out_words,
		  const void *req, size_t len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		__u8 body[1024];
	} c = {
		.hdr = { command, in_words, out_words },
	};

	if (len > sizeof(c.body))
		abort();
	memcpy(c.body, req, len);
	return uv_write(fd, &c, sizeof(c.hdr) + len);
}

/* A well-formed legacy command: the words follow from the lengths. */
static int uv_cmd(int fd, __u32 command, const void *req, size_t len,
		  size_t resp_len)
{
	return uv_raw(fd, command, (sizeof(struct ib_uverbs_cmd_hdr) + len) / 4,
		      resp_len / 4, req, len);
}

/*
 * An extended command: both headers, then LEN bytes of REQ.  Here the
 * words are in units of 8 bytes and exclude the headers.
 */
static int uv_ex(int fd, __u32 command, __u16 in_words, __u16 out_words,
		 const struct ib_uverbs_ex_cmd_hdr *ex, const void *req,
		 size_t len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		__u8 body[1024];
	} c = {
		.hdr = { command | IB_USER_VERBS_CMD_FLAG_EXTENDED, in_words,
			 out_words },
		.ex = *ex,
	};

	if (len > sizeof(c.body))
		abort();
	memcpy(c.body, req, len);
	return uv_write(fd, &c, sizeof(c.hdr) + sizeof(c.ex) + len);
}

static int get_context(int fd, __u64 response)
{
	struct ib_uverbs_get_context cmd = { .response = response };

	return uv_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &cmd, sizeof(cmd),
		      sizeof(struct ib_uverbs_get_context_resp));
}

/* A uverbs fd with a user context, as libibverbs would leave it. */
static int open_context(void)
{
	struct ib_uverbs_get_context_resp resp;
	int fd = uv_open();
	int ret = get_context(fd, ptr(&resp));

	if (ret) {
		printf("# GET_CONTEXT: %s\n", err_name(-ret));
		exit(1);
	}
	/* Nothing here reads async events. */
	close(resp.async_fd);
	return fd;
}

static int alloc_pd(int fd, __u64 response)
{
	struct ib_uverbs_alloc_pd cmd = { .response = response };

	return uv_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd),
		      sizeof(struct ib_uverbs_alloc_pd_resp));
}

static int dealloc_pd(int fd, __u32 handle)
{
	struct ib_uverbs_dealloc_pd cmd = { .pd_handle = handle };

	return uv_cmd(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &cmd, sizeof(cmd), 0);
}

static int query_port(int fd, __u8 port, void *resp, size_t resp_len)
{
	struct ib_uverbs_query_port cmd = {
		.response = ptr(resp),
		.port_num = port,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_QUERY_PORT, &cmd, sizeof(cmd),
		      resp_len);
}

/*
 * IB_USER_VERBS_EX_CMD_QUERY_DEVICE with PIN and POUT words of driver data
 * after the core request and response, and COMP_MASK in the request.
 */
static int ex_query_device(int fd, struct ib_uverbs_ex_query_device_resp *resp,
			   __u16 pin, __u16 pout, __u32 comp_mask)
{
	struct {
		struct ib_uverbs_ex_query_device cmd;
		__u64 driver_in[4];
	} req = { .cmd.comp_mask = comp_mask };
	struct ib_uverbs_ex_cmd_hdr ex = {
		.response = ptr(resp),
		.provider_in_words = pin,
		.provider_out_words = pout,
	};

	return uv_ex(fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE,
		     sizeof(req.cmd) / 8, sizeof(*resp) / 8, &ex, &req,
		     sizeof(req.cmd) + pin * 8);
}

/*
 * LEN writable bytes that end where an inaccessible page begins: the kernel
 * faults on the first byte it writes past them.
 */
static void *guarded(size_t len)
{
	char *p = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + page_size, page_size, PROT_NONE)) {
		perror("# mmap");
		exit(1);
	}
	return p + page_size - len;
}

/* GET_CONTEXT: the positive control, then malformed headers. */
static void test_get_context(void)
{
	struct ib_uverbs_get_context_resp resp = { .async_fd = -1 };
	struct ib_uverbs_get_context cmd = { .response = ptr(&resp) };
	__u32 word = IB_USER_VERBS_CMD_GET_CONTEXT;
	int fd = uv_open();
	int ret;

	ret = get_context(fd, ptr(&resp));
	ktap(!ret && (int)resp.async_fd >= 0,
	     "GET_CONTEXT, well formed: %s, async_fd %d, %u comp vectors",
	     err_name(-ret), resp.async_fd, resp.num_comp_vectors);
	close(resp.async_fd);

	/* ib_init_ucontext(): "if (file->ucontext) ret = -EINVAL" */
	expect(get_context(fd, ptr(&resp)), EINVAL,
	       "GET_CONTEXT again on the same fd");
	close(fd);

	fd = uv_open();
	/* ib_uverbs_write(): "if (count < sizeof(hdr)) return -EINVAL" */
	expect(uv_write(fd, &word, sizeof(word)), EINVAL,
	       "a write shorter than the header");
	/* verify_hdr(): count < method_elm->req_size + sizeof(*hdr) */
	expect(uv_raw(fd, IB_USER_VERBS_CMD_GET_CONTEXT, 3, 2, &cmd, 4),
	       ENOSPC, "GET_CONTEXT cut short, in_words 3 and 12 bytes");
	/* verify_hdr(): "if (hdr->in_words * 4 != count) return -EINVAL" */
	expect(uv_raw(fd, IB_USER_VERBS_CMD_GET_CONTEXT, 3, 2, &cmd,
		      sizeof(cmd)),
	       EINVAL, "GET_CONTEXT with in_words 3 but 16 bytes");
	/* verify_hdr(): hdr->out_words * 4 < method_elm->resp_size */
	expect(uv_raw(fd, IB_USER_VERBS_CMD_GET_CONTEXT, 4, 1, &cmd,
		      sizeof(cmd)),
	       ENOSPC, "GET_CONTEXT with out_words 1, short of its response");
	close(fd);
}

/* Responses the kernel cannot write. */
static void test_bad_response(void)
{
	struct ib_uverbs_ex_query_device_resp ex_resp;
	struct ib_uverbs_get_context_resp resp;
	struct ib_uverbs_query_port_resp *port_resp;
	struct ib_uverbs_ex_cmd_hdr ex = { .response = KERNEL_ADDR };
	struct ib_uverbs_ex_query_device ex_cmd = {};
	int fd = uv_open();

	/*
	 * uverbs_response(): copy_to_user() fails, "return -EFAULT"; the
	 * context and async file made so far are undone, so a second try on
	 * the same fd must succeed.
	 */
	expect(get_context(fd, UNMAPPED_ADDR), EFAULT,
	       "GET_CONTEXT with its response at (void *)16");
	resp.async_fd = -1;
	expect(get_context(fd, ptr(&resp)), 0,
	       "GET_CONTEXT on the same fd afterwards, which left nothing behind");
	close(resp.async_fd);

	/*
	 * The same for ALLOC_PD, after the driver made the PD: ib_uverbs_write()
	 * finalizes the new object with commit = false, which hands the PD
	 * back to the driver's dealloc_pd.
	 */
	expect(alloc_pd(fd, UNMAPPED_ADDR), EFAULT,
	       "ALLOC_PD with its response at (void *)16");

	/*
	 * out_words promises 16 bytes more than the buffer has: uverbs_response()
	 * zero-fills them with clear_user(), which faults on the guard page.
	 */
	port_resp = guarded(sizeof(*port_resp));
	expect(query_port(fd, 1, port_resp, sizeof(*port_resp) + 16), EFAULT,
	       "QUERY_PORT with out_words 16 bytes past its buffer");

	/* verify_hdr(): "if (!access_ok(...response...)) return -EFAULT" */
	expect(uv_ex(fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, 1,
		     sizeof(ex_resp) / 8, &ex, &ex_cmd, sizeof(ex_cmd)),
	       EFAULT, "EX_QUERY_DEVICE with its response at a kernel address");
	close(fd);
}

/* PDs: out of order, with driver data, and bogus handles. */
static void test_pd(void)
{
	struct {
		struct ib_uverbs_alloc_pd cmd;
		__u64 driver_in[2];
	} req = { .driver_in = { 0xdeadbeefdeadbeefULL, ~0ULL } };
	struct {
		struct ib_uverbs_alloc_pd_resp resp;
		__u32 driver_out[3];
	} resp;
	struct {
		struct ib_uverbs_dealloc_pd cmd;
		__u32 garbage;
	} dealloc = { .garbage = 0x5a5a5a5a };
	int fd = uv_open();
	int ret;

	/*
	 * uobj_alloc() -> alloc_uobj() -> ib_uverbs_get_ucontext_file():
	 * "if (!ucontext) return ERR_PTR(-EINVAL)"
	 */
	expect(alloc_pd(fd, ptr(&resp)), EINVAL, "ALLOC_PD before GET_CONTEXT");
	close(fd);

	/*
	 * ALLOC_PD has driver data (UAPI_DEF_WRITE_UDATA_IO): ib_uverbs_write()
	 * passes whatever follows the 8-byte core request, and whatever
	 * out_words asks beyond the 4-byte response, to the driver's alloc_pd
	 * as udata, and rroce ignores it.
	 */
	fd = open_context();
	req.cmd.response = ptr(&resp);
	resp.resp.pd_handle = ~0U;
	ret = uv_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &req, sizeof(req),
		     sizeof(resp));
	ktap(!ret && resp.resp.pd_handle != ~0U,
	     "ALLOC_PD with 16 bytes of driver data in and 12 out: %s, handle %u",
	     err_name(-ret), resp.resp.pd_handle);
	expect(dealloc_pd(fd, resp.resp.pd_handle), 0,
	       "DEALLOC_PD of that handle");
	/* lookup_get_idr_uobject(): xa_load() finds nothing, -ENOENT */
	expect(dealloc_pd(fd, resp.resp.pd_handle), ENOENT,
	       "DEALLOC_PD of the same handle again");
	expect(dealloc_pd(fd, 0x7ffffff0), ENOENT,
	       "DEALLOC_PD of a bogus handle");

	/*
	 * DEALLOC_PD has no driver data (UAPI_DEF_WRITE_I): uverbs_request()
	 * requires bytes past the request to be zero, else -EOPNOTSUPP.
	 */
	expect(uv_cmd(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &dealloc,
		      sizeof(dealloc), 0),
	       EOPNOTSUPP, "DEALLOC_PD with non-zero bytes past its request");
	close(fd);
}

static int reg_mr(int fd, __u32 pd, void *buf, __u64 len, __u32 access,
		  struct ib_uverbs_reg_mr_resp *resp)
{
	struct ib_uverbs_reg_mr cmd = {
		.response = ptr(resp), .start = ptr(buf), .length = len,
		.hca_va = ptr(buf), .pd_handle = pd, .access_flags = access,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd), sizeof(*resp));
}

/* The flags of REREG_MR (the kernel's enum ib_mr_rereg_flags). */
#define REREG_TRANS	1
#define REREG_PD	2
#define REREG_ACCESS	4

static int rereg_mr(int fd, __u32 mr, __u32 flags, __u32 pd, __u32 access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ib_uverbs_rereg_mr cmd = {
		.response = ptr(&resp), .mr_handle = mr, .flags = flags,
		.pd_handle = pd, .access_flags = access,
	};

	return uv_cmd(fd, IB_USER_VERBS_CMD_REREG_MR, &cmd, sizeof(cmd), sizeof(resp));
}

/*
 * REREG_MR, which rdma-core's rxe provider does not offer, so only a raw
 * command reaches it: rroce changes an MR's PD and rights in place, refuses a
 * new translation, and write rights for pages pinned read-only.
 */
static void test_rereg_mr(void)
{
	struct ib_uverbs_alloc_pd_resp pd1, pd2;
	struct ib_uverbs_reg_mr_resp mr, ro;
	struct ib_uverbs_dereg_mr dereg = { 0 };
	char *buf = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open_context();

	if (buf == MAP_FAILED || alloc_pd(fd, ptr(&pd1)) || alloc_pd(fd, ptr(&pd2)) ||
	    reg_mr(fd, pd1.pd_handle, buf, page_size, IB_UVERBS_ACCESS_LOCAL_WRITE, &mr) ||
	    reg_mr(fd, pd1.pd_handle, buf + page_size, page_size,
		   IB_UVERBS_ACCESS_REMOTE_READ, &ro)) {
		printf("# setup for REREG_MR failed\n");
		exit(1);
	}
	expect(rereg_mr(fd, mr.mr_handle, REREG_ACCESS, 0,
			IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_REMOTE_WRITE), 0,
	       "REREG_MR of the rights: remote write added");
	expect(rereg_mr(fd, mr.mr_handle, REREG_PD, pd2.pd_handle, 0), 0,
	       "REREG_MR of the PD");
	expect(dealloc_pd(fd, pd2.pd_handle), EBUSY, "the new PD is in use: EBUSY");
	expect(rereg_mr(fd, mr.mr_handle, REREG_TRANS, 0, 0), EOPNOTSUPP,
	       "REREG_MR of the translation: EOPNOTSUPP");
	expect(rereg_mr(fd, ro.mr_handle, REREG_ACCESS, 0,
			IB_UVERBS_ACCESS_REMOTE_WRITE | IB_UVERBS_ACCESS_LOCAL_WRITE),
	       EOPNOTSUPP, "write rights for pages pinned read-only: EOPNOTSUPP");
	dereg.mr_handle = mr.mr_handle;
	uv_cmd(fd, IB_USER_VERBS_CMD_DEREG_MR, &dereg, sizeof(dereg), 0);
	expect(dealloc_pd(fd, pd2.pd_handle), 0, "the MR deregistered, its new PD goes");
	close(fd);
	munmap(buf, 2 * page_size);
}

/*
 * The extended QUERY_DEVICE is the one command so far that hands driver data
 * to rroce itself: ib_uverbs_ex_query_device() passes attrs->driver_udata,
 * which ib_uverbs_write() builds from provider_in_words and
 * provider_out_words, to ops.query_device, and nothing in the core looks at
 * it.  rroce's query_device refuses any, so with every other field left as
 * in the positive control, an EINVAL comes from the driver.
 */
static void test_ex_query_device(void)
{
	struct ib_uverbs_ex_query_device_resp resp[2] = {};
	int fd = open_context();
	int ret;

	ret = ex_query_device(fd, resp, 0, 0, 0);
	ktap(!ret && resp->response_length >= sizeof(resp->base),
	     "EX_QUERY_DEVICE without driver data: %s, %u bytes of response",
	     err_name(-ret), resp->response_length);
	expect(ex_query_device(fd, resp, 1, 0, 0), EINVAL,
	       "EX_QUERY_DEVICE with 8 bytes of driver data in (rroce)");
	expect(ex_query_device(fd, resp, 0, 1, 0), EINVAL,
	       "EX_QUERY_DEVICE with 8 bytes of driver data out (rroce)");
	/* ib_uverbs_ex_query_device(): "if (cmd.comp_mask) return -EINVAL" */
	expect(ex_query_device(fd, resp, 0, 0, 1), EINVAL,
	       "EX_QUERY_DEVICE with an unknown comp_mask bit");
	close(fd);
}

/* Headers that do not describe a command ib_uverbs has. */
static void test_bad_headers(void)
{
	struct ib_uverbs_ex_query_device_resp resp;
	struct ib_uverbs_ex_query_device cmd = {};
	struct ib_uverbs_ex_cmd_hdr ex = { .response = ptr(&resp) };
	struct ib_uverbs_query_port_resp port_resp;
	int fd = open_context();

	/*
	 * uapi_get_method(): an index past the table is -EOPNOTSUPP, before
	 * the lengths are looked at; bits outside the command mask and the
	 * extended flag are -EINVAL.
	 */
	expect(uv_raw(fd, 255, 9, 0, &cmd, 8), EOPNOTSUPP,
	       "command 255, past the table (and in_words wrong)");
	expect(uv_ex(fd, 255, 1, 0, &(struct ib_uverbs_ex_cmd_hdr){}, &cmd, 8),
	       EOPNOTSUPP, "extended command 255, past the table");
	expect(uv_cmd(fd, 0x100 | IB_USER_VERBS_CMD_QUERY_PORT, &cmd, 8, 0),
	       EINVAL, "command 0x102, a bit outside the command mask");

	/* verify_hdr(), extended: "(in_words + provider_in_words) * 8 != count" */
	expect(uv_ex(fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, 2,
		     sizeof(resp) / 8, &ex, &cmd, sizeof(cmd)),
	       EINVAL, "EX_QUERY_DEVICE with in_words 2 but 8 bytes");
	/* "if (!hdr->out_words && !ex_hdr->provider_out_words) return -EINVAL" */
	expect(uv_ex(fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, 1, 0, &ex, &cmd,
		     sizeof(cmd)),
	       EINVAL, "EX_QUERY_DEVICE with a response but out_words 0");
	/* "if (hdr->out_words || ex_hdr->provider_out_words) return -EINVAL" */
	expect(uv_ex(fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, 1, 1,
		     &(struct ib_uverbs_ex_cmd_hdr){}, &cmd, sizeof(cmd)),
	       EINVAL, "EX_QUERY_DEVICE with out_words 1 but no response");
	/* "if (ex_hdr->cmd_hdr_reserved) return -EINVAL" */
	ex.cmd_hdr_reserved = 1;
	expect(uv_ex(fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, 1,
		     sizeof(resp) / 8, &ex, &cmd, sizeof(cmd)),
	       EINVAL, "EX_QUERY_DEVICE with cmd_hdr_reserved set");
	/*
	 * ib_uverbs_write(): an extended command needs both headers,
	 * "if (count < (sizeof(hdr) + sizeof(ex_hdr))) return -EINVAL".
	 */
	expect(uv_raw(fd, IB_USER_VERBS_CMD_FLAG_EXTENDED |
			  IB_USER_VERBS_EX_CMD_QUERY_DEVICE,
		      4, 0, &cmd, 8),
	       EINVAL, "EX_QUERY_DEVICE without room for its extended header");

	/* ib_query_port(): "if (!rdma_is_port_valid(...)) return -EINVAL" */
	expect(query_port(fd, 2, &port_resp, sizeof(port_resp)), EINVAL,
	       "QUERY_PORT of port 2 (rroce has one)");
	close(fd);
}

/* xorshift64*: the same sequence from the same seed on every machine. */
static __u64 rnd_state;

static __u64 rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

static __u32 rnd_below(__u32 n)
{
	return (rnd() >> 32) % n;
}

/*
 * Field values that get past the first checks more often than noise does:
 * zeros (reserved fields, masks), 1 (the port), small handles, extremes.
 */
static __u32 rnd_word(void)
{
	switch (rnd_below(8)) {
	case 0:
	case 1:
	case 2:
		return 0;
	case 3:
		return 1;
	case 4:
		return rnd_below(4);
	case 5:
		return rnd_below(2) ? ~0U : 0x80000000;
	default:
		return rnd() >> 32;
	}
}

#define CMD(x)		(1ULL << IB_USER_VERBS_CMD_##x)
#define EX_CMD(x)	(1ULL << IB_USER_VERBS_EX_CMD_##x)

/*
 * Commands the fuzzer leaves out.  None of them is reachable on rroce yet,
 * but they will be: random arguments would then legitimately make queues
 * and pin memory sized by random counts (CQ, QP, SRQ, WQ, indirection
 * table, MR), or wait up to a second each to resolve a random address
 * (CREATE_AH).  Everything else, including what rroce does not implement,
 * is fair game.
 */
static const __u64 fuzz_skip = CMD(CREATE_AH) | CMD(REG_MR) | CMD(REREG_MR) |
			       CMD(CREATE_CQ) | CMD(RESIZE_CQ) |
			       CMD(CREATE_QP) | CMD(CREATE_SRQ) |
			       CMD(CREATE_XSRQ);
static const __u64 fuzz_ex_skip = EX_CMD(CREATE_CQ) | EX_CMD(CREATE_QP) |
				  EX_CMD(CREATE_FLOW) | EX_CMD(CREATE_WQ) |
				  EX_CMD(CREATE_RWQ_IND_TBL);

/*
 * Legacy commands without a response (UAPI_DEF_WRITE_I): their first word
 * is a handle, not a pointer the kernel writes through.  Every other legacy
 * command gets a pointer into the response buffer, or one that faults, and
 * never a random one that could land in this process's memory.
 */
static const __u64 no_response = CMD(DEALLOC_PD) | CMD(DESTROY_AH) |
				 CMD(DEREG_MR) | CMD(DEALLOC_MW) |
				 CMD(REQ_NOTIFY_CQ) | CMD(MODIFY_QP) |
				 CMD(ATTACH_MCAST) | CMD(DETACH_MCAST) |
				 CMD(MODIFY_SRQ) | CMD(CLOSE_XRCD);

/*
 * Every errno the write path can return: those in uverbs_main.c,
 * uverbs_cmd.c, rdma_core.c and the rdma cgroup charge (EAGAIN), plus
 * EMFILE/ENFILE from the fds GET_CONTEXT and CREATE_COMP_CHANNEL install.
 * EACCES (a changed security context) cannot happen here.
 */
static bool allowed_errno(int err)
{
	switch (err) {
	case EINVAL: case ENOSPC: case EOPNOTSUPP: case EFAULT: case ENOENT:
	case EBUSY: case EIO: case ENOMEM: case EAGAIN: case EBADF:
	case EMFILE: case ENFILE: case EPERM: case ENODEV: case EEXIST:
	case ENXIO:
		return true;
	}
	return false;
}

struct fuzz_buf {
	__u8 cmd[8 + 16 + 4 * FUZZ_IN_WORDS];
	__u8 *resp;		/* 512 writable bytes */
	__u8 *fault;		/* a guard page */
	size_t len;
};

/* A response pointer: nearly always the buffer, sometimes one that faults. */
static __u64 fuzz_response(const struct fuzz_buf *b)
{
	switch (rnd_below(16)) {
	case 0:
		return 0;
	case 1:
		return ptr(b->fault);
	default:
		return ptr(b->resp);
	}
}

static void fuzz_payload(__u8 *p, unsigned int words)
{
	unsigned int i;

	for (i = 0; i < words; i++) {
		__u32 w = rnd_word();

		memcpy(p + 4 * i, &w, 4);
	}
}

/*
 * The commands rroce serves today.  ib_uverbs answers every other one with
 * EOPNOTSUPP once the header checks pass, so half the calls go to these.
 */
static const __u8 served[] = {
	IB_USER_VERBS_CMD_GET_CONTEXT, IB_USER_VERBS_CMD_QUERY_DEVICE,
	IB_USER_VERBS_CMD_QUERY_PORT, IB_USER_VERBS_CMD_ALLOC_PD,
	IB_USER_VERBS_CMD_DEALLOC_PD, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL,
};

/* One legacy command: header, payload, and mostly consistent lengths. */
static void fuzz_legacy(struct fuzz_buf *b)
{
	struct ib_uverbs_cmd_hdr hdr;
	unsigned int words;
	__u64 response;

	if (rnd_below(2)) {
		hdr.command = served[rnd_below(sizeof(served))];
	} else {
		do {
			hdr.command = rnd_below(IB_USER_VERBS_CMD_OPEN_QP + 1);
		} while (fuzz_skip & (1ULL << hdr.command));
	}
	/*
	 * Requests are 4 to 16 bytes but for the create commands, and bytes
	 * past a request without driver data must be zero: short payloads
	 * half the time, so that some commands get through.
	 */
	words = rnd_below(2) ? rnd_below(5) : rnd_below(FUZZ_IN_WORDS + 1);
	/* Now and then any command number, mask bits and all. */
	if (!rnd_below(32))
		hdr.command = rnd() >> 32;
	hdr.in_words = 2 + words;
	if (!rnd_below(8))
		hdr.in_words = rnd_below(2 + FUZZ_IN_WORDS + 8);
	hdr.out_words = rnd_below(FUZZ_OUT_WORDS + 1);

	fuzz_payload(b->cmd + sizeof(hdr), words);
	if (words >= 2 && (hdr.command > IB_USER_VERBS_CMD_OPEN_QP ||
			   !(no_response & (1ULL << hdr.command)))) {
		response = fuzz_response(b);
		memcpy(b->cmd + sizeof(hdr), &response, 8);
	}
	memcpy(b->cmd, &hdr, sizeof(hdr));
	b->len = sizeof(hdr) + 4 * words;
}

/* One extended command: its response in the buffer, faulting, or none. */
static void fuzz_ex(struct fuzz_buf *b)
{
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex = {
		.provider_in_words = rnd_below(3),
		.provider_out_words = rnd_below(3),
		.cmd_hdr_reserved = !rnd_below(32),
	};
	unsigned int in = rnd_below(8), words;
	__u32 cmd;

	/* The one extended command rroce serves, half the time. */
	if (rnd_below(2)) {
		cmd = IB_USER_VERBS_EX_CMD_QUERY_DEVICE;
	} else {
		do {
			cmd = rnd_below(IB_USER_VERBS_EX_CMD_MODIFY_CQ + 1);
		} while (fuzz_ex_skip & (1ULL << cmd));
	}
	hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | cmd;
	hdr.in_words = in;
	hdr.out_words = rnd_below(40);
	words = 2 * (in + ex.provider_in_words);
	if (!rnd_below(8))
		words = rnd_below(FUZZ_IN_WORDS - 4 + 1);
	ex.response = fuzz_response(b);
	/* Both mistakes verify_hdr() refuses, now and then. */
	if (!rnd_below(16))
		ex.response = 0;
	if (!ex.response && rnd_below(2)) {
		hdr.out_words = 0;
		ex.provider_out_words = 0;
	}

	memcpy(b->cmd, &hdr, sizeof(hdr));
	memcpy(b->cmd + sizeof(hdr), &ex, sizeof(ex));
	fuzz_payload(b->cmd + sizeof(hdr) + sizeof(ex), words);
	b->len = sizeof(hdr) + sizeof(ex) + 4 * words;
}

static void dump(const struct fuzz_buf *b)
{
	size_t i;

	printf("#  ");
	for (i = 0; i < b->len; i++)
		printf(" %02x", b->cmd[i]);
	printf("\n");
}

/* What the fuzzer saw: successes by command, failures by errno. */
struct fuzz_stats {
	unsigned int calls, succeeded, bad;
	unsigned int ok_legacy[256], ok_ex[256], errors[256];
};

static void fuzz_count(struct fuzz_stats *st, const struct fuzz_buf *b,
		       int ret, unsigned int call)
{
	const struct ib_uverbs_cmd_hdr *hdr = (const void *)b->cmd;
	__u32 idx = hdr->command & IB_USER_VERBS_CMD_COMMAND_MASK;

	st->calls++;
	if (!ret) {
		st->succeeded++;
		if (hdr->command & IB_USER_VERBS_CMD_FLAG_EXTENDED)
			st->ok_ex[idx]++;
		else
			st->ok_legacy[idx]++;
		return;
	}
	if (-ret < 256)
		st->errors[-ret]++;
	if (allowed_errno(-ret))
		return;
	if (st->bad++ < 10) {
		printf("# call %u: %s, not an errno of the write path:\n",
		       call, err_name(-ret));
		dump(b);
	}
}

static void fuzz_report(const struct fuzz_stats *st, __u64 seed)
{
	int i;

	printf("# fuzz: seed %#llx, %u calls, %u succeeded:",
	       (unsigned long long)seed, st->calls, st->succeeded);
	for (i = 0; i < 256; i++) {
		if (st->ok_legacy[i])
			printf(" cmd %d x%u", i, st->ok_legacy[i]);
		if (st->ok_ex[i])
			printf(" ex cmd %d x%u", i, st->ok_ex[i]);
	}
	printf("\n# fuzz: failed with");
	for (i = 0; i < 256; i++)
		if (st->errors[i])
			printf(" %s x%u", err_name(i), st->errors[i]);
	printf("\n");
	ktap(!st->bad, "fuzz: %u random commands, %u succeeded, %u with an unexpected errno",
	     st->calls, st->succeeded, st->bad);
}

/*
 * A fresh fd, three times in four with a context and a PD (handle 0), so
 * that handlers get past their context check and small handles name a real
 * object.
 */
static int fuzz_fd(const struct fuzz_buf *b)
{
	int fd = uv_open();
	int ret = 0;

	if (rnd_below(4)) {
		ret = get_context(fd, ptr(b->resp));
		if (!ret)
			ret = alloc_pd(fd, ptr(b->resp));
	}
	if (ret)
		printf("# fuzz: setting up an fd: %s\n", err_name(-ret));
	return fd;
}

/*
 * FUZZ_CALLS random commands, a fresh fd every FUZZ_BATCH.  Closing every
 * fd from the uverbs one up also closes the async event and completion
 * channel fds the batch made: main() left nothing open above stderr.
 */
static void test_fuzz(__u64 seed)
{
	static struct fuzz_stats st;
	struct fuzz_buf b = {
		.resp = guarded(512),
		.fault = (__u8 *)guarded(512) + 512,
	};
	unsigned int i;
	int fd = -1;

	rnd_state = seed;
	for (i = 0; i < FUZZ_CALLS; i++) {
		if (i % FUZZ_BATCH == 0) {
			if (fd >= 0)
				close_range(fd, ~0U, 0);
			fd = fuzz_fd(&b);
		}
		memset(b.cmd, 0, sizeof(b.cmd));
		if (rnd_below(4))
			fuzz_legacy(&b);
		else
			fuzz_ex(&b);
		fuzz_count(&st, &b, uv_write(fd, b.cmd, b.len), i);
	}
	close_range(fd, ~0U, 0);
	fuzz_report(&st, seed);
}

int main(int argc, char **argv)
{
	const char *ibdev = argc > 1 ? argv[1] : "rroce0";
	__u64 seed = argc > 2 ? strtoull(argv[2], NULL, 0) : FUZZ_SEED;

	page_size = sysconf(_SC_PAGESIZE);
	/* Start from a clean fd table: the fuzzer closes everything above its fd. */
	close_range(3, ~0U, 0);
	printf("TAP version 13\n1..%d\n", PLAN);
	if (find_uverbs(ibdev)) {
		printf("# no uverbs device for %s\n", ibdev);
		return 1;
	}
	printf("# %s is %s\n", ibdev, uverbs_path);

	test_get_context();
	test_bad_response();
	test_pd();
	test_rereg_mr();
	test_ex_query_device();
	test_bad_headers();
	test_fuzz(seed);

	if (ktap_n != PLAN)
		ktap(false, "ran %d cases, planned %d", ktap_n, PLAN);
	printf("# %d of %d cases passed\n", ktap_n - ktap_failed, ktap_n);
	return ktap_failed ? 1 : 0;
}
