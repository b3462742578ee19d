/* syscall-heavy mix for the eBPF replay benchmark (bench/ebpf-replay.sh): arguments vary from call
   to call, so the kernel's coalescing of identical calls applies only to the poll spin */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000;
    char buf[256], path[64];
    memset(buf, 'x', sizeof buf);
    int null = open("/dev/null", O_WRONLY), zero = open("/dev/zero", O_RDONLY);
    int p[2];
    if (pipe(p) != 0) return 1;
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    struct stat st;
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof path, "/tmp/syslint-bench-%ld", i % 97);
        stat(path, &st);
        write(null, buf, 1 + i % 63);
        read(zero, buf, 1 + i % 61);
        poll(&pfd, 1, 0);
        lseek(zero, i, SEEK_SET);
        sendto(u, buf, 1 + i % 40, 0, (struct sockaddr *)&sa, sizeof sa);
        if (i % 64 == 0)
            for (int k = 0; k < 50; k++) poll(&pfd, 1, 0); /* a spin: coalesced in the kernel */
        if (i % 16 == 0) {
            int f = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
            read(f, buf, sizeof buf);
            close(f);
        }
    }
    return 0;
}
