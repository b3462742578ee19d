/* SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0 */
/*
 * User stacks of sampled calls (tp_btf variant only; opt_stacks off by default).
 *
 * At a traced call's exit, when the sampling budget of its thread and syscall says so (the
 * first opt_stack_first samples of each opt_stack_window_ns window, then one call in
 * opt_stack_every, a stride that doubles after each opt_stack_cap samples, no two samples of a
 * thread closer than opt_stack_spacing_ns: budget_step), one SL_REC_STACK record goes to the `stack_events` ring: the user
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
 * only the budget step (in the thread's state; see stack_weight).
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
/* samples of a window at a stride before the stride doubles (0: never) */
const volatile __u32 opt_stack_cap = 64;
/* the least time between two samples of one thread */
const volatile __u64 opt_stack_spacing_ns = 1000ULL * 1000;
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

/* One step of a budget: the weight of this call's sample (the calls of this thread and syscall
 * since its previous sample, this one included: each sample stands for exactly the calls it
 * was chosen from), 0 for none. A window's first opt_stack_first samples are taken as soon as
 * the spacing allows; after them one call in a stride, the stride being opt_stack_every and
 * doubling after each opt_stack_cap samples of the window, so a thread spinning at millions of
 * calls a second pays for a few hundred stacks a window, not thousands. And never two samples
 * of one thread less than opt_stack_spacing_ns apart (but for its first call of each syscall):
 * a loop's first calls are not slowed one after another, which would bend what detectors
 * measure of them (retry-storm's gaps). */
static __always_inline __u32 budget_step(struct sl_thread *t, __u64 *window_start, __u32 *seen, __u32 *taken,
					 __u64 now, bool fresh)
{
	__u32 every = opt_stack_every, cap = opt_stack_cap, n = *seen, shift;
	__u64 stride;

	if (now - *window_start >= opt_stack_window_ns) {
		*window_start = now;
		*taken = 0;
	}
	if (n < 0xffffffffU)
		n++;
	*seen = n;
	if (*taken >= opt_stack_first) {
		/* the path nearly every call of a spin takes: no division */
		if (every == 0 || n < every)
			return 0;
		shift = cap ? (*taken - opt_stack_first) / cap : 0;
		if (shift > 20)
			shift = 20;
		stride = (__u64)every << shift;
		if (n < stride)
			return 0;
	}
	/* the spacing, except for the thread's first call of a syscall: a process that lives a
	 * few milliseconds still gets a stack for each syscall it makes (one copy each, once) */
	if (!fresh && t->stk_last && now - t->stk_last < opt_stack_spacing_ns)
		return 0;
	t->stk_last = now;
	*seen = 0;
	*taken += 1;
	return n;
}

/* The weight of this call's sample under its thread's budget for the syscall. The budget sits in
 * the thread's state (already looked up: a spin pays no map operation here) unless another
 * syscall holds its slot; then in the stack_budget hash. *first: the thread's first sample
 * (wake user space, which snapshots the process's mappings right away). */
static __always_inline __u32 stack_weight(struct sl_thread *t, __u32 tid, __u32 nr, __u64 now, bool *first)
{
	__u64 key = (__u64)tid << 32 | nr;
	struct sl_stack_budget *b, fresh = {};
	__u32 slot = nr & (SL_STK_SLOTS - 1), w;

	if (nr >= SL_NR_MAX || !((opt_stack_nrs[(nr >> 6) & 7] >> (nr & 63)) & 1))
		return 0;
	*first = t->stk_last == 0;
	if (t->stk_nr[slot] == 0) {
		t->stk_nr[slot] = nr + 1;
		t->stk_window[slot] = now;
		t->stk_seen[slot] = 0;
		t->stk_taken[slot] = 0;
		return budget_step(t, &t->stk_window[slot], &t->stk_seen[slot], &t->stk_taken[slot], now, true);
	}
	if (t->stk_nr[slot] == nr + 1)
		return budget_step(t, &t->stk_window[slot], &t->stk_seen[slot], &t->stk_taken[slot], now, false);
	b = bpf_map_lookup_elem(&stack_budget, &key);
	if (b)
		return budget_step(t, &b->window_start, &b->seen, &b->taken, now, false);
	fresh.window_start = now;
	w = budget_step(t, &fresh.window_start, &fresh.seen, &fresh.taken, now, true);
	bpf_map_update_elem(&stack_budget, &key, &fresh, BPF_ANY);
	return w;
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

#ifndef SYSLINT_NO_BTF
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task, __u64 addr) __weak __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __weak __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __weak __ksym;

#define SL_VM_EXEC 0x4
#define SL_VMAS_MAX 64 /* executable file mappings sent per snapshot */

/* Where a VMA record is built before it is copied into the ring (per CPU; `busy` while in use:
 * a program preempted on this CPU is still filling it). */
