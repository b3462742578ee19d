/* SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0 */
/*
 * Copying the user memory the capture table (map `caps`) names: at entry (SL_CAP_AT_ENTER, into
 * the thread state or enter_data) and at exit (fill_slot, into the scratch buffer).
 *
 * Part of syslint.bpf.c: included there, in order, into its one compilation unit (the maps and
 * the global function fill_slot must exist once); not a header to include elsewhere.
 */
#ifndef SL_CAPTURE_H
#define SL_CAPTURE_H

#define SOCKADDR_MAX 128

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

#endif /* SL_CAPTURE_H */
