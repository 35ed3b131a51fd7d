// Peer timing for bench/run_ref.sh: ONNX Runtime (onnxruntime-node, CPU) running the same model on the same
// float input (DIMS, default 1x64; x[i] = ((i mod 64) - 32) / 16, as bench_ref makes it). Prints
// "ort_run FILE runs us_per_run" (median of 5 batches).
// Usage: node ort_time.js ORT_NODE_MODULES_DIR MODEL RUNS [DIMS]
'use strict';
const path = require('path');

async function main() {
    const [ortDir, model, runsArg, dimsArg] = process.argv.slice(2);
    const dims = (dimsArg || '1x64').split('x').map((d) => parseInt(d, 10));
    const runs = parseInt(runsArg, 10);
    if (!ortDir || !model || !(runs > 0)) {
        console.error('usage: node ort_time.js ORT_NODE_MODULES_DIR MODEL RUNS');
        process.exit(2);
    }
    const ort = require(path.join(ortDir, 'onnxruntime-node'));
    // one thread and no graph optimizations: the closest ORT gets to "run each node as written"
    const session = await ort.InferenceSession.create(model, {
        graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3});
    const count = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(count);
    for (let i = 0; i < count; i++) data[i] = ((i % 64) - 32) / 16;
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, dims)};
    const batches = [];
    for (let b = 0; b < 5; b++) {
        const t0 = process.hrtime.bigint();
        for (let r = 0; r < runs; r++) await session.run(feeds);
        batches.push(Number(process.hrtime.bigint() - t0) / 1e3 / runs);
    }
    batches.sort((a, b) => a - b);
    console.log(`ort_run ${model} ${runs} ${batches[2].toFixed(3)}`);
}
main().catch((e) => { console.error(e); process.exit(4); });
