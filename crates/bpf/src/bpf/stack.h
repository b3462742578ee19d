/* SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0 */
/*
 * User stacks of sampled calls (tp_btf variant only; opt_stacks off by default).
 *
 * At a traced call's exit, when the sampling budget of its thread and syscall says so (the
 * first opt_stack_first calls of each opt_stack_window_ns window, then one in
 * opt_stack_every), one SL_REC_STACK record goes to the `stack_events` ring: the user
 * registers user space needs to start unwinding (ip, sp, bp from the task's pt_regs), the
 * kernel's frame-pointer walk (bpf_get_stack with BPF_F_USER_STACK: complete where the code
 * keeps frame pointers, a frame or two where it does not, as Debian's -O2 code) and up to
 * opt_stack_bytes of the stack from sp upwards, which user space unwinds from .eh_frame
 * (crates/stacks). Nothing is unwound here.
 *
 * The copy is made page by page with bpf_probe_read_user, which never faults pages in: it
 * stops at the first unreadable page (the top of the stack, usually) and keeps what it read.
 * Records are built in a per-CPU scratch buffer and copied into the ring with their exact
 * length; one that does not fit is counted (stack_stats.lost), and calls without a stack pay
 * only the budget lookup.
 *
 * Part of syslint.bpf.c: included there, in order, into its one compilation unit; not a
 * header to include elsewhere.
 */
#ifndef SL_STACK_H
#define SL_STACK_H

#ifndef BPF_F_USER_STACK
#define BPF_F_USER_STACK (1ULL << 8)
#endif

const volatile bool opt_stacks = false;
const volatile __u32 opt_stack_first = 8;
const volatile __u32 opt_stack_every = 1000;
const volatile __u64 opt_stack_window_ns = 1000ULL * 1000 * 1000;
const volatile __u32 opt_stack_bytes = 8192;
const volatile bool opt_stack_fp = true;
/* which syscalls may get a stack: bit (nr & 63) of word nr >> 6 (all by default) */
const volatile __u64 opt_stack_nrs[SL_NR_MAX / 64] = { ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL };
/* wake the stack consumer when this much is waiting (and at each thread's first sample) */
const volatile __u64 opt_stack_wakeup_bytes = 64 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} stack_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct sl_stack_budget);
} stack_budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sl_stack_stats);
} stack_stats SEC(".maps");

/* room for the largest copy plus one page: each page's copy starts below SL_STACK_MAX */
struct sl_stack_scratch {
	struct sl_stack_rec hdr;
	__u64 ips[SL_STACK_IPS];
	__u8 stack[SL_STACK_MAX + 4096];
	__u32 busy;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sl_stack_scratch);
} stack_scratch SEC(".maps");

/* The weight of this call's sample: 0 for no sample; 1 for one of the window's first calls,
 * opt_stack_every for one in opt_stack_every after them. *first: the thread's first call of
 * this syscall seen (wake user space: it snapshots the process's mappings right away). */
static __always_inline __u32 stack_weight(__u32 tid, __u32 nr, __u64 now, bool *first)
{
	__u64 key = (__u64)tid << 32 | nr;
	struct sl_stack_budget *b, fresh = {};
	__u32 every = opt_stack_every, n;

	if (nr >= SL_NR_MAX || !((opt_stack_nrs[(nr >> 6) & 7] >> (nr & 63)) & 1))
		return 0;
	b = bpf_map_lookup_elem(&stack_budget, &key);
	if (!b) {
		fresh.window_start = now;
		fresh.seen = 1;
		bpf_map_update_elem(&stack_budget, &key, &fresh, BPF_ANY);
		*first = true;
		return 1;
	}
	if (now - b->window_start >= opt_stack_window_ns) {
		b->window_start = now;
		b->seen = 0;
	}
	n = ++b->seen;
	if (n <= opt_stack_first)
		return 1;
	if (every == 0)
		return 0;
	return (n - opt_stack_first) % every == 0 ? every : 0;
}

