/* The independent layer-rule oracle (properties/oracles/layer_rules_oracle.c): hand-written cases from the
 * grammar in docs/ep.md (prefix, exact, a pattern that is a prefix of another, exact and prefix forms of one
 * name, rule order permuted, annotations that contain a pattern without starting with it, the documented
 * errors), then a seeded differential test against core's pc_layer_rules_parse / pc_layer_rules_match over
 * thousands of random rule strings (valid and broken) and annotations: accept/reject, the error's position
 * and every match must agree; and the layer-rules property on generated cases, planted fault included. */
#include <stdlib.h>

#include "generators/gen.h"
#include "properties/oracles/layer_rules_oracle.h"
#include "properties/property.h"
#include "tests/pass_test_util.h"
#include "tests/test_util.h"

static const char *const EPS[] = {"nhwc", "cpu", "npu", "a.b", "x-1"};
enum { N_EPS = 5 };

static const char *ep_for(const char *rules, const char *ann)
{
    pc_lro_rules *r = NULL;
    pc_error err;
    if (pc_lro_parse(rules, EPS, N_EPS, &r, &err) != PC_OK) {
        fprintf(stderr, "unexpected parse error for '%s': %s\n", rules, err.message);
        pc_test_failures++;
        return "(error)";
    }
    const char *ep = pc_lro_ep_for(r, ann);
    pc_lro_free(r);
    return ep ? ep : "(none)";
}

#define CHECK_EP(rules, ann, want)                                                                           \
    do {                                                                                                     \
        const char *got_ = ep_for(rules, ann);                                                               \
        CHECK_MSG(strcmp(got_, want) == 0, "'%s' on '%s': got %s, want %s", rules, ann, got_, want);         \
    } while (0)

static void check_rejects(const char *rules, const char *why)
{
    pc_lro_rules *r = NULL;
    pc_error err;
    pc_status st = pc_lro_parse(rules, EPS, N_EPS, &r, &err);
    CHECK_MSG(st == PC_ERR_USAGE, "'%s' (%s) should be a usage error, got %s", rules, why,
              pc_status_name(st));
    if (st == PC_ERR_USAGE) CHECK_MSG(strstr(err.message, "position ") != NULL, "%s", err.message);
    pc_lro_free(r);
}

static void test_hand_written(void)
{
    /* the doc's example */
    const char *doc = "nhwc(encoder, =head); cpu(post)";
    CHECK_EP(doc, "encoder", "nhwc");
    CHECK_EP(doc, "encoder.layer1", "nhwc");
    CHECK_EP(doc, "head", "nhwc");
    CHECK_EP(doc, "head.0", "(none)"); /* exact */
    CHECK_EP(doc, "postproc", "cpu");
    CHECK_EP(doc, "pos", "(none)");      /* the pattern is not a prefix of a shorter annotation */
    CHECK_EP(doc, "xencoder", "(none)"); /* contains the pattern without starting with it */
    CHECK_EP(doc, "my/post", "(none)");
    CHECK_EP(doc, "", "(none)");
    /* overlap: one pattern a prefix of another; the leftmost matching one decides */
    CHECK_EP("cpu(enc); nhwc(encoder)", "encoder.1", "cpu");
    CHECK_EP("nhwc(encoder); cpu(enc)", "encoder.1", "nhwc");
    CHECK_EP("nhwc(encoder); cpu(enc)", "enc.1", "cpu");
    CHECK_EP("nhwc(encoder, enc)", "enco", "nhwc");
    /* exact and prefix forms of one name (different kinds: allowed) */
    CHECK_EP("cpu(=blk); nhwc(blk)", "blk", "cpu");
    CHECK_EP("cpu(=blk); nhwc(blk)", "blk2", "nhwc");
    CHECK_EP("nhwc(blk); cpu(=blk)", "blk", "nhwc"); /* leftmost wins, not "exact beats prefix" as in ORT */
    CHECK_EP("nhwc(blk, =blk)", "blk", "nhwc");
    /* rule order permuted over disjoint patterns changes nothing */
    CHECK_EP("nhwc(a); cpu(b); npu(c)", "b1", "cpu");
    CHECK_EP("npu(c); cpu(b); nhwc(a)", "b1", "cpu");
    CHECK_EP("cpu(b); npu(c); nhwc(a)", "c", "npu");
    /* whitespace anywhere, also inside names and patterns */
    CHECK_EP("  n h w c ( en c , = he ad ) ;\tcpu(\npost )  ", "enc9", "nhwc");
    CHECK_EP("nhwc(en c)", "enc", "nhwc");
    CHECK_EP("nhwc(=he ad)", "head", "nhwc");
    /* EP names with '.' and '-' */
    CHECK_EP("a.b(x); x-1(y)", "y.z", "x-1");
    /* the same EP in two rules */
    CHECK_EP("cpu(a); nhwc(b); cpu(c)", "c", "cpu");
    /* an empty string (or only whitespace) gives no rules */
    CHECK_EP("", "anything", "(none)");
    CHECK_EP("   ", "anything", "(none)");

    /* the documented errors */
    check_rejects("gpu(a)", "EP not in the list");
    check_rejects("(a)", "no EP");
    check_rejects("cpu(a); nhwc(a)", "pattern twice across rules");
    check_rejects("cpu(=a, =a)", "exact pattern twice");
    check_rejects("cpu()", "empty pattern");
    check_rejects("cpu(a,)", "empty pattern");
    check_rejects("cpu(=)", "empty exact pattern");
    check_rejects("cpu(a=b)", "'=' inside a pattern");
    check_rejects("cpu(==a)", "'=' inside a pattern");
    check_rejects("cpu(a", "missing ')'");
    check_rejects("cpu a)", "missing '('");
    check_rejects("cpu((a))", "extra parentheses");
    check_rejects("cpu(a))", "extra ')'");
    check_rejects("cpu(a) nhwc(b)", "missing ';'");
    check_rejects("cpu(a);", "trailing ';'");
    check_rejects("cpu(a);;nhwc(b)", "empty rule");
    check_rejects(";", "lone ';'");
    check_rejects("cpu(a;b)", "';' inside a rule");
    /* accepted: a pattern and its exact form are different patterns */
    CHECK_EP("cpu(a, =a)", "a", "cpu");
}

