/* passcheck bench MODEL [--inputs DIR|FILES | --seed S] [--dim NAME=SIZE]... [--ep LIST] [--ep-file F]
 * [--layer-assignment S] [--level N] [--threads N] [--runs N] [--warmup N] [--compare-ort [--ort-level L]
 * [--ort-dir DIR]]: time the runtime on a model (min/median/p90 per run, memory), and with --compare-ort
 * ONNX Runtime 1.30 on the same model, inputs and thread count in the same invocation, printing the ratios
 * and checking that both give the same outputs. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tools/cli.h"
#include "properties/oracles/ort_oracle.h"
#include "properties/runner/model_case.h"

#define BENCH_CMD "bench"

/* Agreement between the runtime and ORT: both run float kernels in their own order, and ORT at 'all' fuses
 * (Conv+BN folding changes the rounding), so the bound is the runtime property's, not the oracle's. */
#define BENCH_RTOL 1e-3
#define BENCH_ATOL 1e-4

typedef struct bench_args {
    const char *model, *inputs, *seed_text, *ep_list, *ep_file, *layer_assignment, *level_text, *threads_text;
    const char *runs_text, *warmup_text, *ort_level_text, *ort_dir;
    pc_cli_list dims;
    bool compare_ort, profile;
    int level, ort_level;
    uint64_t seed, threads, runs, warmup;
} bench_args;

static const pc_cli_opt opt_specs[] = {
    {"--inputs", NULL, PC_CLI_STRING, offsetof(bench_args, inputs)},
    {"--seed", NULL, PC_CLI_STRING, offsetof(bench_args, seed_text)},
    {"--dim", NULL, PC_CLI_LIST, offsetof(bench_args, dims)},
    {"--ep", NULL, PC_CLI_STRING, offsetof(bench_args, ep_list)},
    {"--ep-file", NULL, PC_CLI_STRING, offsetof(bench_args, ep_file)},
    {"--layer-assignment", NULL, PC_CLI_STRING, offsetof(bench_args, layer_assignment)},
    {"--level", NULL, PC_CLI_STRING, offsetof(bench_args, level_text)},
    {"--threads", NULL, PC_CLI_STRING, offsetof(bench_args, threads_text)},
    {"--runs", NULL, PC_CLI_STRING, offsetof(bench_args, runs_text)},
    {"--warmup", NULL, PC_CLI_STRING, offsetof(bench_args, warmup_text)},
    {"--compare-ort", NULL, PC_CLI_FLAG, offsetof(bench_args, compare_ort)},
    {"--profile", NULL, PC_CLI_FLAG, offsetof(bench_args, profile)},
    {"--ort-level", NULL, PC_CLI_STRING, offsetof(bench_args, ort_level_text)},
    {"--ort-dir", NULL, PC_CLI_STRING, offsetof(bench_args, ort_dir)},
};

static const pc_cli_positional model_arg = {"MODEL", PC_CLI_STRING, offsetof(bench_args, model)};

static const char *const ort_levels[] = {"disabled", "basic", "extended", "all"};