static __always_inline void stack_count(__u64 sampled, __u64 sent, __u64 lost, __u64 bytes)
{
	__u32 zero = 0;
	struct sl_stack_stats *st = bpf_map_lookup_elem(&stack_stats, &zero);

	if (st) {
		st->sampled += sampled;
		st->sent += sent;
		st->lost += lost;
		st->bytes += bytes;
	}
}

/* Called at a traced call's exit (after its record was sent or folded), ctx being the
 * tracepoint's. */
static __always_inline void sample_stack(void *ctx, struct pt_regs *regs, __u32 tgid, __u32 tid, __u32 nr,
					 __u64 ts_exit)
{
	struct sl_stack_scratch *s;
	struct task_struct *task;
	__u32 zero = 0, weight, len = 0, n, size, limit = opt_stack_bytes;
	__u64 addr, avail, wake;
	bool first = false;
	long got;
	int i;

	weight = stack_weight(tid, nr, ts_exit, &first);
	if (!weight)
		return;
	s = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!s)
		return;
	if (s->busy) {
		stack_count(1, 0, 1, 0);
		return;
	}
	s->busy = 1;
	task = bpf_get_current_task_btf();
	s->hdr.kind = SL_REC_STACK;
	s->hdr.flags = 0;
	s->hdr.tgid = tgid;
	s->hdr.tid = tid;
	s->hdr.nr = nr;
	s->hdr.ts_exit = ts_exit;
	s->hdr.mm_id = (__u64)BPF_CORE_READ(task, mm);
	s->hdr.ip = regs->ip;
	s->hdr.sp = regs->sp;
	s->hdr.bp = regs->bp;
	s->hdr.weight = weight;
	s->hdr.n_ips = 0;
	if (opt_stack_fp) {
		got = bpf_get_stack(ctx, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
		if (got < 0)
			s->hdr.flags |= SL_STK_FP_FAIL;
		else
			s->hdr.n_ips = (got / 8) & (SL_STACK_IPS * 2 - 1);
	}
	if (s->hdr.n_ips > SL_STACK_IPS)
		s->hdr.n_ips = SL_STACK_IPS;
	/* the stack, page by page: the first piece up to sp's page end, then whole pages */
	if (limit > SL_STACK_MAX)
		limit = SL_STACK_MAX;
	addr = s->hdr.sp;
	for (i = 0; i < SL_STACK_MAX / 4096 + 1; i++) {
		if (len >= limit)
			break;
		n = 4096 - (addr & 4095);
		if (n > limit - len)
			n = limit - len;
		/* bounds the verifier can follow: len < SL_STACK_MAX, 1 <= n <= 4096 */
		opaque(len);
		len &= SL_STACK_MAX * 2 - 1;
		if (len >= SL_STACK_MAX)
			break;
		opaque(n);
		n &= 8191;
		if (n == 0 || n > 4096)
			break;
		if (bpf_probe_read_user(&s->stack[len], n, (void *)addr)) {
			s->hdr.flags |= SL_STK_FAULT;
			break;
		}
		len += n;
		addr += n;
	}
	if (len >= limit && !(s->hdr.flags & SL_STK_FAULT))
		s->hdr.flags |= SL_STK_TRUNC;
	if (len > SL_STACK_MAX)
		len = SL_STACK_MAX;
	s->hdr.stack_len = len;
	/* the record as the scratch holds it: header, the SL_STACK_IPS slots (n_ips used), the
	 * stack bytes; copied into the ring with its exact length */
	size = sizeof(s->hdr) + sizeof(s->ips) + len;
	opaque(size);
	if (size > sizeof(s->hdr) + sizeof(s->ips) + SL_STACK_MAX)
		size = sizeof(s->hdr) + sizeof(s->ips) + SL_STACK_MAX;
	avail = bpf_ringbuf_query(&stack_events, BPF_RB_AVAIL_DATA);
	wake = first || avail > opt_stack_wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&stack_events, &s->hdr, size, wake))
		stack_count(1, 0, 1, 0);
	else
		stack_count(1, 1, 0, size);
	s->busy = 0;
}

#endif /* SL_STACK_H */