/* ---- differential test against core ---- */
static const char ALPHABET[] = "abcde.=(),; _";

static uint64_t draw(uint64_t *s, uint64_t n)
{
    return pc_splitmix64(s) % n;
}

/* A short pattern text over a small alphabet, so that prefixes, repeats and exact/prefix pairs are common. */
static void random_text(uint64_t *s, char *out, size_t *len, size_t cap)
{
    size_t k = 1 + (size_t)draw(s, 4);
    for (size_t i = 0; i < k && *len + 1 < cap; i++)
        out[(*len)++] = "abcab."[draw(s, 6)];
}

static void append(char *out, size_t *len, size_t cap, const char *x)
{
    while (*x && *len + 1 < cap)
        out[(*len)++] = *x++;
}

/* Mostly well-formed rule strings (so matching is exercised), some mutated into broken ones. */
static void random_rules(uint64_t *s, char *out, size_t cap)
{
    size_t len = 0;
    uint64_t n_rules = draw(s, 4); /* 0 = empty string */
    for (uint64_t r = 0; r < n_rules; r++) {
        if (r) append(out, &len, cap, draw(s, 4) ? "; " : ";");
        append(out, &len, cap, EPS[draw(s, N_EPS)]);
        append(out, &len, cap, "(");
        uint64_t n_pat = 1 + draw(s, 3);
        for (uint64_t p = 0; p < n_pat; p++) {
            if (p) append(out, &len, cap, draw(s, 2) ? ", " : ",");
            if (draw(s, 3) == 0) append(out, &len, cap, "=");
            random_text(s, out, &len, cap);
        }
        append(out, &len, cap, ")");
    }
    out[len] = 0;
    /* mutations: insert, delete or replace characters from the grammar's alphabet */
    uint64_t n_mut = draw(s, 3) == 0 ? 1 + draw(s, 2) : 0;
    for (uint64_t m = 0; m < n_mut; m++) {
        size_t at = len ? (size_t)draw(s, len + 1) : 0;
        char c = ALPHABET[draw(s, sizeof ALPHABET - 1)];
        uint64_t op = draw(s, 3);
        if (op == 0 && len + 1 < cap) {
            memmove(out + at + 1, out + at, len - at + 1);
            out[at] = c;
            len++;
        } else if (op == 1 && at < len) {
            memmove(out + at, out + at + 1, len - at);
            len--;
        } else if (at < len) {
            out[at] = c;
        }
    }
}

