// Runs each original model and passcheck's optimized version on ONNX Runtime (CPU, graph optimizations disabled,
// so only passcheck's rewrite differs) with the same seeded random inputs, and compares every output by name:
// element type and dims exact, integers exact, floats NaN positions and inf signs first, then
// |opt - orig| <= atol + rtol * |orig| with the model's tolerance from the manifest (tests/nhwc-models/README.md).
// Usage: node compare_ort.js ORT_NODE_MODULES_DIR MODEL_DIR MANIFEST OPT_DIR [SEED]
// Prints "ok NAME max_abs_err" or "FAIL NAME: reason" per model; exit 1 when any model fails.
'use strict';
const fs = require('fs');
const path = require('path');

// mulberry32: a small seeded generator, so every run feeds the same inputs
function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6D2B79F5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

function compareTensor(name, a, b, rtol, atol) {
    if (a.type !== b.type) return {err: `output '${name}': type ${b.type}, want ${a.type}`};
    if (JSON.stringify(a.dims) !== JSON.stringify(b.dims))
        return {err: `output '${name}': dims [${b.dims}], want [${a.dims}]`};
    const isFloat = a.type === 'float32' || a.type === 'float64';
    let maxErr = 0;
    for (let i = 0; i < a.data.length; i++) {
        const e = a.data[i], g = b.data[i];
        if (!isFloat) {
            if (e !== g) return {err: `output '${name}' index ${i}: got ${g}, want ${e} (exact)`};
            continue;
        }
        if (Number.isNaN(e) || Number.isNaN(g)) {
            if (Number.isNaN(e) !== Number.isNaN(g)) return {err: `output '${name}' index ${i}: got ${g}, want ${e}`};
            continue;
        }
        if (!Number.isFinite(e) || !Number.isFinite(g)) {
            if (e !== g) return {err: `output '${name}' index ${i}: got ${g}, want ${e}`};
            continue;
        }
        const d = Math.abs(e - g);
        maxErr = Math.max(maxErr, d);
        if (d > atol + rtol * Math.abs(e))
            return {err: `output '${name}' index ${i}: got ${g}, want ${e} (abs error ${d} > ${atol} + ${rtol}*|want|)`};
    }
    return {maxErr};
}

async function main() {
    const [ortDir, modelDir, manifest, optDir, seedArg] = process.argv.slice(2);
    if (!ortDir || !modelDir || !manifest || !optDir) {
        console.error('usage: node compare_ort.js ORT_NODE_MODULES_DIR MODEL_DIR MANIFEST OPT_DIR [SEED]');
        process.exit(2);
    }
    const seed = seedArg ? parseInt(seedArg, 10) : 1;
    const ort = require(path.join(ortDir, 'onnxruntime-node'));
    const opts = {executionProviders: ['cpu'], graphOptimizationLevel: 'disabled', intraOpNumThreads: 1,
                  interOpNumThreads: 1, logSeverityLevel: 3};
    const lines = fs.readFileSync(manifest, 'utf8').split('\n').filter((l) => l.length && !l.startsWith('#'));
    let failed = 0;
    for (const line of lines) {
        const [name, rtolText, atolText, inputsText] = line.split('\t');
        const rtol = parseFloat(rtolText), atol = parseFloat(atolText);
        const optPath = path.join(optDir, name + '.onnx');
        try {
            if (!fs.existsSync(optPath)) throw new Error(`no optimized model ${optPath}`);
            const next = rng(seed);
            const feeds = {};
            for (const spec of inputsText.split(';')) {
                const [input, dimsText] = spec.split(':');
                const dims = dimsText.split(',').map((d) => parseInt(d, 10));
                const data = new Float32Array(dims.reduce((x, y) => x * y, 1));
                for (let i = 0; i < data.length; i++) data[i] = next() * 4 - 2;
                feeds[input] = new ort.Tensor('float32', data, dims);
            }
            const a = await ort.InferenceSession.create(path.join(modelDir, name + '.onnx'), opts);
            const b = await ort.InferenceSession.create(optPath, opts);
            if (JSON.stringify(a.outputNames) !== JSON.stringify(b.outputNames))
                throw new Error(`outputs [${b.outputNames}], want [${a.outputNames}]`);
            const ra = await a.run(feeds), rb = await b.run(feeds);
            let maxErr = 0;
            for (const o of a.outputNames) {
                const r = compareTensor(o, ra[o], rb[o], rtol, atol);
                if (r.err) throw new Error(r.err);
                maxErr = Math.max(maxErr, r.maxErr);
            }
            await a.release();
            await b.release();
            console.log(`ok ${name} ${maxErr.toExponential(2)}`);
        } catch (e) {
            failed++;
            console.log(`FAIL ${name}: ${String(e.message).split('\n')[0]}`);
        }
    }
    process.exit(failed ? 1 : 0);
}
main().catch((e) => { console.error(e); process.exit(4); });
