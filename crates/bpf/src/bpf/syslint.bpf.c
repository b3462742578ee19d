// SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0
/*
 * syslint's syscall capture program.
 *
 * sys_enter stores the call (number, six arguments, time) in the thread's state; sys_exit
 * builds one record, copies the user memory the capture table (map `caps`, filled by user
 * space) names for that syscall, and either sends it or folds it into a run of identical calls
 * (coalescing, see below). Only threads of processes in map `traced` (a bitmap of tgids) are
 * looked at: every other process costs one array lookup at each syscall's entry and exit and
 * never produces a record. Fork of a traced process adds the child.
 *
 * Built twice (build.rs): normally with BTF (tp_btf programs, CO-RE reads of task_struct), and
 * with -DSYSLINT_NO_BTF for kernels without /sys/kernel/btf/vmlinux: raw_tp programs, pt_regs
 * read at the fixed x86_64 uapi offsets, children followed at the return of clone/fork (a child
 * can run briefly before that), exit seen at exit/exit_group entry, no socket test.
 * Never a classic SEC("tracepoint/...") program: one returning 0 makes the kernel drop that
 * tracepoint's perf samples for every other user on the host.
 *
 * Coalescing: per thread, the last two SYSCALL records sent are kept (hist). A call identical
 * to the newest (period 1) or to the one before it while alternating (period 2: A B A B ...)
 * is not sent; whole repetitions are counted and reported as one REPEAT record ("the last
 * `period` SYSCALL records of this thread happened `count` more times") when the run breaks
 * (at the entry of a call that cannot continue it, or at the exit of one that did not), when
 * the thread ends, at opt_max_run repetitions, or opt_report_ns after its last report. A
 * started but unfinished repetition (period 2) is sent as the SYSCALL record it was.
 * Identical means: same number, six arguments and return value, and at most SL_SIG_DATA
 * captured bytes, equal too; a slot flagged SL_CAP_NO_COALESCE (payloads) never coalesces.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syslint.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Options, set by user space before load (read-only data, folded by the verifier). */
const volatile __u32 opt_payload_bytes = 64;
const volatile __u32 opt_path_bytes = 256;
const volatile bool opt_coalesce = true;
const volatile bool opt_summary_only = false;
const volatile __u64 opt_wakeup_bytes = 256 * 1024;
const volatile __u64 opt_report_ns = 100 * 1000 * 1000;
const volatile __u32 opt_max_run = 65536;

#define SOCKADDR_MAX 128
#define S_IFMT 0170000
#define S_IFSOCK 0140000
#define CLONE_THREAD 0x00010000

/* x86_64 syscall numbers the program itself needs (the capture table is data) */
#define NR_CLONE 56
#define NR_FORK 57
#define NR_VFORK 58
#define NR_EXECVE 59
#define NR_EXIT 60
#define NR_EXIT_GROUP 231
#define NR_EXECVEAT 322
#define NR_CLONE3 435

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* tgids whose threads are traced: a bitmap, bit (tgid & 63) of word tgid >> 6. Every syscall
 * on the host asks it (at entry and exit), so it is an array (the verifier inlines the lookup:
 * a few instructions) instead of a hash (a jhash and a bucket walk). User space maps it and
 * sets bits with an atomic or; here bits are set and cleared with atomic adds (XADD, which
 * every kernel with ring buffers has) and only when they are known clear or set: a process's
 * own bit changes only at its fork and at its end. */
#ifndef BPF_F_MMAPABLE
#define BPF_F_MMAPABLE (1U << 10)
#endif
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_PID_WORDS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} traced SEC(".maps");

static __always_inline __u64 *traced_word(__u32 tgid)
{
	__u32 w = tgid >> 6;

	if (w >= SL_PID_WORDS)
		return NULL;
	return bpf_map_lookup_elem(&traced, &w);
}

static __always_inline bool is_traced(__u32 tgid)
{
	__u64 *v = traced_word(tgid);

	return v && ((*v >> (tgid & 63)) & 1);
}

static __always_inline void set_traced(__u32 tgid)
{
	__u64 *v = traced_word(tgid), bit = 1ULL << (tgid & 63);

	if (v && !(*v & bit))
		__sync_fetch_and_add(v, bit);
}

static __always_inline void clear_traced(__u32 tgid)
{
	__u64 *v = traced_word(tgid), bit = 1ULL << (tgid & 63);

	if (v && (*v & bit))
		__sync_fetch_and_add(v, -bit);
}

/* Per-thread state, keyed by tid. A hash (not task storage) because it also holds the
 * coalescing run, which user space must be able to iterate and drain (flush_pending), because
 * the no-BTF build has no task pointer for task storage, and because one lookup then serves
 * enter, exit and coalescing. Entries are deleted when the thread exits. */
struct {
#ifdef SYSLINT_NO_BTF
	__uint(type, BPF_MAP_TYPE_LRU_HASH); /* no exit tracepoint there to delete entries */
#else
	__uint(type, BPF_MAP_TYPE_HASH);
#endif
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct sl_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_NR_MAX);
	__type(key, __u32);
	__type(value, struct sl_cap_spec);
} caps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sl_lost);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_NR_MAX);
	__type(key, __u32);
	__type(value, struct sl_counts);
} counts SEC(".maps");

