/* ONNX saver: IR -> protobuf-c structs (built in a scratch arena, pointing at the IR's own strings and tensor
 * bytes, so nothing large is copied) -> one packed buffer. The output is deterministic: the same IR always
 * gives the same bytes, in a fixed field order. Fields the IR keeps as opaque bytes are unpacked into the
 * structs again so protobuf-c writes them where they belong. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/onnx/onnx_internal.h"

typedef struct save_ctx {
    pc_arena arena;
    pc_mem mem;
    pc_error *err;
    bool failed;
    /* opaque sub-messages unpacked for the save, freed afterwards */
    ProtobufCMessage **unpacked;
    size_t n_unpacked, cap_unpacked;
} save_ctx;

static void *salloc(save_ctx *c, size_t count, size_t size)
{
    if (count == 0) return NULL;
    void *p = pc_arena_array(&c->arena, count, size);
    if (!p) c->failed = true;
    return p;
}

/* protobuf-c takes char*; the strings are never modified by packing. */
static char *str(const char *s)
{
    return (char *)s;
}

static char *str_or_null(const char *s)
{
    return s && *s ? (char *)s : NULL;
}

static Onnx__StringStringEntryProto **save_kvs(save_ctx *c, uint32_t n, const pc_kv *kv, size_t *n_out)
{
    *n_out = 0;
    if (!n) return NULL;
    Onnx__StringStringEntryProto **arr = salloc(c, n, sizeof *arr);
    Onnx__StringStringEntryProto *items = salloc(c, n, sizeof *items);
    if (!arr || !items) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        onnx__string_string_entry_proto__init(&items[i]);
        items[i].key = str(kv[i].key);
        items[i].value = str(kv[i].value);
        arr[i] = &items[i];
    }
    *n_out = n;
    return arr;
}

static Onnx__TypeProto *save_type(save_ctx *c, const pc_type *t);

static Onnx__TensorShapeProto *save_shape(save_ctx *c, const pc_shape *s)
{
    if (s->rank < 0) return NULL;
    Onnx__TensorShapeProto *sp = salloc(c, 1, sizeof *sp);
    if (!sp) return NULL;
    onnx__tensor_shape_proto__init(sp);
    if (!s->rank) return sp;
    sp->dim = salloc(c, (size_t)s->rank, sizeof *sp->dim);
    Onnx__TensorShapeProto__Dimension *dims = salloc(c, (size_t)s->rank, sizeof *dims);
    if (!sp->dim || !dims) return NULL;
    sp->n_dim = (size_t)s->rank;
    for (int32_t i = 0; i < s->rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = &dims[i];
        onnx__tensor_shape_proto__dimension__init(d);
        d->denotation = str(s->dims[i].denotation);
        if (s->dims[i].kind == PC_DIM_KNOWN) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = s->dims[i].size;
        } else if (s->dims[i].kind == PC_DIM_SYMBOLIC) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = str(s->dims[i].symbol);
        }
        sp->dim[i] = d;
    }
    return sp;
}

