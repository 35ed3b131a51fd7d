/* The thread pool of a session with threads > 1 (rt_internal.h, pc_rt_parallel_for): threads - 1 workers that
 * sleep on a condition variable between jobs; the calling thread takes chunk 0 of every job itself. A job's
 * chunks are a fixed split of [0, n) — sizes depend only on n, the grain and the thread count, never on
 * timing — and each item is computed by one thread in its usual order, so results are the same bits every run
 * and for any thread count whose split computes the same items in the same order (kernels split over
 * independent items: channels, rows, elements). */
#include <pthread.h>
#include <stdlib.h>

#include "core/runtime/rt_internal.h"

struct pc_rt_pool {
    int threads; /* including the caller */
    pthread_t *workers;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    uint64_t generation; /* bumped per job: a worker runs each generation once */
    int pending;         /* workers still running the current job */
    bool stop;
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

static void *worker_main(void *varg)
{
    worker_arg *wa = varg;
    pc_rt_pool *p = wa->pool;
    int index = wa->index;
    free(wa);
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        run_chunk(p, index);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
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
    if (pthread_cond_init(&p->work, NULL) != 0 || pthread_cond_init(&p->done, NULL) != 0) {
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
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
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
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = (n + parts - 1) / parts;
    /* every worker wakes; those whose chunk is empty (parts < threads) return at once */
    p->pending = p->threads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    run_chunk(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