/* Where a SYSCALL record is built before bpf_ringbuf_output copies exactly its length. */
struct sl_scratch {
	struct sl_syscall_rec hdr;
	__u8 data[2 * SL_SLOT_MAX];
	__u32 busy; /* a program preempted on this CPU is still using it */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sl_scratch);
} scratch SEC(".maps");

/* Memory copied at entry (SL_CAP_AT_ENTER: execve's path), keyed by tid, until the exit. */
struct sl_enter_data {
	__u16 len[2];
	__u8 flags;
	__u8 _pad[3];
	__u8 data[2 * SL_SLOT_MAX]; /* slot i at i * SL_SLOT_MAX */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct sl_enter_data);
} enter_data SEC(".maps");

static const struct sl_thread zero_thread;

/* Hide a value from the optimiser so the bound check after it stays for the verifier. */
#define opaque(x) asm volatile("" : "+r"(x))

static __always_inline void count_lost(__u64 records, __u64 syscalls)
{
	__u32 zero = 0;
	struct sl_lost *l = bpf_map_lookup_elem(&lost, &zero);

	if (l) {
		__sync_fetch_and_add(&l->records, records);
		__sync_fetch_and_add(&l->syscalls, syscalls);
	}
}

/* Never wake the consumer per record (it polls every 100 ms); wake it when a lot is waiting. */
static __always_inline __u64 wake_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > opt_wakeup_bytes ? BPF_RB_FORCE_WAKEUP
										  : BPF_RB_NO_WAKEUP;
}

/* wake_flags() for the SYSCALL records of a thread, asking the ring only every SL_QUERY_EVERY
 * bytes the thread sent, and waking the consumer only when the ring went past
 * opt_wakeup_bytes during those bytes. Before, each record paid a query helper call, and once
 * the consumer was opt_wakeup_bytes behind every record forced a wake-up (an irq_work
 * self-IPI) until it had caught up. A crossing missed in a race between CPUs costs only
 * latency: the consumer polls every 100 ms anyway. */
#define SL_QUERY_EVERY (16 * 1024)
static __always_inline __u64 wake_flags_thread(struct sl_thread *t, __u32 size)
{
	__u32 n = t->unqueried + size;
	__u64 avail;

	if (n < SL_QUERY_EVERY) {
		t->unqueried = n;
		return BPF_RB_NO_WAKEUP;
	}
	t->unqueried = 0;
	avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	return avail > opt_wakeup_bytes && avail <= opt_wakeup_bytes + n ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* The thread's newest and older SYSCALL record signatures: hist[] is used as a two-entry ring
 * (`newest` says which), so keeping a new record overwrites the older one instead of copying. */
static __always_inline struct sl_sig *hist_new(struct sl_thread *t)
{
	return &t->hist[t->newest & 1];
}

static __always_inline struct sl_sig *hist_old(struct sl_thread *t)
{
	return &t->hist[(t->newest ^ 1) & 1];
}

static __always_inline void emit_repeat(struct sl_thread *t, __u32 tid, __u64 now)
{
	struct sl_repeat_rec r = {};

	if (!t->count)
		return;
	r.kind = SL_REC_REPEAT;
	r.period = t->period;
	r.tgid = t->tgid;
	r.tid = tid;
	r.count = t->count;
	r.first_ts = t->first_ts;
	r.last_ts = t->last_ts;
	r.dur_sum = t->dur_sum;
	if (bpf_ringbuf_output(&events, &r, sizeof(r), wake_flags()))
		count_lost(1, (__u64)t->count * t->period);
	t->count = 0;
	t->dur_sum = 0;
	t->first_ts = 0;
	t->last_ts = 0;
	t->last_report = now;
}

/* Send a SYSCALL record rebuilt from a signature (a partial repetition). 0 when sent. */
static __always_inline int emit_sig(struct sl_thread *t, __u32 tid, struct sl_sig *sg, __u64 ts_enter, __u64 ts_exit)
{
	struct sl_syscall_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r) + SL_SIG_DATA, 0);

	if (!r) {
		count_lost(1, 1);
		return -1;
	}
	r->kind = SL_REC_SYSCALL;
	r->flags = 0;
	r->data1_kind = sg->kinds & 0xf;
	r->data2_kind = sg->kinds >> 4;
	r->tgid = t->tgid;
	r->tid = tid;
	r->nr = sg->nr;
	r->args[0] = sg->args[0];
	r->args[1] = sg->args[1];
	r->args[2] = sg->args[2];
	r->args[3] = sg->args[3];
	r->args[4] = sg->args[4];
	r->args[5] = sg->args[5];
	r->ret = sg->ret;
	r->ts_enter = ts_enter;
	r->ts_exit = ts_exit;
	r->data1_len = sg->len1;
	r->data2_len = sg->len2;
	r->_pad = 0;
	__builtin_memcpy((void *)(r + 1), sg->data, SL_SIG_DATA);
	bpf_ringbuf_submit(r, wake_flags());
	return 0;
}

/* The thread ends: report what its state still holds (run, partial repetition, the call it
 * ended in), then forget it. */