struct sl_vma_scratch {
	struct sl_vma_rec r;
	__u32 busy;
	__u32 n; /* mappings sent by this snapshot (in map memory: a counter on the stack would make
		  * the verifier walk the loop once per value) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sl_vma_scratch);
} vma_scratch SEC(".maps");

/* The dentry chain of a mapped file into the scratch record's names: the file's name first,
 * up to its file system's root or SL_VMA_DEPTH names. A function of its own (verified once,
 * not once per place the VMA loop could be in); the dentry comes as a number and is read with
 * probe reads. */
__noinline int vma_path(__u64 dentry)
{
	__u32 zero = 0;
	struct sl_vma_scratch *s = bpf_map_lookup_elem(&vma_scratch, &zero);
	struct dentry *d = (struct dentry *)dentry, *up;
	int i;

	if (!s)
		return 0;
	s->r.depth = 0;
	s->r.complete = 0;
	for (i = 0; i < SL_VMA_DEPTH; i++) {
		if (bpf_probe_read_kernel_str((char *)s->r.names[i], SL_VMA_NAME, BPF_CORE_READ(d, d_name.name)) < 0)
			s->r.names[i][0] = 0;
		s->r.depth = i + 1;
		up = BPF_CORE_READ(d, d_parent);
		if (!up || up == d) {
			s->r.complete = 1;
			break;
		}
		d = up;
	}
	return 0;
}

/* The executable file mappings of the current task's address space, one SL_REC_VMA each into
 * the stack ring (a process that ends within milliseconds is gone before user space reads its
 * /proc/PID/maps). Needs the VMA iterator (Linux 6.7); without it, nothing is sent. A function
 * of its own: its loop is verified once. */
/* The address space's id for user space. The mm_struct's address alone is not one: each exec
 * frees the image before, and a later exec of the same process may be given that address
 * again; the collector then unwound the program's calls with an earlier image's modules and
 * its stacks stopped in the C library (a program started through two wrappers, `chroot` after
 * syslint's child, a shell script exec'ing a launcher). The task's exec count (self_exec_id,
 * which threads and children inherit) goes into the top 16 bits, which a kernel address has
 * all set. */
static __always_inline __u64 sl_mm_id(struct task_struct *task)
{
	__u64 mm = (__u64)BPF_CORE_READ(task, mm);
	__u64 gen = BPF_CORE_READ(task, self_exec_id);

	return mm ^ ((gen & 0xffff) << 48);
}

__noinline int send_vmas(__u32 tgid, __u64 mm_id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vm_area_struct *vma;
	struct sl_vma_scratch *s;
	struct file *f;
	__u32 zero = 0;

	if (!bpf_ksym_exists(bpf_iter_task_vma_new))
		return 0;
	s = bpf_map_lookup_elem(&vma_scratch, &zero);
	if (!s || s->busy)
		return 0;
	s->busy = 1;
	s->r.kind = SL_REC_VMA;
	s->r._pad = 0;
	s->r._pad2 = 0;
	s->r.tgid = tgid;
	s->r.mm_id = mm_id;
	s->n = 0;
	bpf_for_each(task_vma, vma, task, 0) {
		if (!(vma->vm_flags & SL_VM_EXEC))
			continue;
		f = vma->vm_file;
		if (!f)
			continue;
		if (++s->n > SL_VMAS_MAX)
			break;
		s->r.start = vma->vm_start;
		s->r.end = vma->vm_end;
		s->r.pgoff = vma->vm_pgoff;
		s->r.ino = BPF_CORE_READ(f, f_inode, i_ino);
		s->r.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
		vma_path((__u64)BPF_CORE_READ(f, f_path.dentry));
		if (bpf_ringbuf_output(&stack_events, &s->r, sizeof(s->r), 0)) {
			stack_count(0, 0, 1, 0);
			break;
		}
	}
	s->busy = 0;
	return 0;
}

/* At exit_group's entry: a thread that had stacks sampled sends its process's mappings once
 * more, now that every library is mapped (the snapshot at its first sample may predate the C
 * library, and user space may not read /proc/PID/maps before the process is gone). */
static __always_inline void exit_vmas(__u64 pid_tgid)
{
	__u32 tid = (__u32)pid_tgid;
	struct sl_thread *t = bpf_map_lookup_elem(&threads, &tid);
	struct task_struct *task;

	if (!t || !t->stk_last)
		return;
	task = bpf_get_current_task_btf();
	send_vmas(pid_tgid >> 32, sl_mm_id(task));
}
#endif

/* Called at a traced call's exit (after its record was sent or folded), ctx being the
 * tracepoint's. */
static __always_inline void sample_stack(void *ctx, struct pt_regs *regs, struct sl_thread *t, __u32 tgid, __u32 tid,
					 __u32 nr, __u64 ts_exit)
{
	struct sl_stack_scratch *s;
	struct task_struct *task;
	__u32 zero = 0, weight, len = 0, n, size, limit = opt_stack_bytes;
	__u64 addr, avail, wake;
	bool first = false;
	long got;
	int i;

	weight = stack_weight(t, tid, nr, ts_exit, &first);
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
#ifndef SYSLINT_NO_BTF
	/* the thread's first sample: the process's executable mappings go first */
	if (first)
		send_vmas(tgid, sl_mm_id(task));
#endif
	s->hdr.kind = SL_REC_STACK;
	s->hdr.flags = 0;
	s->hdr.tgid = tgid;
	s->hdr.tid = tid;
	s->hdr.nr = nr;
	s->hdr.ts_exit = ts_exit;
	s->hdr.mm_id = sl_mm_id(task);
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