static int args_parse(int argc, char **argv, bench_args *a)
{
    int rc = pc_cli_parse_args(BENCH_CMD, argc, argv, opt_specs, sizeof opt_specs / sizeof opt_specs[0], a,
                               &model_arg);
    if (rc != PC_EXIT_OK) return rc;
    if (a->level_text && (rc = pc_cli_parse_level(BENCH_CMD, a->level_text, &a->level)) != PC_EXIT_OK)
        return rc;
    if (a->threads_text &&
        (rc = pc_cli_parse_u64(BENCH_CMD, "--threads", a->threads_text, 1, 256, &a->threads)) != PC_EXIT_OK)
        return rc;
    if (a->runs_text &&
        (rc = pc_cli_parse_u64(BENCH_CMD, "--runs", a->runs_text, 1, 1000000, &a->runs)) != PC_EXIT_OK)
        return rc;
    if (a->warmup_text &&
        (rc = pc_cli_parse_u64(BENCH_CMD, "--warmup", a->warmup_text, 0, 1000000, &a->warmup)) != PC_EXIT_OK)
        return rc;
    if (a->seed_text) {
        if ((rc = pc_cli_parse_u64(BENCH_CMD, "--seed", a->seed_text, 0, UINT64_MAX, &a->seed)) != PC_EXIT_OK)
            return rc;
        if (a->inputs) return pc_cli_usage_error(BENCH_CMD, "--seed draws random inputs: not with --inputs");
    }
    if (a->inputs && a->inputs[0] == '\0') return pc_cli_usage_error(BENCH_CMD, "empty --inputs");
    if (a->dims.n && a->inputs)
        return pc_cli_usage_error(BENCH_CMD, "--dim sizes random inputs: not with --inputs");
    if ((a->ort_level_text || a->ort_dir) && !a->compare_ort)
        return pc_cli_usage_error(BENCH_CMD, "%s needs --compare-ort",
                                  a->ort_level_text ? "--ort-level" : "--ort-dir");
    if (a->ort_level_text) {
        a->ort_level = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(a->ort_level_text, ort_levels[i]) == 0) a->ort_level = i;
        if (a->ort_level < 0)
            return pc_cli_usage_error(BENCH_CMD,
                                      "bad --ort-level '%s': expected disabled, basic, extended or all",
                                      a->ort_level_text);
    }
    if (!a->ep_list) a->ep_list = "cpu";
    return PC_EXIT_OK;
}

static int double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct latency {
    double min, median, p90;
} latency;

/* Sorts ms in place. The median of an even count is the mean of the middle two; p90 the smallest time at
 * or above 90 % of the runs (nearest rank). */
static latency latency_of(double *ms, uint64_t n)
{
    qsort(ms, (size_t)n, sizeof *ms, double_cmp);
    latency l;
    l.min = ms[0];
    l.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    uint64_t rank = (9 * n + 9) / 10; /* ceil(0.9 n) */
    l.p90 = ms[rank ? rank - 1 : 0];
    return l;
}

/* Resident bytes now (/proc/self/statm), 0 when unknown. */
static double rss_now(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, resident = 0;
    int got = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return got == 2 && page > 0 ? (double)resident * (double)page : 0;
}

static double rss_peak(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024.0 : 0;
}

static int entry_by_time(const void *a, const void *b)
{
    double x = ((const pc_session_profile_entry *)a)->seconds,
           y = ((const pc_session_profile_entry *)b)->seconds;
    return x > y ? -1 : x < y;
}

/* --profile: the gemm-shaped nodes' rates against cblas_sgemm's peak on this machine, slowest first, then
 * each op's share of the run. */
