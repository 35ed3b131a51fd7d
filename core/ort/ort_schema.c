/* The ORT format's schema as data for the verifier (fb.h): onnxruntime/core/flatbuffers/schema/ort.fbs, root
 * InferenceSession, identifier "ORTM". Field ids follow declaration order and deprecated fields keep theirs;
 * a union takes two ids (its u8 type, then its value). Tensor.external_data_offset (id 6, default -1) is the
 * newer schema's; the loader rejects any other value. Enum ranges: TensorDataType 0..20 (FLOAT8E5M2FNUZ, ORT
 * format version 6), AttributeType 0..12, DimensionValueType 0..2, NodeType 0..1, ArgType 0..1, bool 0..1. */
#include "core/ort/fb.h"

#define F(name, kind, width, is_signed, sub, lo, hi)                                                         \
    {                                                                                                        \
        name, kind, width, 0, is_signed, sub, NULL, 0, lo, hi                                                \
    }
#define SCALAR(name, width, is_signed) F(name, FB_SCALAR, width, is_signed, -1, 1, 0)
#define ENUM(name, width, hi)          F(name, FB_SCALAR, width, true, -1, 0, hi)
#define BOOL(name)                     F(name, FB_SCALAR, 1, false, -1, 0, 1)
#define STRING(name)                   F(name, FB_STRING, 4, false, -1, 1, 0)
#define TABLE(name, t)                 F(name, FB_TABLE, 4, false, t, 1, 0)
#define VEC(name, width)               F(name, FB_VEC_SCALAR, width, false, -1, 1, 0)
#define VEC_STRING(name)               F(name, FB_VEC_STRING, 4, false, -1, 1, 0)
#define VEC_TABLE(name, t)             F(name, FB_VEC_TABLE, 4, false, t, 1, 0)

enum { TENSOR_DATA_TYPE_MAX = 20, ATTRIBUTE_TYPE_MAX = 12 };

