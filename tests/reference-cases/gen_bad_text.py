"""Malformed TfIdfVectorizer models that the executor must refuse cleanly: an unknown mode, min_gram_length above
max_gram_length or 0, ngram_indexes of the wrong size or negative, ngram_counts that are ragged or do not
start at 0, weights of the wrong size, the same n-gram twice in the pool, no pool, a missing max_skip_count,
an int64 input with a string pool, a rank-3 input, and (declined) two n-grams at one output coordinate in IDF
mode, which the spec and ONNX Runtime weigh differently. Each case's expected outcome goes to
OUT/expected-outcomes.txt; outputs are dummies.

Usage: /usr/bin/python3 gen_bad_text.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto

import casegen


def main():
    cases = casegen.BadCases(casegen.out_dir_from_argv())

    def case(name, x, y, xtype, expect="error", why="", **attrs):
        assert casegen.tensor_type(np.asarray(x).dtype) == xtype, name
        cases.single_node(name, "TfIdfVectorizer", [x], 9, attrs, outputs=[y], expect=expect, why=why,
                        ir_version=4, in_prefix="X", out_prefix="Y")

    # Error cases (a clear [bad-attribute] / [bad-type] / [bad-shape] error; the output file is a placeholder).
    base = dict(min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 2],
                ngram_indexes=[0, 1, 2, 3], pool_int64s=[5, 7, 5, 6, 6, 5])
    x = np.array([5, 6], dtype=np.int64)
    y = np.zeros(4, dtype=np.float32)

    def bad(name, expect="error", why="", **over):
        a = dict(base)
        a.update(over)
        a = {k: v for k, v in a.items() if v is not None}
        case("bad_" + name, x, y, TensorProto.INT64, expect, why, **a)

    bad("mode", mode="BM25")
    bad("min_gt_max", mode="TF", min_gram_length=3)
    bad("min_zero", mode="TF", min_gram_length=0)
    bad("indexes_size", mode="TF", ngram_indexes=[0, 1, 2])
    bad("counts_ragged", mode="TF", ngram_counts=[0, 3])
    bad("counts_start", mode="TF", ngram_counts=[1, 2])
    bad("weights_size", mode="TFIDF", weights=[1.0])
    bad("dup_gram", mode="TF", pool_int64s=[5, 7, 5, 6, 5, 6])
    bad("no_pool", mode="TF", pool_int64s=None)
    bad("neg_index", mode="TF", ngram_indexes=[0, -1, 2, 3])
    bad("dup_index_idf", "unsupported", "the spec and ONNX Runtime weigh two n-grams at one coordinate differently",
        mode="IDF", ngram_indexes=[0, 1, 2, 2])
    bad("missing_skip", mode="TF", max_skip_count=None)
    # type mismatch: int input with pool_strings; rank 3 input
    case("bad_type_strings_pool", x, y, TensorProto.INT64, mode="TF", min_gram_length=1, max_gram_length=1,
         max_skip_count=0, ngram_counts=[0], ngram_indexes=[0, 1, 2, 3], pool_strings=["a", "b", "c", "d"])
    case("bad_rank3", np.zeros((1, 1, 2), dtype=np.int64), np.zeros((1, 4), dtype=np.float32), TensorProto.INT64,
         mode="TF", **base)
    cases.close()


if __name__ == "__main__":
    main()