static int print_profile(const pc_session *s, int threads)
{
    pc_session_profile_entry *e = NULL;
    uint32_t n = 0;
    pc_error err;
    if (pc_session_get_profile(s, &e, &n, &err) != PC_OK) return pc_cli_report(BENCH_CMD, &err);
    double peak = pc_runtime_sgemm_gflops(threads, 1024), total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += e[i].seconds;
    qsort(e, n, sizeof *e, entry_by_time);
    printf(
        "profile: cblas_sgemm peak %.1f GFLOP/s (1024^3, %d thread%s); gemm-shaped nodes, slowest first:\n",
        peak, threads, threads == 1 ? "" : "s");
    printf("  %-40s %-30s %10s %9s %9s %7s\n", "node", "op", "ms/run", "MFLOP", "GFLOP/s", "%peak");
    double flops = 0, flop_s = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (e[i].flops <= 0 || !e[i].runs) continue;
        double per = e[i].seconds / (double)e[i].runs, rate = per > 0 ? e[i].flops / per / 1e9 : 0;
        flops += e[i].flops;
        flop_s += per;
        char op[96];
        snprintf(op, sizeof op, "%s%s%s", e[i].node->domain, e[i].node->domain[0] ? ":" : "",
                 e[i].node->op_type);
        printf("  %-40.40s %-30.30s %10.3f %9.1f %9.2f %6.0f%%\n", e[i].node->name ? e[i].node->name : "", op,
               per * 1e3, e[i].flops / 1e6, rate, peak > 0 ? 100 * rate / peak : 0);
    }
    uint64_t runs = n && e[0].runs ? e[0].runs : 1;
    printf(
        "  gemm-shaped total: %.1f MFLOP/run in %.3f ms = %.2f GFLOP/s (%.0f%% of peak); %.0f%% of the run\n",
        flops / 1e6, flop_s * 1e3, flop_s > 0 ? flops / flop_s / 1e9 : 0,
        peak > 0 && flop_s > 0 ? 100 * flops / flop_s / 1e9 / peak : 0,
        total > 0 ? 100 * flop_s / (total / (double)runs) : 0);
    /* per op type: where the rest of the time goes */
    printf("  time by op type:\n");
    for (uint32_t i = 0; i < n; i++) {
        if (!e[i].node) continue;
        double sum = 0;
        uint32_t count = 0;
        const pc_node *first = e[i].node;
        for (uint32_t j = i; j < n; j++)
            if (e[j].node && strcmp(e[j].node->op_type, first->op_type) == 0 &&
                strcmp(e[j].node->domain, first->domain) == 0) {
                sum += e[j].seconds;
                count++;
                if (j != i) e[j].node = NULL;
            }
        char op[96];
        snprintf(op, sizeof op, "%s%s%s", first->domain, first->domain[0] ? ":" : "", first->op_type);
        printf("    %-40s %4u nodes %9.3f ms/run %5.1f%%\n", op, count, sum / (double)runs * 1e3,
               total > 0 ? 100 * sum / total : 0);
        e[i].node = NULL;
    }
    free(e);
    return PC_EXIT_OK;
}

/* ORT's outputs by name against ours: the first disagreement in msg, or "" when all agree. */
static void compare_with_ort(const pc_graph *g, pc_data *const *ours, const pc_ort_result *r, char *msg,
                             size_t size)
{
    msg[0] = '\0';
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        const char *name = g->outputs[i]->name;
        const pc_data *theirs = NULL;
        for (uint32_t k = 0; k < r->n_outputs; k++)
            if (strcmp(r->names[k], name) == 0) theirs = r->outputs[k];
        if (!theirs) {
            snprintf(msg, size, "ORT returned no output '%s'", name);
            return;
        }
        pc_compare_result cmp;
        if (pc_data_compare(theirs, ours[i], BENCH_RTOL, BENCH_ATOL, &cmp) != PC_COMPARE_EQUAL) {
            snprintf(msg, size, "output '%s': %s", name, cmp.detail);
            return;
        }
    }
}

