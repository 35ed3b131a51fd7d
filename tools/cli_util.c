/* CLI helpers: usage errors, error reports, JSON strings, type descriptions. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int pc_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    fprintf(stderr, "passcheck%s%s: usage error: ", cmd ? " " : "", cmd ? cmd : "");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\n(see 'passcheck %s --help')\n", cmd);
    else
        fprintf(stderr, "\n(see 'passcheck --help')\n");
    return PC_EXIT_USAGE;
}

int pc_cli_report(const char *cmd, const pc_error *err)
{
    fprintf(stderr, "passcheck %s: error [%s]: %s\n", cmd, pc_status_name(err->status), err->message);
    return pc_status_exit_code(err->status);
}

void pc_json_string_n(FILE *out, const char *s, size_t n)
{
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (ch < 0x20)
                fprintf(out, "\\u%04x", ch);
            else
                fputc(ch, out);
        }
    }
    fputc('"', out);
}

void pc_json_string(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    pc_json_string_n(out, s, strlen(s));
}

void pc_type_describe(FILE *out, const pc_type *t)
{
    switch (t->kind) {
    case PC_TYPE_NONE:
        fputs("?", out);
        return;
    case PC_TYPE_TENSOR:
    case PC_TYPE_SPARSE_TENSOR:
        fprintf(out, "%s%s", t->kind == PC_TYPE_SPARSE_TENSOR ? "sparse " : "",
                t->elem ? pc_dtype_name(t->elem) : "?");
        if (t->shape.rank < 0) {
            fputs("[*]", out);
            return;
        }
        fputc('[', out);
        for (int32_t i = 0; i < t->shape.rank; i++) {
            const pc_dim *d = &t->shape.dims[i];
            if (i) fputc(',', out);
            if (d->kind == PC_DIM_KNOWN)
                fprintf(out, "%lld", (long long)d->size);
            else if (d->kind == PC_DIM_SYMBOLIC)
                fputs(d->symbol, out);
            else
                fputc('?', out);
        }
        fputc(']', out);
        return;
    case PC_TYPE_SEQUENCE:
    case PC_TYPE_OPTIONAL:
        fputs(t->kind == PC_TYPE_SEQUENCE ? "seq(" : "optional(", out);
        if (t->inner)
            pc_type_describe(out, t->inner);
        else
            fputc('?', out);
        fputc(')', out);
        return;
    case PC_TYPE_MAP:
        fprintf(out, "map(%s,", pc_dtype_name(t->key));
        if (t->inner)
            pc_type_describe(out, t->inner);
        else
            fputc('?', out);
        fputc(')', out);
        return;
    case PC_TYPE_OPAQUE:
        fprintf(out, "opaque(%s.%s)", t->opaque_domain ? t->opaque_domain : "", t->opaque_name ? t->opaque_name : "");
        return;
    case PC_TYPE_KIND_COUNT:
        break;
    }
    fputs("?", out);
}