static __always_inline void finish_thread(struct sl_thread *t, __u32 tid, __u64 now)
{
	if (opt_summary_only) {
		if (t->in_flight && t->nr < SL_NR_MAX) {
			__u32 nr = t->nr;
			struct sl_counts *c = bpf_map_lookup_elem(&counts, &nr);

			if (c)
				c->calls++;
		}
		return;
	}
	if (t->period) {
		emit_repeat(t, tid, now);
		if (t->partial)
			emit_sig(t, tid, hist_old(t), t->part_ts_enter, t->part_ts_exit);
	}
	if (t->in_flight) {
		struct sl_syscall_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

		if (!r) {
			count_lost(1, 1);
			return;
		}
		r->kind = SL_REC_SYSCALL;
		r->flags = SL_F_UNFINISHED;
		r->data1_kind = SL_DATA_NONE;
		r->data2_kind = SL_DATA_NONE;
		r->tgid = t->tgid;
		r->tid = tid;
		r->nr = t->nr;
		r->args[0] = t->args[0];
		r->args[1] = t->args[1];
		r->args[2] = t->args[2];
		r->args[3] = t->args[3];
		r->args[4] = t->args[4];
		r->args[5] = t->args[5];
		r->ret = 0;
		r->ts_enter = t->ts_enter;
		r->ts_exit = now;
		r->data1_len = 0;
		r->data2_len = 0;
		r->_pad = 0;
		bpf_ringbuf_submit(r, wake_flags());
	}
}

static __always_inline bool fd_is_socket(__u64 fd)
{
#ifdef SYSLINT_NO_BTF
	return false;
#else
	/* task, files and fdt are BTF pointers: plain loads (the verifier makes them faulting
	 * loads), far cheaper than a bpf_probe_read_kernel call each. The fd array's element and
	 * what it points to are not typed for the verifier: those two stay probe reads. */
	struct task_struct *task = bpf_get_current_task_btf();
	struct files_struct *files = task->files;
	struct fdtable *fdt;
	struct file **fds;
	struct file *f = NULL;
	struct inode *inode = NULL;
	umode_t mode = 0;

	if (!files)
		return false;
	fdt = files->fdt;
	if (!fdt || fd >= fdt->max_fds)
		return false;
	fds = fdt->fd;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return false;
	if (bpf_ksym_exists(bpf_rdonly_cast)) {
		/* 6.2+: make f a BTF pointer again (the verifier rewrites the cast into nothing) and
		 * load through it */
		f = bpf_core_cast(f, struct file);
		inode = f->f_inode;
		if (!inode)
			return false;
		mode = inode->i_mode;
	} else {
		if (bpf_core_read(&inode, sizeof(inode), &f->f_inode) || !inode)
			return false;
		if (bpf_core_read(&mode, sizeof(mode), &inode->i_mode))
			return false;
	}
	return (mode & S_IFMT) == S_IFSOCK;
#endif
}

/* The user-space layouts a slot can point into (x86_64). */
struct sl_user_iovec {
	__u64 base;
	__u64 len;
};

struct sl_user_msghdr {
	__u64 name;
	__u32 namelen;
	__u32 _pad;
	__u64 iov;
	__u64 iovlen;
};

/* Argument `i` of the call (0 beyond the sixth). */
static __always_inline __u64 arg_of(const __u64 *args, __u32 i)
{
	return i > 5 ? 0 : args[i];
}

/* Copy what slot `c` names into dst (room for SL_SLOT_MAX bytes). Returns the bytes stored and
 * sets trunc/fault bits in *flags. */
static __always_inline __u32 capture(__u8 *dst, const struct sl_cap_slot *c, __u64 ptr, __u64 lenv, __s64 ret,
				     __u8 *flags, __u8 trunc_bit, __u8 fault_bit)
{
	__u16 cf = c->flags;
	__u64 want = 0, max, iov_len = (__u64)-1;
	bool is_iov = cf & (SL_CAP_IOVEC | SL_CAP_MSGHDR);

	/* whether to copy at all (SL_CAP_IF_OK, SL_CAP_SOCK_ONLY) is slot_may_copy's, at the caller */
	if (!ptr)
		return 0;

	max = c->len;
	if (!max || c->len_src == SL_LEN_FIXED) {
		if (c->kind == SL_DATA_STR)
			max = opt_path_bytes;
		else if (c->kind == SL_DATA_SOCKADDR)
			max = SOCKADDR_MAX;
		else
			max = opt_payload_bytes;
		if (c->len_src == SL_LEN_FIXED && c->len && !is_iov)
			max = c->len;
	}
	if (max > SL_SLOT_MAX - 1)
		max = SL_SLOT_MAX - 1;

	if (cf & SL_CAP_MSGNAME) {
		struct sl_user_msghdr m;

		if (bpf_probe_read_user(&m, sizeof(m), (void *)ptr))
			goto fault;
		ptr = m.name;
		want = m.namelen;
		if (!ptr || !want)
			return 0;
	} else {
		if (cf & SL_CAP_MSGHDR) {
			struct sl_user_msghdr m;

			if (bpf_probe_read_user(&m, sizeof(m), (void *)ptr))
				goto fault;
			if (!m.iovlen || !m.iov)
				return 0;
			ptr = m.iov;
		}
		if (is_iov) {
			struct sl_user_iovec v;

			if (bpf_probe_read_user(&v, sizeof(v), (void *)ptr))
				goto fault;
			ptr = v.base;
			iov_len = v.len;
			if (!ptr)
				return 0;
		}
		switch (c->len_src) {
		case SL_LEN_FIXED:
			want = is_iov ? iov_len : c->len;
			break;
		case SL_LEN_ARG:
			want = lenv;
			break;
		case SL_LEN_RET:
			if (ret <= 0)
				return 0;
			want = ret;
			break;
		case SL_LEN_ARG_PTR: {
			__u32 v = 0;
			__u64 p = lenv;

			if (!p || bpf_probe_read_user(&v, sizeof(v), (void *)p))
				goto fault;
			want = v;
			break;
		}
		default:
			return 0;
		}
		if (want > iov_len)
			want = iov_len;
	}

	if (c->kind == SL_DATA_STR) {
		__u32 size = max + 1;
		long n;

		opaque(size);
		if (size > SL_SLOT_MAX)
			size = SL_SLOT_MAX;
		n = bpf_probe_read_user_str(dst, size, (void *)ptr);
		if (n <= 0)
			goto fault;
		if (n == size)
			*flags |= trunc_bit;
		n -= 1;
		opaque(n);
		return n & (SL_SLOT_MAX - 1);
	} else {
		__u32 n;

		if (!want)
			return 0;
		if (want > max) {
			want = max;
			*flags |= trunc_bit;
		}
		n = want;
		opaque(n);
		n &= SL_SLOT_MAX - 1;
		if (bpf_probe_read_user(dst, n, (void *)ptr))
			goto fault;
		return n;
	}
fault:
	*flags |= fault_bit;
	return 0;
}

