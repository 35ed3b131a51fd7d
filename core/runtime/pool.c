/* The thread pool of a session with threads > 1 (rt_internal.h, pc_rt_parallel_for): threads - 1 workers that
 * spin for a while after each job (a model runs many small jobs back to back, and waking a sleeping thread
 * costs tens of microseconds: mobilenet_v2 on 2 threads ran slower than on 1 with sleeping workers) and then
 * sleep on a condition variable; the calling thread takes chunk 0 of every job itself and spins until the
 * workers are done. A job's
 * chunks are a fixed split of [0, n) — sizes depend only on n, the grain and the thread count, never on
 * timing — and each item is computed by one thread in its usual order, so results are the same bits every run
 * and for any thread count whose split computes the same items in the same order (kernels split over
 * independent items: channels, rows, elements). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/runtime/rt_internal.h"

struct pc_rt_pool {
    int threads; /* including the caller */
    pthread_t *workers;
    int started;
    pthread_mutex_t mu; /* guards sleeping: the condition variable and `sleepers` */
    pthread_cond_t work;
    int sleepers;
    _Atomic uint64_t generation; /* bumped per job (release: the job's fields are set before) */
    _Atomic int pending;         /* workers still running the current job */
    _Atomic bool stop;
    /* the current job */
    pc_rt_task_fn fn;
    void *arg;
    int64_t n, chunk;
};

typedef struct worker_arg {
    pc_rt_pool *pool;
    int index; /* 1 .. threads - 1: the chunk it runs */
} worker_arg;

static void run_chunk(pc_rt_pool *p, int index)
{
    int64_t lo = (int64_t)index * p->chunk, hi = lo + p->chunk;
    if (hi > p->n) hi = p->n;
    if (lo < hi) p->fn(p->arg, lo, hi, index);
}

/* About 50-100 microseconds of polling before a worker sleeps. */
enum { SPIN_LIMIT = 1 << 14 };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker_main(void *varg)
{
    worker_arg *wa = varg;
    pc_rt_pool *p = wa->pool;
    int index = wa->index;
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        uint64_t g;
        int spins = 0;
        while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen &&
               !atomic_load(&p->stop)) {
            if (++spins < SPIN_LIMIT) {
                cpu_relax();
                continue;
            }
            /* sleep; the generation is checked again under the mutex the caller broadcasts under, so a job
             * posted in between is never missed */
            pthread_mutex_lock(&p->mu);
            p->sleepers++;
            while (atomic_load(&p->generation) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->work, &p->mu);
            p->sleepers--;
            pthread_mutex_unlock(&p->mu);
            spins = 0;
        }
        if (atomic_load(&p->stop)) break;
        seen = g;
        run_chunk(p, index);
        atomic_fetch_sub_explicit(&p->pending, 1, memory_order_release);
    }
    return NULL;
}

pc_rt_pool *pc_rt_pool_create(int threads)
{
    if (threads < 2) return NULL;
    pc_rt_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->threads = threads;
    p->workers = calloc((size_t)threads, sizeof *p->workers);
    if (!p->workers || pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->workers);
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->work, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p->workers);
        free(p);
        return NULL;
    }
    for (int i = 1; i < threads; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa) break;
        *wa = (worker_arg){p, i};
        if (pthread_create(&p->workers[i - 1], NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        p->started++;
    }
    if (p->started != threads - 1) {
        pc_rt_pool_free(p);
        return NULL;
    }
    return p;
}

void pc_rt_pool_free(pc_rt_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, true);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p);
}

void pc_rt_parallel_for(const pc_rt_kernel_ctx *k, int64_t n, int64_t grain, pc_rt_task_fn fn, void *arg)
{
    if (n <= 0) return;
    pc_rt_pool *p = k->pool;
    if (grain < 1) grain = 1;
    int64_t parts = p ? p->threads : 1;
    if (parts > n / grain) parts = n / grain;
    if (parts <= 1) {
        fn(arg, 0, n, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = (n + parts - 1) / parts;
    /* every worker runs the job; those whose chunk is empty (parts < threads) return at once */
    atomic_store_explicit(&p->pending, p->threads - 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_mutex_lock(&p->mu);
    if (p->sleepers) pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    run_chunk(p, 0);
    while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0)
        cpu_relax();
}
