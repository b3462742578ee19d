/* A threaded server in the shape of many real ones (a Go or Java server, a thread pool in C):
 * the main thread accepts on a loopback socket and hands each connection to one of WORKERS
 * threads started at once (through a pipe), which reads the request, answers, appends a line
 * to a log file opened at start, and closes the connection. The threads and the log file exist
 * before a tracer attaches; each connection is accepted on one thread and served on another.
 * The log line is written unbuffered, PIECES writes per line (small I/O on every thread).
 *
 *   threaded_server PORTFILE LOGFILE WORKERS [PIECES]
 *
 * Writes the port to PORTFILE once listening. Bounded: exits after 60 s (alarm), or when a
 * client sends "quit". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

static int handoff[2];
static int logfd, pieces = 1;

static void *worker(void *arg)
{
	char buf[256];
	int c;

	(void)arg;
	while (read(handoff[0], &c, sizeof(c)) == sizeof(c)) {
		ssize_t n = read(c, buf, sizeof(buf));

		if (n > 0 && write(c, "ok\n", 3) < 0)
			perror("write");
		for (int i = 1; i < pieces; i++)
			if (write(logfd, ".", 1) < 0)
				perror("log");
		if (write(logfd, "served\n", 7) < 0)
			perror("log");
		close(c);
		if (n >= 4 && memcmp(buf, "quit", 4) == 0)
			exit(0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int workers = argc > 3 ? atoi(argv[3]) : 4, s, one = 1;
	FILE *pf;

	if (argc < 3)
		return 2;
	if (argc > 4)
		pieces = atoi(argv[4]);
	alarm(60);
	logfd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (logfd < 0 || s < 0 || pipe(handoff))
		return 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 128) || getsockname(s, (struct sockaddr *)&a, &len))
		return 1;
	for (int i = 0; i < workers; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL))
			return 1;
	}
	pf = fopen(argv[1], "w");
	if (!pf)
		return 1;
	fprintf(pf, "%d\n", ntohs(a.sin_port));
	fclose(pf);
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c >= 0 && write(handoff[1], &c, sizeof(c)) != sizeof(c))
			return 1;
	}
}
