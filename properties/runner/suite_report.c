/* The suite's reports (suite.h): the JSON and JUnit files and the summary tables. Everything but the "timing"
 * object is the same for any --jobs: the report's lists are sorted before they get here. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "properties/runner/suite.h"
#include "properties/runner/util.h"

/* Strings the runner may leave NULL (an outside model's family) are written as "", as they always were. */
static void json_text(FILE *out, const char *s)
{
    pc_json_string(out, s ? s : "");
}

static void json_str_or_null(FILE *out, const char *s)
{
    if (s && s[0])
        json_text(out, s);
    else
        fputs("null", out);
}

static void json_double(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.6g", v);
    else
        fputs("null", out);
}

static size_t n_selected_properties(const pc_suite_options *o)
{
    size_t n = 0;
    for (size_t i = 0; i < pc_suite_n_slots(o); i++)
        n += pc_suite_slot_enabled(o, i);
    return n;
}

void pc_suite_write_json(FILE *out, const pc_suite_options *o, const pc_suite_report *r, bool timing)
{
    fprintf(out, "{\n  \"tool\": \"passcheck suite\",\n  \"seed\": %" PRIu64 ",\n", o->seed);
    if (o->seconds > 0)
        fprintf(out, "  \"time_limit\": %.6g,\n", o->seconds);
    else
        fprintf(out, "  \"requested_cases\": %" PRIu64 ",\n", o->n_cases);
    fprintf(out, "  \"shard\": \"%u/%u\",\n  \"families\": [", o->shard_index + 1, o->shard_count);
    bool first = true;
    for (uint32_t i = 0; i < r->n_families; i++)
        if (r->family_selected[i]) {
            fputs(first ? "" : ", ", out);
            json_text(out, pc_gen_family_at(i)->name);
            first = false;
        }
    fputs("],\n  \"properties\": [", out);
    first = true;
    for (size_t i = 0; i < pc_suite_n_slots(o); i++)
        if (pc_suite_slot_enabled(o, i)) {
            fputs(first ? "" : ", ", out);
            json_text(out, pc_suite_slot_name(o, i));
            first = false;
        }
    fprintf(out, "],\n  \"config\": {\"level\": %d, \"ep\": ", o->check.level);
    json_str_or_null(out, o->check.ep_override);
    fprintf(out,
            ", \"oracle\": %s, \"max_nodes\": %" PRIu32 ", \"max_elements\": %" PRIu64
            ", \"max_rank\": %d, \"allow_special\": %s, \"inject\": ",
            o->check.oracle_ort ? "\"ort\"" : "null", o->gen.max_nodes, o->gen.max_elements, o->gen.max_rank,
            o->gen.allow_special ? "true" : "false");
    json_str_or_null(out, o->inject);
    fprintf(out, ", \"shrink\": %s, \"case_timeout\": %.6g},\n", o->shrink ? "true" : "false",
            o->case_timeout);
    fprintf(out, "  \"cases\": %" PRIu64 ",\n  \"failed_cases\": %" PRIu64 ",\n  \"stopped_by_time\": %s,\n",
            r->cases, r->failed_cases, r->stopped_by_time ? "true" : "false");
    fputs("  \"stopped_early\": ", out);
    if (r->stopped_early)
        fprintf(out, "{\"replayed\": %s, \"order\": %" PRIu64 "},\n", r->stopped_replayed ? "true" : "false",
                r->stopped_order);
    else
        fputs("null,\n", out);
    fprintf(out, "  \"known_failed\": %zu,\n", r->known_failed);
    fputs("  \"property_table\": [", out);
    first = true;
    for (size_t i = 0; i < pc_suite_n_slots(o); i++) {
        if (!pc_suite_slot_enabled(o, i)) continue;
        fprintf(out, "%s\n    {\"property\": ", first ? "" : ",");
        json_text(out, pc_suite_slot_name(o, i));
        for (int k = 0; k < PC_PROP_OUTCOME_COUNT; k++)
            fprintf(out, ", \"%s\": %" PRIu64, pc_prop_outcome_name((pc_prop_outcome)k), r->counts[i][k]);
        fprintf(out, ", \"failed_cases\": %" PRIu64 "}", r->property_failed_cases[i]);
        first = false;
    }
    fprintf(out, "\n  ],\n  \"other_failed_cases\": %" PRIu64 ",\n  \"family_table\": [",
            r->other_failed_cases);
    first = true;
    for (uint32_t i = 0; i < r->n_families; i++) {
        if (!r->family_selected[i]) continue;
        fprintf(out, "%s\n    {\"family\": ", first ? "" : ",");
        json_text(out, pc_gen_family_at(i)->name);
        fprintf(out, ", \"cases\": %" PRIu64 ", \"failed\": %" PRIu64 "}", r->family_cases[i],
                r->family_failed[i]);
        first = false;
    }
    fprintf(out,
            "\n  ],\n  \"transpose_optimum\": {\"judged\": %" PRIu64 ", \"at_optimum\": %" PRIu64
            ", \"rate\": ",
            r->transpose_oracle_cases, r->transpose_at_optimum);
    if (r->transpose_oracle_cases)
        json_double(out, (double)r->transpose_at_optimum / (double)r->transpose_oracle_cases);
    else
        fputs("null", out);
    fprintf(out, "},\n  \"reference_runs\": %" PRIu64 ",\n  \"passes_changed\": %" PRIu64 ",\n", r->ref_runs,
            r->passes_changed);
    fprintf(out,
            "  \"replay\": {\"replayed\": %" PRIu64 ", \"still_failing\": %" PRIu64
            ", \"same_signature\": %" PRIu64 ", \"other_signature\": %" PRIu64 ", \"removed\": %" PRIu64
            ", \"skipped\": %" PRIu64 ", \"unreadable\": %" PRIu64 "},\n  \"database_saved\": %" PRIu64 ",\n",
            r->replayed, r->replay_still_failing, r->replay_same_signature, r->replay_other_signature,
            r->replay_removed, r->replay_skipped, r->db_bad_entries, r->db_saved);
    size_t n_below = 0;
    for (size_t k = 0; k < PC_RW_COUNT; k++)
        n_below += pc_suite_rewrite_below(r, k);
    fprintf(out,
            "  \"rewrite_coverage\": {\"min_fired_cases\": %d, \"min_near_miss_cases\": %d, \"below\": %zu, "
            "\"kinds\": [",
            PC_SUITE_RW_MIN_FIRED, PC_SUITE_RW_MIN_NEAR, n_below);
    for (size_t k = 0; k < PC_RW_COUNT; k++) {
        fprintf(out, "%s\n    {\"kind\": ", k ? "," : "");
        json_text(out, pc_rewrite_kind_name((pc_rewrite_kind)k));
        fputs(", \"pass\": ", out);
        json_text(out, pc_rewrite_kind_pass((pc_rewrite_kind)k));
        fprintf(out,
                ", \"fired_cases\": %" PRIu64 ", \"near_miss_cases\": %" PRIu64 ", \"near_miss_reasons\": {",
                r->rw_fired_cases[k], r->rw_near_cases[k]);
        for (size_t m = 0; m < PC_MISS_COUNT; m++)
            fprintf(out, "%s\"%s\": %" PRIu64, m ? ", " : "", pc_miss_reason_name((pc_miss_reason)m),
                    r->rw_near_reason_cases[k][m]);
        fprintf(out, "}, \"has_near_miss\": %s, \"below\": %s}",
                pc_rewrite_kind_has_near_miss((pc_rewrite_kind)k) ? "true" : "false",
                pc_suite_rewrite_below(r, k) ? "true" : "false");
    }
    fputs("\n  ]},\n", out);
    fputs("  \"signatures\": [", out);
    for (size_t i = 0; i < r->n_signatures; i++) {
        const pc_suite_signature *sg = &r->signatures[i];
        const pc_suite_failure *f = &sg->rep;
        fprintf(out, "%s\n    {\"signature\": ", i ? "," : "");
        json_text(out, sg->signature);
        fprintf(out, ", \"known\": %s, \"cases\": %" PRIu64 ", \"property\": ", sg->known ? "true" : "false",
                sg->cases);
        json_text(out, f->failure.property);
        fputs(", \"pass\": ", out);
        json_text(out, f->failure.pass);
        fputs(", \"kind\": ", out);
        json_text(out, f->failure.kind);
        fprintf(out,
                ", \"outcome\": \"%s\", \"first_case\": %" PRIu64 ", \"case_seed\": %" PRIu64
                ", \"replayed\": %s, \"family\": ",
                pc_prop_outcome_name(f->failure.outcome), f->index, f->case_seed,
                f->replayed ? "true" : "false");
        json_text(out, f->gen.family);
        fputs(", \"message\": ", out);
        json_text(out, f->failure.message);
        fputs(", \"repro\": ", out);
        json_str_or_null(out, f->repro_dir);
        fputs(", \"database_entry\": ", out);
        json_str_or_null(out, f->db_name);
        fprintf(out,
                ", \"shrunk\": %s, \"nodes_before\": %" PRIu32 ", \"nodes_after\": %" PRIu32 ", \"note\": ",
                f->shrunk ? "true" : "false", f->nodes_before, f->nodes_after);
        json_str_or_null(out, f->note);
        fputc('}', out);
    }
    fputs("\n  ],\n  \"failures\": [", out);
    for (size_t i = 0; i < r->n_failed; i++) {
        const pc_suite_failed_case *c = &r->failed[i];
        fprintf(out,
                "%s\n    {\"case\": %" PRIu64 ", \"case_seed\": %" PRIu64 ", \"replayed\": %s, \"family\": ",
                i ? "," : "", c->index, c->case_seed, c->replayed ? "true" : "false");
        json_text(out, c->family < r->n_families ? pc_gen_family_at(c->family)->name : "?");
        fputs(", \"signature\": ", out);
        json_text(out, r->signatures[c->signature].signature);
        fputc('}', out);
    }
    fputs("\n  ]", out);
    if (timing) {
        fputs(",\n  \"timing\": {\"seconds\": ", out);
        json_double(out, r->seconds);
        fputs(", \"cases_per_second\": ", out);
        json_double(out, r->seconds > 0 ? (double)r->cases / r->seconds : 0);
        fputs(", \"shrink_seconds\": ", out);
        json_double(out, r->shrink_seconds);
        fputc('}', out);
    }
    fputs("\n}\n", out);
}

