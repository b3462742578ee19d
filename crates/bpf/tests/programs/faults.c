/* faults.c N: loads through a null pointer at offset 0x38 N times; the SIGSEGV handler calls
 * getppid() once and returns to the load, which faults again; after N faults it leaves with
 * siglongjmp. For the signal records (tests/live.rs): N deliveries of SIGSEGV/SEGV_MAPERR at
 * 0x38, each followed by exactly one getppid, none folded across a signal. alarm(30) bounds it. */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sigjmp_buf out;
static volatile long faults, limit;

static void on_segv(int sig)
{
	(void)sig;
	getppid();
	if (++faults >= limit)
		siglongjmp(out, 1);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	volatile long *null = NULL;

	limit = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	alarm(30);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		return 2;
	if (sigsetjmp(out, 1) == 0)
		(void)null[7];
	return faults == limit ? 0 : 1;
}
