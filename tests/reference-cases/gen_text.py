"""TfIdfVectorizer: string and int32/int64 inputs, rank 1 and 2, TF / IDF / TFIDF with and without weights,
uni/bi/trigrams, skips (including a max_skip_count of 2^62, clamped to the row), permuted ngram_indexes, empty
rows. Expected outputs are hand-counted n-grams (each case's comment shows the count); no runtime computes
them.

Usage: /usr/bin/python3 gen_text.py OUT_DIR
"""
import numpy as np
from onnx import TensorProto

import casegen

OUT = None


def case(name, x, y, xtype, **attrs):
    """One TfIdfVectorizer (opset 9) on X (element type xtype) with expected float Y."""
    assert casegen.tensor_type(np.asarray(x).dtype) == xtype, name
    casegen.single_node_case(OUT, name, "TfIdfVectorizer", [x], [y], 9, attrs, ir_version=4, in_prefix="X",
                             out_prefix="Y")


def main():
    global OUT
    OUT = casegen.out_dir_from_argv()
    # A: strings, rank 2, TF, uni+bigrams, skip 1.
    # row0 a b a c: a=2 b=1; pairs d1 ab ba ac, d2 aa bc -> ab=1 ac=1 bb=0
    # row1 c a b b: a=1 b=2; pairs d1 ca ab bb, d2 cb ab  -> ab=2 ac=0 bb=1
    case("tfidf_strings_batch_skip1",
         np.array([["a", "b", "a", "c"], ["c", "a", "b", "b"]], dtype=object),
         np.array([[2, 1, 1, 1, 0], [1, 2, 2, 0, 1]], dtype=np.float32), TensorProto.STRING,
         mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
         ngram_counts=[0, 2], ngram_indexes=[0, 1, 2, 3, 4], pool_strings=["a", "b", "a", "b", "a", "c", "b", "b"])

    # B: TFIDF with weights, rank 1 int64. counts: 5->2, 7->1, (5,6)->2, (6,5)->1
    # Y = [2*0.5, 1*2, 2*0.25, 1*3]
    wb = dict(min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 2],
              ngram_indexes=[0, 1, 2, 3], weights=[0.5, 2.0, 0.25, 3.0], pool_int64s=[5, 7, 5, 6, 6, 5])
    x_b = np.array([5, 6, 5, 6, 7], dtype=np.int64)
    case("tfidf_tfidf_weights_rank1", x_b, np.array([1.0, 2.0, 0.5, 3.0], dtype=np.float32), TensorProto.INT64,
         mode="TFIDF", **wb)
    # B2: same in IDF: counts truncated to 1 -> Y = weights
    case("tfidf_idf_weights_rank1", x_b, np.array([0.5, 2.0, 0.25, 3.0], dtype=np.float32), TensorProto.INT64,
         mode="IDF", **wb)
    # B3: TFIDF without weights = TF counts
    wb2 = dict(wb); del wb2["weights"]
    case("tfidf_tfidf_noweights_rank1", x_b, np.array([2, 1, 2, 1], dtype=np.float32), TensorProto.INT64,
         mode="TFIDF", **wb2)

    # C: int32 rank 1, bigrams only (unigram 1 at coordinate 4 is not counted: min 2), skip 2, permuted coordinates.
    # x = 1 2 3 1 2; pairs d1: 12 23 31 12; d2: 13 21 32; d3: 11 22 -> (1,2)=2 at coord 3, (2,1)=1 at coord 0
    case("tfidf_int32_bigrams_skip2_permuted",
         np.array([1, 2, 3, 1, 2], dtype=np.int32), np.array([1, 0, 0, 2, 0], dtype=np.float32), TensorProto.INT32,
         mode="TF", min_gram_length=2, max_gram_length=2, max_skip_count=2,
         ngram_counts=[0, 1], ngram_indexes=[4, 3, 0], pool_int64s=[1, 1, 2, 2, 1])

    # D: trigrams with skip 1: (1,3,5) d2 from 0, (2,4,6) d2 from 1, (1,2,3) d1 from 0 -> 1 each
    case("tfidf_trigrams_skip1",
         np.array([1, 2, 3, 4, 5, 6], dtype=np.int64), np.array([1, 1, 1], dtype=np.float32), TensorProto.INT64,
         mode="TF", min_gram_length=3, max_gram_length=3, max_skip_count=1,
         ngram_counts=[0, 0, 0], ngram_indexes=[0, 1, 2], pool_int64s=[1, 3, 5, 2, 4, 6, 1, 2, 3])
    # D2: same with skip 0: only (1,2,3)
    case("tfidf_trigrams_skip0",
         np.array([1, 2, 3, 4, 5, 6], dtype=np.int64), np.array([0, 0, 1], dtype=np.float32), TensorProto.INT64,
         mode="TF", min_gram_length=3, max_gram_length=3, max_skip_count=0,
         ngram_counts=[0, 0, 0], ngram_indexes=[0, 1, 2], pool_int64s=[1, 3, 5, 2, 4, 6, 1, 2, 3])

    # E: huge max_skip_count (distance clamped to the row), unigram 3 counted once per position (2), not per skip.
    # x = 3 9 3: (3,3) d2 -> 1; (3,9) d1 -> 1
    case("tfidf_huge_skip",
         np.array([[3, 9, 3]], dtype=np.int64), np.array([[2, 1, 1]], dtype=np.float32), TensorProto.INT64,
         mode="TF", min_gram_length=1, max_gram_length=5, max_skip_count=2**62,
         ngram_counts=[0, 1], ngram_indexes=[0, 1, 2], pool_int64s=[3, 3, 3, 3, 9])

    # F: empty rows [2, 0] -> zeros [2, 3]
    case("tfidf_empty_rows",
         np.zeros((2, 0), dtype=np.int64), np.zeros((2, 3), dtype=np.float32), TensorProto.INT64,
         mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=3,
         ngram_counts=[0, 1], ngram_indexes=[0, 1, 2], pool_int64s=[3, 3, 3, 3, 9])


if __name__ == "__main__":
    main()
