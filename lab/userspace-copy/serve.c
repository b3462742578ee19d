/* A file server on 127.0.0.1: syslint lab userspace-copy (README.md). It answers N connections,
 * one after another, each with the whole of FILE after a short header, then closes it and exits.
 *
 *   serve readwrite FILE N PORTFILE   read(file, 64 KiB) + write(socket) until EOF (BAD: every
 *                                     byte copied into this process and out again)
 *   serve sendfile  FILE N PORTFILE   sendfile(socket, file) until EOF (GOOD: in the kernel)
 *
 * It listens on an ephemeral port and writes the port number to PORTFILE. Bounded: N
 * connections and alarm(120). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what) { perror(what); exit(1); }

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) die("write");
        p += w;
        n -= (size_t)w;
    }
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: serve readwrite|sendfile FILE N PORTFILE\n"); return 2; }
    alarm(120);
    int use_sendfile = strcmp(argv[1], "sendfile") == 0;
    const char *path = argv[2];
    long n = atol(argv[3]);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(l, (struct sockaddr *)&a, sizeof a) < 0) die("bind");
    if (listen(l, 16) < 0) die("listen");
    socklen_t len = sizeof a;
    getsockname(l, (struct sockaddr *)&a, &len);
    FILE *pf = fopen(argv[4], "w");
    if (!pf) die("portfile");
    fprintf(pf, "%d\n", ntohs(a.sin_port));
    fclose(pf);
    static char buf[65536];
    for (long i = 0; i < n; i++) {
        int c = accept(l, NULL, NULL);
        if (c < 0) die("accept");
        int f = open(path, O_RDONLY);
        if (f < 0) die("open");
        struct stat st;
        fstat(f, &st);
        char head[64];
        int h = snprintf(head, sizeof head, "LEN %lld\n", (long long)st.st_size);
        write_all(c, head, (size_t)h);
        if (use_sendfile) {
            off_t off = 0;
            while (off < st.st_size)
                if (sendfile(c, f, &off, (size_t)(st.st_size - off)) <= 0) die("sendfile");
        } else {
            ssize_t r;
            while ((r = read(f, buf, sizeof buf)) > 0) write_all(c, buf, (size_t)r);
        }
        close(f);
        close(c);
    }
    return 0;
}
