/* A 64-bit fingerprint of everything the ONNX saver writes (core/internal.h, pc_model_fingerprint): the check
 * runner asks "did this pass change the graph?" after every pass, and serializing the model just to compare
 * bytes was half the cost of a fuzz_pipeline execution. Hashing walks the IR once with no allocation.
 *
 * The rule it must keep: two models whose saved bytes differ have different fingerprints (up to 64-bit
 * collisions). It may over-report (it also hashes things the saver drops: dead values, NULL vs ""), which
 * only costs the caller a save. tests/unit/test_ir_fingerprint.c checks the rule against the saver on
 * generated models, every pass of their pipelines and single-field mutations. */
#include <string.h>

#include "core/ir/ir_internal.h"

typedef struct fp {
    uint64_t h;
    bool by_address; /* pc_model_change_stamp: IR strings by address */
} fp;

static uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* One round per word (xor, rotate, multiply by an odd constant): for a given word a bijection of the state,
 * and for a given state injective in the word, so a model that differs from another in one field always
 * hashes differently; pc_model_fingerprint spreads the bits once at the end (splitmix64's finalizer). The
 * round is a third of a full finalizer per word, and the runner hashes the model after every pass. */
static void mix(fp *f, uint64_t v)
{
    f->h = rotl64(f->h ^ v, 27) * 0x9e3779b185ebca87ull;
}

/* Bytes (names, tensor data): mix() per word, the length first; inputs of 32 bytes or more run in four
 * independent lanes (xxHash64's round), so the multiplies overlap instead of forming one chain. */
static void mix_bytes(fp *f, const void *data, size_t n)
{
    const uint64_t p1 = 0x9e3779b185ebca87ull, p2 = 0xc2b2ae3d27d4eb4full;
    const uint8_t *p = data;
    mix(f, n);
    uint64_t h = f->h;
    size_t i = 0;
    if (n >= 32) {
        uint64_t lane[4] = {h + p1 + p2, h + p2, h, h - p1};
        for (; i + 32 <= n; i += 32)
            for (int k = 0; k < 4; k++) {
                uint64_t w;
                memcpy(&w, p + i + 8 * (size_t)k, 8);
                lane[k] = rotl64(lane[k] + w * p2, 31) * p1;
            }
        h = rotl64(lane[0], 1) + rotl64(lane[1], 7) + rotl64(lane[2], 12) + rotl64(lane[3], 18);
    }
    f->h = h;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        mix(f, w);
    }
    uint64_t tail = 0;
    for (size_t k = 0; i + k < n; k++)
        tail |= (uint64_t)p[i + k] << (8 * k);
    mix(f, tail);
}

/* NULL and "" hash differently: the saver writes them alike, so this only over-reports. A change stamp takes
 * the address: the IR's strings are const and never written in place (a pass that renames assigns another
 * string), so within one live model an equal address is an equal string. */
static void mix_str(fp *f, const char *s)
{
    if (!s) {
        mix(f, 0x5a5a5a5a5a5a5a5aull);
        return;
    }
    if (f->by_address) {
        mix(f, (uint64_t)(uintptr_t)s);
        return;
    }
    mix_bytes(f, s, strlen(s));
}

static void mix_kvs(fp *f, uint32_t n, const pc_kv *kv)
{
    mix(f, n);
    for (uint32_t i = 0; i < n; i++) {
        mix_str(f, kv[i].key);
        mix_str(f, kv[i].value);
    }
}

static void mix_opaque(fp *f, uint32_t n, const pc_opaque_field *o)
{
    mix(f, n);
    for (uint32_t i = 0; i < n; i++) {
        mix(f, o[i].field_number);
        mix_bytes(f, o[i].bytes.data, o[i].bytes.len);
    }
}

static void mix_type(fp *f, const pc_type *t)
{
    if (!t) {
        mix(f, 0xffff);
        return;
    }
    mix(f, (uint64_t)t->kind | (uint64_t)t->elem << 8 | (uint64_t)t->key << 16 |
               (uint64_t)(uint32_t)t->shape.rank << 32);
    for (int32_t d = 0; d < t->shape.rank && t->shape.dims; d++) {
        const pc_dim *dim = &t->shape.dims[d];
        mix(f, (uint64_t)dim->size ^ (uint64_t)dim->kind << 60);
        if (dim->symbol || dim->denotation) {
            mix_str(f, dim->symbol);
            mix_str(f, dim->denotation);
        }
    }
    if (t->denotation || t->opaque_domain || t->opaque_name) {
        mix_str(f, t->denotation);
        mix_str(f, t->opaque_domain);
        mix_str(f, t->opaque_name);
    }
    if (t->inner) mix_type(f, t->inner);
}

static void mix_tensor(fp *f, const pc_tensor *t)
{
    if (!t) {
        mix(f, 0xfffe);
        return;
    }
    mix_str(f, t->name);
    mix(f, (uint64_t)t->dtype);
    mix(f, (uint64_t)(int64_t)t->rank);
    for (int32_t d = 0; d < t->rank && t->dims; d++)
        mix(f, (uint64_t)t->dims[d]);
    mix(f, t->n_elements);
    if (t->dtype == PC_DTYPE_STRING) {
        const pc_bytes *s = t->data;
        for (uint64_t i = 0; s && i < t->n_elements; i++)
            mix_bytes(f, s[i].data, s[i].len);
    } else {
        mix_bytes(f, t->data, t->data ? t->n_bytes : 0);
    }
    mix_str(f, t->doc_string);
    mix_kvs(f, t->n_metadata, t->metadata);
}

static void mix_graph(fp *f, const pc_graph *g);

