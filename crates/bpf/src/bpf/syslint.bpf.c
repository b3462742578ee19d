// SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0
/*
 * syslint's syscall capture program.
 *
 * sys_enter stores the call (number, six arguments, time) in the thread's state; sys_exit
 * builds one record, copies the user memory the capture table (map `caps`, filled by user
 * space) names for that syscall, and either sends it or folds it into a run of identical calls
 * (coalescing, see coalesce.h). Only threads of processes in map `traced` (a bitmap of tgids) are
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
 * The parts, one header each, included below in this order: maps.h (options, maps, per-thread
 * state), filter.h (the `traced` bitmap), ring.h (ring-buffer output, the simple records),
 * coalesce.h (runs of identical calls, REPEAT records), sock.h (is an fd a socket),
 * capture.h (copying arguments' user memory: capture table, fill_slot), stack.h (user stacks of
 * sampled calls, tp_btf variant only). This file keeps the
 * call's entry and exit, the end of a thread and the tracepoint programs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syslint.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#include "maps.h"
#include "filter.h"
#include "ring.h"
#include "coalesce.h"
#include "sock.h"
#include "capture.h"
#include "stack.h"

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

/* A traced thread seen first at a syscall's exit (opt_in_flight, an attach): the call began
 * before tracing did. Its state is made from the registers at exit (number, arguments) and
 * flagged, so its record says its start is unknown. Not for a new child's return from
 * clone/fork (ret 0): that is no call of its own. */
static __always_inline struct sl_thread *began_before(__u64 pid_tgid, __u32 nr, const __u64 *a, __s64 ret)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct sl_thread *t;

	if (!opt_in_flight || opt_summary_only)
		return NULL;
	if (ret == 0 && (nr == NR_CLONE || nr == NR_FORK || nr == NR_VFORK || nr == NR_CLONE3))
		return NULL;
	bpf_map_update_elem(&threads, &tid, &zero_thread, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t)
		return NULL;
	t->tgid = tgid;
	t->nr = nr;
	t->args[0] = a[0];
	t->args[1] = a[1];
	t->args[2] = a[2];
	t->args[3] = a[3];
	t->args[4] = a[4];
	t->args[5] = a[5];
	t->ts_enter = 0;
	t->in_flight = 1;
	t->no_entry = 1;
	return t;
}

static __always_inline int on_enter(__u64 pid_tgid, __u32 nr, const __u64 *a)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct sl_thread *t;
	__u64 now;

	t = bpf_map_lookup_elem(&threads, &tid);
	if (is_closing()) {
		/* a call begun after the window closed is not in it: its return is not recorded */
		if (t)
			t->in_flight = 0;
		return 0;
	}
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

/* Build the SYSCALL record of the call that just returned (on thread state `t`, looked up by
 * the caller) into the scratch buffer, then send it or fold it into the thread's run. *exit_ts
 * is set to the call's ts_exit when it was recorded (sent or folded), else left 0. */
