/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The ONLY layout shared between syslint.bpf.c and user space, and its only definition: build.rs
 * generates the Rust side (src/abi.rs) from this file with bindgen, every #define as a constant
 * (typed by its SL_ prefix there) and every struct with compile-time size and offset asserts.
 * Plain fixed-width types only, explicit padding, no bitfields, macros that are integer constants.
 */
#ifndef SYSLINT_H
#define SYSLINT_H

#define SL_NR_MAX 512     /* capture specs and summary counters exist for syscall numbers below this */
#define SL_SLOT_MAX 4096  /* bytes a capture slot can hold (the largest length is SL_SLOT_MAX - 1) */
#define SL_SIG_DATA 16    /* captured bytes a coalescable call may carry (compared exactly) */
#define SL_EXEC_NAME 256  /* bytes of an EXEC record's filename */
#define SL_PID_WORDS (1 << 16) /* the `traced` bitmap: 2^22 tgids (PID_MAX_LIMIT on 64-bit) */
#define SL_COUNTER_GROUPS 256 /* counter.bpf.c: groups of processes counted apart */
#define SL_COUNTER_PIDS 65536 /* counter.bpf.c: processes counted at once */
#define SL_SMALL_SLOT 32  /* room per slot for entry copies kept in the thread state (<= SL_SIG_DATA used) */

/* Record kinds: the first byte of every ring-buffer record. */
#define SL_REC_SYSCALL 1
#define SL_REC_REPEAT 2
#define SL_REC_FORK 3
#define SL_REC_EXEC 4
#define SL_REC_EXIT 5
#define SL_REC_SIGNAL 6

/* What a data slot holds. */
#define SL_DATA_NONE 0
#define SL_DATA_STR 1      /* a NUL-terminated string (stored without the NUL) */
#define SL_DATA_BYTES 2    /* raw bytes */
#define SL_DATA_SOCKADDR 3 /* a struct sockaddr_* as the program passed or received it */

/* Where a capture slot's length comes from. */
#define SL_LEN_FIXED 0   /* `len` bytes (iovec/msghdr slots: the first buffer's iov_len) */
#define SL_LEN_ARG 1     /* args[len_arg] */
#define SL_LEN_RET 2     /* the return value (nothing when it is <= 0) */
#define SL_LEN_ARG_PTR 3 /* the u32 at user address args[len_arg], read at exit (socklen_t *) */

/* Capture slot flags. */
#define SL_CAP_SOCK_ONLY 0x01   /* only when args[0] is an fd of a socket (S_IFSOCK) */
#define SL_CAP_AT_ENTER 0x02    /* copy at entry: execve's path (gone after success), timeouts (rewritten) */
#define SL_CAP_NO_COALESCE 0x04 /* contents may differ between identical calls: never coalesce */
#define SL_CAP_IF_OK 0x08       /* only when the call succeeded (ret >= 0): output buffers */
#define SL_CAP_IOVEC 0x10       /* args[arg] is a struct iovec *: the first buffer */
#define SL_CAP_MSGHDR 0x20      /* args[arg] is a struct msghdr * (or mmsghdr *): its first iov buffer */
#define SL_CAP_MSGNAME 0x40     /* args[arg] is a struct msghdr *: msg_name, msg_namelen bytes */
#define SL_CAP_NEW_FD 0x80      /* (slot[0], any kind) the call returns a new fd: a success is never
				 * coalesced, since another thread may use the fd before the run
				 * holding the call would be reported (accept on one thread, read on
				 * another) */

/* One thing to copy from user memory. `len` is the fixed length (SL_LEN_FIXED) or the maximum;
 * 0 means the option's default (path_bytes for strings, payload_bytes otherwise). */
struct sl_cap_slot {
	__u8 kind; /* SL_DATA_* (SL_DATA_NONE: unused slot) */
	__u8 arg;  /* which argument holds the user pointer */
	__u8 len_src;
	__u8 len_arg;
	__u16 len;
	__u16 flags; /* SL_CAP_* */
};

/* The capture table: an array map indexed by syscall number, filled by user space. */
struct sl_cap_spec {
	struct sl_cap_slot slot[2];
};

/* SYSCALL record flags */
#define SL_F_TRUNC1 0x01     /* data1 was cut at its maximum (strings: at least that long) */
#define SL_F_TRUNC2 0x02
#define SL_F_FAULT1 0x04     /* data1 could not be read (bad pointer) */
#define SL_F_FAULT2 0x08
#define SL_F_UNFINISHED 0x10 /* the thread ended inside this call: no return value, ts_exit = end */
#define SL_F_NO_ENTRY 0x20   /* the call began before the thread was traced (an attach): its start is
			      * unknown (ts_enter = ts_exit), its arguments are the registers at exit */

