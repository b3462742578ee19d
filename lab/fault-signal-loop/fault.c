/* fault.c: a thread running into the same memory fault again and again (lab/fault-signal-loop).
 *
 *   fault MODE N
 *
 * MODE:
 *   pipe-loop  BAD: a SIGSEGV handler in the style of libuv's (npm#13833): it takes a lock made of
 *              a pipe (read one byte, write it back) and reports the signal with a 16-byte write
 *              to a non-blocking pipe nobody reads (full: EAGAIN), then returns to the faulting
 *              load, which faults again. After N passes the handler leaves with siglongjmp so
 *              the program ends.
 *   bare-loop  BAD: the same loop with a handler that makes no system call (only counts).
 *   recover    BAD: a fault used as control flow: N loads through a null pointer, each caught by
 *              the handler and left with siglongjmp (sigsetjmp(env, 1): the mask restored with
 *              rt_sigprocmask), as a runtime turning faults into exceptions does.
 *   guard      GOOD: N faults on N pages of a PROT_NONE region, each made readable by the
 *              handler with mprotect (a collector's write barrier, lazy mapping): each fault
 *              is at a new address and the program moves on.
 *   reset      GOOD, the fix for pipe-loop: the handler is installed with SA_RESETHAND, reports
 *              once and returns; the second fault takes the default action and ends the program
 *              with SIGSEGV (exit status 139 from a shell).
 *   timer      NEAR: a CPU-bound loop for N milliseconds under a 1 ms ITIMER_PROF whose handler
 *              makes no system call: a signal and rt_sigreturn every millisecond, no fault.
 *   bench      measures natively (no tracer) the cost of one pass of bare-loop and pipe-loop
 *              (N passes each) against a plain load.
 *
 * Bounded: alarm(60) ends any run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static sigjmp_buf out;
static volatile long passes, limit;
static int lock_rd, lock_wr, report_wr;
static char *region;
static long page;
static int mode_pipe;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	passes++;
	if (mode_pipe) {
		char c;
		unsigned char msg[16] = { 0 };

		/* the lock: one byte taken from a pipe and put back */
		if (read(lock_rd, &c, 1) != 1)
			_exit(3);
		memcpy(msg, &si, sizeof(si) < 8 ? sizeof(si) : 8);
		msg[8] = (unsigned char)sig;
		if (write(report_wr, msg, sizeof msg) < 0 && errno != EAGAIN)
			_exit(4);
		if (write(lock_wr, &c, 1) != 1)
			_exit(5);
	}
	if (passes >= limit)
		siglongjmp(out, 1);
}

static void on_segv_recover(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	passes++;
	siglongjmp(out, 1);
}

static void on_segv_guard(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	char *p = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(page - 1));

	passes++;
	if (p < region || p >= region + limit * page)
		_exit(6);
	if (mprotect(p, page, PROT_READ) != 0)
		_exit(7);
}

static void on_segv_reset(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	static const char msg[] = "fault: segmentation fault, giving up\n";

	passes++;
	if (write(2, msg, sizeof msg - 1) < 0)
		_exit(8);
}

static volatile long ticks;
static void on_prof(int sig)
{
	(void)sig;
	ticks++;
}

static void handle(void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0) {
		perror("sigaction");
		exit(2);
	}
}

static void make_pipes(void)
{
	int l[2], r[2];

	if (pipe(l) != 0 || pipe2(r, O_NONBLOCK) != 0) {
		perror("pipe");
		exit(2);
	}
	lock_rd = l[0];
	lock_wr = l[1];
	report_wr = r[1];
	if (write(lock_wr, "*", 1) != 1)
		exit(2);
	/* fill the report pipe: nobody reads it, every report fails with EAGAIN */
	{
		char buf[4096];

		memset(buf, 0, sizeof buf);
		while (write(report_wr, buf, sizeof buf) > 0)
			;
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* the faulting load: a field at offset 0x38 of a null pointer (npm#13833's si_addr) */
static long load(volatile long *base)
{
	return base[7];
}

static double loop_ns(int pipe_mode, long n)
{
	volatile long *null = NULL;
	double t0;

	mode_pipe = pipe_mode;
	passes = 0;
	limit = n;
	t0 = now();
	if (sigsetjmp(out, 1) == 0)
		(void)load(null);
	return (now() - t0) * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	const char *mode;
	long n;

	if (argc != 3) {
		fprintf(stderr, "usage: fault pipe-loop|bare-loop|recover|guard|reset|timer|bench N\n");
		return 2;
	}
	mode = argv[1];
	n = strtol(argv[2], NULL, 10);
	if (n < 1 || n > 100000000) {
		fprintf(stderr, "fault: N out of range\n");
		return 2;
	}
	alarm(60);
	page = sysconf(_SC_PAGESIZE);
	if (!strcmp(mode, "pipe-loop") || !strcmp(mode, "bare-loop")) {
		if (!strcmp(mode, "pipe-loop"))
			make_pipes();
		handle(on_segv, 0);
		(void)loop_ns(!strcmp(mode, "pipe-loop"), n);
		printf("%ld passes\n", passes);
	} else if (!strcmp(mode, "recover")) {
		volatile long *null = NULL;
		volatile long i;

		handle(on_segv_recover, 0);
		for (i = 0; i < n; i++) {
			if (sigsetjmp(out, 1) == 0)
				(void)load(null);
		}
		printf("%ld faults recovered\n", passes);
	} else if (!strcmp(mode, "guard")) {
		long i, sum = 0;

		region = mmap(NULL, n * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (region == MAP_FAILED) {
			perror("mmap");
			return 2;
		}
		limit = n;
		handle(on_segv_guard, 0);
		for (i = 0; i < n; i++)
			sum += ((volatile char *)region)[i * page];
		printf("%ld faults, sum %ld\n", passes, sum);
	} else if (!strcmp(mode, "reset")) {
		volatile long *null = NULL;

		handle(on_segv_reset, SA_RESETHAND);
		(void)load(null);
		printf("not reached\n");
	} else if (!strcmp(mode, "timer")) {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		double end;
		volatile unsigned long x = 0;

		signal(SIGPROF, on_prof);
		if (setitimer(ITIMER_PROF, &it, NULL) != 0) {
			perror("setitimer");
			return 2;
		}
		end = now() + n / 1000.0;
		while (now() < end)
			for (int k = 0; k < 100000; k++)
				x += k;
		printf("%ld ticks\n", ticks);
	} else if (!strcmp(mode, "bench")) {
		volatile long v[8] = { 0 };
		double t0, plain, bare, piped;
		long i;

		t0 = now();
		for (i = 0; i < n; i++)
			(void)load(v);
		plain = (now() - t0) * 1e9 / (double)n;
		make_pipes();
		handle(on_segv, 0);
		bare = loop_ns(0, n);
		piped = loop_ns(1, n);
		printf("plain load %.1f ns, bare-loop pass %.0f ns, pipe-loop pass %.0f ns\n", plain, bare, piped);
	} else {
		fprintf(stderr, "fault: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