static void mix_attr(fp *f, const pc_attr *a)
{
    mix_str(f, a->name);
    mix(f, (uint64_t)a->type);
    mix_str(f, a->doc_string);
    mix_str(f, a->ref_attr_name);
    switch (a->type) {
    case PC_ATTR_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &a->f, sizeof bits);
        mix(f, bits);
        break;
    }
    case PC_ATTR_INT:
        mix(f, (uint64_t)a->i);
        break;
    case PC_ATTR_STRING:
        mix_bytes(f, a->s.data, a->s.len);
        break;
    case PC_ATTR_TENSOR:
    case PC_ATTR_SPARSE_TENSOR:
        mix_tensor(f, a->t);
        break;
    case PC_ATTR_GRAPH:
        if (a->g) mix_graph(f, a->g);
        break;
    case PC_ATTR_TYPE_PROTO:
        mix_type(f, a->tp);
        break;
    default:
        break;
    }
    mix(f, a->n);
    for (size_t k = 0; k < a->n; k++) {
        switch (a->type) {
        case PC_ATTR_FLOATS: {
            uint32_t bits;
            memcpy(&bits, &a->floats[k], sizeof bits);
            mix(f, bits);
            break;
        }
        case PC_ATTR_INTS:
            mix(f, (uint64_t)a->ints[k]);
            break;
        case PC_ATTR_STRINGS:
            mix_bytes(f, a->strings[k].data, a->strings[k].len);
            break;
        case PC_ATTR_TENSORS:
        case PC_ATTR_SPARSE_TENSORS:
            mix_tensor(f, a->tensors[k]);
            break;
        case PC_ATTR_GRAPHS:
            mix_graph(f, a->graphs[k]);
            break;
        case PC_ATTR_TYPE_PROTOS:
            mix_type(f, a->tps[k]);
            break;
        default:
            break;
        }
    }
}

/* A value as the saver sees it: its name, everything a ValueInfoProto carries, and its initializer. */
static void mix_value(fp *f, const pc_value *v)
{
    mix_str(f, v->name);
    mix_type(f, &v->type);
    mix(f, (uint64_t)v->has_value_info | (uint64_t)v->is_graph_input << 1 |
               (uint64_t)v->is_graph_output << 2 | (uint64_t)(v->outer != NULL) << 3);
    mix_str(f, v->doc_string);
    mix_kvs(f, v->n_metadata, v->metadata);
    if (v->initializer) mix_tensor(f, v->initializer);
}

/* Nodes and lists refer to values by id: each value is hashed once, in the graph's value table. */
static void mix_ref(fp *f, const pc_value *v)
{
    mix(f, v ? v->id : UINT64_MAX);
}

static void mix_graph(fp *f, const pc_graph *g)
{
    mix_str(f, g->name);
    mix_str(f, g->doc_string);
    mix_kvs(f, g->n_metadata, g->metadata);
    mix_opaque(f, g->n_opaque, g->opaque);
    /* every value ever created, live or not: the saver writes a value_info for each that has one */
    mix(f, g->n_values);
    for (uint32_t i = 0; i < g->n_values; i++)
        mix_value(f, g->values[i]);
    mix(f, g->n_inputs);
    for (uint32_t i = 0; i < g->n_inputs; i++)
        mix_ref(f, g->inputs[i]);
    mix(f, g->n_outputs);
    for (uint32_t i = 0; i < g->n_outputs; i++)
        mix_ref(f, g->outputs[i]);
    mix(f, g->n_initializers);
    for (uint32_t i = 0; i < g->n_initializers; i++)
        mix_ref(f, g->initializers[i]);
    mix(f, g->n_nodes);
    for (const pc_node *n = g->first; n; n = n->next) {
        mix_str(f, n->name);
        mix_str(f, n->op_type);
        mix_str(f, n->domain);
        mix_str(f, n->overload);
        mix_str(f, n->doc_string);
        mix_str(f, n->ep);
        mix(f, n->n_inputs);
        for (uint32_t i = 0; i < n->n_inputs; i++)
            mix_ref(f, n->inputs[i]);
        mix(f, n->n_outputs);
        for (uint32_t i = 0; i < n->n_outputs; i++)
            mix_ref(f, n->outputs[i]);
        mix(f, n->n_attrs);
        for (uint32_t i = 0; i < n->n_attrs; i++)
            mix_attr(f, &n->attrs[i]);
        mix_kvs(f, n->n_metadata, n->metadata);
    }
}

static uint64_t model_hash(const pc_model *m, bool by_address)
{
    fp f = {0x243f6a8885a308d3ull, by_address};
    mix(&f, (uint64_t)m->ir_version);
    mix_str(&f, m->producer_name);
    mix_str(&f, m->producer_version);
    mix_str(&f, m->domain);
    mix(&f, (uint64_t)m->model_version);
    mix_str(&f, m->doc_string);
    mix(&f, m->n_opsets);
    for (uint32_t i = 0; i < m->n_opsets; i++) {
        mix_str(&f, m->opsets[i].domain);
        mix(&f, (uint64_t)m->opsets[i].version);
    }
    mix_kvs(&f, m->n_metadata, m->metadata);
    mix_opaque(&f, m->n_opaque, m->opaque);
    mix(&f, m->n_functions);
    for (uint32_t i = 0; i < m->n_functions; i++) {
        mix_str(&f, m->functions[i].domain);
        mix_str(&f, m->functions[i].name);
    }
    if (m->graph) mix_graph(&f, m->graph);
    uint64_t z = f.h;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t pc_model_fingerprint(const pc_model *m)
{
    return model_hash(m, false);
}

uint64_t pc_model_change_stamp(const pc_model *m)
{
    return model_hash(m, true);
}
