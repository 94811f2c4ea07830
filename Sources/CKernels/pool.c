/* Worker pool: chunks taken from one counter; spin briefly, then sleep. See pk_pool.h.

   The counter `state` packs the job's generation (high 32 bits) with the next chunk to take
   (low 32 bits). A thread takes chunk k of generation g by a compare-and-swap from (g, k) to
   (g, k+1), so it can never take a chunk of a job it did not read fn/ctx for: the caller
   only publishes the next job (new fn, ctx, chunks, then state = (g+1, 0)) after every chunk
   of the current one is done, which needs every chunk taken, which makes a CAS from an older
   (g, k) fail. */
#define _GNU_SOURCE
#include "pk_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* How long an idle worker keeps spinning before it sleeps: longer than the gap between two
   matrix products of one token (norms, RoPE, the job setup on the caller), short enough that
   a pool between tokens or between prompts soon stops using a core. */
#define SPIN_NANOSECONDS 200000L

typedef struct {
    pk_pool *pool;
    int index;
} worker_arg;

struct pk_pool {
    int n;
    pthread_t *threads;
    worker_arg *args;
    _Atomic(pk_task_fn) fn;
    _Atomic(void *) ctx;
    atomic_long chunks;
    atomic_long completed;      /* chunks of the current job done */
    _Atomic uint64_t state;     /* generation << 32 | next chunk */
    atomic_int sleepers;
    atomic_int stop;
    pthread_mutex_t mutex;
    pthread_cond_t wake;
};

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static uint32_t generation(uint64_t state) { return (uint32_t)(state >> 32); }

/* Takes and runs chunks of generation g until none is left (or the job changed). */
static void work(pk_pool *p, uint32_t g, int thread) {
    for (;;) {
        uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
        if (generation(s) != g) return;
        long k = (long)(s & 0xFFFFFFFFu);
        pk_task_fn fn = atomic_load_explicit(&p->fn, memory_order_relaxed);
        void *ctx = atomic_load_explicit(&p->ctx, memory_order_relaxed);
        if (k >= atomic_load_explicit(&p->chunks, memory_order_relaxed)) return;
        if (!atomic_compare_exchange_weak(&p->state, &s, s + 1)) continue;
        fn(ctx, k, thread);
        atomic_fetch_add_explicit(&p->completed, 1, memory_order_release);
    }
}

/* Returns the generation of the next job once it differs from `seen`. */
static uint32_t wait_for_work(pk_pool *p, uint32_t seen) {
    long deadline = now_ns() + SPIN_NANOSECONDS;
    for (int spins = 0;; spins++) {
        uint32_t g = generation(atomic_load_explicit(&p->state, memory_order_acquire));
        if (g != seen) return g;
        if ((spins & 255) != 255 || now_ns() < deadline) { CPU_RELAX(); continue; }
        /* Sleep. `sleepers` is raised before the state is checked again under the lock;
           pk_pool_run publishes a job before it reads `sleepers` (both seq_cst), so either
           we see the new job here or it sees us and broadcasts. */
        pthread_mutex_lock(&p->mutex);
        atomic_fetch_add(&p->sleepers, 1);
        while ((g = generation(atomic_load(&p->state))) == seen)
            pthread_cond_wait(&p->wake, &p->mutex);
        atomic_fetch_sub(&p->sleepers, 1);
        pthread_mutex_unlock(&p->mutex);
        return g;
    }
}

static void *worker_main(void *raw) {
    worker_arg *arg = raw;
    pk_pool *p = arg->pool;
    uint32_t seen = 0;
    for (;;) {
        seen = wait_for_work(p, seen);
        if (atomic_load(&p->stop)) return NULL;
        work(p, seen, arg->index);
    }
}

int pk_available_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    return 1;
}

pk_pool *pk_pool_create(int nthreads) {
    if (nthreads < 1) nthreads = 1;
    pk_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = 1;  /* raised as workers start, so destroy joins only started ones */
    p->threads = calloc((size_t)nthreads, sizeof *p->threads);
    p->args = calloc((size_t)nthreads, sizeof *p->args);
    pthread_mutex_init(&p->mutex, NULL);
    pthread_cond_init(&p->wake, NULL);
    if (!p->threads || !p->args) { pk_pool_destroy(p); return NULL; }
    for (int i = 1; i < nthreads; i++) {
        p->args[i] = (worker_arg){p, i};
        if (pthread_create(&p->threads[i], NULL, worker_main, &p->args[i]) != 0) {
            pk_pool_destroy(p);
            return NULL;
        }
        p->n = i + 1;
    }
    return p;
}

/* Publishes a new generation (a job, or the stop request) and wakes sleeping workers. */
static uint32_t publish(pk_pool *p) {
    uint32_t g = generation(atomic_load(&p->state)) + 1;
    atomic_store(&p->state, (uint64_t)g << 32);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mutex);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mutex);
    }
    return g;
}

void pk_pool_destroy(pk_pool *p) {
    if (!p) return;
    if (p->threads) {
        atomic_store(&p->stop, 1);
        publish(p);
        for (int i = 1; i < p->n; i++) pthread_join(p->threads[i], NULL);
    }
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mutex);
    free(p->threads);
    free(p->args);
    free(p);
}

int pk_pool_size(const pk_pool *p) { return p->n; }

void pk_pool_run(pk_pool *p, pk_task_fn fn, void *ctx, long chunks) {
    if (chunks <= 0) return;
    if (p->n == 1 || chunks == 1) {
        for (long k = 0; k < chunks; k++) fn(ctx, k, 0);
        return;
    }
    atomic_store_explicit(&p->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&p->ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&p->chunks, chunks, memory_order_relaxed);
    atomic_store_explicit(&p->completed, 0, memory_order_relaxed);
    work(p, publish(p), 0);
    while (atomic_load_explicit(&p->completed, memory_order_acquire) < chunks) CPU_RELAX();
}
