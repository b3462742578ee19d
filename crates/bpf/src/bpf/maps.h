/* SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0 */
/*
 * Options, maps and the state they hold: the ring buffer, per-thread state, the capture table,
 * counters, the scratch buffer a SYSCALL record is built in, entry copies. (The `traced`
 * bitmap is in filter.h.)
 *
 * Part of syslint.bpf.c: included there, in order, into its one compilation unit (the maps and
 * the global function fill_slot must exist once); not a header to include elsewhere.
 */
#ifndef SL_MAPS_H
#define SL_MAPS_H

/* Options, set by user space before load (read-only data, folded by the verifier). */
const volatile __u32 opt_payload_bytes = 64;
const volatile __u32 opt_path_bytes = 256;
const volatile bool opt_coalesce = true;
const volatile bool opt_summary_only = false;
const volatile __u64 opt_wakeup_bytes = 256 * 1024;
const volatile __u64 opt_report_ns = 100 * 1000 * 1000;
const volatile __u32 opt_max_run = 65536;
/* attaching: a call a thread was already in when tracing began is sent when it returns
 * (SL_F_NO_ENTRY), instead of being missed (not for a spawned command: its gate read) */
const volatile bool opt_in_flight = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

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

/* Closing a window (user space sets it, Probe::close_window): from then on no new call is
 * recorded, and the calls threads are already in are, when they return, so a wait that began
 * inside the window is measured whole. 0: open. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} closing SEC(".maps");

static __always_inline bool is_closing(void)
{
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&closing, &k);

	return c && *c;
}

static const struct sl_thread zero_thread;

/* Hide a value from the optimiser so the bound check after it stays for the verifier. */
#define opaque(x) asm volatile("" : "+r"(x))

#endif /* SL_MAPS_H */
