/* membw.c: memory read bandwidth, the ceiling of token generation on a CPU.
 *
 *   cc -O3 -march=native -pthread membw.c -o membw
 *   membw [GIB] [PASSES] [MAXTHREADS]   (defaults 4, 5, 2)
 *
 * Streams a GIB-sized buffer (far bigger than any cache) and sums it as 64-bit integers,
 * split into one contiguous slice per thread, for 1..MAXTHREADS threads. Integer adds
 * vectorize without -ffast-math, and with 8 independent accumulators the loop is bound by
 * loads, not adds. Each count of threads runs PASSES times; we print the best and the median
 * in GB/s (1e9 bytes) as one JSON object. The pages are touched before timing, so page faults
 * are not measured. This is how ../shared/PERF.md's 24.2 / 31.4 GB/s were measured.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const uint64_t *p;
    size_t n;
    uint64_t sum;
    pthread_barrier_t *start;
} slice_t;

static void *sum_slice(void *arg) {
    slice_t *s = arg;
    uint64_t a[8] = {0};
    pthread_barrier_wait(s->start);
    size_t i = 0;
    for (; i + 8 <= s->n; i += 8)
        for (int k = 0; k < 8; k++) a[k] += s->p[i + k];
    for (; i < s->n; i++) a[0] += s->p[i];
    s->sum = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
    return NULL;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* One timed pass with `threads` threads; returns GB/s. The main thread is one of them. */
static double pass(const uint64_t *buf, size_t words, int threads, uint64_t *check) {
    pthread_t tid[64];
    slice_t s[64];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    size_t per = words / (size_t)threads;
    for (int t = 0; t < threads; t++) {
        s[t] = (slice_t){buf + per * (size_t)t, t == threads - 1 ? words - per * (size_t)t : per,
                         0, &start};
        pthread_create(&tid[t], NULL, sum_slice, &s[t]);
    }
    double t0 = now();
    pthread_barrier_wait(&start);
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        *check += s[t].sum;
    }
    double dt = now() - t0;
    pthread_barrier_destroy(&start);
    return (double)(words * sizeof(uint64_t)) / dt / 1e9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    double gib = argc > 1 ? atof(argv[1]) : 4.0;
    int passes = argc > 2 ? atoi(argv[2]) : 5;
    int maxthreads = argc > 3 ? atoi(argv[3]) : 2;
    if (gib <= 0 || passes < 1 || passes > 100 || maxthreads < 1 || maxthreads > 64) {
        fprintf(stderr, "usage: membw [GIB>0] [PASSES 1..100] [MAXTHREADS 1..64]\n");
        return 64;
    }
    size_t bytes = (size_t)(gib * (double)(1ull << 30)) & ~(size_t)63;
    uint64_t *buf = aligned_alloc(64, bytes);
    if (!buf) {
        fprintf(stderr, "error: cannot allocate %.1f GiB\n", gib);
        return 74;
    }
    memset(buf, 1, bytes); /* touch every page now, not inside a timed pass */
    size_t words = bytes / sizeof(uint64_t);
    uint64_t check = 0;
    printf("{\"bytes\": %zu, \"passes\": %d", bytes, passes);
    for (int t = 1; t <= maxthreads; t++) {
        double r[100];
        for (int i = 0; i < passes; i++) r[i] = pass(buf, words, t, &check);
        qsort(r, (size_t)passes, sizeof r[0], cmp);
        printf(", \"threads%d\": {\"best_gbps\": %.2f, \"median_gbps\": %.2f}", t, r[passes - 1],
               r[passes / 2]);
    }
    /* Printing the checksum keeps the compiler from dropping the sums. */
    printf(", \"checksum\": %llu}\n", (unsigned long long)check);
    free(buf);
    return 0;
}
