/* accept-herd lab load: CONNECTIONS sequential HTTP/1.0 requests to 127.0.0.1:PORT, each on a
 * new connection (read until the server closes), with PAUSE_MS between them so that every
 * worker is back in its wait when the next connection arrives. Bounded: alarm(60).
 *
 * usage: load PORT CONNECTIONS [PAUSE_MS]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: load PORT CONNECTIONS [PAUSE_MS]\n");
        return 2;
    }
    int port = atoi(argv[1]), n = atoi(argv[2]), pause_ms = argc > 3 ? atoi(argv[3]) : 2;
    alarm(60);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    const char *req = "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && write(fd, req, strlen(req)) > 0) {
            char buf[4096];
            ssize_t r, got = 0;
            while ((r = read(fd, buf, sizeof buf)) > 0) got += r;
            if (got > 0) ok++;
        }
        close(fd);
        struct timespec ts = {0, pause_ms * 1000000L};
        nanosleep(&ts, NULL);
    }
    printf("%d/%d connections answered\n", ok, n);
    return ok == n ? 0 : 1;
}
