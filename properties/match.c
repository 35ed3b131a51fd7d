/* Node identity across a pass (match.h): by name, or by first output for unnamed nodes; sorted indices make
 * every lookup O(log n), so big user models (passcheck shrink MODEL) stay cheap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "properties/match.h"

bool match_str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Identity: (0, name) for named nodes, (1, first output name) otherwise. */
static int node_key(const pc_node *n, const char **s)
{
    if (n->name && *n->name) {
        *s = n->name;
        return 0;
    }
    for (uint32_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i]) {
            *s = n->outputs[i]->name;
            return 1;
        }
    *s = "";
    return 2;
}

/* Scope first (the graph a node lives in, see collect), then identity. */
static int key_cmp(const char *ca, int ka, const char *sa, const char *cb, int kb, const char *sb)
{
    int c = strcmp(ca, cb);
    if (c) return c;
    if (ka != kb) return ka < kb ? -1 : 1;
    return strcmp(sa, sb);
}

/* qsort has no context argument: sort (scope, key, index) records instead. */
typedef struct key_rec {
    const char *scope;
    int kind;
    const char *s;
    uint32_t index;
} key_rec;

static int rec_cmp(const void *a, const void *b)
{
    const key_rec *x = a, *y = b;
    int c = key_cmp(x->scope, x->kind, x->s, y->scope, y->kind, y->s);
    return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

static pc_status sorted_index(const pc_node **nodes, const char **scopes, uint32_t n, uint32_t **out,
                              pc_error *err)
{
    key_rec *recs = calloc(n ? n : 1, sizeof *recs);
    *out = calloc(n ? n : 1, sizeof **out);
    if (!recs || !*out) {
        free(recs);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory matching nodes");
    }
    for (uint32_t i = 0; i < n; i++) {
        recs[i].scope = scopes[i];
        recs[i].kind = node_key(nodes[i], &recs[i].s);
        recs[i].index = i;
    }
    qsort(recs, n, sizeof *recs, rec_cmp);
    for (uint32_t i = 0; i < n; i++)
        (*out)[i] = recs[i].index;
    free(recs);
    return PC_OK;
}

/* Index of the unique node with this key in its scope, or -1. */
static int32_t lookup(const pc_node **nodes, const char **scopes, const uint32_t *sorted, uint32_t n,
                      const char *scope, int kind, const char *s)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const char *ms;
        int mk = node_key(nodes[sorted[mid]], &ms);
        if (key_cmp(scopes[sorted[mid]], mk, ms, scope, kind, s) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n) return -1;
    const char *ms;
    int mk = node_key(nodes[sorted[lo]], &ms);
    if (key_cmp(scopes[sorted[lo]], mk, ms, scope, kind, s) != 0) return -1;
    if (lo + 1 < n) {
        int nk = node_key(nodes[sorted[lo + 1]], &ms);
        if (key_cmp(scopes[sorted[lo + 1]], nk, ms, scope, kind, s) == 0) return -1; /* not unique */
    }
    return (int32_t)sorted[lo];
}

int32_t match_find_before(const node_match *m, const char *scope, const char *name)
{
    if (!name || !*name) return -1;
    return lookup(m->before, m->before_scope, m->before_sorted, m->n_before, scope, 0, name);
}

int32_t match_find_after(const node_match *m, const char *scope, const char *name)
{
    if (!name || !*name) return -1;
    return lookup(m->after, m->after_scope, m->after_sorted, m->n_after, scope, 0, name);
}

static bool attrs_same(const pc_attr *a, const pc_attr *b)
{
    if (!match_str_eq(a->name, b->name) || a->type != b->type) return false;
    switch (a->type) {
    case PC_ATTR_FLOAT:
        return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case PC_ATTR_INT:
        return a->i == b->i;
    case PC_ATTR_STRING:
        return a->s.len == b->s.len && (!a->s.len || memcmp(a->s.data, b->s.data, a->s.len) == 0);
    case PC_ATTR_TENSOR:
        return a->t && b->t && pc_tensor_equal(a->t, b->t);
    case PC_ATTR_FLOATS:
        return a->n == b->n && (!a->n || memcmp(a->floats, b->floats, a->n * sizeof(float)) == 0);
    case PC_ATTR_INTS:
        return a->n == b->n && (!a->n || memcmp(a->ints, b->ints, a->n * sizeof(int64_t)) == 0);
    default:
        return a->n == b->n; /* graphs and the rest: compared by their own passes, not here */
    }
}