/* The first failing case of `family` whose failure belongs to suite `prop` (a property name, or NULL: the
 * harness suite), and how many there are. */
static const pc_suite_failed_case *first_failure(const pc_suite_options *o, const pc_suite_report *r,
                                                 const char *prop, uint32_t family, uint64_t *count)
{
    const pc_suite_failed_case *first = NULL;
    *count = 0;
    for (size_t i = 0; i < r->n_failed; i++) {
        const pc_suite_failed_case *c = &r->failed[i];
        if (c->family != family) continue;
        const char *p = r->signatures[c->signature].rep.failure.property;
        bool match = prop ? strcmp(p, prop) == 0 : !pc_suite_is_property_name(o, p, NULL);
        if (!match) continue;
        if (!first) first = c;
        (*count)++;
    }
    return first;
}

static bool family_in_report(const pc_suite_report *r, uint32_t f)
{
    if (r->family_selected[f]) return true;
    for (size_t i = 0; i < r->n_failed; i++)
        if (r->failed[i].family == f) return true;
    return false;
}

static void junit_suite(FILE *out, const pc_suite_options *o, const pc_suite_report *r, const char *prop,
                        const char *suite_name)
{
    uint64_t tests = 0, failures = 0, count;
    for (uint32_t f = 0; f < r->n_families; f++) {
        if (!family_in_report(r, f)) continue;
        tests++;
        failures += first_failure(o, r, prop, f, &count) != NULL;
    }
    fputs("  <testsuite name=\"", out);
    pc_xml_escape(out, suite_name, PC_XML_ATTRIBUTE);
    fprintf(out, "\" tests=\"%" PRIu64 "\" failures=\"%" PRIu64 "\" errors=\"0\" skipped=\"0\">\n", tests,
            failures);
    fprintf(out, "    <properties>\n      <property name=\"seed\" value=\"%" PRIu64 "\"/>\n", o->seed);
    fprintf(out, "      <property name=\"shard\" value=\"%u/%u\"/>\n    </properties>\n", o->shard_index + 1,
            o->shard_count);
    for (uint32_t f = 0; f < r->n_families; f++) {
        if (!family_in_report(r, f)) continue;
        fputs("    <testcase classname=\"", out);
        pc_xml_escape(out, suite_name, PC_XML_ATTRIBUTE);
        fputs("\" name=\"", out);
        pc_xml_escape(out, pc_gen_family_at(f)->name, PC_XML_ATTRIBUTE);
        const pc_suite_failed_case *c = first_failure(o, r, prop, f, &count);
        if (!c) {
            fputs("\"/>\n", out);
            continue;
        }
        const pc_suite_signature *sg = &r->signatures[c->signature];
        fputs("\">\n      <failure message=\"", out);
        pc_xml_escape(out, sg->signature, PC_XML_ATTRIBUTE);
        fprintf(out, "\" type=\"%s\">", pc_prop_outcome_name(sg->rep.failure.outcome));
        fprintf(out,
                "%" PRIu64 " failing case(s); first: case %" PRIu64 "%s, seed %" PRIu64 ", case seed %" PRIu64
                "\nrepro: ",
                count, c->index, c->replayed ? " (replayed from the failure database)" : "", o->seed,
                c->case_seed);
        pc_xml_escape(out, sg->rep.repro_dir ? sg->rep.repro_dir : "(none)", PC_XML_TEXT);
        fputs("\n", out);
        pc_xml_escape(out, sg->rep.failure.message, PC_XML_TEXT);
        fputs("</failure>\n    </testcase>\n", out);
    }
    fputs("  </testsuite>\n", out);
}

