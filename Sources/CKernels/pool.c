/* Worker pool: spin briefly, then sleep. See include/pk_pool.h. */
#define _GNU_SOURCE
#include "pk_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* How long an idle worker keeps spinning before it sleeps. Long enough to cover the gap
   between two matrix products of one token (norms, RoPE, attention on one thread), short
   enough that a pool between tokens or between prompts stops burning a core. */
#define SPIN_NANOSECONDS 200000L

typedef struct {
    pk_pool *pool;
    int index;
} worker_arg;

struct pk_pool {
    int n;
    pthread_t *threads;
    worker_arg *args;
    pk_task_fn fn;
    void *ctx;
    atomic_uint generation;  /* bumped once per run; workers wait for a change */
    atomic_int pending;      /* workers still inside the current run */
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

/* Returns the new generation once it differs from `seen`. */
static unsigned wait_for_work(pk_pool *p, unsigned seen) {
    long deadline = now_ns() + SPIN_NANOSECONDS;
    for (int spins = 0;; spins++) {
        unsigned g = atomic_load_explicit(&p->generation, memory_order_acquire);
        if (g != seen) return g;
        if ((spins & 255) != 255 || now_ns() < deadline) { CPU_RELAX(); continue; }
        /* Sleep. `sleepers` is raised before the generation is checked again under the
           lock; pk_pool_run bumps the generation before it reads `sleepers` (both seq_cst),
           so either we see the new generation here or it sees us and broadcasts. */
        pthread_mutex_lock(&p->mutex);
        atomic_fetch_add(&p->sleepers, 1);
        while ((g = atomic_load(&p->generation)) == seen) pthread_cond_wait(&p->wake, &p->mutex);
        atomic_fetch_sub(&p->sleepers, 1);
        pthread_mutex_unlock(&p->mutex);
        return g;
    }
}

static void *worker_main(void *raw) {
    worker_arg *arg = raw;
    pk_pool *p = arg->pool;
    unsigned seen = 0;
    for (;;) {
        seen = wait_for_work(p, seen);
        if (atomic_load_explicit(&p->stop, memory_order_acquire)) return NULL;
        p->fn(p->ctx, arg->index, p->n);
        atomic_fetch_sub_explicit(&p->pending, 1, memory_order_release);
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
    p->n = nthreads;
    p->threads = calloc((size_t)nthreads, sizeof *p->threads);
    p->args = calloc((size_t)nthreads, sizeof *p->args);
    pthread_mutex_init(&p->mutex, NULL);
    pthread_cond_init(&p->wake, NULL);
    if (!p->threads || !p->args) { pk_pool_destroy(p); return NULL; }
    for (int i = 1; i < nthreads; i++) {
        p->args[i] = (worker_arg){p, i};
        if (pthread_create(&p->threads[i], NULL, worker_main, &p->args[i]) != 0) {
            p->n = i;  /* destroy joins the ones that started */
            pk_pool_destroy(p);
            return NULL;
        }
    }
    return p;
}

static void start_generation(pk_pool *p) {
    atomic_fetch_add(&p->generation, 1);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mutex);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mutex);
    }
}

void pk_pool_destroy(pk_pool *p) {
    if (!p) return;
    if (p->threads) {
        atomic_store(&p->stop, 1);
        start_generation(p);
        for (int i = 1; i < p->n; i++) pthread_join(p->threads[i], NULL);
    }
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mutex);
    free(p->threads);
    free(p->args);
    free(p);
}

int pk_pool_size(const pk_pool *p) { return p->n; }

void pk_pool_run(pk_pool *p, pk_task_fn fn, void *ctx) {
    if (p->n == 1) { fn(ctx, 0, 1); return; }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store_explicit(&p->pending, p->n - 1, memory_order_relaxed);
    start_generation(p);  /* seq_cst: publishes fn, ctx and pending to the workers */
    fn(ctx, 0, p->n);
    while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0) CPU_RELAX();
}
