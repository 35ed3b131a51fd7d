/*
 * internal.h — the few core internals the layers above core may use (generators, properties, tools, bench,
 * tests), so they need no private include path into core's folders. Everything else stays inside core.
 *
 *     #include "core/internal.h"
 *     const pc_tensor *w = pc_value_const(conv->inputs[1]);           // a constant weight, or NULL
 *     const pc_op_schema *s = pc_schema_lookup("", "Conv", 13);       // the ONNX 1.12 schema row
 *     if (pc_op_is_layout_sensitive(conv->domain, conv->op_type)) ... // the layout transformer moves it
 *
 * The layering rule (checked by tests/conventions/check_includes.sh): outside core/, a file includes from
 * core/ only core/passcheck.h and this header; tests may include any core header.
 */
#ifndef PC_INTERNAL_H
#define PC_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "core/base/half.h"   /* float16/bfloat16 encoding, for generators storing constants of those types */
#include "core/base/strmap.h" /* pc_name_cmp for op-table lookups, pc_str_hash */
#include "core/eval/eval.h" /* the constant evaluator: the evaluator property compares it with the reference */
#include "core/passcheck.h"
#include "core/schema/schema.h"

/* Domains of the ops core emits: the layout transformer's NHWC forms and ONNX Runtime's contrib ops. */
#define PC_NHWC_DOMAIN "com.ms.internal.nhwc"
#define PC_MS_DOMAIN   "com.microsoft"
/* The systolic EP's level-3 forms (core/passes/systolic_nhwc.c): QLinearConv_nhwc, as in the Systolic fork of
 * ONNX Runtime (which put it in ai.onnx; here it has a domain of its own). */
#define PC_SYSTOLIC_DOMAIN "com.passcheck.systolic"
/* The blocked EP's ops (nChw<b>c reorders and primitives, and the compiled Subgraph node): docs/ep.md. */
#define PC_BLOCKED_DOMAIN "com.passcheck.blocked"

/* The default-domain opsets the transpose optimizer handles (outside them it leaves the graph alone). */
enum { PC_TRANSPOSE_OPSET_MIN = 7, PC_TRANSPOSE_OPSET_MAX = 21 };

/* Creates an empty graph owned by `model` (core/ir/graph.c): the main graph (parent and owner NULL), or the
 * body a node attribute holds (the generators build If/Loop/Scan bodies with it). */
pc_graph *pc_graph_create(pc_model *model, pc_graph *parent, pc_node *owner);

/* Is op (domain, op_type) one the layout transformer moves into the NHWC domain (core/ep/layout_nhwc.c)? */
bool pc_op_is_layout_sensitive(const char *domain, const char *op_type);

/* The tensor of a constant: an initializer of v's own graph that no graph input can override. NULL otherwise.
 */
const pc_tensor *pc_value_const(const pc_value *v);
/* Rank of a tensor value, -1 when unknown. */
int32_t pc_value_rank(const pc_value *v);
/* Concrete dims: true when the rank and every dim are known (dims has room for PC_MAX_RANK). */
bool pc_value_dims(const pc_value *v, int64_t *dims);
/* Reads an int32/int64 tensor of at most cap elements into out. false for other dtypes or when it does not
 * fit. */
bool pc_tensor_read_ints(const pc_tensor *t, int64_t *out, size_t cap, size_t *n);

/* Replaces `node` by the nodes of its graph attribute `attr` (core/ir/inline.c): body input i reads node
 * input i, the body's initializers become the graph's, body output j is written to node output j (its name,
 * consumers and graph-output role kept), outer references read the outer values; nodes copied in order with
 * their EPs and attributes, then the graph sorted. Bodies whose nodes hold graphs are PC_ERR_UNSUPPORTED. How
 * the runtime runs the blocked EP's compiled Subgraph nodes. */
pc_status pc_graph_inline_body(pc_graph *graph, pc_node *node, const char *attr, pc_error *err);

/* Appends `value` as a new output of `node`; value must have no producer. */
pc_status pc_node_append_output(pc_node *node, pc_value *value, pc_error *err);

/* Writes the file at path whole (core/base/file.c): the content goes to "<path>.tmp.<pid>" in the same
 * folder, is flushed, fsynced and closed, then renamed over path (an existing file is replaced). On any
 * failure the temporary is removed and path is left as it was. PC_FILE_EXCLUSIVE creates the temporary with
 * O_EXCL, so a file already of that name (someone else's) is neither truncated nor removed: the write fails
 * instead. Errors: PC_ERR_IO naming the temporary (the target, for the rename) with strerror; PC_ERR_NOMEM;
 * PC_ERR_OVERFLOW.
 *
 *     static void fill(FILE *f, const void *ctx) { fprintf(f, "%s\n", (const char *)ctx); }
 *     pc_file_write_atomic("report.txt", PC_FILE_EXCLUSIVE, fill, "hello", &err, NULL);
 *     pc_file_write_atomic_bytes("model.onnx", 0, buf, size, &err);
 */
