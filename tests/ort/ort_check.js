// Checks that ONNX Runtime loads the models passcheck writes: for every line "original<TAB>saved" of a
// manifest, if ORT can create a session for the original it must also create one for the saved file, with the
// same input and output names. Usage: node ort_check.js ORT_NODE_MODULES_DIR MANIFEST [EVERY_NTH]
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
    const [ortDir, manifestPath, everyArg] = process.argv.slice(2);
    if (!ortDir || !manifestPath) {
        console.error('usage: node ort_check.js ORT_NODE_MODULES_DIR MANIFEST [EVERY_NTH]');
        process.exit(2);
    }
    const every = everyArg ? parseInt(everyArg, 10) : 1;
    const ort = require(path.join(ortDir, 'onnxruntime-node'));
    const lines = fs.readFileSync(manifestPath, 'utf8').split('\n').filter((l) => l.length);
    let passed = 0, failed = 0, skipped = 0;
    const opts = {graphOptimizationLevel: 'disabled', logSeverityLevel: 3};
    for (let i = 0; i < lines.length; i += every) {
        const [orig, saved] = lines[i].split('\t');
        let a;
        try {
            a = await ort.InferenceSession.create(orig, opts);
        } catch (e) {
            skipped++; // ORT itself cannot load the original: nothing to compare against
            continue;
        }
        try {
            const b = await ort.InferenceSession.create(saved, opts);
            const same = JSON.stringify(a.inputNames) === JSON.stringify(b.inputNames) &&
                         JSON.stringify(a.outputNames) === JSON.stringify(b.outputNames);
            if (!same) throw new Error(`inputs/outputs differ: ${a.inputNames}/${a.outputNames} vs ` +
                                       `${b.inputNames}/${b.outputNames}`);
            passed++;
            await b.release();
        } catch (e) {
            failed++;
            console.log(`FAIL ${orig} -> ${saved}: ${String(e.message).split('\n')[0]}`);
        }
        await a.release();
    }
    console.log(`ort_check: ONNX Runtime ${ort.env.versions ? ort.env.versions.common : ''}`);
    console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
    process.exit(failed || passed === 0 ? 1 : 0);
}
main().catch((e) => { console.error(e); process.exit(4); });