bool match_node_same(const pc_node *a, const pc_node *b)
{
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs) return false;
    for (uint32_t i = 0; i < a->n_inputs; i++) {
        const pc_value *x = a->inputs[i], *y = b->inputs[i];
        if ((x == NULL) != (y == NULL) || (x && strcmp(x->name, y->name) != 0)) return false;
    }
    for (uint32_t i = 0; i < a->n_outputs; i++) {
        const pc_value *x = a->outputs[i], *y = b->outputs[i];
        if ((x == NULL) != (y == NULL) || (x && strcmp(x->name, y->name) != 0)) return false;
    }
    for (uint32_t i = 0; i < a->n_attrs; i++)
        if (!attrs_same(&a->attrs[i], &b->attrs[i])) return false;
    return true;
}

/* The nodes of g and, after each node, those of its subgraph bodies (depth first): a pass that rewrites
 * inside an If/Loop/Scan body is judged by the same rules as one on the main graph. Node names need not be
 * unique (ONNX asks it of value names only; a body may hold a node named like one outside), so identity is
 * scoped: a body node's scope names the path to it, "<scope>/<owner's key>.<attribute>[#k]"; main-graph nodes
 * have "". */
typedef struct collector {
    const pc_node **nodes;
    const char **scopes;
    uint32_t n, cap;
    char **owned; /* the scope strings, freed by match_free */
    uint32_t n_owned, cap_owned;
    bool oom;
} collector;

static uint32_t count_nodes(const pc_graph *g, uint32_t *n_bodies)
{
    uint32_t n = 0;
    for (const pc_node *x = g->first; x; x = x->next) {
        n++;
        for (uint32_t a = 0; a < x->n_attrs; a++) {
            const pc_attr *at = &x->attrs[a];
            if (at->type == PC_ATTR_GRAPH && at->g) {
                n += count_nodes(at->g, n_bodies);
                ++*n_bodies;
            }
            for (size_t k = 0; at->type == PC_ATTR_GRAPHS && k < at->n; k++) {
                n += count_nodes(at->graphs[k], n_bodies);
                ++*n_bodies;
            }
        }
    }
    return n;
}

static const char *body_scope(collector *c, const char *scope, const pc_node *owner, const char *attr, long k)
{
    if (c->n_owned == c->cap_owned) {
        c->oom = true; /* count_nodes sized it: an internal mismatch, reported as out of memory */
        return "";
    }
    const char *key;
    node_key(owner, &key);
    size_t len = strlen(scope) + strlen(key) + strlen(attr) + 32;
    char *s = malloc(len);
    if (!s) {
        c->oom = true;
        return "";
    }
    if (k < 0)
        snprintf(s, len, "%s/%s.%s", scope, key, attr);
    else
        snprintf(s, len, "%s/%s.%s#%ld", scope, key, attr, k);
    c->owned[c->n_owned++] = s;
    return s;
}

static void add_nodes(collector *c, const pc_graph *g, const char *scope)
{
    for (const pc_node *x = g->first; x && c->n < c->cap && !c->oom; x = x->next) {
        c->nodes[c->n] = x;
        c->scopes[c->n++] = scope;
        for (uint32_t a = 0; a < x->n_attrs; a++) {
            const pc_attr *at = &x->attrs[a];
            const char *name = at->name ? at->name : "";
            if (at->type == PC_ATTR_GRAPH && at->g) add_nodes(c, at->g, body_scope(c, scope, x, name, -1));
            for (size_t k = 0; at->type == PC_ATTR_GRAPHS && k < at->n; k++)
                add_nodes(c, at->graphs[k], body_scope(c, scope, x, name, (long)k));
        }
    }
}

