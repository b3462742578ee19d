/* SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0 */
/*
 * Which processes are traced: the `traced` bitmap of tgids, asked at every syscall on the host.
 *
 * Part of syslint.bpf.c: included there, in order, into its one compilation unit (the maps and
 * the global function fill_slot must exist once); not a header to include elsewhere.
 */
#ifndef SL_FILTER_H
#define SL_FILTER_H

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

#endif /* SL_FILTER_H */
