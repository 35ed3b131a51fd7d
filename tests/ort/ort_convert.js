// Converts ONNX models to the ORT format with ONNX Runtime 1.30 (session option optimizedModelFilePath with
// session.save_model_format = ORT), for the ORT-format loader's corpus (tests/ort/run_ort_corpus.sh).
//
// Usage: node ort_convert.js ORT_NODE_MODULES_DIR LEVEL < manifest
//   manifest lines: "<model.onnx path>\t<output .ort path>"; LEVEL: disabled, basic, extended or all.
//   Prints one line per model: "ok <out>" or "refused <model> <first line of ORT's message>".
'use strict';
const fs = require('fs');
const readline = require('readline');

const [ortDir, level] = process.argv.slice(2);
const ort = require(`${ortDir}/onnxruntime-node`);

(async () => {
    const lines = readline.createInterface({input: process.stdin});
    for await (const line of lines) {
        if (!line) continue;
        const [model, out] = line.split('\t');
        try {
            await ort.InferenceSession.create(model, {
                graphOptimizationLevel: level,
                optimizedModelFilePath: out,
                logSeverityLevel: 4,
                extra: {session: {save_model_format: 'ORT'}},
            });
            console.log(`ok ${out}`);
        } catch (e) {
            fs.rmSync(out, {force: true});
            console.log(`refused ${model} ${String(e.message || e).split('\n')[0]}`);
        }
    }
})().catch((e) => {
    console.error(String(e));
    process.exit(1);
});
