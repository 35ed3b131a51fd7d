// Peer timing for bench/run_optimize.sh: ONNX Runtime's (onnxruntime-node, CPU, one thread) session creation on a
// model file at one graph optimization level — parse, graph build, optimizers at that level, partitioning and
// kernel creation. Prints "ort_session FILE LEVEL seconds" (the minimum of REPS sessions).
// Usage: node ort_session.js ORT_NODE_MODULES_DIR MODEL LEVEL [REPS]    LEVEL: disabled | basic | extended | all
'use strict';
const path = require('path');

async function main() {
    const [ortDir, model, level, repsArg] = process.argv.slice(2);
    const reps = repsArg ? parseInt(repsArg, 10) : 3;
    if (!ortDir || !model || !['disabled', 'basic', 'extended', 'all'].includes(level) || !(reps > 0)) {
        console.error('usage: node ort_session.js ORT_NODE_MODULES_DIR MODEL disabled|basic|extended|all [REPS]');
        process.exit(2);
    }
    const ort = require(path.join(ortDir, 'onnxruntime-node'));
    let best = Infinity;
    for (let r = 0; r < reps; r++) {
        const t0 = process.hrtime.bigint();
        const s = await ort.InferenceSession.create(model, {
            executionProviders: ['cpu'], graphOptimizationLevel: level, intraOpNumThreads: 1, interOpNumThreads: 1,
            logSeverityLevel: 3});
        best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
        await s.release();
    }
    console.log(`ort_session ${model} ${level} ${best.toFixed(6)}`);
}
main().catch((e) => { console.error(e); process.exit(4); });
