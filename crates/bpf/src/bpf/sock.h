/* SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0 */
/*
 * Whether an fd is a socket (for SL_CAP_SOCK_ONLY capture slots); always false without BTF.
 *
 * Part of syslint.bpf.c: included there, in order, into its one compilation unit (the maps and
 * the global function fill_slot must exist once); not a header to include elsewhere.
 */
#ifndef SL_SOCK_H
#define SL_SOCK_H

#define S_IFMT 0170000
#define S_IFSOCK 0140000

static __always_inline bool fd_is_socket(__u64 fd)
{
#ifdef SYSLINT_NO_BTF
	return false;
#else
	/* task, files and fdt are BTF pointers: plain loads (the verifier makes them faulting
	 * loads), far cheaper than a bpf_probe_read_kernel call each. The fd array's element and
	 * what it points to are not typed for the verifier: those two stay probe reads. */
	struct task_struct *task = bpf_get_current_task_btf();
	struct files_struct *files = task->files;
	struct fdtable *fdt;
	struct file **fds;
	struct file *f = NULL;
	struct inode *inode = NULL;
	umode_t mode = 0;

	if (!files)
		return false;
	fdt = files->fdt;
	if (!fdt || fd >= fdt->max_fds)
		return false;
	fds = fdt->fd;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return false;
	if (bpf_ksym_exists(bpf_rdonly_cast)) {
		/* 6.2+: make f a BTF pointer again (the verifier rewrites the cast into nothing) and
		 * load through it */
		f = bpf_core_cast(f, struct file);
		inode = f->f_inode;
		if (!inode)
			return false;
		mode = inode->i_mode;
	} else {
		if (bpf_core_read(&inode, sizeof(inode), &f->f_inode) || !inode)
			return false;
		if (bpf_core_read(&mode, sizeof(mode), &inode->i_mode))
			return false;
	}
	return (mode & S_IFMT) == S_IFSOCK;
#endif
}

#endif /* SL_SOCK_H */