static __always_inline bool sig_args_eq(const struct sl_sig *h, __u32 nr, const __u64 *a)
{
	return h->nr == nr && h->args[0] == a[0] && h->args[1] == a[1] && h->args[2] == a[2] && h->args[3] == a[3] &&
	       h->args[4] == a[4] && h->args[5] == a[5];
}

static __always_inline bool sig_eq(const struct sl_sig *h, const struct sl_scratch *s, __u8 kinds)
{
	const __u64 *d = (const __u64 *)s->data;
	const __u64 *hd = (const __u64 *)h->data;

	return h->coal && sig_args_eq(h, s->hdr.nr, s->hdr.args) && h->ret == s->hdr.ret &&
	       h->len1 == s->hdr.data1_len && h->len2 == s->hdr.data2_len && h->kinds == kinds && hd[0] == d[0] &&
	       hd[1] == d[1];
}

static __always_inline void sig_store(struct sl_sig *h, const struct sl_scratch *s, __u8 kinds, bool coal)
{
	const __u64 *d = (const __u64 *)s->data;
	__u64 *hd = (__u64 *)h->data;

	h->nr = s->hdr.nr;
	h->len1 = s->hdr.data1_len;
	h->len2 = s->hdr.data2_len;
	h->kinds = kinds;
	h->coal = coal;
	h->args[0] = s->hdr.args[0];
	h->args[1] = s->hdr.args[1];
	h->args[2] = s->hdr.args[2];
	h->args[3] = s->hdr.args[3];
	h->args[4] = s->hdr.args[4];
	h->args[5] = s->hdr.args[5];
	h->ret = s->hdr.ret;
	hd[0] = d[0];
	hd[1] = d[1];
}

/* The call the running repetition expects next. */
static __always_inline struct sl_sig *expected(struct sl_thread *t)
{
	return (t->period == 1 || t->partial) ? hist_new(t) : hist_old(t);
}

/* A fixed-length struct of at most SL_SIG_DATA bytes (a timeout): kept in the thread state. */
static __always_inline bool is_small(const struct sl_cap_slot *c)
{
	return c->kind != SL_DATA_STR && c->len_src == SL_LEN_FIXED && c->len && c->len <= SL_SIG_DATA &&
	       !(c->flags & (SL_CAP_IOVEC | SL_CAP_MSGHDR | SL_CAP_MSGNAME));
}

static __always_inline __u8 capture_small(__u8 *dst, const struct sl_cap_slot *c, const __u64 *args, __u8 *flags,
					  __u8 fault_bit)
{
	__u32 ai = c->arg, n = c->len;
	__u64 ptr;

	if (ai > 5)
		return 0;
	ptr = args[ai];
	if (!ptr)
		return 0;
	if (n > SL_SIG_DATA)
		n = SL_SIG_DATA;
	opaque(n);
	n &= SL_SMALL_SLOT - 1; /* for the verifier: dst has SL_SMALL_SLOT bytes */
	if (bpf_probe_read_user(dst, n, (void *)ptr)) {
		*flags |= fault_bit;
		return 0;
	}
	return n;
}