enum { PC_FILE_EXCLUSIVE = 1 };
/* Writes the content to f; a failed write is seen through ferror(f) afterwards. */
typedef void (*pc_file_fill)(FILE *f, const void *ctx);
/* sys_errno (may be NULL) receives the errno of the first failure, for callers that word their own message:
 * ENOMEM with PC_ERR_NOMEM, ENAMETOOLONG with PC_ERR_OVERFLOW, EIO when the stream failed without one; 0 on
 * success. */
pc_status pc_file_write_atomic(const char *path, unsigned flags, pc_file_fill fill, const void *ctx,
                               pc_error *err, int *sys_errno);
pc_status pc_file_write_atomic_bytes(const char *path, unsigned flags, const void *data, size_t size,
                                     pc_error *err);

/* Reads the whole file at path (core/base/file.c) into a new buffer with a NUL after the last byte: *data is
 * the caller's to free, *size (size may be NULL) the byte count without that NUL. The bytes are as they are,
 * NULs included: a caller that wants text checks for them. Errors name the file: PC_ERR_IO "<path>: cannot
 * open: <strerror>" or "<path>: read error"; PC_ERR_BUDGET "<path>: larger than <max_size> bytes" for a file
 * of more than max_size bytes (SIZE_MAX: no limit); PC_ERR_NOMEM "<path>: out of memory". *data is NULL on
 * failure.
 *
 *     char *text;
 *     if (pc_file_read_all("eps.txt", 1 << 20, &text, NULL, &err) != PC_OK) ...
 *     free(text);
 */
pc_status pc_file_read_all(const char *path, size_t max_size, char **data, size_t *size, pc_error *err);

/* A growable string (core/base/strbuf.c) built by appending text and printf output, grown with plain
 * realloc (harness text, not model memory: outside pc_mem's budget). Start from {0}. Before anything is
 * appended s is NULL; after any append, even of "", it is a NUL-terminated string of len bytes. A failed
 * append (realloc, an overflowing size, an encoding error) sets the sticky oom flag: later appends do nothing
 * and s keeps the text from before the failure, so callers check oom once at the end.
 *
 *     pc_strbuf b = {0};
 *     pc_strbuf_printf(&b, "gen%u,", 0u);
 *     pc_strbuf_puts(&b, "cpu");
 *     pc_strbuf_append(&b, bytes, n);                // n raw bytes; a NUL among them ends the C string early
 *     if (b.oom) ...                                 // out of memory
 *     puts(pc_strbuf_str(&b));                       // "gen0,cpu...", or "" when nothing was appended
 *     char *text = pc_strbuf_take(&b);               // the caller frees it; b is empty again
 */
typedef struct pc_strbuf {
    char *s;
    size_t len, cap;
    bool oom;
} pc_strbuf;

void pc_strbuf_append(pc_strbuf *b, const void *data, size_t n);
void pc_strbuf_puts(pc_strbuf *b, const char *text);
void pc_strbuf_printf(pc_strbuf *b, const char *fmt, ...) PC_PRINTF(2, 3);
void pc_strbuf_vprintf(pc_strbuf *b, const char *fmt, va_list ap);
/* s, or "" before anything was appended: never NULL. */
const char *pc_strbuf_str(const pc_strbuf *b);
/* Hands s to the caller and leaves b as {0}: NULL when nothing was appended, or after oom (the partial
 * text is freed: check oom first when NULL must be told apart). */
char *pc_strbuf_take(pc_strbuf *b);
/* Frees s and leaves b as {0}, ready for reuse. */
void pc_strbuf_free(pc_strbuf *b);

/* A 64-bit fingerprint of everything the ONNX saver writes (core/ir/fingerprint.c): models whose saved bytes
 * differ have different fingerprints, barring 64-bit collisions; equal bytes may still fingerprint apart.
 * Costs one walk of the IR and no allocation, so "did this pass change the model?" needs no save. */
uint64_t pc_model_fingerprint(const pc_model *m);
/* The same walk with strings (names, op types, domains, EPs, metadata, doc strings) taken by address: a
 * cheaper stamp for watching one live model change, pass after pass. IR strings are never written in place,
 * so a change of one gives a new address; tensor data and attribute bytes are still hashed by content. Not
 * comparable across models or loads (use the fingerprint there). */
uint64_t pc_model_change_stamp(const pc_model *m);

/* A graph's value_info entries in their canonical order, the one the ONNX saver writes and structural
 * equality compares: each live node's outputs in node order, then the rest (graph-level, outer-scope and
 * orphan values) by name. It depends on the graph's content only, never on the order values were created in,
 * which follows the file a loader read (a file not in topological order is sorted after its values exist).
 * out needs room for g->n_values entries; returns how many it filled. */
size_t pc_graph_value_info_list(const pc_graph *g, const pc_value **out);

/* FlatBuffers and the ORT format's schema (core/ort/fb.h): the verifier, its accessors, the schema as data,
 * for the fuzz target's structure-aware mutator. */
#include "core/ort/fb.h"

#endif
