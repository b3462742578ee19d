/*
 * The call-site proof program (issue 31): a busy poll two calls deep in named functions,
 * kept apart from the labs. Built the Debian way (build.sh: gcc -g -O2, no frame pointers),
 * so only .eh_frame CFI can walk from libc's poll back into these functions.
 *
 * usage: spin [POLLS] (default 200000): that many zero-timeout polls, then exit 0.
 *
 * noinline/noclone keep the two functions as themselves (no inlining into main, no
 * .constprop clones with other names); spin_on_poll's loop and wait_for_work's use of its
 * result keep both calls out of tail position, so each function has a frame of its own.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, noclone)) long spin_on_poll(long n)
{
	long empty = 0;

	for (long i = 0; i < n; i++)
		empty += poll(NULL, 0, 0) == 0; /* the call the finding is about */
	return empty;
}

__attribute__((noinline, noclone)) long wait_for_work(long n)
{
	long empty = spin_on_poll(n);

	return empty == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;

	if (wait_for_work(n)) {
		fprintf(stderr, "spin: a poll with no fds did not return 0\n");
		return 1;
	}
	return 0;
}
