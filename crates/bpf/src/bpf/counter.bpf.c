// SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0
/*
 * syslint's counting program: the agent's in-kernel counts of calls and failures per watched
 * cgroup and syscall, with one hook instead of the capture program's two.
 *
 * The capture program (syslint.bpf.c) hooks the raw sys_enter and sys_exit tracepoints; its
 * counting mode (--summary-only) keeps the entry time in a thread-state hash to sum durations.
 * A hooked tracepoint costs every syscall of every process on the host, traced or not (the
 * kernel takes its traced syscall path for all of them): on the development VM about 110 ns a
 * call for sys_exit alone with an empty program, 210 ns for both (examples/overhead.rs). So
 * this program hooks sys_exit only, and keeps no per-thread state: the syscall number is the
 * exit registers' orig_ax, so no durations (rows like `syscount` without -L). Function-level
 * hooks (fexit on each counted handler, so an uncounted syscall costs nothing) would be
 * cheaper still; the development VM's kernel refuses to load fentry/fexit and kprobe programs
 * (EPERM / EOPNOTSUPP), so they are not used before they can be tested.
 *
 * Counts live in an mmap-able array that user space reads without a syscall: [group][nr]
 * {calls, errors}, added to atomically (two CPUs may add to one cell). User space gives each
 * watched process its group's index (map `groups`, by tgid: the agent's groups are cgroups,
 * but no cgroup id is needed, which a container's own cgroup namespace would hide); the
 * `traced` bitmap answers first, so the rest of the host pays one array lookup.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "syslint.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#include "filter.h"

/* watched process (tgid) -> its group's index (< SL_COUNTER_GROUPS) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SL_COUNTER_PIDS);
	__type(key, __u32);
	__type(value, __u32);
} groups SEC(".maps");

/* [group * SL_NR_MAX + nr] */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_COUNTER_GROUPS * SL_NR_MAX);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct sl_slot_count);
} slot_counts SEC(".maps");

SEC("tp_btf/sys_exit")
int BPF_PROG(sl_count_exit, struct pt_regs *regs, long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 *g, k, nr;
	struct sl_slot_count *c;

	if (!is_traced(tgid))
		return 0;
	nr = (__u32)regs->orig_ax;
	if (nr >= SL_NR_MAX)
		return 0;
	g = bpf_map_lookup_elem(&groups, &tgid);
	if (!g)
		return 0;
	k = *g * SL_NR_MAX + nr;
	c = bpf_map_lookup_elem(&slot_counts, &k);
	if (!c)
		return 0;
	__sync_fetch_and_add(&c->calls, 1);
	if (ret < 0 && ret >= -4095)
		__sync_fetch_and_add(&c->errors, 1);
	return 0;
}
