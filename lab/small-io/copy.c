/* copy.c: copy SRC to DST with read()/write() of BUFSIZE bytes.
 *
 * usage: copy BUFSIZE SRC DST
 *   copy 4096 big out      BAD: 100 MiB in 25,600 reads and 25,600 writes of 4 KiB
 *   copy 1048576 big out   GOOD: the same in 100 reads and 100 writes of 1 MiB
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: copy BUFSIZE SRC DST\n");
        return 2;
    }
    size_t size = strtoul(argv[1], NULL, 10);
    char *buf = malloc(size);
    int in = open(argv[2], O_RDONLY);
    int out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!buf || in < 0 || out < 0) {
        perror("copy");
        return 1;
    }
    long long total = 0;
    for (;;) {
        ssize_t n = read(in, buf, size);
        if (n < 0) {
            perror("read");
            return 1;
        }
        if (n == 0)
            break;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, n - off);
            if (w < 0) {
                perror("write");
                return 1;
            }
            off += w;
        }
        total += n;
    }
    close(in);
    close(out);
    printf("copied %lld bytes\n", total);
    return 0;
}
