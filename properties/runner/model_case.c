/* A case from a user's model (model_case.h): the model, its EP settings, and input data from files or a seed.
 */
#include "properties/runner/model_case.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"

void pc_model_case_options_default(pc_model_case_options *o)
{
    memset(o, 0, sizeof *o);
    o->ep_list = "cpu";
    o->seed = PC_MODEL_CASE_SEED;
}

/* The size --dim gives symbol `sym` in "NAME=SIZE,..." (checked by dims_check): 0 when none. */
static int64_t dims_lookup(const char *dims, const char *sym)
{
    size_t n = strlen(sym);
    for (const char *p = dims; p && *p;) {
        const char *eq = strchr(p, '='), *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        if (eq && eq < end && (size_t)(eq - p) == n && memcmp(p, sym, n) == 0)
            return strtoll(eq + 1, NULL, 10);
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* Is `sym` the dim_param of some dim of a graph input without data of its own? */
static bool dims_symbol_used(const pc_graph *g, const char *sym, size_t n)
{
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const pc_type *t = &g->inputs[i]->type;
        if (g->inputs[i]->initializer || t->kind != PC_TYPE_TENSOR) continue;
        for (int32_t k = 0; k < t->shape.rank; k++)
            if (t->shape.dims[k].kind == PC_DIM_SYMBOLIC && t->shape.dims[k].symbol &&
                strlen(t->shape.dims[k].symbol) == n && memcmp(t->shape.dims[k].symbol, sym, n) == 0)
                return true;
    }
    return false;
}

/* "NAME=SIZE,...": each entry well formed, named once, sized 1..PC_MODEL_CASE_MAX_DIM, and naming a symbolic
 * dim of a graph input (a misspelt name would silently leave the dim at its default). */
static pc_status dims_check(const pc_graph *g, const char *dims, pc_error *err)
{
    for (const char *p = dims; *p;) {
        const char *eq = strchr(p, '='), *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        int len = (int)(end - p);
        if (!eq || eq > end || eq == p)
            return pc_error_set(err, PC_ERR_USAGE, "--dim '%.*s': want NAME=SIZE", len, p);
        char *stop = NULL;
        errno = 0;
        long long v = strtoll(eq + 1, &stop, 10);
        if (eq + 1 == end || stop != end || errno || v < 1 || v > PC_MODEL_CASE_MAX_DIM)
            return pc_error_set(err, PC_ERR_USAGE, "--dim '%.*s': SIZE must be an integer in 1..%d", len, p,
                                PC_MODEL_CASE_MAX_DIM);
        size_t n = (size_t)(eq - p);
        for (const char *q = dims; q < p;) {
            const char *qe = strchr(q, '=');
            if ((size_t)(qe - q) == n && memcmp(q, p, n) == 0)
                return pc_error_set(err, PC_ERR_USAGE, "--dim '%.*s': dim '%.*s' is given twice", len, p,
                                    (int)n, p);
            q = strchr(q, ',') + 1;
        }
        if (!dims_symbol_used(g, p, n))
            return pc_error_set(err, PC_ERR_USAGE, "--dim '%.*s': no graph input has a dim named '%.*s'", len,
                                p, (int)n, p);
        p = *end ? end + 1 : end;
    }
    return PC_OK;
}

/* Random data for a graph input: floats uniform in [-2, 2), integers in [0, 4), bools. A symbolic dim takes
 * its --dim size; without one (and for unknown dims) 1, or an error when o->require_dims. */
static pc_data *random_input(const pc_value *v, const pc_model_case_options *o, uint64_t *seed, pc_error *err)
{
    const pc_type *t = &v->type;
    if (t->kind != PC_TYPE_TENSOR || t->shape.rank < 0) {
        pc_error_set(err, PC_ERR_UNSUPPORTED,
                     "graph input '%s' has no tensor type with a known rank: give its data with --inputs",
                     v->name);
        return NULL;
    }
    int64_t *dims = t->shape.rank ? malloc((size_t)t->shape.rank * sizeof *dims) : NULL;
    if (t->shape.rank && !dims) {
        pc_error_set(err, PC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int32_t i = 0; i < t->shape.rank; i++) {
        const pc_dim *dm = &t->shape.dims[i];
        int64_t given =
            dm->kind == PC_DIM_SYMBOLIC && dm->symbol && o->dims ? dims_lookup(o->dims, dm->symbol) : 0;
        dims[i] = dm->kind == PC_DIM_KNOWN ? dm->size : given ? given : 1;
        if (dm->kind != PC_DIM_KNOWN && !given && o->require_dims) {
            if (dm->kind == PC_DIM_SYMBOLIC && dm->symbol)
                pc_error_set(err, PC_ERR_USAGE,
                             "graph input '%s': dim %d is '%s': give its size with --dim %s=SIZE", v->name,
                             (int)i, dm->symbol, dm->symbol);
            else
                pc_error_set(
                    err, PC_ERR_USAGE,
                    "graph input '%s': dim %d has no size or name: give the input's data with --inputs",
                    v->name, (int)i);
            free(dims);
            return NULL;
        }
    }
    pc_data *d = pc_data_new_tensor(t->elem, t->shape.rank, dims, err);
    free(dims);
    if (!d) return NULL;
    for (uint64_t k = 0; k < d->n_elements; k++) {
        uint64_t r = pc_splitmix64(seed);
        double f = (double)(r >> 11) / 9007199254740992.0 * 4.0 - 2.0;
        uint64_t u = r % 4;
        switch (d->dtype) {
        case PC_DTYPE_FLOAT:
            ((float *)d->data)[k] = (float)f;
            break;
        case PC_DTYPE_DOUBLE:
            ((double *)d->data)[k] = f;
            break;
        case PC_DTYPE_INT8:
            ((int8_t *)d->data)[k] = (int8_t)u;
            break;
        case PC_DTYPE_UINT8:
            ((uint8_t *)d->data)[k] = (uint8_t)u;
            break;
        case PC_DTYPE_INT16:
            ((int16_t *)d->data)[k] = (int16_t)u;
            break;
        case PC_DTYPE_UINT16:
            ((uint16_t *)d->data)[k] = (uint16_t)u;
            break;
        case PC_DTYPE_INT32:
            ((int32_t *)d->data)[k] = (int32_t)u;
            break;
        case PC_DTYPE_UINT32:
            ((uint32_t *)d->data)[k] = (uint32_t)u;
            break;
        case PC_DTYPE_INT64:
            ((int64_t *)d->data)[k] = (int64_t)u;
            break;
        case PC_DTYPE_UINT64:
            ((uint64_t *)d->data)[k] = u;
            break;
        case PC_DTYPE_BOOL:
            ((uint8_t *)d->data)[k] = (uint8_t)(r & 1);
            break;
        default:
            pc_error_set(err, PC_ERR_UNSUPPORTED,
                         "graph input '%s': no random data for element type %s: give its data with --inputs",
                         v->name, pc_dtype_name(d->dtype));
            pc_data_unref(d);
            return NULL;
        }
    }
    return d;
}

/* Data given for a tensor input must be what the model declares: its element type, its rank, and every
 * known dim (a symbolic or unknown dim takes any size). A mismatch would otherwise surface as a property
 * failure of every pass (the reference refusing the feed) or, for a shape, as a case that is not the model's.
 */
static pc_status data_fits(const pc_value *v, const pc_data *d, pc_error *err)
{
    const pc_type *t = &v->type;
    if (t->kind != PC_TYPE_TENSOR || d->kind != PC_TYPE_TENSOR)
        return PC_OK; /* sequences: the loader checked */
    char have[128];
    pc_data_describe(d, have, sizeof have);
    if (t->elem != PC_DTYPE_UNDEFINED && d->dtype != t->elem)
        return pc_error_set(err, PC_ERR_TYPE, "the data is %s but the input is declared %s", have,
                            pc_dtype_name(t->elem));
    if (t->shape.rank < 0) return PC_OK;
    bool fits = d->rank == t->shape.rank;
    for (int32_t i = 0; fits && i < t->shape.rank; i++)
        fits = t->shape.dims[i].kind != PC_DIM_KNOWN || t->shape.dims[i].size == d->dims[i];
    if (fits) return PC_OK;
    char want[160]; /* "[2,?,3]": the known sizes, ? for the others */
    size_t used = (size_t)snprintf(want, sizeof want, "[");
    for (int32_t i = 0; i < t->shape.rank && used < sizeof want; i++) {
        if (t->shape.dims[i].kind == PC_DIM_KNOWN)
            used += (size_t)snprintf(want + used, sizeof want - used, "%s%lld", i ? "," : "",
                                     (long long)t->shape.dims[i].size);
        else
            used += (size_t)snprintf(want + used, sizeof want - used, "%s?", i ? "," : "");
    }
    if (used < sizeof want) snprintf(want + used, sizeof want - used, "]");
    return pc_error_set(err, PC_ERR_SHAPE, "the data is %s but the input is declared %s%s", have,
                        pc_dtype_name(t->elem), want);
}

/* The data for every graph input that is not an initializer: from `inputs` (a folder of input_N.pb, or a
 * comma-separated list of .pb files, in graph-input order) or, when it is NULL, random from `seed`. */
static pc_status case_inputs(pc_case *c, const pc_model_case_options *o, pc_error *err)
{
    const char *inputs = o->inputs;
    uint64_t seed = o->seed;
    const pc_graph *g = c->model->graph;
    if (o->dims) {
        if (inputs) return pc_error_set(err, PC_ERR_USAGE, "--dim sizes random inputs: not with --inputs");
        pc_status ds = dims_check(g, o->dims, err);
        if (ds != PC_OK) return ds;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        n += !g->inputs[i]->initializer;
    c->inputs = n ? calloc(n, sizeof *c->inputs) : NULL;
    if (n && !c->inputs) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    struct stat st;
    bool is_dir = inputs && stat(inputs, &st) == 0 && S_ISDIR(st.st_mode);
    const char *list = inputs && !is_dir ? inputs : NULL;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const pc_value *v = g->inputs[i];
        if (v->initializer) continue;
        pc_status s = PC_OK;
        if (!inputs) {
            c->inputs[k] = random_input(v, o, &seed, err);
            if (!c->inputs[k]) s = err->status;
        } else {
            char *path = NULL;
            if (is_dir) {
                size_t len = strlen(inputs) + 32;
                path = malloc(len);
                if (path) snprintf(path, len, "%s/input_%u.pb", inputs, k);
            } else {
                if (!list || !*list)
                    return pc_error_set(err, PC_ERR_IO,
                                        "--inputs: %u files for %u graph inputs ('%s' has no data)", k, n,
                                        v->name);
                const char *end = strchr(list, ',');
                size_t len = end ? (size_t)(end - list) : strlen(list);
                path = malloc(len + 1);
                if (path) {
                    memcpy(path, list, len);
                    path[len] = '\0';
                }
                list = end ? end + 1 : list + len;
            }
            if (!path) return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
            s = pc_data_load_file(path, &v->type, &c->inputs[k], err);
            if (s == PC_OK && (s = data_fits(v, c->inputs[k], err)) != PC_OK) {
                pc_data_unref(c->inputs[k]); /* not counted in n_inputs yet: the case would not free it */
                c->inputs[k] = NULL;
            }
            if (s != PC_OK) pc_error_prefix(err, "--inputs: graph input '%s': %s: ", v->name, path);
            free(path);
        }
        if (s != PC_OK) return s;
        c->n_inputs = ++k;
    }
    if (list && *list)
        return pc_error_set(err, PC_ERR_IO, "--inputs: more files than the %u graph inputs", n);
    return PC_OK;
}

/* Everything after loading the model; on failure the caller frees the partly filled case. */
static pc_status case_fill(pc_case *c, const pc_model_case_options *o, pc_error *err)
{
    c->family = "";
    c->ep_list = strdup(o->ep_list);
    c->layer_assignment = o->layer_assignment ? strdup(o->layer_assignment) : NULL;
    if (!c->ep_list || (o->layer_assignment && !c->layer_assignment))
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory");
    if (o->ep_file) {
        pc_status st = pc_file_read_all(o->ep_file, SIZE_MAX, &c->ep_text, NULL, err);
        if (st == PC_ERR_NOMEM)
            return pc_error_set(err, PC_ERR_NOMEM, "out of memory reading %s", o->ep_file);
        if (st != PC_OK) {
            pc_error_prefix(err, "--ep-file: ");
            return st;
        }
    }
    pc_status st = case_inputs(c, o, err);
    if (st == PC_ERR_UNSUPPORTED) err->status = st = PC_ERR_IO; /* a model we cannot feed: bad input */
    return st;
}

pc_status pc_case_from_model(const char *path, const pc_model_case_options *o, pc_case *out, pc_error *err)
{
    memset(out, 0, sizeof *out);
    pc_status st = pc_model_load_file(path, NULL, &out->model, err);
    if (st == PC_OK) st = case_fill(out, o, err);
    if (st != PC_OK) pc_case_free(out);
    return st;
}