/* SL_REC_SYSCALL, followed by data1_len bytes of data1 and data2_len bytes of data2. */
struct sl_syscall_rec {
	__u8 kind;
	__u8 flags;
	__u8 data1_kind;
	__u8 data2_kind;
	__u32 tgid;
	__u32 tid;
	__u32 nr;
	__u64 args[6];
	__s64 ret;
	__u64 ts_enter; /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
	__u64 ts_exit;
	__u16 data1_len;
	__u16 data2_len;
	__u32 _pad;
};

/* SL_REC_REPEAT: the last `period` SYSCALL records of this thread happened `count` more times,
 * between first_ts (enter of the first repetition) and last_ts (exit of the last one).
 * Durations are summed per position in the repetition, so alternating calls keep their own
 * (a 10 us fstat between 1 s selects is not 0.5 s each): dur_sum[i] is the sum of
 * (ts_exit - ts_enter) of the `count` calls in position i, in the order of the records
 * repeated (period 1: dur_sum[0] only, dur_sum[1] is 0). */
struct sl_repeat_rec {
	__u8 kind;
	__u8 period; /* 1 or 2 */
	__u16 _pad;
	__u32 tgid;
	__u32 tid;
	__u32 count;
	__u64 first_ts;
	__u64 last_ts;
	__u64 dur_sum[2];
};

struct sl_fork_rec {
	__u8 kind;
	__u8 is_thread;
	__u16 _pad;
	__u32 parent_tgid;
	__u32 parent_tid;
	__u32 child_tgid;
	__u32 child_tid;
	__u32 _pad2;
	__u64 ts;
};

/* SL_REC_EXEC, followed by filename_len bytes of the file name. */
struct sl_exec_rec {
	__u8 kind;
	__u8 truncated;
	__u16 filename_len;
	__u32 tgid;
	__u32 tid;
	__u32 old_tid; /* the exec-ing thread's id before exec (differs when a non-leader thread execs) */
	__u64 ts;
};

struct sl_exit_rec {
	__u8 kind;
	__u8 group_dead; /* the last thread of the process: the whole process ended */
	__u16 _pad;
	__u32 tgid;
	__u32 tid;
	__s32 exit_code; /* wait status style: (code << 8) | signal */
	__u64 ts;
};

/* The per-CPU drop counters (one entry). */
struct sl_lost {
	__u64 records;  /* records that did not fit in the ring buffer */
	__u64 syscalls; /* syscalls those records stood for (a REPEAT stands for count * period) */
};

/* Summary-only counters: a per-CPU array indexed by syscall number. */
struct sl_counts {
	__u64 calls;
	__u64 errors; /* returned -4095..-1 */
	__u64 dur_ns;
};

/* counter.bpf.c: one syscall's counts in one group. */
struct sl_slot_count {
	__u64 calls;
	__u64 errors; /* returned -4095..-1 */
};

/* A call as coalescing compares it: number, arguments, return value and up to SL_SIG_DATA
 * captured bytes (len1 bytes of data1 then len2 of data2). */
struct sl_sig {
	__u32 nr;
	__u8 len1;
	__u8 len2;
	__u8 kinds; /* data1 kind | data2 kind << 4 */
	__u8 coal;  /* 1: this call may be coalesced */
	__u64 args[6];
	__s64 ret;
	__u8 data[SL_SIG_DATA];
};

#define SL_STK_SLOTS 4 /* per-thread sampled-stack budget slots (struct sl_thread) */

/* Per-thread state, a hash map keyed by tid (user space reads it in flush_pending). */
struct sl_thread {
	/* the call in flight */
	__u64 args[6];
	__u64 ts_enter;
	__u32 nr;
	__u32 in_flight;
	/* the thread's last two SYSCALL records, hist[newest] the newer; hist_n of them are valid */
	struct sl_sig hist[2];
	__u8 hist_n;
	__u8 period;  /* 0: no run; 1 or 2: the last `period` records are repeating */
	__u8 partial; /* calls of an unfinished repetition seen (0 or 1) */
	__u8 newest;  /* 0 or 1: which hist entry is the newer */
	__u32 count;  /* whole repetitions not yet reported */
	__u64 first_ts;
	__u64 last_ts;
	__u64 dur_sum[2]; /* per position in the repetition, as in sl_repeat_rec */
	__u64 last_report; /* when the run last emitted a REPEAT (or started) */
	__u64 part_ts_enter; /* times of the partial repetition's call */
	__u64 part_ts_exit;
	__u32 tgid;
	__u32 unqueried; /* bytes of SYSCALL records sent since the thread last asked how full the ring is */
	/* small (<= SL_SIG_DATA, fixed length) SL_CAP_AT_ENTER captures of the call in flight:
	 * timeouts that ppoll/select/pselect6 overwrite with the time left */
	__u8 enter_small[2 * SL_SMALL_SLOT]; /* slot i at i * SL_SMALL_SLOT */
	__u8 enter_small_len[2];
	__u8 enter_small_flags;
	__u8 no_entry; /* the call in flight began before the thread was traced (SL_F_NO_ENTRY) */
	__u8 _pad3[4];
	/* the sampled-stack budget (stack.h) of up to SL_STK_SLOTS of the thread's syscalls, slot
	 * nr % SL_STK_SLOTS: stk_nr is nr + 1 (0: a free slot); a syscall whose slot another holds
	 * keeps its budget in the stack_budget hash instead. Cleared at exec. */
	__u32 stk_nr[SL_STK_SLOTS];
	__u32 stk_seen[SL_STK_SLOTS];
	__u32 stk_taken[SL_STK_SLOTS];
	__u64 stk_window[SL_STK_SLOTS];
	__u64 stk_last; /* when the thread's last stack was sampled (0: never) */
};