static pc_status collect(const pc_graph *g, const pc_node ***nodes, const char ***scopes, uint32_t *n,
                         char ***owned, uint32_t *n_owned, pc_error *err)
{
    uint32_t n_bodies = 0, cap = count_nodes(g, &n_bodies);
    collector c = {0};
    c.cap = cap;
    c.cap_owned = n_bodies;
    c.nodes = calloc(cap ? cap : 1, sizeof *c.nodes);
    c.scopes = calloc(cap ? cap : 1, sizeof *c.scopes);
    c.owned = calloc(n_bodies ? n_bodies : 1, sizeof *c.owned);
    if (c.nodes && c.scopes && c.owned) add_nodes(&c, g, "");
    *nodes = c.nodes;
    *scopes = c.scopes;
    *n = c.n;
    *owned = c.owned;
    *n_owned = c.n_owned;
    if (!c.nodes || !c.scopes || !c.owned || c.oom)
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory matching nodes");
    return PC_OK;
}

void match_free(node_match *m)
{
    free(m->before);
    free(m->after);
    free(m->before_scope);
    free(m->after_scope);
    for (uint32_t i = 0; i < m->n_owned_before; i++)
        free(m->owned_before[i]);
    for (uint32_t i = 0; i < m->n_owned_after; i++)
        free(m->owned_after[i]);
    free(m->owned_before);
    free(m->owned_after);
    free(m->after_to_before);
    free(m->after_replaces);
    free(m->before_kept);
    free(m->before_changed);
    free(m->before_sorted);
    free(m->after_sorted);
    memset(m, 0, sizeof *m);
}

pc_status match_build(const pc_graph *before, const pc_graph *after, node_match *m, pc_error *err)
{
    memset(m, 0, sizeof *m);
    pc_status st = collect(before, &m->before, &m->before_scope, &m->n_before, &m->owned_before,
                           &m->n_owned_before, err);
    if (st == PC_OK)
        st = collect(after, &m->after, &m->after_scope, &m->n_after, &m->owned_after, &m->n_owned_after, err);
    if (st == PC_OK) st = sorted_index(m->before, m->before_scope, m->n_before, &m->before_sorted, err);
    if (st == PC_OK) st = sorted_index(m->after, m->after_scope, m->n_after, &m->after_sorted, err);
    if (st != PC_OK) {
        match_free(m);
        return st;
    }
    size_t nb = m->n_before ? m->n_before : 1, na = m->n_after ? m->n_after : 1;
    m->after_to_before = calloc(na, sizeof *m->after_to_before);
    m->after_replaces = calloc(na, sizeof *m->after_replaces);
    m->before_kept = calloc(nb, sizeof *m->before_kept);
    m->before_changed = calloc(nb, sizeof *m->before_changed);
    if (!m->after_to_before || !m->after_replaces || !m->before_kept || !m->before_changed) {
        match_free(m);
        return pc_error_set(err, PC_ERR_NOMEM, "out of memory matching nodes");
    }
    for (uint32_t i = 0; i < m->n_after; i++) {
        const pc_node *a = m->after[i];
        const char *s;
        int kind = node_key(a, &s);
        int32_t b = kind < 2 ? lookup(m->before, m->before_scope, m->before_sorted, m->n_before,
                                      m->after_scope[i], kind, s)
                             : -1;
        /* an unnamed after-node never takes the identity of a named before-node (and vice versa): keys differ
         */
        m->after_to_before[i] = -1;
        m->after_replaces[i] = -1;
        if (b < 0) continue;
        const pc_node *bn = m->before[b];
        if (strcmp(bn->op_type, a->op_type) == 0 && match_str_eq(bn->domain, a->domain) &&
            !m->before_kept[b]) {
            m->after_to_before[i] = b;
            m->before_kept[b] = true;
            m->before_changed[b] = !match_node_same(bn, a);
        } else {
            m->after_replaces[i] = b;
        }
    }
    return PC_OK;
}