void pc_suite_write_junit(FILE *out, const pc_suite_options *o, const pc_suite_report *r, bool timing)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"passcheck suite\"", out);
    if (timing) fprintf(out, " time=\"%.3f\"", r->seconds);
    fputs(">\n", out);
    for (size_t i = 0; i < pc_suite_n_slots(o); i++)
        if (pc_suite_slot_enabled(o, i))
            junit_suite(out, o, r, pc_suite_slot_name(o, i), pc_suite_slot_name(o, i));
    junit_suite(out, o, r, NULL, "harness");
    fputs("</testsuites>\n", out);
}

/* Kinds with no near-miss condition (pc_rewrite_kind_has_near_miss) are held to the fired threshold only. */
static bool near_below(const pc_suite_report *r, size_t k)
{
    return pc_rewrite_kind_has_near_miss((pc_rewrite_kind)k) && r->rw_near_cases[k] < PC_SUITE_RW_MIN_NEAR;
}

bool pc_suite_rewrite_below(const pc_suite_report *r, size_t k)
{
    return k < PC_RW_COUNT && (r->rw_fired_cases[k] < PC_SUITE_RW_MIN_FIRED || near_below(r, k));
}

void pc_suite_print_coverage(FILE *out, const pc_suite_report *r)
{
    fprintf(out,
            "\nrewrite coverage: cases where each kind fired / nearly fired ('<<' marks fewer than %d fired "
            "or %d near-miss cases)\n",
            PC_SUITE_RW_MIN_FIRED, PC_SUITE_RW_MIN_NEAR);
    fprintf(out, "%-44s %10s %10s\n", "kind", "fired", "near miss");
    size_t n_below = 0;
    for (size_t k = 0; k < PC_RW_COUNT; k++) {
        bool below = pc_suite_rewrite_below(r, k);
        n_below += below;
        fprintf(out, "%-44s %10" PRIu64 " %10" PRIu64 "%s%s%s\n", pc_rewrite_kind_name((pc_rewrite_kind)k),
                r->rw_fired_cases[k], r->rw_near_cases[k], below ? "  <<" : "",
                below && r->rw_fired_cases[k] < PC_SUITE_RW_MIN_FIRED ? " fired" : "",
                below && near_below(r, k) ? " near-miss" : "");
    }
    fprintf(out, "rewrite coverage: %zu of %d kinds below %d fired / %d near-miss cases\n", n_below,
            (int)PC_RW_COUNT, PC_SUITE_RW_MIN_FIRED, PC_SUITE_RW_MIN_NEAR);
}

