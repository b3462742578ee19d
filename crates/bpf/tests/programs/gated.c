/* Waits for one byte on stdin (so a tracer can attach first), then calls getppid N times,
 * opens a path naming itself, and exits. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	char c;

	if (read(0, &c, 1) != 1)
		return 1;
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	openat(AT_FDCWD, "/nonexistent-syslint-test/gated", O_RDONLY);
	return 0;
}