bool match_declared_source(const node_match *m, uint32_t after_index, int32_t *before_index,
                           int32_t *after_index_out)
{
    *before_index = *after_index_out = -1;
    const pc_node *node = m->after[after_index];
    const char *scope = m->after_scope[after_index];
    const char *name = node->name;
    if (!name || !*name) return false;
    /* "<source>/<op>_pc<digits>" */
    size_t len = strlen(name), k = len;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
        k--;
    if (k == len || k < 3 || strncmp(name + k - 3, "_pc", 3) != 0) return false;
    k -= 3;
    size_t op_len = strlen(node->op_type);
    if (k < op_len + 2 || strncmp(name + k - op_len, node->op_type, op_len) != 0 ||
        name[k - op_len - 1] != '/')
        return false;
    size_t src_len = k - op_len - 1;
    char *src = malloc(src_len + 1);
    if (!src) return false;
    memcpy(src, name, src_len);
    src[src_len] = '\0';
    /* the source is a node of the same graph */
    *before_index = match_find_before(m, scope, src);
    if (*before_index < 0) *after_index_out = match_find_after(m, scope, src);
    free(src);
    if (*after_index_out == (int32_t)after_index) *after_index_out = -1;
    return *before_index >= 0 || *after_index_out >= 0;
}

static bool node_has_value(const pc_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && strcmp(n->inputs[i]->name, name) == 0) return true;
    for (uint32_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && strcmp(n->outputs[i]->name, name) == 0) return true;
    return false;
}

bool match_nodes_adjacent(const pc_node *b, const pc_node *a)
{
    for (uint32_t i = 0; i < a->n_inputs; i++)
        if (a->inputs[i] && !a->inputs[i]->initializer && node_has_value(b, a->inputs[i]->name)) return true;
    for (uint32_t i = 0; i < a->n_outputs; i++)
        if (a->outputs[i] && node_has_value(b, a->outputs[i]->name)) return true;
    return false;
}

const char *match_node_label(const pc_node *n, char *buf, size_t size)
{
    if (n->name && *n->name)
        snprintf(buf, size, "'%s' (%s%s%s)", n->name, n->domain && *n->domain ? n->domain : "",
                 n->domain && *n->domain ? ":" : "", n->op_type);
    else
        snprintf(buf, size, "#%u (%s%s%s)", n->id, n->domain && *n->domain ? n->domain : "",
                 n->domain && *n->domain ? ":" : "", n->op_type);
    return buf;
}

pc_status match_optimize_like_case(const pc_check_ctx *ctx, pc_model *m, pc_after_pass_fn hook,
                                   void *hook_ctx, bool verify, pc_error *err)
{
    pc_optimize_options oo;
    pc_optimize_options_default(&oo);
    oo.level = ctx->config ? ctx->config->level : PC_LEVEL_MAX;
    oo.eps = ctx->eps;
    oo.n_eps = ctx->n_eps;
    oo.layer_assignment = ctx->kase ? ctx->kase->layer_assignment : NULL;
    oo.after_pass = hook;
    oo.after_pass_ctx = hook_ctx;
    oo.verify_each_pass = verify;
    return pc_model_optimize(m, &oo, NULL, err);
}

pc_status match_load_bytes(const uint8_t *bytes, size_t size, pc_model **out, pc_error *err)
{
    pc_load_options lo;
    pc_load_options_default(&lo);
    lo.skip_verify = true;
    return pc_model_load_bytes(bytes, size, &lo, out, err);
}

pc_prop_outcome match_copy_original(const pc_check_ctx *ctx, pc_model **out, char *msg, size_t msg_size,
                                    const char **kind)
{
    pc_error err;
    if (pc_model_clone(ctx->original, out, &err) == PC_OK) return PC_PROP_PASS;
    *kind = "copy-failed";
    snprintf(msg, msg_size, "copying the original failed: %s: %s", pc_status_name(err.status), err.message);
    return PC_PROP_ERROR;
}

char *match_text_splice(const char *text, size_t at, size_t cut, const char *put, size_t put_len)
{
    size_t n = strlen(text), total;
    if (!pc_size_add(n - cut, put_len, &total) || !pc_size_add(total, 1, &total)) return NULL;
    char *m = malloc(total);
    if (!m) return NULL;
    memcpy(m, text, at);
    memcpy(m + at, put, put_len);
    memcpy(m + at + put_len, text + at + cut, n - at - cut + 1);
    return m;
}

uint64_t match_text_seed(const char *text, uint64_t salt)
{
    uint64_t seed = salt;
    for (const char *p = text; *p; p++)
        seed = (seed ^ (unsigned char)*p) * 0x100000001b3ull;
    return seed;
}
