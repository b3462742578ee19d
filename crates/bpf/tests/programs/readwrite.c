/* N times: read 512 bytes of /dev/zero, write them to /dev/null (what `dd bs=512` does); then
 * EXTRA more reads (an unfinished last pair). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long extra = argc > 2 ? atol(argv[2]) : 0;
	static char buf[512];
	int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);

	if (in < 0 || out < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		if (read(in, buf, sizeof(buf)) != sizeof(buf))
			return 2;
		if (write(out, buf, sizeof(buf)) != sizeof(buf))
			return 3;
	}
	for (long i = 0; i < extra; i++)
		if (read(in, buf, sizeof(buf)) != sizeof(buf))
			return 4;
	return 0;
}