static Onnx__TypeProto *save_type(save_ctx *c, const pc_type *t)
{
    if (t->kind == PC_TYPE_NONE && !t->denotation) return NULL;
    Onnx__TypeProto *tp = salloc(c, 1, sizeof *tp);
    if (!tp) return NULL;
    onnx__type_proto__init(tp);
    tp->denotation = str(t->denotation);
    switch (t->kind) {
    case PC_TYPE_NONE:
    case PC_TYPE_KIND_COUNT:
        break;
    case PC_TYPE_TENSOR: {
        Onnx__TypeProto__Tensor *x = salloc(c, 1, sizeof *x);
        if (!x) return NULL;
        onnx__type_proto__tensor__init(x);
        if (t->elem != PC_DTYPE_UNDEFINED) {
            x->has_elem_type = 1;
            x->elem_type = (int32_t)t->elem;
        }
        x->shape = save_shape(c, &t->shape);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        tp->tensor_type = x;
        break;
    }
    case PC_TYPE_SPARSE_TENSOR: {
        Onnx__TypeProto__SparseTensor *x = salloc(c, 1, sizeof *x);
        if (!x) return NULL;
        onnx__type_proto__sparse_tensor__init(x);
        if (t->elem != PC_DTYPE_UNDEFINED) {
            x->has_elem_type = 1;
            x->elem_type = (int32_t)t->elem;
        }
        x->shape = save_shape(c, &t->shape);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
        tp->sparse_tensor_type = x;
        break;
    }
    case PC_TYPE_SEQUENCE: {
        Onnx__TypeProto__Sequence *x = salloc(c, 1, sizeof *x);
        if (!x) return NULL;
        onnx__type_proto__sequence__init(x);
        x->elem_type = t->inner ? save_type(c, t->inner) : NULL;
        tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        tp->sequence_type = x;
        break;
    }
    case PC_TYPE_OPTIONAL: {
        Onnx__TypeProto__Optional *x = salloc(c, 1, sizeof *x);
        if (!x) return NULL;
        onnx__type_proto__optional__init(x);
        x->elem_type = t->inner ? save_type(c, t->inner) : NULL;
        tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
        tp->optional_type = x;
        break;
    }
    case PC_TYPE_MAP: {
        Onnx__TypeProto__Map *x = salloc(c, 1, sizeof *x);
        if (!x) return NULL;
        onnx__type_proto__map__init(x);
        x->has_key_type = 1;
        x->key_type = (int32_t)t->key;
        x->value_type = t->inner ? save_type(c, t->inner) : NULL;
        tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        tp->map_type = x;
        break;
    }
    case PC_TYPE_OPAQUE: {
        Onnx__TypeProto__Opaque *x = salloc(c, 1, sizeof *x);
        if (!x) return NULL;
        onnx__type_proto__opaque__init(x);
        x->domain = str(t->opaque_domain);
        x->name = str(t->opaque_name);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE;
        tp->opaque_type = x;
        break;
    }
    }
    return tp;
}

static Onnx__TensorProto *save_tensor(save_ctx *c, const pc_tensor *t)
{
    Onnx__TensorProto *tp = salloc(c, 1, sizeof *tp);
    if (!tp) return NULL;
    onnx__tensor_proto__init(tp);
    tp->name = str(t->name);
    tp->doc_string = str(t->doc_string);
    tp->has_data_type = 1;
    tp->data_type = (int32_t)t->dtype;
    if (t->rank) {
        tp->n_dims = (size_t)t->rank;
        tp->dims = t->dims;
    }
    tp->metadata_props = save_kvs(c, t->n_metadata, t->metadata, &tp->n_metadata_props);
    if (t->dtype == PC_DTYPE_STRING) {
        if (t->n_elements) {
            tp->string_data = salloc(c, (size_t)t->n_elements, sizeof(ProtobufCBinaryData));
            if (!tp->string_data) return NULL;
            const pc_bytes *s = t->data;
            for (uint64_t i = 0; i < t->n_elements; i++) {
                tp->string_data[i].len = s[i].len;
                tp->string_data[i].data = s[i].data;
            }
            tp->n_string_data = (size_t)t->n_elements;
        }
    } else if (t->n_bytes) {
        /* always raw_data: compact, exact, and every reader accepts it */
        tp->has_raw_data = 1;
        tp->raw_data.len = t->n_bytes;
        tp->raw_data.data = t->data;
    }
    return tp;
}

static Onnx__GraphProto *save_graph(save_ctx *c, const pc_graph *g);

/* Unpacks an opaque field back into a message for this save; remembered so it is freed afterwards. */
static ProtobufCMessage *reload_opaque(save_ctx *c, const ProtobufCMessageDescriptor *desc, const pc_bytes *b)
{
    if (c->n_unpacked == c->cap_unpacked) {
        size_t ncap = c->cap_unpacked ? c->cap_unpacked * 2 : 8;
        ProtobufCMessage **n = realloc(c->unpacked, ncap * sizeof *n);
        if (!n) {
            c->failed = true;
            return NULL;
        }
        c->unpacked = n;
        c->cap_unpacked = ncap;
    }
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, b->len, b->data);
    if (!m) {
        c->failed = true;
        return NULL;
    }
    c->unpacked[c->n_unpacked++] = m;
    return m;
}

