/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel types for syslint.bpf.c: a trimmed vmlinux.h.
 *
 * How it was made: on Linux 6.18 (x86_64),
 *     bpftool btf dump file /sys/kernel/btf/vmlinux format c > vmlinux_full.h
 * then everything was removed except the typedefs below, the BPF uapi constants the program
 * uses, and the kernel structs it reads, each cut down to the fields it reads.
 * Cutting fields is safe because every struct here carries preserve_access_index: clang
 * records each field access as a CO-RE relocation by field NAME, and libbpf rewrites the
 * offset against the running kernel's BTF at load time. Only `struct pt_regs` keeps its full
 * x86_64 layout: it is the uapi ptrace layout, which the no-BTF build (-DSYSLINT_NO_BTF)
 * reads at fixed offsets without CO-RE.
 * Committed because a fresh machine has no bpftool; regenerate only to add a field.
 */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

#ifndef BPF_NO_PRESERVE_ACCESS_INDEX
#pragma clang attribute push (__attribute__((preserve_access_index)), apply_to = record)
#endif

typedef signed char __s8;
typedef unsigned char __u8;
typedef short int __s16;
typedef short unsigned int __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long int __s64;
typedef long long unsigned int __u64;
typedef __s8 s8;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
enum {
	false = 0,
	true = 1,
};

typedef _Bool bool;
typedef int pid_t;
typedef short unsigned int umode_t;
typedef long unsigned int size_t;

typedef struct {
	int counter;
} atomic_t;

/* --- BPF uapi constants (enum values as in include/uapi/linux/bpf.h) --- */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
	BPF_F_LOCK = 4,
};

enum {
	BPF_RB_NO_WAKEUP = 1,
	BPF_RB_FORCE_WAKEUP = 2,
};

enum {
	BPF_RB_AVAIL_DATA = 0,
	BPF_RB_RING_SIZE = 1,
	BPF_RB_CONS_POS = 2,
	BPF_RB_PROD_POS = 3,
};

/* --- kernel structs, trimmed to the fields syslint.bpf.c reads --- */
struct pt_regs {
	long unsigned int r15;
	long unsigned int r14;
	long unsigned int r13;
	long unsigned int r12;
	long unsigned int bp;
	long unsigned int bx;
	long unsigned int r11;
	long unsigned int r10;
	long unsigned int r9;
	long unsigned int r8;
	long unsigned int ax;
	long unsigned int cx;
	long unsigned int dx;
	long unsigned int si;
	long unsigned int di;
	long unsigned int orig_ax;
	long unsigned int ip;
	union {
		u16 cs;
		u64 csx;
		u64 fred_cs;
	};
	long unsigned int flags;
	long unsigned int sp;
	union {
		u16 ss;
		u64 ssx;
		u64 fred_ss;
	};
};

struct super_block {
	u32 s_dev; /* dev_t */
};

struct inode {
	umode_t i_mode;
	long unsigned int i_ino;
	struct super_block *i_sb;
};

struct qstr {
	const unsigned char *name;
};

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
};

struct path {
	struct dentry *dentry;
};

struct file {
	struct inode *f_inode;
	struct path f_path;
};

struct vm_area_struct {
	long unsigned int vm_start;
	long unsigned int vm_end;
	long unsigned int vm_flags;
	long unsigned int vm_pgoff;
	struct file *vm_file;
};

/* the open-coded VMA iterator's state (opaque; the kfuncs bpf_iter_task_vma_*) */
struct bpf_iter_task_vma {
	u64 __opaque[1];
} __attribute__((aligned(8)));

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
};

struct files_struct {
	struct fdtable *fdt;
};

struct signal_struct {
	atomic_t live;
};

struct mm_struct;

struct task_struct {
	int exit_code;
	pid_t pid;
	pid_t tgid;
	struct files_struct *files;
	struct signal_struct *signal;
	struct mm_struct *mm;
	__u64 self_exec_id;
};

struct linux_binprm {
	const char *filename;
};

/* In the kernel the first three fields and the union sit in an anonymous struct inside an
 * anonymous union: libbpf matches anonymous members when it resolves a field by name. */
union __sifields {
	struct {
		void *_addr;
	} _sigfault;
};

struct kernel_siginfo {
	int si_signo;
	int si_errno;
	int si_code;
	union __sifields _sifields;
};

struct k_sigaction;

#ifndef BPF_NO_PRESERVE_ACCESS_INDEX
#pragma clang attribute pop
#endif

#endif /* __VMLINUX_H__ */