static __always_inline void capture_at_enter(struct sl_thread *t, __u32 tid, __u32 nr)
{
	__u32 zero = 0;
	struct sl_cap_spec *spec;
	struct sl_scratch *tmpl;
	struct sl_enter_data *e;
	bool big = false;

	spec = bpf_map_lookup_elem(&caps, &nr);
	if (!spec || !((spec->slot[0].flags | spec->slot[1].flags) & SL_CAP_AT_ENTER))
		return;
	t->enter_small_flags = 0;
	t->enter_small_len[0] = 0;
	t->enter_small_len[1] = 0;
	if (spec->slot[0].kind && (spec->slot[0].flags & SL_CAP_AT_ENTER)) {
		if (is_small(&spec->slot[0]))
			t->enter_small_len[0] =
				capture_small(&t->enter_small[0], &spec->slot[0], t->args, &t->enter_small_flags, SL_F_FAULT1);
		else
			big = true;
	}
	if (spec->slot[1].kind && (spec->slot[1].flags & SL_CAP_AT_ENTER)) {
		if (is_small(&spec->slot[1]))
			t->enter_small_len[1] = capture_small(&t->enter_small[SL_SMALL_SLOT], &spec->slot[1], t->args,
							      &t->enter_small_flags, SL_F_FAULT2);
		else
			big = true;
	}
	if (!big)
		return;
	/* any map memory of at least the value's size serves as the initial bytes */
	tmpl = bpf_map_lookup_elem(&scratch, &zero);
	if (!tmpl || bpf_map_update_elem(&enter_data, &tid, tmpl, BPF_ANY))
		return;
	e = bpf_map_lookup_elem(&enter_data, &tid);
	if (!e)
		return;
	e->flags = 0;
	e->len[0] = 0;
	e->len[1] = 0;
	if (spec->slot[0].kind && (spec->slot[0].flags & SL_CAP_AT_ENTER) && !is_small(&spec->slot[0]))
		e->len[0] = capture(&e->data[0], &spec->slot[0], arg_of(t->args, spec->slot[0].arg),
				    arg_of(t->args, spec->slot[0].len_arg), 0, &e->flags, SL_F_TRUNC1, SL_F_FAULT1);
	if (spec->slot[1].kind && (spec->slot[1].flags & SL_CAP_AT_ENTER) && !is_small(&spec->slot[1]))
		e->len[1] = capture(&e->data[SL_SLOT_MAX], &spec->slot[1], arg_of(t->args, spec->slot[1].arg),
				    arg_of(t->args, spec->slot[1].len_arg), 0, &e->flags, SL_F_TRUNC2, SL_F_FAULT2);
}

static __always_inline int on_enter(__u64 pid_tgid, __u32 nr, const __u64 *a)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct sl_thread *t;
	__u64 now;

	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t) {
		/* the thread's first call: EEXIST (a racing insert) is fine, a full map is not */
		bpf_map_update_elem(&threads, &tid, &zero_thread, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&threads, &tid);
		if (!t) {
			count_lost(0, 1);
			return 0;
		}
		t->tgid = tgid;
	}
	now = bpf_ktime_get_ns();
	t->nr = nr;
	t->args[0] = a[0];
	t->args[1] = a[1];
	t->args[2] = a[2];
	t->args[3] = a[3];
	t->args[4] = a[4];
	t->args[5] = a[5];
	t->ts_enter = now;
	t->in_flight = 1;
	if (opt_summary_only)
		return 0;
	/* a call that cannot continue the run ends it now: report before the thread blocks */
	if (t->period && t->count && !sig_args_eq(expected(t), nr, a))
		emit_repeat(t, tid, now);
	if (nr < SL_NR_MAX)
		capture_at_enter(t, tid, nr);
	return 0;
}

/* Whether fill_slot can store anything for slot c at exit; the only place these tests are
 * made, before the call, since fill_slot is a global function that looks the maps up again
 * (a recvfrom with no address, a failed read, a write to a file then cost nothing). */
static __always_inline bool slot_may_copy(const struct sl_cap_slot *c, __u64 ptr, __s64 ret, bool is_sock)
{
	if (!c->kind)
		return false;
	if (c->flags & SL_CAP_AT_ENTER)
		return true;
	if ((c->flags & SL_CAP_IF_OK) && ret < 0)
		return false;
	if ((c->flags & SL_CAP_SOCK_ONLY) && !is_sock)
		return false;
	return ptr != 0;
}

/* What fill_slot returns: the bytes stored, the slot's flag bits (SL_F_* of that slot), its
 * record kind (SL_DATA_NONE when nothing was stored nor failed) and whether it forbids
 * coalescing. */
#define SL_FILL_LEN (SL_SLOT_MAX - 1)
#define SL_FILL_FLAGS_SHIFT 16
#define SL_FILL_KIND_SHIFT 24
#define SL_FILL_NO_COALESCE (1 << 28)

/* Fill data slot i (0 or 1) of the current thread's SYSCALL record in the scratch buffer, at
 * byte `off` of its data, from what the capture table names for syscall nr: copied at entry
 * (kept in the thread state or in enter_data) or read now.
 *
 * A global function on purpose: the verifier checks it once, with unknown arguments, instead
 * of once per slot and per path of the caller. Inlined twice into on_exit, the two copies'
 * branch combinations made sys_exit's verification take about a second (357868 instructions
 * processed) at every load. Scalars only as arguments (maps are looked up here), which any
 * kernel with global functions accepts. */
