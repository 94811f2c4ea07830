/* A persistent pool of worker threads for the forward pass.

   Decode runs ~5 matrix products per layer per token (160+ per token on a 32-layer model),
   each split over all cores. Waking threads through the OS for each of them costs tens of
   microseconds; here workers spin on the job counter for a short while after each job
   (~200 µs) and only then sleep on a condition variable, so back-to-back jobs start within
   a few hundred nanoseconds and an idle pool costs no CPU.

   A job is `chunks` independent pieces of work: `pk_pool_run(pool, fn, ctx, chunks)` calls
   fn(ctx, chunk, thread) once for every chunk in [0, chunks), on whichever thread takes it
   first (the caller is thread 0 and takes chunks too), and returns when every chunk is done.
   Threads the OS preempts (other programs on the machine) therefore hold up nothing: the
   others take their chunks, and the caller never waits for a worker that took none. Nothing
   is allocated per run. A pool runs one job at a time: callers must not share a pool
   between threads. */
#ifndef PHIKIT_PK_POOL_H
#define PHIKIT_PK_POOL_H

typedef void (*pk_task_fn)(void *ctx, long chunk, int thread);

typedef struct pk_pool pk_pool;

/* A pool of `nthreads` threads in total (the caller plus nthreads - 1 workers); NULL if a
   thread could not be created. nthreads < 1 counts as 1. */
pk_pool *pk_pool_create(int nthreads);
void pk_pool_destroy(pk_pool *pool);
int pk_pool_size(const pk_pool *pool);
void pk_pool_run(pk_pool *pool, pk_task_fn fn, void *ctx, long chunks);

/* Cores this process may run on (sched_getaffinity), at least 1. */
int pk_available_cores(void);

#endif