static Onnx__AttributeProto *save_attr(save_ctx *c, const pc_attr *a)
{
    Onnx__AttributeProto *ap = salloc(c, 1, sizeof *ap);
    if (!ap) return NULL;
    onnx__attribute_proto__init(ap);
    ap->name = str(a->name);
    ap->doc_string = str(a->doc_string);
    ap->has_type = 1;
    ap->type = (Onnx__AttributeProto__AttributeType)a->type;
    switch (a->type) {
    case PC_ATTR_FLOAT:
        ap->has_f = 1;
        ap->f = a->f;
        break;
    case PC_ATTR_INT:
        ap->has_i = 1;
        ap->i = a->i;
        break;
    case PC_ATTR_STRING:
        ap->has_s = 1;
        ap->s.len = a->s.len;
        ap->s.data = a->s.data;
        break;
    case PC_ATTR_TENSOR:
        ap->t = save_tensor(c, a->t);
        break;
    case PC_ATTR_GRAPH:
        ap->g = save_graph(c, a->g);
        break;
    case PC_ATTR_TYPE_PROTO:
        ap->tp = save_type(c, a->tp);
        break;
    case PC_ATTR_FLOATS:
        ap->n_floats = a->n;
        ap->floats = a->floats;
        break;
    case PC_ATTR_INTS:
        ap->n_ints = a->n;
        ap->ints = a->ints;
        break;
    case PC_ATTR_STRINGS:
        if (a->n) {
            ap->strings = salloc(c, a->n, sizeof *ap->strings);
            if (!ap->strings) return NULL;
            for (size_t i = 0; i < a->n; i++) {
                ap->strings[i].len = a->strings[i].len;
                ap->strings[i].data = a->strings[i].data;
            }
            ap->n_strings = a->n;
        }
        break;
    case PC_ATTR_TENSORS:
        if (a->n) {
            ap->tensors = salloc(c, a->n, sizeof *ap->tensors);
            if (!ap->tensors) return NULL;
            for (size_t i = 0; i < a->n; i++)
                ap->tensors[i] = save_tensor(c, a->tensors[i]);
            ap->n_tensors = a->n;
        }
        break;
    case PC_ATTR_GRAPHS:
        if (a->n) {
            ap->graphs = salloc(c, a->n, sizeof *ap->graphs);
            if (!ap->graphs) return NULL;
            for (size_t i = 0; i < a->n; i++)
                ap->graphs[i] = save_graph(c, a->graphs[i]);
            ap->n_graphs = a->n;
        }
        break;
    case PC_ATTR_TYPE_PROTOS:
        if (a->n) {
            ap->type_protos = salloc(c, a->n, sizeof *ap->type_protos);
            if (!ap->type_protos) return NULL;
            for (size_t i = 0; i < a->n; i++)
                ap->type_protos[i] = save_type(c, a->tps[i]);
            ap->n_type_protos = a->n;
        }
        break;
    default:
        c->failed = true;
        pc_error_set(c->err, PC_ERR_UNSUPPORTED, "attribute '%s': cannot save type %s", a->name,
                     pc_attr_type_name(a->type));
        return NULL;
    }
    return ap;
}

static Onnx__ValueInfoProto *save_value_info(save_ctx *c, const pc_value *v)
{
    Onnx__ValueInfoProto *vi = salloc(c, 1, sizeof *vi);
    if (!vi) return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = str(v->name);
    vi->doc_string = str(v->doc_string);
    vi->type = save_type(c, &v->type);
    vi->metadata_props = save_kvs(c, v->n_metadata, v->metadata, &vi->n_metadata_props);
    return vi;
}

