/* A persistent pool of worker threads for the forward pass.

   Decode runs ~5 matrix products per layer per token (160+ per token on a 32-layer model),
   each split over all cores. Waking threads through the OS for each of them costs tens of
   microseconds; here workers spin on a generation counter for a short while after each job
   (~100 µs) and only then sleep on a condition variable, so back-to-back jobs start within
   a few hundred nanoseconds and an idle pool costs no CPU.

   `pk_pool_run(pool, fn, ctx)` calls fn(ctx, t, n) once for every t in [0, n) — t = 0 on the
   calling thread — and returns when all calls have returned. Nothing is allocated per run.
   A pool runs one job at a time: callers must not share a pool between threads. */
#ifndef PHIKIT_PK_POOL_H
#define PHIKIT_PK_POOL_H

typedef void (*pk_task_fn)(void *ctx, int thread, int nthreads);

typedef struct pk_pool pk_pool;

/* A pool of `nthreads` threads in total (the caller plus nthreads - 1 workers); NULL if a
   thread could not be created. nthreads < 1 counts as 1. */
pk_pool *pk_pool_create(int nthreads);
void pk_pool_destroy(pk_pool *pool);
int pk_pool_size(const pk_pool *pool);
void pk_pool_run(pk_pool *pool, pk_task_fn fn, void *ctx);

/* Cores this process may run on (sched_getaffinity), at least 1. */
int pk_available_cores(void);

#endif
