/* The independent EP-file oracle (properties/oracles/ep_file_oracle.c) and the ep-file property's judgement:
 * hand-written files from docs/ep.md (the documented example, every optional field, every documented error
 * with the line it must be reported on), each also read by core's parser, which must accept the same files,
 * reject the same ones on the same line and register the fields the oracle read; pc_efo_same must notice a
 * field that differs; and files with errors at hand-worked positions (line and column). */
#include <string.h>

#include "properties/oracles/ep_file_oracle.h"
#include "tests/test_util.h"

static const char *const TAKEN[] = {"cpu", "nhwc"};

/* Both parsers on text: want_line 0 = both accept (and agree on every field), > 0 = both reject naming that
 * line; -1 = both reject, no line (a file-level error). */
/* Both parsers on text ("t.ep" for core). */
typedef struct both {
    pc_efo_file *f;
    pc_ep_registry *reg;
    pc_error oe, ce;
    pc_status ost, cst;
} both;

static void parse_both(const char *text, both *b)
{
    memset(b, 0, sizeof *b);
    pc_error_clear(&b->oe);
    pc_error_clear(&b->ce);
    b->ost = pc_efo_parse(text, TAKEN, 2, &b->f, &b->oe);
    CHECK(pc_ep_registry_create(&b->reg, &b->ce) == PC_OK);
    b->cst = pc_ep_registry_load_text(b->reg, text, "t.ep", &b->ce);
}

static void both_free(both *b)
{
    pc_efo_free(b->f);
    pc_ep_registry_free(b->reg);
}

static void check_file(const char *text, int want_line, const char *what)
{
    both b;
    parse_both(text, &b);
    pc_efo_file *f = b.f;
    pc_ep_registry *reg = b.reg;
    pc_error oe = b.oe, ce = b.ce;
    pc_status ost = b.ost, cst = b.cst;
    if (want_line == 0) {
        CHECK_MSG(ost == PC_OK, "%s: the oracle rejects it: %s", what, oe.message);
        CHECK_MSG(cst == PC_OK, "%s: core rejects it: %s", what, ce.message);
        char why[300] = "";
        if (ost == PC_OK && cst == PC_OK)
            CHECK_MSG(pc_efo_same(f, reg, why, sizeof why), "%s: %s", what, why);
    } else {
        CHECK_MSG(ost == PC_ERR_USAGE, "%s: the oracle gives %s", what, pc_status_name(ost));
        CHECK_MSG(cst == PC_ERR_USAGE, "%s: core gives %s", what, pc_status_name(cst));
        if (want_line > 0 && ost == PC_ERR_USAGE && cst == PC_ERR_USAGE) {
            char want[32];
            snprintf(want, sizeof want, "t.ep:%d:", want_line);
            CHECK_MSG(strncmp(ce.message, want, strlen(want)) == 0, "%s: core says '%s', want line %d", what,
                      ce.message, want_line);
            CHECK_MSG(atoi(oe.message) == want_line, "%s: the oracle says '%s', want line %d", what,
                      oe.message, want_line);
        }
    }
    both_free(&b);
}

static void test_accepted(void)
{
    check_file("# an NPU that wants NHWC, fuses what it runs, and cannot run Transpose\n"
               "ep npu layout=nhwc compiles=yes transpose=no\n"
               "op Conv domain= opset=11..21 types=float,float16\n"
               "attr group values=1 default=1\n"
               "op Conv domain=com.ms.internal.nhwc opset=1.. types=float,float16\n"
               "op Relu types=float,float16\n"
               "op Add\n"
               "\n"
               "ep blk layout=blocked block=8\n"
               "op * domain=ai.onnx opset=13\n",
               0, "the documented example");
    check_file("ep a standard=yes\tcompiles=no  # tabs and a trailing comment\r\nop X opset=1..1\r\n", 0,
               "CRLF");
    check_file("ep b layout=nchw transpose=yes\nop MaxPool\nattr storage_order values=0,-1,7\n"
               "attr ceil_mode values=0 default=0\n",
               0, "attribute rules");
    check_file("ep c layout=blocked block=1024\nep d layout=blocked block=1\n", 0, "block bounds");
    check_file("ep e\nop Y opset=9223372036854775807\nattr k values=-9223372036854775808\n", 0,
               "int64 bounds");
}