static const fb_field inference_session[] = {
    STRING("ort_version"),
    TABLE("model", ORT_T_MODEL),
    TABLE("session_state", ORT_T_DEPRECATED_SESSION_STATE),
    TABLE("kernel_type_str_resolver", ORT_T_KERNEL_TYPE_STR_RESOLVER),
};
static const fb_field model[] = {
    SCALAR("ir_version", 8, true),
    VEC_TABLE("opset_import", ORT_T_OPERATOR_SET_ID),
    STRING("producer_name"),
    STRING("producer_version"),
    STRING("domain"),
    SCALAR("model_version", 8, true),
    STRING("doc_string"),
    TABLE("graph", ORT_T_GRAPH),
    STRING("graph_doc_string"),
    VEC_TABLE("metadata_props", ORT_T_STRING_STRING_ENTRY),
};
static const fb_field graph[] = {
    VEC_TABLE("initializers", ORT_T_TENSOR),
    VEC_TABLE("node_args", ORT_T_VALUE_INFO),
    VEC_TABLE("nodes", ORT_T_NODE),
    SCALAR("max_node_index", 4, false),
    VEC_TABLE("node_edges", ORT_T_NODE_EDGE),
    VEC_STRING("inputs"),
    VEC_STRING("outputs"),
    VEC_TABLE("sparse_initializers", ORT_T_SPARSE_TENSOR),
    TABLE("runtime_optimizations", ORT_T_RUNTIME_OPTIMIZATIONS),
};
static const fb_field node[] = {
    STRING("name"),
    STRING("doc_string"),
    STRING("domain"),
    SCALAR("since_version", 4, true),
    SCALAR("index", 4, false),
    STRING("op_type"),
    ENUM("type", 4, 1),
    STRING("execution_provider_type"),
    VEC_STRING("inputs"),
    VEC_STRING("outputs"),
    VEC_TABLE("attributes", ORT_T_ATTRIBUTE),
    VEC("input_arg_counts", 4),
    VEC_STRING("implicit_inputs"),
};
static const fb_field node_edge[] = {
    SCALAR("node_index", 4, false),
    {"input_edges", FB_VEC_STRUCT, 12, 4, false, -1, NULL, 0, 1, 0}, /* EdgeEnd: u32, i32, i32 */
    {"output_edges", FB_VEC_STRUCT, 12, 4, false, -1, NULL, 0, 1, 0},
};
static const fb_field value_info[] = {
    STRING("name"),
    STRING("doc_string"),
    TABLE("type", ORT_T_TYPE_INFO),
};
static const int16_t type_info_value[] = {ORT_T_TENSOR_TYPE_AND_SHAPE, ORT_T_SEQUENCE_TYPE, ORT_T_MAP_TYPE};
static const fb_field type_info[] = {
    STRING("denotation"),
    F("value_type", FB_UNION_TYPE, 1, false, -1, 1, 0),
    {"value", FB_UNION, 4, 0, false, -1, type_info_value, 3, 1, 0},
};
static const fb_field tensor_type_and_shape[] = {
    ENUM("elem_type", 4, TENSOR_DATA_TYPE_MAX),
    TABLE("shape", ORT_T_SHAPE),
};
static const fb_field sequence_type[] = {
    TABLE("elem_type", ORT_T_TYPE_INFO),
};
static const fb_field map_type[] = {
    ENUM("key_type", 4, TENSOR_DATA_TYPE_MAX),
    TABLE("value_type", ORT_T_TYPE_INFO),
};
static const fb_field shape[] = {
    VEC_TABLE("dim", ORT_T_DIMENSION),
};
static const fb_field dimension[] = {
    TABLE("value", ORT_T_DIMENSION_VALUE),
    STRING("denotation"),
};
static const fb_field dimension_value[] = {
    ENUM("dim_type", 1, 2),
    SCALAR("dim_value", 8, true),
    STRING("dim_param"),
};
static const fb_field operator_set_id[] = {
    STRING("domain"),
    SCALAR("version", 8, true),
};
static const fb_field tensor[] = {
    STRING("name"),
    STRING("doc_string"),
    VEC("dims", 8),
    ENUM("data_type", 4, TENSOR_DATA_TYPE_MAX),
    VEC("raw_data", 1),
    VEC_STRING("string_data"),
    SCALAR("external_data_offset", 8, true),
};
static const fb_field sparse_tensor[] = {
    TABLE("values", ORT_T_TENSOR),
    TABLE("indices", ORT_T_TENSOR),
    VEC("dims", 8),
};
static const fb_field attribute[] = {
    STRING("name"),
    STRING("doc_string"),
    ENUM("type", 4, ATTRIBUTE_TYPE_MAX),
    SCALAR("f", 4, false),
    SCALAR("i", 8, true),
    STRING("s"),
    TABLE("t", ORT_T_TENSOR),
    TABLE("g", ORT_T_GRAPH),
    VEC("floats", 4),
    VEC("ints", 8),
    VEC_STRING("strings"),
    VEC_TABLE("tensors", ORT_T_TENSOR),
    VEC_TABLE("graphs", ORT_T_GRAPH),
};
static const fb_field string_string_entry[] = {
    STRING("key"),
    STRING("value"),
};
static const fb_field runtime_optimizations[] = {
    VEC_TABLE("records", ORT_T_RUNTIME_OPTIMIZATION_RECORD_CONTAINER_ENTRY),
};
static const fb_field runtime_optimization_record_container_entry[] = {
    STRING("optimizer_name"),
    VEC_TABLE("runtime_optimization_records", ORT_T_RUNTIME_OPTIMIZATION_RECORD),
};
static const fb_field runtime_optimization_record[] = {
    STRING("action_id"),
    TABLE("nodes_to_optimize_indices", ORT_T_NODES_TO_OPTIMIZE_INDICES),
    VEC_TABLE("produced_nodes", ORT_T_DEPRECATED_NODE_INDEX_AND_KERNEL_DEF_HASH),
    VEC_STRING("produced_op_ids"),
};
static const fb_field nodes_to_optimize_indices[] = {
    VEC("node_indices", 4),
    SCALAR("num_inputs", 4, false),
    SCALAR("num_outputs", 4, false),
    BOOL("has_variadic_input"),
    BOOL("has_variadic_output"),
    SCALAR("num_variadic_inputs", 4, false),
    SCALAR("num_variadic_outputs", 4, false),
};
static const fb_field deprecated_node_index_and_kernel_def_hash[] = {
    SCALAR("node_index", 4, false),
    SCALAR("kernel_def_hash", 8, false),
};
static const fb_field kernel_type_str_resolver[] = {
    VEC_TABLE("op_kernel_type_str_args", ORT_T_OP_ID_KERNEL_TYPE_STR_ARGS_ENTRY),
};
static const fb_field op_id_kernel_type_str_args_entry[] = {
    STRING("op_id"),
    VEC_TABLE("kernel_type_str_args", ORT_T_KERNEL_TYPE_STR_ARGS_ENTRY),
};
static const fb_field kernel_type_str_args_entry[] = {
    STRING("kernel_type_str"),
    VEC_TABLE("args", ORT_T_ARG_TYPE_AND_INDEX),
};
static const fb_field arg_type_and_index[] = {
    ENUM("arg_type", 1, 1),
    SCALAR("index", 4, false),
};
static const fb_field deprecated_session_state[] = {
    TABLE("kernels", ORT_T_DEPRECATED_KERNEL_CREATE_INFOS),
    VEC_TABLE("sub_graph_session_states", ORT_T_DEPRECATED_SUB_GRAPH_SESSION_STATE),
};
static const fb_field deprecated_kernel_create_infos[] = {
    VEC("node_indices", 4),
    VEC("kernel_def_hashes", 8),
};
static const fb_field deprecated_sub_graph_session_state[] = {
    STRING("graph_id"),
    TABLE("session_state", ORT_T_DEPRECATED_SESSION_STATE),
};