static Onnx__NodeProto *save_node(save_ctx *c, const pc_node *n)
{
    Onnx__NodeProto *np = salloc(c, 1, sizeof *np);
    if (!np) return NULL;
    onnx__node_proto__init(np);
    np->name = str_or_null(n->name);
    np->op_type = str(n->op_type);
    np->domain = str_or_null(n->domain);
    np->overload = str(n->overload);
    np->doc_string = str(n->doc_string);
    if (n->n_inputs) {
        np->input = salloc(c, n->n_inputs, sizeof(char *));
        if (!np->input) return NULL;
        for (uint32_t i = 0; i < n->n_inputs; i++)
            np->input[i] = n->inputs[i] ? str(n->inputs[i]->name) : "";
        np->n_input = n->n_inputs;
    }
    if (n->n_outputs) {
        np->output = salloc(c, n->n_outputs, sizeof(char *));
        if (!np->output) return NULL;
        for (uint32_t i = 0; i < n->n_outputs; i++)
            np->output[i] = n->outputs[i] ? str(n->outputs[i]->name) : "";
        np->n_output = n->n_outputs;
    }
    if (n->n_attrs) {
        np->attribute = salloc(c, n->n_attrs, sizeof *np->attribute);
        if (!np->attribute) return NULL;
        for (uint32_t i = 0; i < n->n_attrs; i++)
            np->attribute[i] = save_attr(c, &n->attrs[i]);
        np->n_attribute = n->n_attrs;
    }
    /* The EP assignment is IR state, not ONNX; it is saved as metadata so partitioned graphs can be inspected
     * and reloaded (key "pc_ep"). */
    uint32_t n_meta = n->n_metadata + (n->ep ? 1u : 0u);
    if (n_meta) {
        pc_kv *kv = salloc(c, n_meta, sizeof *kv);
        if (!kv) return NULL;
        if (n->n_metadata) memcpy(kv, n->metadata, n->n_metadata * sizeof *kv);
        if (n->ep) kv[n->n_metadata] = (pc_kv){"pc_ep", n->ep};
        np->metadata_props = save_kvs(c, n_meta, kv, &np->n_metadata_props);
    }
    return np;
}

static Onnx__GraphProto *save_graph(save_ctx *c, const pc_graph *g)
{
    Onnx__GraphProto *gp = salloc(c, 1, sizeof *gp);
    if (!gp) return NULL;
    onnx__graph_proto__init(gp);
    gp->name = str(g->name);
    gp->doc_string = str(g->doc_string);
    if (g->n_nodes) {
        gp->node = salloc(c, g->n_nodes, sizeof *gp->node);
        if (!gp->node) return NULL;
        for (const pc_node *n = g->first; n; n = n->next)
            gp->node[gp->n_node++] = save_node(c, n);
    }
    if (g->n_initializers) {
        gp->initializer = salloc(c, g->n_initializers, sizeof *gp->initializer);
        if (!gp->initializer) return NULL;
        for (uint32_t i = 0; i < g->n_initializers; i++)
            gp->initializer[gp->n_initializer++] = save_tensor(c, g->initializers[i]->initializer);
    }
    if (g->n_inputs) {
        gp->input = salloc(c, g->n_inputs, sizeof *gp->input);
        if (!gp->input) return NULL;
        for (uint32_t i = 0; i < g->n_inputs; i++)
            gp->input[gp->n_input++] = save_value_info(c, g->inputs[i]);
    }
    if (g->n_outputs) {
        gp->output = salloc(c, g->n_outputs, sizeof *gp->output);
        if (!gp->output) return NULL;
        for (uint32_t i = 0; i < g->n_outputs; i++)
            gp->output[gp->n_output++] = save_value_info(c, g->outputs[i]);
    }
    size_t n_vi = 0;
    for (uint32_t i = 0; i < g->n_values; i++)
        n_vi += g->values[i]->has_value_info;
    if (n_vi) {
        /* the canonical order (pc_graph_value_info_list): a reload lists the same entries in the same order,
         * so save(load(save(G))) is byte-identical to save(G) whatever order the values were created in */
        gp->value_info = salloc(c, n_vi, sizeof *gp->value_info);
        const pc_value **order = salloc(c, g->n_values, sizeof *order);
        if (!gp->value_info || !order) return NULL;
        size_t n_order = pc_graph_value_info_list(g, order);
        for (size_t i = 0; i < n_order && gp->n_value_info < n_vi; i++)
            gp->value_info[gp->n_value_info++] = save_value_info(c, order[i]);
    }
    gp->metadata_props = save_kvs(c, g->n_metadata, g->metadata, &gp->n_metadata_props);
    size_t n_qa = 0;
    for (uint32_t i = 0; i < g->n_opaque; i++)
        n_qa += g->opaque[i].field_number == 14;
    if (n_qa) {
        gp->quantization_annotation = salloc(c, n_qa, sizeof *gp->quantization_annotation);
        if (!gp->quantization_annotation) return NULL;
        for (uint32_t i = 0; i < g->n_opaque; i++)
            if (g->opaque[i].field_number == 14)
                gp->quantization_annotation[gp->n_quantization_annotation++] =
                    (Onnx__TensorAnnotation *)reload_opaque(c, &onnx__tensor_annotation__descriptor,
                                                            &g->opaque[i].bytes);
    }
    return gp;
}