/* Known findings (--known) no case of this run failed with: fixed, or simply not reached by these cases. */
static void print_known_unseen(FILE *out, const pc_suite_options *o, const pc_suite_report *r)
{
    bool any = false;
    for (size_t k = 0; o->known && k < o->known->n; k++) {
        bool seen = false;
        for (size_t i = 0; i < r->n_signatures && !seen; i++)
            seen = strcmp(r->signatures[i].signature, o->known->items[k]) == 0;
        if (seen) continue;
        fprintf(out, "%s %s", any ? "," : "known findings this run did not fail with:", o->known->items[k]);
        any = true;
    }
    if (any) fputc('\n', out);
}

void pc_suite_print_summary(FILE *out, const pc_suite_options *o, const pc_suite_report *r)
{
    if (n_selected_properties(o)) {
        fprintf(out, "\n%-22s %10s %10s %10s %10s %13s\n", "property", "pass", "fail", "skip", "error",
                "failed cases");
        for (size_t i = 0; i < pc_suite_n_slots(o); i++) {
            if (!pc_suite_slot_enabled(o, i)) continue;
            fprintf(out, "%-22s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %13" PRIu64 "\n",
                    pc_suite_slot_name(o, i), r->counts[i][PC_PROP_PASS], r->counts[i][PC_PROP_FAIL],
                    r->counts[i][PC_PROP_SKIP], r->counts[i][PC_PROP_ERROR], r->property_failed_cases[i]);
        }
        if (r->other_failed_cases)
            fprintf(out, "%-22s %10s %10s %10s %10s %13" PRIu64 "\n", "(crash/timeout/gen)", "", "", "", "",
                    r->other_failed_cases);
    }
    fprintf(out, "\n%-22s %10s %10s\n", "family", "cases", "failed");
    for (uint32_t f = 0; f < r->n_families; f++)
        if (r->family_selected[f])
            fprintf(out, "%-22s %10" PRIu64 " %10" PRIu64 "\n", pc_gen_family_at(f)->name, r->family_cases[f],
                    r->family_failed[f]);
    fputc('\n', out);
    if (r->transpose_oracle_cases)
        fprintf(out,
                "transpose optimum: %" PRIu64 " of %" PRIu64 " cases judged by the exact oracle (%.1f%%)\n",
                r->transpose_at_optimum, r->transpose_oracle_cases,
                100.0 * (double)r->transpose_at_optimum / (double)r->transpose_oracle_cases);
    else
        fputs("transpose optimum: no case was small enough for the exact oracle\n", out);
    if (r->replayed || r->replay_skipped || r->db_bad_entries)
        fprintf(out,
                "replayed failures: %" PRIu64 " (%" PRIu64 " still failing: %" PRIu64
                " with the recorded signature, %" PRIu64 " with another; %" PRIu64
                " fixed and removed), %" PRIu64 " left for runs that check their family/property, %" PRIu64
                " unreadable%s%s\n",
                r->replayed, r->replay_still_failing, r->replay_same_signature, r->replay_other_signature,
                r->replay_removed, r->replay_skipped, r->db_bad_entries, r->db_bad_entries ? ": " : "",
                r->db_bad_entries ? r->db_bad_first : "");
    print_known_unseen(out, o, r);
    fprintf(out, "%" PRIu64 " cases, %" PRIu64 " failed%s", r->cases, r->failed_cases,
            r->stopped_by_time ? " (stopped by --time)" : "");
    if (r->stopped_early)
        fprintf(out, " (--fail-fast stopped at %s %" PRIu64 ")",
                r->stopped_replayed ? "replayed failure" : "case", r->stopped_order);
    if (!r->n_signatures) {
        fputs("; no failures\n", out);
        if (r->cases) pc_suite_print_coverage(out, r);
        return;
    }
    fprintf(out, "; %zu distinct failure signature%s:\n", r->n_signatures, r->n_signatures == 1 ? "" : "s");
    for (size_t i = 0; i < r->n_signatures; i++) {
        const pc_suite_signature *sg = &r->signatures[i];
        const pc_suite_failure *f = &sg->rep;
        fprintf(out, "  %s%s: %" PRIu64 " case%s, first %s %" PRIu64 " (%s)", sg->signature,
                sg->known ? " [known]" : "", sg->cases, sg->cases == 1 ? "" : "s",
                f->replayed ? "replayed entry of case" : "case", f->index,
                f->gen.family ? f->gen.family : "outside model");
        if (f->shrunk)
            fprintf(out, ", shrunk %" PRIu32 " -> %" PRIu32 " nodes", f->nodes_before, f->nodes_after);
        fputc('\n', out);
        /* the message's first line, bounded: the repro README has the rest */
        const char *m = f->failure.message;
        size_t len = strcspn(m, "\n");
        fprintf(out, "      %.*s%s\n", (int)(len > 300 ? 300 : len), m, len > 300 || m[len] ? " ..." : "");
        if (f->repro_dir)
            fprintf(out, "      repro: %s\n", f->repro_dir);
        else if (f->replay_repro_dir)
            fprintf(out, "      repro: %s (replayed; nothing written)\n", f->replay_repro_dir);
        if (f->note[0]) fprintf(out, "      note: %s\n", f->note);
    }
    if (r->cases) pc_suite_print_coverage(out, r);
}