__noinline int fill_slot(__u32 packed, __s64 ret, __u64 ptr, __u64 lenv)
{
	/* packed: nr (bits 0-9), slot (bit 12), offset in data (bits 16-31); the
	 * caller passes the two argument values the slot may use, so the common path needs no
	 * thread-state lookup (only copies made at entry do) */
	__u32 nr = packed & 0x3ff, i = (packed >> 12) & 1, off = packed >> 16;
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0, len = 0;
	struct sl_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct sl_cap_spec *spec;
	const struct sl_cap_slot *c;
	__u8 flags = 0, trunc_bit = i ? SL_F_TRUNC2 : SL_F_TRUNC1, fault_bit = i ? SL_F_FAULT2 : SL_F_FAULT1;
	__u8 *dst;
	int r;

	if (nr >= SL_NR_MAX || !s)
		return 0;
	spec = bpf_map_lookup_elem(&caps, &nr);
	if (!spec)
		return 0;
	i &= 1;
	c = &spec->slot[i];
	if (!c->kind)
		return 0;
	off &= SL_SLOT_MAX - 1;
	dst = &s->data[off];
	if ((c->flags & SL_CAP_AT_ENTER) && is_small(c)) {
		struct sl_thread *t = bpf_map_lookup_elem(&threads, &tid);

		if (!t)
			return 0;
		len = t->enter_small_len[i];
		opaque(len);
		if (len > SL_SIG_DATA)
			len = SL_SIG_DATA;
		flags |= t->enter_small_flags & fault_bit;
		if (len)
			bpf_probe_read_kernel(dst, len, &t->enter_small[i * SL_SMALL_SLOT]);
	} else if (c->flags & SL_CAP_AT_ENTER) {
		struct sl_enter_data *e = bpf_map_lookup_elem(&enter_data, &tid);

		if (e) {
			len = e->len[i];
			opaque(len);
			len &= SL_SLOT_MAX - 1;
			flags |= e->flags & (trunc_bit | fault_bit);
			if (len)
				bpf_probe_read_kernel(dst, len, &e->data[i * SL_SLOT_MAX]);
		}
	} else {
		len = capture(dst, c, ptr, lenv, ret, &flags, trunc_bit, fault_bit);
	}
	len &= SL_FILL_LEN;
	r = len | (__u32)flags << SL_FILL_FLAGS_SHIFT;
	if (len || flags)
		r |= (__u32)c->kind << SL_FILL_KIND_SHIFT;
	if (len && (c->flags & SL_CAP_NO_COALESCE))
		r |= SL_FILL_NO_COALESCE;
	return r;
}

static __always_inline void on_exit_summary(struct sl_thread *t, __s64 ret, __u64 now)
{
	__u32 nr = t->nr;
	struct sl_counts *c;

	if (nr >= SL_NR_MAX)
		return;
	c = bpf_map_lookup_elem(&counts, &nr);
	if (!c)
		return;
	c->calls++;
	if (ret < 0 && ret >= -4095)
		c->errors++;
	c->dur_ns += now - t->ts_enter;
}

#ifdef SYSLINT_NO_BTF
static __always_inline void emit_fork_rec(__u32 ptgid, __u32 ptid, __u32 ctgid, __u32 ctid, __u64 now);
static __always_inline void emit_exec_from_enter(__u32 tgid, __u32 tid, __u64 now);
#endif

/* Build the SYSCALL record of the call that just returned into the scratch buffer, then send
 * it or fold it into the thread's run. */
static __always_inline int on_exit(__u64 pid_tgid, __s64 ret)
{
	__u32 tid = (__u32)pid_tgid, zero = 0;
	struct sl_thread *t;
	struct sl_scratch *s;
	struct sl_cap_spec *spec = NULL;
	__u32 nr, len1 = 0, len2 = 0, r;
	__u64 now, te, ptr;
	__u8 flags = 0, k1 = SL_DATA_NONE, k2 = SL_DATA_NONE, kinds;
	bool coal, is_sock = false;
	__u16 cf;
	int err;

	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || !t->in_flight)
		return 0;
	t->in_flight = 0;
	now = bpf_ktime_get_ns();
	nr = t->nr;
	te = t->ts_enter;
	if (opt_summary_only) {
		on_exit_summary(t, ret, now);
		return 0;
	}
#ifdef SYSLINT_NO_BTF
	if (ret > 0 && (nr == NR_CLONE || nr == NR_FORK || nr == NR_VFORK || nr == NR_CLONE3)) {
		__u64 cl = 0;
		__u32 child = ret, ctgid;

		if (nr == NR_CLONE)
			cl = t->args[0];
		else if (nr == NR_CLONE3)
			bpf_probe_read_user(&cl, sizeof(cl), (void *)t->args[0]);
		ctgid = (cl & CLONE_THREAD) ? t->tgid : child;
		if (ctgid != t->tgid)
			set_traced(ctgid);
		emit_fork_rec(t->tgid, tid, ctgid, child, now);
	}
	if (ret == 0 && (nr == NR_EXECVE || nr == NR_EXECVEAT))
		emit_exec_from_enter(t->tgid, tid, now);
