/* SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0 */
/*
 * Ring-buffer output: lost-record counting, when to wake the consumer, and the records built
 * in one piece (EXIT; FORK and EXEC of the no-BTF build).
 *
 * Part of syslint.bpf.c: included there, in order, into its one compilation unit (the maps and
 * the global function fill_slot must exist once); not a header to include elsewhere.
 */
#ifndef SL_RING_H
#define SL_RING_H

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

#ifdef SYSLINT_NO_BTF
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
#endif /* SYSLINT_NO_BTF */

#endif /* SL_RING_H */