int pc_cmd_bench(int argc, char **argv)
{
    bench_args args = {.level = PC_LEVEL_MAX,
                       .seed = PC_MODEL_CASE_SEED,
                       .threads = 1,
                       .runs = 20,
                       .warmup = 3,
                       .ort_level = 3};
    int rc = args_parse(argc, argv, &args);
    double rss_start = rss_now();
    pc_ep_registry *reg = NULL;
    pc_case kase;
    memset(&kase, 0, sizeof kase);
    pc_session *s = NULL;
    pc_data **outs = NULL;
    double *ms = NULL;
    uint8_t *bytes = NULL;
    const char **names = NULL;
    pc_ort_result ort;
    memset(&ort, 0, sizeof ort);
    pc_ort_times times;
    memset(&times, 0, sizeof times);
    pc_error err;
    pc_error_clear(&err);
    if (rc != PC_EXIT_OK) goto done;
    pc_cli_session_args sa = {args.model, args.inputs, args.ep_file, args.ep_list, args.layer_assignment,
                              &args.dims, args.seed,   args.threads, args.level};
    pc_session_options so;
    if ((rc = pc_cli_session_setup(BENCH_CMD, &sa, &reg, &kase, &so)) != PC_EXIT_OK) goto done;
    so.profile = args.profile;
    double t0 = pc_now_seconds();
    if (pc_session_create(kase.model, &so, &s, &err) != PC_OK) {
        pc_error_prefix(&err, "%s: ", args.model);
        rc = pc_cli_report(BENCH_CMD, &err);
        goto done;
    }
    double created = pc_now_seconds() - t0;
    ms = calloc((size_t)args.runs, sizeof *ms);
    if (!ms) {
        rc = pc_cli_report(BENCH_CMD, &(pc_error){.status = PC_ERR_NOMEM, .message = "out of memory"});
        goto done;
    }
    for (uint64_t r = 0; r < args.warmup + args.runs; r++) {
        if (outs) pc_session_free_outputs(s, outs);
        outs = NULL;
        double a = pc_now_seconds();
        if (pc_session_run(s, kase.n_inputs, kase.inputs, &outs, &err) != PC_OK) {
            outs = NULL;
            pc_error_prefix(&err, "%s: run %llu: ", args.model, (unsigned long long)r);
            rc = pc_cli_report(BENCH_CMD, &err);
            goto done;
        }
        if (r >= args.warmup) ms[r - args.warmup] = (pc_now_seconds() - a) * 1e3;
    }
    double our_peak = rss_peak() - rss_start;
    latency ours = latency_of(ms, args.runs);
    pc_session_stats st;
    pc_session_get_stats(s, &st);
    printf("bench: %s, EPs %s, level %d, %d thread%s, inputs %s; %llu runs after %llu warm-up\n", args.model,
           args.ep_list, args.level, (int)args.threads, args.threads == 1 ? "" : "s",
           args.inputs ? args.inputs : "random", (unsigned long long)args.runs,
           (unsigned long long)args.warmup);
    printf("  passcheck  min %9.3f ms  median %9.3f ms  p90 %9.3f ms  (session created in %.3f s)\n",
           ours.min, ours.median, ours.p90, created);
    printf("  passcheck  memory: planned arena %.1f MB (all tensors %.1f MB), peak RSS above start %.1f MB\n",
           (double)st.arena_bytes / 1e6, (double)st.tensor_bytes / 1e6, our_peak / 1e6);
    if (args.profile && (rc = print_profile(s, (int)args.threads)) != PC_EXIT_OK) goto done;
    if (!args.compare_ort) goto done;

    /* ORT gets the model as the user gave it (it optimizes at --ort-level itself), the same inputs by name */
    const pc_graph *g = kase.model->graph;
    size_t size = 0;
    if (pc_model_save_bytes(kase.model, &bytes, &size, &err) != PC_OK) {
        rc = pc_cli_report(BENCH_CMD, &err);
        goto done;
    }
    names = calloc(kase.n_inputs ? kase.n_inputs : 1, sizeof *names);
    if (!names) {
        rc = pc_cli_report(BENCH_CMD, &(pc_error){.status = PC_ERR_NOMEM, .message = "out of memory"});
        goto done;
    }
    for (uint32_t i = 0, k = 0; i < g->n_inputs && k < kase.n_inputs; i++)
        if (!g->inputs[i]->initializer) names[k++] = g->inputs[i]->name;
    pc_ort_timed_options to = {args.ort_level, (uint32_t)args.threads, (uint32_t)args.warmup,
                               (uint32_t)args.runs};
    if (pc_ort_run_timed(args.ort_dir, bytes, size, kase.n_inputs, names, kase.inputs, &to, &ort, &times,
                         &err) != PC_OK) {
        pc_error_prefix(&err, "--compare-ort: ");
        rc = pc_cli_report(BENCH_CMD, &err);
        goto done;
    }
    if (ort.status != PC_ORT_OK) {
        fprintf(stderr, "passcheck " BENCH_CMD ": --compare-ort: ONNX Runtime could not run %s: %s\n",
                args.model, ort.message);
        rc = PC_EXIT_CHECK_FAILED;
        goto done;
    }
    latency theirs = latency_of(times.ms, times.n_runs);
    double their_mem = times.rss_peak - times.rss_before;
    printf("  ort        min %9.3f ms  median %9.3f ms  p90 %9.3f ms  (level '%s', %d intra-op thread%s)\n",
           theirs.min, theirs.median, theirs.p90, ort_levels[args.ort_level], (int)args.threads,
           args.threads == 1 ? "" : "s");
    printf("  ort        memory: peak RSS above its start %.1f MB\n", their_mem / 1e6);
    printf("ratio ours/ort: %.2f\n", theirs.median > 0 ? ours.median / theirs.median : 0.0);
    if (their_mem > 0) printf("memory ours/ort: %.2f\n", our_peak / their_mem);
    char why[512];
    compare_with_ort(pc_session_model(s)->graph, outs, &ort, why, sizeof why);
    if (why[0]) {
        /* timings of two engines that disagree compare nothing: say so and fail */
        printf("outputs: DIFFER from ORT's (rtol %g, atol %g): %s\n", BENCH_RTOL, BENCH_ATOL, why);
        rc = PC_EXIT_CHECK_FAILED;
    } else {
        printf("outputs: agree with ORT's (rtol %g, atol %g)\n", BENCH_RTOL, BENCH_ATOL);
    }
done:
    pc_ort_times_free(&times);
    pc_ort_result_free(&ort);
    free(names);
    free(bytes);
    free(ms);
    if (outs) pc_session_free_outputs(s, outs);
    pc_session_free(s);
    pc_case_free(&kase);
    pc_ep_registry_free(reg);
    pc_cli_list_free(&args.dims);
    return rc;
}