static void test_rejected(void)
{
    check_file("", -1, "an empty file");
    check_file("# only a comment\n", -1, "no ep line");
    check_file("ep a\nfoo b\n", 2, "an unknown line kind");
    check_file("ep a colour=red\n", 1, "an unknown field");
    check_file("ep a compiles=yes compiles=no\n", 1, "a field twice");
    check_file("ep a yes\n", 1, "a value without key=");
    check_file("ep a\nop X opset=x\n", 2, "a bad number");
    check_file("ep a\nop X opset=0..3\n", 2, "opset below 1");
    check_file("ep a\nop X opset=5..4\n", 2, "minimum > maximum");
    check_file("ep a\nop X opset=9223372036854775808\n", 2, "past int64");
    check_file("ep a\nop X opset=000000000000000000001\n", 2, "a number of 21 characters");
    check_file("ep a\nop X types=float,floot\n", 2, "an unknown type");
    check_file("ep a\nop X types=float,float\n", 2, "a repeated type");
    check_file("ep a\nop X types=float,\n", 2, "an empty type name");
    check_file("ep cpu\n", 1, "a built-in's name");
    check_file("ep a\nep a\n", 2, "a name twice");
    check_file("ep a/b\n", 1, "a bad character");
    check_file("ep a\nop X/Y\n", 2, "a bad op type");
    check_file("ep a\nop domain=x\n", 2, "an op line without its op type");
    check_file("op X\nep a\n", 1, "op before ep");
    check_file("ep a\nattr k values=1\n", 2, "attr before op");
    check_file("ep a\nop X\nep b\nattr k values=1\n", 4, "attr after a new ep");
    check_file("ep a\nop X\nattr k default=1\n", 3, "attr without values=");
    check_file("ep a\nop X\nattr k values=1\nattr k values=2\n", 4, "an attribute constrained twice");
    check_file("ep a\nop X\nattr k values=1,,2\n", 3, "an empty value");
    check_file("ep a layout=blocked\nop X\n", 1, "blocked without block");
    check_file("ep a block=8\nop X\n", 1, "block without blocked");
    check_file("ep a layout=blocked block=1025\n", 1, "block past 1024");
    check_file("ep a layout=blocked\nfoo\n", 1, "the first error in file order");
}

static void test_same_notices(void)
{
    pc_efo_file *f = NULL;
    pc_error err;
    CHECK(pc_efo_parse("ep z layout=nhwc\nop Conv opset=11..\n", TAKEN, 2, &f, &err) == PC_OK);
    CHECK(pc_efo_ep_count(f) == 1);
    static const char *const others[] = {
        "ep z layout=nchw\nop Conv opset=11..\n",
        "ep z layout=nhwc\nop Conv opset=11..12\n",
        "ep z layout=nhwc\nop Conv opset=11.. types=float\n",
        "ep z layout=nhwc\nop Relu opset=11..\n",
        "ep z layout=nhwc compiles=yes\nop Conv opset=11..\n",
        "ep y layout=nhwc\nop Conv opset=11..\n",
        "ep z layout=nhwc\nop Conv opset=11..\nattr a values=1\n",
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        pc_ep_registry *reg = NULL;
        CHECK(pc_ep_registry_create(&reg, &err) == PC_OK);
        CHECK(pc_ep_registry_load_text(reg, others[i], "other", &err) == PC_OK);
        char why[300] = "";
        CHECK_MSG(!pc_efo_same(f, reg, why, sizeof why), "difference %zu not noticed", i);
        pc_ep_registry_free(reg);
    }
    pc_efo_free(f);
}

/* Both parsers reject text at (line, col): docs/ep.md's position rules, worked by hand. */
static void check_pos(const char *text, int line, int col, const char *what)
{
    both b;
    parse_both(text, &b);
    char want_core[48], want_oracle[48];
    snprintf(want_core, sizeof want_core, "t.ep:%d:%d:", line, col);
    snprintf(want_oracle, sizeof want_oracle, "%d:%d:", line, col);
    CHECK_MSG(b.cst == PC_ERR_USAGE && strncmp(b.ce.message, want_core, strlen(want_core)) == 0,
              "%s: core says '%s', want %s", what, b.ce.message, want_core);
    CHECK_MSG(b.ost == PC_ERR_USAGE && strncmp(b.oe.message, want_oracle, strlen(want_oracle)) == 0,
              "%s: the oracle says '%s', want %s", what, b.oe.message, want_oracle);
    both_free(&b);
}

static void test_positions(void)
{
    static const struct {
        const char *text;
        int line, col;
        const char *what;
    } cases[] = {
        {"ep", 1, 3, "a missing EP name: just past the keyword"},
        {"ep a\nop", 2, 3, "a missing op type"},
        {"ep a\nop X\nattr", 3, 5, "a missing attribute name"},
        {"ep a\nop layout=x", 2, 4, "a field where the op type goes"},
        {"ep a colour=red compiles=maybe", 1, 6, "two errors: the leftmost, an unknown key"},
        {"ep a compiles=maybe colour=red", 1, 15, "two errors: the leftmost, a value"},
        {"ep a\tcompiles=yes compiles=no", 1, 19, "a repeated key at its second use (a tab is a column)"},
        {"ep a layout=blocked colour=red", 1, 21, "a field error before the cross-field check"},
        {"ep a layout=blocked", 1, 6, "layout=blocked without block=: at the layout field"},
        {"ep a compiles=no block=8 layout=nhwc", 1, 18, "block= without blocked: at the block field"},
        {"ep a\nop X types=float,int9", 2, 18, "a bad element of a type list"},
        {"ep a\nop X opset=3..x", 2, 15, "a bad opset maximum"},
        {"ep a\nop X opset=5..4", 2, 12, "minimum > maximum: at the value"},
        {"ep a\nop X\nattr k default=1", 3, 6, "attr without values=: at the attribute name"},
        {"ep a\nop X\nattr k values=1,x,2", 3, 17, "a bad element of a value list"},
        {"ep a\nop X\nattr k values=1 default=z values=2", 3, 25, "a bad default before a repeated key"},
        {"  # note\n  fo a", 2, 3, "an unknown line kind, indented"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_pos(cases[i].text, cases[i].line, cases[i].col, cases[i].what);
}

int main(void)
{
    test_accepted();
    test_rejected();
    test_positions();
    test_same_notices();
    return pc_test_finish("test_oracles_ep_file");
}