static void test_differential(void)
{
    pc_error err;
    pc_ep_registry *reg = NULL;
    CHECK_OK(pc_ep_registry_create(&reg, &err), &err);
    if (!reg) return;
    CHECK_OK(
        pc_ep_registry_load_text(reg, "ep npu\nop Relu\nep a.b\nop Relu\nep x-1\nop Relu\n", "test", &err),
        &err);
    const pc_ep **eps = NULL;
    uint32_t n = 0;
    CHECK_OK(pc_ep_registry_parse_list(reg, "nhwc,cpu,npu,a.b,x-1", &eps, &n, &err), &err);
    CHECK(n == N_EPS);
    if (n != N_EPS) {
        pc_ep_registry_free(reg);
        return;
    }
    uint64_t seed = 14;
    unsigned accepted = 0, rejected = 0, matches = 0, pinned = 0, disagreements = 0;
    for (int it = 0; it < 20000; it++) {
        char text[160];
        random_rules(&seed, text, sizeof text);
        pc_layer_rules *core = NULL;
        pc_lro_rules *mine = NULL;
        pc_error e1, e2;
        pc_status s1 = pc_layer_rules_parse(text, (const pc_ep *const *)eps, n, &core, &e1);
        pc_status s2 = pc_lro_parse(text, EPS, N_EPS, &mine, &e2);
        if ((s1 == PC_OK) != (s2 == PC_OK)) {
            if (disagreements++ < 10)
                fprintf(stderr, "parse disagrees on '%s': core %s (%s), oracle %s (%s)\n", text,
                        pc_status_name(s1), s1 == PC_OK ? "" : e1.message, pc_status_name(s2),
                        s2 == PC_OK ? "" : e2.message);
            CHECK(false);
        } else if (s1 != PC_OK) {
            /* both name the leftmost error's position (docs/ep.md) */
            const char *p1 = strstr(e1.message, "position "), *p2 = strstr(e2.message, "position ");
            CHECK_MSG(s1 == PC_ERR_USAGE && s2 == PC_ERR_USAGE && p1 && p2 && atoi(p1 + 9) == atoi(p2 + 9),
                      "'%s': %s / %s", text, e1.message, e2.message);
            rejected++;
        } else {
            accepted++;
            for (int a = 0; a < 30; a++) {
                char ann[16];
                size_t len = 0;
                if (draw(&seed, 8)) random_text(&seed, ann, &len, sizeof ann);
                if (draw(&seed, 2)) random_text(&seed, ann, &len, sizeof ann);
                ann[len] = 0;
                const pc_ep *c = pc_layer_rules_match(core, ann);
                const char *o = pc_lro_ep_for(mine, ann);
                bool same = c ? o && strcmp(c->name, o) == 0 : o == NULL;
                if (!same) {
                    if (disagreements++ < 10)
                        fprintf(stderr, "match disagrees on '%s' with annotation '%s': core %s, oracle %s\n",
                                text, ann, c ? c->name : "(none)", o ? o : "(none)");
                    CHECK(false);
                }
                matches++;
                pinned += o != NULL;
            }
        }
        pc_layer_rules_free(core);
        pc_lro_free(mine);
    }
    printf("differential: %u rule strings accepted, %u rejected by both; %u annotations matched (%u pinned); "
           "%u disagreements\n",
           accepted, rejected, matches, pinned, disagreements);
    /* the generator must exercise both sides */
    CHECK(accepted > 5000 && rejected > 1000 && pinned > 10000);
    pc_ep_registry_free(reg);
}

/* The layer-rules property on generated annotated cases: it passes, and the planted fault
 * layer-rule-contains (a prefix pattern matching any annotation containing it) fails it with a pin. */
static void test_property(void)
{
    unsigned judged = 0, caught = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        pc_case c;
        if (!pt_generate("annotated", seed, &c)) continue;
        for (int faulty = 0; faulty < 2 && c.layer_assignment; faulty++) {
            pc_error err;
            if (faulty) CHECK_OK(pc_fault_enable_list("layer-rule-contains", &err), &err);
            pc_check_config cc;
            pc_check_config_default(&cc);
            CHECK_OK(pc_check_config_select(&cc, "layer-rules", &err), &err);
            pc_check_result res;
            CHECK_OK(pc_case_check(&c, &cc, &res, &err), &err);
            size_t idx = 0;
            while (pc_property_at(idx) != &pc_prop_layer_rules)
                idx++;
            if (!faulty) {
                CHECK_MSG(res.counts[idx][PC_PROP_PASS] == 1, "seed %llu: %s", (unsigned long long)seed,
                          res.failure.message);
                judged++;
            } else if (res.counts[idx][PC_PROP_FAIL]) {
                CHECK(strcmp(res.failure.kind, "pins") == 0);
                caught++;
            }
            pc_check_result_free(&res);
            pc_fault_reset();
        }
        pc_case_free(&c);
    }
    printf("property: %u cases judged, the planted fault caught in %u\n", judged, caught);
    CHECK(judged >= 20 && caught >= 3);
}

int main(void)
{
    test_hand_written();
    test_differential();
    test_property();
    return pc_test_finish("test_oracles_layer_rules");
}