void pc_cmd_bench_help(FILE *out)
{
    fprintf(
        out,
        "usage: passcheck bench MODEL [--inputs DIR|FILES | --seed S] [--dim NAME=SIZE]... [--ep LIST]\n"
        "                       [--ep-file F] [--layer-assignment S] [--level N] [--threads N] [--runs N]\n"
        "                       [--warmup N] [--profile] [--compare-ort [--ort-level L] [--ort-dir DIR]]\n"
        "\n"
        "Times passcheck's runtime on MODEL (as `passcheck run` builds the session): WARMUP untimed runs, "
        "then\n"
        "RUNS timed ones; prints min, median and p90 per run, the planned arena and the peak RSS the model\n"
        "took. With --compare-ort, ONNX Runtime 1.30 (onnxruntime-node, CPU EP) runs the same model with "
        "the\n"
        "same inputs, thread count, warm-up and runs in the same invocation, and the lines 'ratio ours/ort: "
        "X'\n"
        "(median over median) and 'memory ours/ort: X' (peak RSS above each process's start) follow. The\n"
        "outputs of both must agree (rtol 1e-3, atol 1e-4), else the bench fails: a ratio between engines\n"
        "that disagree measures nothing.\n"
        "\n"
        "  --inputs, --seed, --dim, --ep, --ep-file, --layer-assignment, --level: as for run\n"
        "  --threads N          gemm threads for us, intra-op threads for ORT, 1..256 (default 1)\n"
        "  --runs N             timed runs (default 20); --warmup N untimed runs before them (default 3)\n"
        "  --profile            time every node: Conv/MatMul/Gemm GFLOP/s against this machine's\n"
        "                       cblas_sgemm peak (1024^3), and the run's time by op type\n"
        "  --compare-ort        also time ONNX Runtime (needs node and onnxruntime-node: ci/deps)\n"
        "  --ort-level L        ORT's graph optimization: disabled, basic, extended or all (default all)\n"
        "  --ort-dir DIR        node_modules holding onnxruntime-node (default $PC_ORT_DIR, then\n"
        "                       ~/.cache/passcheck/ort/node_modules)\n"
        "\n"
        "exit codes: 0 ok, 1 ORT could not run the model or the outputs differ, 2 usage error, 3 bad MODEL "
        "or\n"
        "--inputs, a node without a kernel, or ORT/node missing, 4 internal error\n");
}