#endif

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	if (s->busy) {
		/* a preempted program on this CPU is using the buffer: drop rather than corrupt */
		count_lost(1, 1);
		t->hist_n = 0;
		return 0;
	}
	s->busy = 1;

	s->hdr.kind = SL_REC_SYSCALL;
	s->hdr.tgid = t->tgid;
	s->hdr.tid = tid;
	s->hdr.nr = nr;
	s->hdr.args[0] = t->args[0];
	s->hdr.args[1] = t->args[1];
	s->hdr.args[2] = t->args[2];
	s->hdr.args[3] = t->args[3];
	s->hdr.args[4] = t->args[4];
	s->hdr.args[5] = t->args[5];
	s->hdr.ret = ret;
	s->hdr.ts_enter = te;
	s->hdr.ts_exit = now;
	s->hdr._pad = 0;
	*(__u64 *)&s->data[0] = 0;
	*(__u64 *)&s->data[8] = 0;
	coal = opt_coalesce;

	if (nr < SL_NR_MAX)
		spec = bpf_map_lookup_elem(&caps, &nr);
	if (spec && (spec->slot[0].kind || spec->slot[1].kind)) {
		cf = spec->slot[0].flags | spec->slot[1].flags;
		if (cf & SL_CAP_SOCK_ONLY)
			is_sock = fd_is_socket(t->args[0]);

		ptr = arg_of(t->args, spec->slot[0].arg);
		if (slot_may_copy(&spec->slot[0], ptr, ret, is_sock)) {
			r = fill_slot(nr, ret, ptr, arg_of(t->args, spec->slot[0].len_arg));
			len1 = r & SL_FILL_LEN;
			flags |= (r >> SL_FILL_FLAGS_SHIFT) & (SL_F_TRUNC1 | SL_F_FAULT1);
			k1 = (r >> SL_FILL_KIND_SHIFT) & 0xf;
			if (r & SL_FILL_NO_COALESCE)
				coal = false;
		}
		ptr = arg_of(t->args, spec->slot[1].arg);
		if (slot_may_copy(&spec->slot[1], ptr, ret, is_sock)) {
			r = fill_slot(nr | 1u << 12 | (len1 & 0xffff) << 16, ret, ptr,
				      arg_of(t->args, spec->slot[1].len_arg));
			len2 = r & SL_FILL_LEN;
			flags |= (r >> SL_FILL_FLAGS_SHIFT) & (SL_F_TRUNC2 | SL_F_FAULT2);
			k2 = (r >> SL_FILL_KIND_SHIFT) & 0xf;
			if (r & SL_FILL_NO_COALESCE)
				coal = false;
		}
		if (cf & SL_CAP_AT_ENTER)
			bpf_map_delete_elem(&enter_data, &tid);
	}
	len1 &= SL_SLOT_MAX - 1;
	len2 &= SL_SLOT_MAX - 1;
	s->hdr.flags = flags;
	s->hdr.data1_kind = k1;
	s->hdr.data2_kind = k2;
	s->hdr.data1_len = len1;
	s->hdr.data2_len = len2;
	kinds = k1 | (k2 << 4);
	if (flags || len1 + len2 > SL_SIG_DATA)
		coal = false;

	if (opt_coalesce) {
		if (t->period) {
			if (coal && sig_eq(expected(t), s, kinds)) {
				if (t->period == 2 && !t->partial) {
					t->partial = 1;
					t->part_ts_enter = te;
					t->part_ts_exit = now;
				} else {
					if (!t->count)
						t->first_ts = t->period == 2 ? t->part_ts_enter : te;
					t->count++;
					t->dur_sum += now - te;
					if (t->period == 2)
						t->dur_sum += t->part_ts_exit - t->part_ts_enter;
					t->last_ts = now;
					t->partial = 0;
					if (t->count >= opt_max_run || now - t->last_report >= opt_report_ns)
						emit_repeat(t, tid, now);
				}
				goto out;
			}
			/* the run is broken */
			emit_repeat(t, tid, now);
			if (t->partial) {
				err = emit_sig(t, tid, hist_old(t), t->part_ts_enter, t->part_ts_exit);
				/* the partial call is now the newest record */
				t->newest ^= 1;
				if (err)
					t->hist_n = 0;
			}
			t->period = 0;
			t->partial = 0;
		}
		if (coal && t->hist_n >= 1 && sig_eq(hist_new(t), s, kinds)) {
			t->period = 1;
			t->count = 1;
			t->partial = 0;
			t->first_ts = te;
			t->last_ts = now;
			t->dur_sum = now - te;
			t->last_report = now;
			goto out;
		}
		if (coal && t->hist_n >= 2 && sig_eq(hist_old(t), s, kinds)) {
			t->period = 2;
			t->count = 0;
			t->partial = 1;
			t->part_ts_enter = te;
			t->part_ts_exit = now;
			t->last_report = now;
			goto out;
		}
	}

	err = bpf_ringbuf_output(&events, &s->hdr, sizeof(s->hdr) + len1 + len2,
				 wake_flags_thread(t, sizeof(s->hdr) + len1 + len2));
	if (err) {
		count_lost(1, 1);
		t->hist_n = 0;
		goto out;
	}
	if (opt_coalesce) {
		t->newest ^= 1;
		sig_store(hist_new(t), s, kinds, coal);
		if (t->hist_n < 2)
			t->hist_n++;
	}
out:
	s->busy = 0;
	return 0;
}

static __always_inline void emit_exit_rec(__u32 tgid, __u32 tid, __s32 code, bool group_dead, __u64 now)
{
	struct sl_exit_rec r = {};

	r.kind = SL_REC_EXIT;
	r.group_dead = group_dead;
	r.tgid = tgid;
	r.tid = tid;
	r.exit_code = code;
	r.ts = now;
	if (bpf_ringbuf_output(&events, &r, sizeof(r), BPF_RB_FORCE_WAKEUP))
		count_lost(1, 0);
}

static __always_inline void thread_ended(__u32 tgid, __u32 tid, __s32 code, bool group_dead)
{
	__u64 now = bpf_ktime_get_ns();
	struct sl_thread *t = bpf_map_lookup_elem(&threads, &tid);

	if (t) {
		finish_thread(t, tid, now);
		bpf_map_delete_elem(&threads, &tid);
	}
	bpf_map_delete_elem(&enter_data, &tid);
	emit_exit_rec(tgid, tid, code, group_dead, now);
	if (group_dead)
		clear_traced(tgid);
}

#ifndef SYSLINT_NO_BTF

