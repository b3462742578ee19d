/* SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0 */
/*
 * Coalescing: per thread, the last two SYSCALL records sent are kept (hist). A call identical
 * to the newest (period 1) or to the one before it while alternating (period 2: A B A B ...)
 * is not sent; whole repetitions are counted (their durations summed per position: the two calls
 * of an alternation keep their own) and reported as one REPEAT record ("the last
 * `period` SYSCALL records of this thread happened `count` more times") when the run breaks
 * (at the entry of a call that cannot continue it, or at the exit of one that did not), when
 * the thread ends, at opt_max_run repetitions, or opt_report_ns after its last report. A
 * started but unfinished repetition (period 2) is sent as the SYSCALL record it was.
 * Identical means: same number, six arguments and return value, and at most SL_SIG_DATA
 * captured bytes, equal too; a slot flagged SL_CAP_NO_COALESCE (payloads) never coalesces.
 *
 * Part of syslint.bpf.c: included there, in order, into its one compilation unit (the maps and
 * the global function fill_slot must exist once); not a header to include elsewhere.
 */
#ifndef SL_COALESCE_H
#define SL_COALESCE_H

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
	r.dur_sum[0] = t->dur_sum[0];
	r.dur_sum[1] = t->dur_sum[1];
	if (bpf_ringbuf_output(&events, &r, sizeof(r), wake_flags()))
		count_lost(1, (__u64)t->count * t->period);
	t->count = 0;
	t->dur_sum[0] = 0;
	t->dur_sum[1] = 0;
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

/* Something other than a call happened to the thread (a signal): send what its run holds, so
 * the records stay in order, and forget the calls before it, so no run spans it. */
static __always_inline void break_run(struct sl_thread *t, __u32 tid, __u64 now)
{
	if (t->period) {
		emit_repeat(t, tid, now);
		if (t->partial)
			emit_sig(t, tid, hist_old(t), t->part_ts_enter, t->part_ts_exit);
		t->period = 0;
		t->partial = 0;
	}
	t->hist_n = 0;
}

/* The call the running repetition expects next. */
static __always_inline struct sl_sig *expected(struct sl_thread *t)
{
	return (t->period == 1 || t->partial) ? hist_new(t) : hist_old(t);
}

#endif /* SL_COALESCE_H */