/* SL_REC_SIGNAL: a signal about to be handled by a thread (its handler runs, or its default
 * action is taken): the number, si_code, and si_addr (meaningful for faults: SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE, SIGTRAP with si_code > 0; 0 otherwise). */
struct sl_signal_rec {
	__u8 kind;
	__u8 _pad;
	__u16 _pad2;
	__u32 tgid;
	__u32 tid;
	__s32 sig;
	__s32 code;
	__u32 _pad3;
	__u64 addr;
	__u64 ts;
};

/* ---- User stacks of sampled calls (tp_btf variant only), sent to their own ring buffer
 * (`stack_events`) so calls without a stack cost nothing there and a full stack ring loses
 * stacks, never syscall records. */
#define SL_STACK_MAX 16384 /* bytes of the user stack a sample can copy (from sp upwards) */
#define SL_STACK_IPS 32    /* return addresses of the kernel's frame-pointer walk kept */

#define SL_REC_STACK 7

/* SL_REC_STACK flags */
#define SL_STK_TRUNC 0x01   /* the copy stopped at the byte limit: the stack goes on above it */
#define SL_STK_FAULT 0x02   /* the copy stopped at an unreadable page (the stack's top, usually) */
#define SL_STK_FP_FAIL 0x04 /* bpf_get_stack failed: no frame-pointer walk */

/* SL_REC_STACK: the user registers a sampled call's thread had at its return (the syscall
 * instruction's return address in `ip`), n_ips addresses of the kernel's frame-pointer walk
 * (ips[0] is `ip`), then stack_len bytes of the stack from `sp` upwards. (tgid, tid, nr,
 * ts_exit) name the call: ts_exit is its SYSCALL record's ts_exit (or, coalesced, the exit of
 * one of the calls its REPEAT stands for). `weight` is how many calls of that thread and
 * syscall the sample stands for: 1 for the first calls of a window, opt_stack_every after. */
struct sl_stack_rec {
	__u8 kind;
	__u8 flags;
	__u16 n_ips;
	__u32 tgid;
	__u32 tid;
	__u32 nr;
	__u64 ts_exit;
	__u64 mm_id; /* the address space (its kernel address, opaque): changes at exec */
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u32 stack_len;
	__u32 weight;
};

/* SL_REC_VMA: an executable file mapping of a process, sent to the stack ring before the first
 * sample of each of its threads, so the stacks of a process gone before user space could read
 * /proc/PID/maps still get names. The path is the dentry chain from the file up to its file
 * system's root (user space places it under that file system's mount points, and checks the
 * inode). */
#define SL_REC_VMA 8
#define SL_VMA_DEPTH 12 /* path components kept: the file's name first, then its directories' */
#define SL_VMA_NAME 64  /* bytes per component, with its NUL */

struct sl_vma_rec {
	__u8 kind;
	__u8 depth;    /* components filled */
	__u8 complete; /* the chain reached the file system's root */
	__u8 _pad;
	__u32 tgid;
	__u64 mm_id;
	__u64 start;
	__u64 end;
	__u64 pgoff; /* in pages */
	__u64 ino;
	__u32 dev; /* the kernel's dev_t: major << 20 | minor */
	__u32 _pad2;
	/* NUL-terminated names, SL_VMA_NAME bytes each (as u64 words: generated Rust types derive
	 * Default, which arrays of 64 bytes lack) */
	__u64 names[SL_VMA_DEPTH][SL_VMA_NAME / 8];
};

/* Per-CPU stack counters (one entry). */
struct sl_stack_stats {
	__u64 sampled; /* calls chosen for a stack */
	__u64 sent;    /* stack records in the ring */
	__u64 lost;    /* stack records that did not fit in the ring (or met a busy scratch) */
	__u64 bytes;   /* bytes of the records sent */
};

/* The sampling budget of one thread and syscall (map stack_budget, keyed by tid << 32 | nr). */
struct sl_stack_budget {
	__u64 window_start;
	__u32 seen;  /* calls since the last sample */
	__u32 taken; /* samples in this window */
};

#endif /* SYSLINT_H */
