/* Opens a distinctive missing path, connects to 127.0.0.1:PORT over TCP, writes an HTTP
 * request, reads the answer; then sends one UDP datagram to 127.0.0.1:UDP_PORT. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char req[] = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: syslint-test\r\nAccept: */*\r\n\r\n";

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char buf[256];
	int s, u;

	if (argc < 3)
		return 1;
	openat(AT_FDCWD, "/nonexistent-syslint-test/client-config", O_RDONLY);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(atoi(argv[1]));
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
		return 2;
	if (write(s, req, strlen(req)) != (ssize_t)strlen(req))
		return 3;
	if (read(s, buf, sizeof(buf)) <= 0)
		return 4;
	close(s);
	u = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_port = htons(atoi(argv[2]));
	if (u < 0 || sendto(u, "ping-syslint", 12, 0, (struct sockaddr *)&a, sizeof(a)) != 12)
		return 5;
	close(u);
	return 0;
}