pc_status pc_model_save_bytes(const pc_model *m, uint8_t **out, size_t *out_size, pc_error *err)
{
    *out = NULL;
    *out_size = 0;
    save_ctx c = {.err = err};
    pc_arena_init(&c.arena, &c.mem);
    pc_error_clear(err);
    Onnx__ModelProto mp;
    onnx__model_proto__init(&mp);
    mp.has_ir_version = 1;
    mp.ir_version = m->ir_version;
    mp.producer_name = str(m->producer_name);
    mp.producer_version = str(m->producer_version);
    mp.domain = str(m->domain);
    if (m->model_version) {
        mp.has_model_version = 1;
        mp.model_version = m->model_version;
    }
    mp.doc_string = str(m->doc_string);
    if (m->n_opsets) {
        mp.opset_import = salloc(&c, m->n_opsets, sizeof *mp.opset_import);
        Onnx__OperatorSetIdProto *ops = salloc(&c, m->n_opsets, sizeof *ops);
        if (mp.opset_import && ops) {
            for (uint32_t i = 0; i < m->n_opsets; i++) {
                onnx__operator_set_id_proto__init(&ops[i]);
                ops[i].domain = str(m->opsets[i].domain);
                ops[i].has_version = 1;
                ops[i].version = m->opsets[i].version;
                mp.opset_import[i] = &ops[i];
            }
            mp.n_opset_import = m->n_opsets;
        }
    }
    mp.metadata_props = save_kvs(&c, m->n_metadata, m->metadata, &mp.n_metadata_props);
    for (int pass = 0; pass < 2; pass++) {
        uint32_t field = pass == 0 ? 20 : 25;
        size_t n = 0;
        for (uint32_t i = 0; i < m->n_opaque; i++)
            n += m->opaque[i].field_number == field;
        if (!n) continue;
        void **arr = salloc(&c, n, sizeof(void *));
        if (!arr) break;
        size_t k = 0;
        for (uint32_t i = 0; i < m->n_opaque; i++)
            if (m->opaque[i].field_number == field)
                arr[k++] = reload_opaque(&c,
                                         field == 20 ? &onnx__training_info_proto__descriptor
                                                     : &onnx__function_proto__descriptor,
                                         &m->opaque[i].bytes);
        if (field == 20) {
            mp.training_info = (Onnx__TrainingInfoProto **)arr;
            mp.n_training_info = n;
        } else {
            mp.functions = (Onnx__FunctionProto **)arr;
            mp.n_functions = n;
        }
    }
    mp.graph = m->graph ? save_graph(&c, m->graph) : NULL;
    pc_status st = PC_OK;
    if (c.failed) {
        st = err && err->status != PC_OK
                 ? err->status
                 : pc_error_set(err, PC_ERR_NOMEM, "out of memory while preparing the save");
    } else {
        size_t size = protobuf_c_message_get_packed_size(&mp.base);
        uint8_t *buf = malloc(size ? size : 1);
        if (!buf) {
            st = pc_error_set(err, PC_ERR_NOMEM, "out of memory allocating %zu bytes for the saved model",
                              size);
        } else {
            size_t written = protobuf_c_message_pack(&mp.base, buf);
            if (written != size) {
                free(buf);
                st = pc_error_set(err, PC_ERR_INTERNAL, "packed %zu bytes, expected %zu", written, size);
            } else {
                *out = buf;
                *out_size = size;
            }
        }
    }
    for (size_t i = 0; i < c.n_unpacked; i++)
        protobuf_c_message_free_unpacked(c.unpacked[i], NULL);
    free(c.unpacked);
    pc_arena_free(&c.arena);
    return st;
}

pc_status pc_model_save_file(const pc_model *model, const char *path, pc_error *err)
{
    uint8_t *buf;
    size_t size;
    pc_status st = pc_model_save_bytes(model, &buf, &size, err);
    if (st != PC_OK) return st;
    st = pc_file_write_atomic_bytes(path, PC_FILE_EXCLUSIVE, buf, size, err);
    free(buf);
    return st;
}
