/* hot.c: THREADS threads each do ITERS small units of work (a few hundred ns of arithmetic)
 * and add each result to shared state. The variants differ only in how they share it.
 *
 *   global    BAD   one pthread_mutex_t around every update: the threads queue on one lock,
 *                   the waiters sleep in futex(FUTEX_WAIT) and every unlock wakes one
 *   sharded   GOOD  a lock per thread (per shard) and one merge at the end: no waiting
 *   pool      NEAR  an idle thread pool: THREADS workers wait on a condition variable for a
 *                   task that a producer posts every 20 ms with pthread_cond_signal (ITERS/6
 *                   tasks): long futex waits, but only the producer wakes them and nobody
 *                   queues on a lock
 *
 * usage: hot MODE THREADS ITERS
 * Prints the result, wall time, user and system CPU time and context switches.
 * Bounded: alarm(60).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int mode; /* 0 global, 1 sharded, 2 pool */
static long iters;
static int nthreads;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t gate;
static unsigned long total;
static long tasks, done_tasks, stop;

struct shard {
    pthread_mutex_t mu;
    unsigned long sum;
    char pad[64];
};
static struct shard *shards;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* the vDSO: no system call */
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* the update: 10 us of arithmetic, then a 50 us wait (standing in for a page fault, a small
 * write, or the holder being preempted on a busy machine, any of which a short critical section
 * meets now and then): the same under any tracer, and contended even on a loaded 2-core machine */
static unsigned long work(unsigned long x) {
    double end = now() + 10e-6;
    while (now() < end)
        for (int k = 0; k < 20; k++)
            x = x * 6364136223846793005UL + 1442695040888963407UL;
    struct timespec wait = {0, 50 * 1000};
    nanosleep(&wait, NULL);
    return x;
}

/* the work of a thread's own, outside any lock: a quarter of what it does under the lock */
static unsigned long work50(unsigned long x) {
    for (int k = 0; k < 50; k++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

static void *worker(void *arg) {
    long me = (long)arg;
    pthread_barrier_wait(&gate);
    if (mode == 2) {
        for (;;) {
            pthread_mutex_lock(&mu);
            while (tasks == 0 && !stop)
                pthread_cond_wait(&cv, &mu);
            if (tasks == 0 && stop) {
                pthread_mutex_unlock(&mu);
                return NULL;
            }
            tasks--;
            pthread_mutex_unlock(&mu);
            unsigned long y = work(me);
            pthread_mutex_lock(&mu);
            total += y;
            done_tasks++;
            pthread_mutex_unlock(&mu);
        }
    }
    for (long i = 0; i < iters; i++) {
        unsigned long y = work50(i + me);
        if (mode == 0) {
            pthread_mutex_lock(&mu);
            total += work(y); /* the update is done under the lock */
            pthread_mutex_unlock(&mu);
        } else {
            pthread_mutex_lock(&shards[me].mu);
            shards[me].sum += work(y);
            pthread_mutex_unlock(&shards[me].mu);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: hot global|sharded|pool THREADS ITERS\n");
        return 2;
    }
    mode = !strcmp(argv[1], "global") ? 0 : !strcmp(argv[1], "sharded") ? 1 : !strcmp(argv[1], "pool") ? 2 : -1;
    nthreads = atoi(argv[2]);
    iters = atol(argv[3]);
    if (mode < 0 || nthreads < 1 || nthreads > 256 || iters < 1) {
        fprintf(stderr, "hot: bad arguments\n");
        return 2;
    }
    alarm(60);
    shards = calloc(nthreads, sizeof *shards);
    for (int i = 0; i < nthreads; i++)
        pthread_mutex_init(&shards[i].mu, NULL);
    pthread_barrier_init(&gate, NULL, nthreads + 1);
    pthread_t *t = calloc(nthreads, sizeof *t);
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    double t0 = now();
    pthread_barrier_wait(&gate);
    if (mode == 2) {
        long n = iters / 6 > 0 ? iters / 6 : 1;
        for (long i = 0; i < n; i++) {
            struct timespec tick = {0, 20 * 1000 * 1000};
            nanosleep(&tick, NULL);
            pthread_mutex_lock(&mu);
            tasks++;
            pthread_cond_signal(&cv);
            pthread_mutex_unlock(&mu);
        }
        pthread_mutex_lock(&mu);
        stop = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    double wall = now() - t0;
    for (int i = 0; i < nthreads; i++)
        total += shards[i].sum;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "%s: result %lx tasks %ld wall %.3f s user %.3f s sys %.3f s voluntary %ld involuntary %ld\n",
            argv[1], total, done_tasks, wall, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
            ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_nvcsw, ru.ru_nivcsw);
    return 0;
}
