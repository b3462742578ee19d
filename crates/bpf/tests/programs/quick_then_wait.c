/* N times: a quick call (getppid) then a wait (nanosleep of MS milliseconds): an alternation
 * the kernel program coalesces as period 2, whose two calls last very differently. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long ms = argc > 2 ? atol(argv[2]) : 20;
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	for (long i = 0; i < n; i++) {
		getppid();
		if (nanosleep(&ts, NULL))
			return 1;
	}
	return 0;
}