SEC("tp_btf/sys_enter")
int BPF_PROG(sl_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	__u64 a[6];

	if (!is_traced(tgid))
		return 0;
	a[0] = regs->di;
	a[1] = regs->si;
	a[2] = regs->dx;
	a[3] = regs->r10;
	a[4] = regs->r8;
	a[5] = regs->r9;
	return on_enter(pid_tgid, (__u32)id, a);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sl_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	/* the bitmap first: the thread-state lookup (a hash) only for traced processes */
	if (!is_traced(pid_tgid >> 32))
		return 0;
	return on_exit(pid_tgid, ret);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sl_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct sl_fork_rec r = {};

	if (!is_traced(ptgid))
		return 0;
	/* the child cannot run before this returns: none of its calls is missed */
	if (ctgid != ptgid)
		set_traced(ctgid);
	r.kind = SL_REC_FORK;
	r.is_thread = ctgid == ptgid;
	r.parent_tgid = ptgid;
	r.parent_tid = parent->pid;
	r.child_tgid = ctgid;
	r.child_tid = child->pid;
	r.ts = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(&events, &r, sizeof(r), wake_flags()))
		count_lost(1, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sl_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid, tid = p->pid, old = old_pid;
	struct sl_exec_rec *r;
	long n;

	if (!is_traced(tgid))
		return 0;
	if (old != tid) {
		/* a non-leader thread exec'd and took the process id: its state moves with it */
		struct sl_thread *t = bpf_map_lookup_elem(&threads, &old);
		struct sl_enter_data *e = bpf_map_lookup_elem(&enter_data, &old);

		if (t && !bpf_map_update_elem(&threads, &tid, t, BPF_ANY))
			bpf_map_delete_elem(&threads, &old);
		if (e && !bpf_map_update_elem(&enter_data, &tid, e, BPF_ANY))
			bpf_map_delete_elem(&enter_data, &old);
	}
	r = bpf_ringbuf_reserve(&events, sizeof(*r) + SL_EXEC_NAME, 0);
	if (!r) {
		count_lost(1, 0);
		return 0;
	}
	r->kind = SL_REC_EXEC;
	r->tgid = tgid;
	r->tid = tid;
	r->old_tid = old;
	r->ts = bpf_ktime_get_ns();
	n = bpf_probe_read_kernel_str((void *)(r + 1), SL_EXEC_NAME, BPF_CORE_READ(bprm, filename));
	r->truncated = n == SL_EXEC_NAME;
	r->filename_len = n > 0 ? n - 1 : 0;
	bpf_ringbuf_submit(r, wake_flags());
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sl_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid, tid = p->pid;

	if (!is_traced(tgid))
		return 0;
	thread_ended(tgid, tid, p->exit_code, BPF_CORE_READ(p, signal, live.counter) == 0);
	return 0;
}

#else /* SYSLINT_NO_BTF */

/* x86_64 struct pt_regs (uapi) offsets of the syscall argument registers */
#define PT_R10 56
#define PT_R9 64
#define PT_R8 72
#define PT_DX 96
#define PT_SI 104
#define PT_DI 112

static __always_inline __u64 reg(void *regs, int off)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), regs + off);
	return v;
}

static __always_inline void emit_fork_rec(__u32 ptgid, __u32 ptid, __u32 ctgid, __u32 ctid, __u64 now)
{
	struct sl_fork_rec r = {};

	r.kind = SL_REC_FORK;
	r.is_thread = ctgid == ptgid;
	r.parent_tgid = ptgid;
	r.parent_tid = ptid;
	r.child_tgid = ctgid;
	r.child_tid = ctid;
	r.ts = now;
	if (bpf_ringbuf_output(&events, &r, sizeof(r), wake_flags()))
		count_lost(1, 0);
}

static __always_inline void emit_exec_from_enter(__u32 tgid, __u32 tid, __u64 now)
{
	struct sl_enter_data *e = bpf_map_lookup_elem(&enter_data, &tid);
	struct sl_exec_rec *r;
	__u32 n = 0;

	r = bpf_ringbuf_reserve(&events, sizeof(*r) + SL_EXEC_NAME, 0);
	if (!r) {
		count_lost(1, 0);
		return;
	}
	r->kind = SL_REC_EXEC;
	r->tgid = tgid;
	r->tid = tid;
	r->old_tid = tid;
	r->ts = now;
	r->truncated = 0;
	if (e) {
		n = e->len[0];
		if (n > SL_EXEC_NAME) {
			n = SL_EXEC_NAME;
			r->truncated = 1;
		}
		opaque(n);
		n &= SL_EXEC_NAME * 2 - 1;
		if (n > SL_EXEC_NAME)
			n = SL_EXEC_NAME;
		if (n && bpf_probe_read_kernel((void *)(r + 1), n, &e->data[0]))
			n = 0;
	}
	r->filename_len = n;
	bpf_ringbuf_submit(r, wake_flags());
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sl_sys_enter_raw, void *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u64 a[6];

	if (!is_traced(tgid))
		return 0;
	a[0] = reg(regs, PT_DI);
	a[1] = reg(regs, PT_SI);
	a[2] = reg(regs, PT_DX);
	a[3] = reg(regs, PT_R10);
	a[4] = reg(regs, PT_R8);
	a[5] = reg(regs, PT_R9);
	on_enter(pid_tgid, (__u32)id, a);
	/* no exit tracepoint without BTF: these calls do not return */
	if (id == NR_EXIT || id == NR_EXIT_GROUP)
		thread_ended(tgid, tid, (__s32)((a[0] & 0xff) << 8), id == NR_EXIT_GROUP);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sl_sys_exit_raw, void *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!is_traced(pid_tgid >> 32))
		return 0;
	return on_exit(pid_tgid, ret);
}

#endif /* SYSLINT_NO_BTF */