#define T(id, name, fields) [id] = {name, fields, (uint16_t)(sizeof fields / sizeof fields[0])}
static const fb_table tables[] = {
    T(ORT_T_INFERENCE_SESSION, "InferenceSession", inference_session),
    T(ORT_T_MODEL, "Model", model),
    T(ORT_T_GRAPH, "Graph", graph),
    T(ORT_T_NODE, "Node", node),
    T(ORT_T_NODE_EDGE, "NodeEdge", node_edge),
    T(ORT_T_VALUE_INFO, "ValueInfo", value_info),
    T(ORT_T_TYPE_INFO, "TypeInfo", type_info),
    T(ORT_T_TENSOR_TYPE_AND_SHAPE, "TensorTypeAndShape", tensor_type_and_shape),
    T(ORT_T_SEQUENCE_TYPE, "SequenceType", sequence_type),
    T(ORT_T_MAP_TYPE, "MapType", map_type),
    T(ORT_T_SHAPE, "Shape", shape),
    T(ORT_T_DIMENSION, "Dimension", dimension),
    T(ORT_T_DIMENSION_VALUE, "DimensionValue", dimension_value),
    T(ORT_T_OPERATOR_SET_ID, "OperatorSetId", operator_set_id),
    T(ORT_T_TENSOR, "Tensor", tensor),
    T(ORT_T_SPARSE_TENSOR, "SparseTensor", sparse_tensor),
    T(ORT_T_ATTRIBUTE, "Attribute", attribute),
    T(ORT_T_STRING_STRING_ENTRY, "StringStringEntry", string_string_entry),
    T(ORT_T_RUNTIME_OPTIMIZATIONS, "RuntimeOptimizations", runtime_optimizations),
    T(ORT_T_RUNTIME_OPTIMIZATION_RECORD_CONTAINER_ENTRY, "RuntimeOptimizationRecordContainerEntry",
      runtime_optimization_record_container_entry),
    T(ORT_T_RUNTIME_OPTIMIZATION_RECORD, "RuntimeOptimizationRecord", runtime_optimization_record),
    T(ORT_T_NODES_TO_OPTIMIZE_INDICES, "NodesToOptimizeIndices", nodes_to_optimize_indices),
    T(ORT_T_DEPRECATED_NODE_INDEX_AND_KERNEL_DEF_HASH, "DeprecatedNodeIndexAndKernelDefHash",
      deprecated_node_index_and_kernel_def_hash),
    T(ORT_T_KERNEL_TYPE_STR_RESOLVER, "KernelTypeStrResolver", kernel_type_str_resolver),
    T(ORT_T_OP_ID_KERNEL_TYPE_STR_ARGS_ENTRY, "OpIdKernelTypeStrArgsEntry", op_id_kernel_type_str_args_entry),
    T(ORT_T_KERNEL_TYPE_STR_ARGS_ENTRY, "KernelTypeStrArgsEntry", kernel_type_str_args_entry),
    T(ORT_T_ARG_TYPE_AND_INDEX, "ArgTypeAndIndex", arg_type_and_index),
    T(ORT_T_DEPRECATED_SESSION_STATE, "DeprecatedSessionState", deprecated_session_state),
    T(ORT_T_DEPRECATED_KERNEL_CREATE_INFOS, "DeprecatedKernelCreateInfos", deprecated_kernel_create_infos),
    T(ORT_T_DEPRECATED_SUB_GRAPH_SESSION_STATE, "DeprecatedSubGraphSessionState",
      deprecated_sub_graph_session_state),
};
_Static_assert(sizeof tables / sizeof tables[0] == ORT_T_COUNT, "one schema table per ORT_T_ id");

const fb_schema pc_ort_schema = {
    "ORT format", tables, ORT_T_COUNT, ORT_T_INFERENCE_SESSION, {'O', 'R', 'T', 'M'}};
