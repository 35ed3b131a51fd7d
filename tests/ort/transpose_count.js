// ONNX Runtime's side of the transpose-count comparison (tests/nhwc-models/run.sh): for every model named in a
// manifest, create a CPU session at each requested graph optimization level with optimizedModelFilePath set, so ORT
// writes the graph it would run; the Transposes in those files are then counted by tests/nhwc-models/check.py.
// Prints "ok LEVEL NAME" or "FAIL LEVEL NAME: message" per session.
// Usage: node transpose_count.js ORT_NODE_MODULES_DIR MODEL_DIR MANIFEST OUT_DIR LEVEL...
//   LEVEL: disabled | basic | extended | all; files go to OUT_DIR/LEVEL/NAME.onnx
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
    const [ortDir, modelDir, manifest, outDir, ...levels] = process.argv.slice(2);
    if (!ortDir || !modelDir || !manifest || !outDir || levels.length === 0) {
        console.error('usage: node transpose_count.js ORT_NODE_MODULES_DIR MODEL_DIR MANIFEST OUT_DIR LEVEL...');
        process.exit(2);
    }
    const known = ['disabled', 'basic', 'extended', 'all'];
    for (const l of levels) {
        if (!known.includes(l)) {
            console.error(`transpose_count.js: unknown level '${l}' (known: ${known.join(', ')})`);
            process.exit(2);
        }
    }
    const ort = require(path.join(ortDir, 'onnxruntime-node'));
    const names = fs.readFileSync(manifest, 'utf8').split('\n').filter((l) => l.length && !l.startsWith('#'))
        .map((l) => l.split('\t')[0]);
    let failed = 0;
    for (const level of levels) fs.mkdirSync(path.join(outDir, level), {recursive: true});
    for (const name of names) {
        for (const level of levels) {
            const out = path.join(outDir, level, name + '.onnx');
            try {
                const s = await ort.InferenceSession.create(path.join(modelDir, name + '.onnx'), {
                    executionProviders: ['cpu'], graphOptimizationLevel: level, optimizedModelFilePath: out,
                    intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3});
                await s.release();
                if (!fs.existsSync(out)) throw new Error(`ORT wrote no optimized model to ${out}`);
                console.log(`ok ${level} ${name}`);
            } catch (e) {
                failed++;
                console.log(`FAIL ${level} ${name}: ${String(e.message).split('\n')[0]}`);
            }
        }
    }
    process.exit(failed ? 1 : 0);
}
main().catch((e) => { console.error(e); process.exit(4); });