static __always_inline int on_exit(__u64 pid_tgid, __s64 ret, struct sl_thread *t, __u64 *exit_ts)
{
	__u32 tid = (__u32)pid_tgid, zero = 0;
	struct sl_scratch *s;
	struct sl_cap_spec *spec = NULL;
	__u32 nr, len1 = 0, len2 = 0, r;
	__u64 now, te, ptr;
	__u8 flags = 0, k1 = SL_DATA_NONE, k2 = SL_DATA_NONE, kinds;
	bool coal, is_sock = false;
	__u16 cf;
	int err;

	bool no_entry;

	if (!t || !t->in_flight)
		return 0;
	t->in_flight = 0;
	now = bpf_ktime_get_ns();
	nr = t->nr;
	te = t->ts_enter;
	no_entry = t->no_entry;
	if (no_entry) {
		t->no_entry = 0;
		te = now;
	}
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
	*exit_ts = now;

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
	if (spec && (spec->slot[0].flags & SL_CAP_NEW_FD) && ret >= 0)
		coal = false;
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
	if (no_entry)
		flags |= SL_F_NO_ENTRY;
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
					if (t->period == 2) {
						/* position 0 is the partial call (the older record), 1 this one */
						t->dur_sum[0] += t->part_ts_exit - t->part_ts_enter;
						t->dur_sum[1] += now - te;
					} else {
						t->dur_sum[0] += now - te;
					}
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
			t->dur_sum[0] = now - te;
			t->dur_sum[1] = 0;
			t->last_report = now;
			goto out;
		}
		if (coal && t->hist_n >= 2 && sig_eq(hist_old(t), s, kinds)) {
			t->period = 2;
			t->count = 0;
			t->dur_sum[0] = 0;
			t->dur_sum[1] = 0;
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
	if (opt_stacks && id == 231) /* exit_group */
		exit_vmas(pid_tgid);
	a[0] = regs->di;
	a[1] = regs->si;
	a[2] = regs->dx;
	a[3] = regs->r10;
	a[4] = regs->r8;
	a[5] = regs->r9;
	on_enter(pid_tgid, (__u32)id, a);
	/* execve's stack at its entry: the spawning code, in the address space it replaces (at
	 * its return, a successful one's registers are the new program's, at its entry point) */
	if (opt_stacks && (id == 59 || id == 322) && !is_closing()) {
		__u32 tid = (__u32)pid_tgid;
		struct sl_thread *t = bpf_map_lookup_elem(&threads, &tid);

		if (t)
			sample_stack(ctx, regs, t, tgid, tid, (__u32)id, bpf_ktime_get_ns());
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sl_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct sl_thread *t;
	__u64 ts = 0;

	/* the bitmap first: the thread-state lookup (a hash) only for traced processes */
	if (!is_traced(pid_tgid >> 32))
		return 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t && opt_in_flight && !is_closing()) {
		__u64 a[6] = { regs->di, regs->si, regs->dx, regs->r10, regs->r8, regs->r9 };

		t = began_before(pid_tgid, (__u32)regs->orig_ax, a, ret);
	}
	on_exit(pid_tgid, ret, t, &ts);
	/* t is there when ts is set; t->nr is still the call's. Not execve's: sampled at its
	 * entry (sl_sys_enter) */
	if (opt_stacks && ts && t && t->nr != 59 && t->nr != 322)
		sample_stack(ctx, regs, t, pid_tgid >> 32, tid, t->nr, ts);
	return 0;
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
	{
		/* execve's path, copied at its entry, faulted: the string was in a page this process
		 * had not touched since its fork (file pages are not copied into a child's page
		 * tables, and BPF cannot fault them in). The kernel's copy of the name is the same
		 * string: it takes its place (not for execveat, whose name here joins the fd's path) */
		struct sl_thread *t = bpf_map_lookup_elem(&threads, &tid);
		struct sl_enter_data *e = bpf_map_lookup_elem(&enter_data, &tid);

		if (t && e && t->in_flight && t->nr == NR_EXECVE && (e->flags & SL_F_FAULT1) && !e->len[0]) {
			__u32 size = opt_path_bytes + 1;
			long n;

			if (size > SL_SLOT_MAX)
				size = SL_SLOT_MAX;
			n = bpf_probe_read_kernel_str(&e->data[0], size, BPF_CORE_READ(bprm, filename));
			if (n > 1) {
				e->len[0] = (n - 1) & (SL_SLOT_MAX - 1);
				e->flags &= ~SL_F_FAULT1;
				if (n == size)
					e->flags |= SL_F_TRUNC1;
			}
		}
	}
	{
		/* a new image: its sampled-stack budgets start again, and its first sample wakes user
		 * space to snapshot the new mappings at once */
		struct sl_thread *t = bpf_map_lookup_elem(&threads, &tid);

		if (t) {
			__builtin_memset(t->stk_nr, 0, sizeof(t->stk_nr));
			t->stk_last = 0;
		}
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

SEC("tp_btf/signal_deliver")
int BPF_PROG(sl_signal, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u64 now = bpf_ktime_get_ns();
	struct sl_signal_rec r = {};
	struct sl_thread *t;

	/* SIGKILL is no delivery strace shows (the thread just ends: its Exit record says so); the
	 * kernel sends it without siginfo to the other threads of a process that exits or execs */
	if (!is_traced(tgid) || opt_summary_only || sig == 9 || !info)
		return 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (t && opt_coalesce)
		break_run(t, tid, now);
	r.kind = SL_REC_SIGNAL;
	r.tgid = tgid;
	r.tid = tid;
	r.sig = sig;
	r.code = BPF_CORE_READ(info, si_code);
	/* si_addr is a fault's: for a signal sent with kill the union holds the sender's pid */
	if (r.code > 0 && (sig == 4 || sig == 5 || sig == 7 || sig == 8 || sig == 11))
		r.addr = (__u64)BPF_CORE_READ(info, _sifields._sigfault._addr);
	r.ts = now;
	if (bpf_ringbuf_output(&events, &r, sizeof(r), wake_flags()))
		count_lost(1, 0);
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
#define PT_ORIG_AX 120

static __always_inline __u64 reg(void *regs, int off)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), regs + off);
	return v;
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
	__u32 tid = (__u32)pid_tgid;
	struct sl_thread *t;
	__u64 ts = 0;

	if (!is_traced(pid_tgid >> 32))
		return 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t && opt_in_flight && !is_closing()) {
		__u64 a[6] = { reg(regs, PT_DI), reg(regs, PT_SI), reg(regs, PT_DX),
			       reg(regs, PT_R10), reg(regs, PT_R8), reg(regs, PT_R9) };

		t = began_before(pid_tgid, (__u32)reg(regs, PT_ORIG_AX), a, ret);
	}
	return on_exit(pid_tgid, ret, t, &ts);
}

#endif /* SYSLINT_NO_BTF */
