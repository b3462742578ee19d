/* Exactly N identical zero-timeout polls, then exit. */
#include <poll.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000;

	for (long i = 0; i < n; i++)
		poll(NULL, 0, 0);
	return 0;
}
