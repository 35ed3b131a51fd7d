// ONNX Runtime 1.30 runs the ORT-format files passcheck writes: for every line "original<TAB>saved<TAB>case dir"
// of a manifest, when ORT can create a session for the original ONNX model it must create one for the saved .ort
// file, with the same input and output names, and both must compute the same outputs, bit for bit, on the
// case's recorded inputs (test_data_set_0/input_N.pb). Prints a summary line; exit 1 on any mismatch.
// Usage: node ort_run_check.js ORT_NODE_MODULES_DIR MANIFEST
'use strict';
const fs = require('fs');
const path = require('path');

// TensorProto, the fields the backend data uses: dims 1, data_type 2, float_data 4, int32_data 5,
// string_data 6, int64_data 7, name 8, raw_data 9, double_data 10, uint64_data 11.
function readVarint(buf, pos) {
    let v = 0n, shift = 0n;
    for (;;) {
        const b = buf[pos++];
        v |= BigInt(b & 0x7f) << shift;
        if (!(b & 0x80)) return [v, pos];
        shift += 7n;
    }
}

function decodeTensor(buf) {
    const t = {dims: [], type: 0, raw: null, floats: [], ints32: [], ints64: [], doubles: [], uint64s: [], strings: []};
    let pos = 0;
    const packedOrOne = (wire, list, read) => {
        if (wire === 2) {
            const [len, p] = readVarint(buf, pos);
            const end = p + Number(len);
            pos = p;
            while (pos < end) pos = read(pos, list);
        } else {
            pos = read(pos, list);
        }
    };
    const varintInto = (p, list) => { const [v, q] = readVarint(buf, p); list.push(v); return q; };
    const floatInto = (p, list) => { list.push(buf.readFloatLE(p)); return p + 4; };
    const doubleInto = (p, list) => { list.push(buf.readDoubleLE(p)); return p + 8; };
    while (pos < buf.length) {
        const [key, p] = readVarint(buf, pos);
        pos = p;
        const field = Number(key >> 3n), wire = Number(key & 7n);
        if (field === 1) packedOrOne(wire, t.dims, varintInto);
        else if (field === 2) { const [v, q] = readVarint(buf, pos); t.type = Number(v); pos = q; }
        else if (field === 4) packedOrOne(wire, t.floats, floatInto);
        else if (field === 5) packedOrOne(wire, t.ints32, varintInto);
        else if (field === 7) packedOrOne(wire, t.ints64, varintInto);
        else if (field === 10) packedOrOne(wire, t.doubles, doubleInto);
        else if (field === 11) packedOrOne(wire, t.uint64s, varintInto);
        else if (wire === 2) {
            const [len, q] = readVarint(buf, pos);
            const bytes = buf.subarray(q, q + Number(len));
            if (field === 9) t.raw = bytes;
            else if (field === 6) t.strings.push(bytes.toString('utf8'));
            pos = q + Number(len);
        } else if (wire === 0) { pos = readVarint(buf, pos)[1]; }
        else if (wire === 1) pos += 8;
        else if (wire === 5) pos += 4;
        else throw new Error(`wire type ${wire}`);
    }
    return t;
}

const TYPES = {1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
               5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
               10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
               13: ['uint64', BigUint64Array]};

function toOrt(ort, t) {
    const dims = t.dims.map(Number);
    const count = dims.reduce((a, b) => a * b, 1);
    if (t.type === 8) return new ort.Tensor('string', t.strings, dims);
    const spec = TYPES[t.type];
    if (!spec) return null;
    const [name, Arr] = spec;
    let data;
    if (t.raw) {
        const copy = Buffer.from(t.raw);
        data = new Arr(copy.buffer, copy.byteOffset, count);
    } else {
        const src = t.type === 1 ? t.floats : t.type === 11 ? t.doubles : t.type === 7 ? t.ints64
                  : t.type === 13 || t.type === 12 ? t.uint64s : t.ints32;
        data = new Arr(count);
        for (let i = 0; i < count; i++) {
            const v = src[i];
            data[i] = Arr === BigInt64Array ? BigInt.asIntN(64, BigInt(v)) : Arr === BigUint64Array ? BigInt(v)
                    : typeof v === 'bigint' ? Number(BigInt.asIntN(32, v)) : v;
        }
    }
    return new ort.Tensor(name, data, dims);
}

function sameTensor(a, b) {
    if (a.type !== b.type || JSON.stringify(a.dims) !== JSON.stringify(b.dims)) return false;
    if (a.type === 'string') return JSON.stringify(a.data) === JSON.stringify(b.data);
    const x = Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength);
    const y = Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength);
    return x.equals(y);
}

async function main() {
    const [ortDir, manifestPath] = process.argv.slice(2);
    const ort = require(path.join(ortDir, 'onnxruntime-node'));
    const opts = {graphOptimizationLevel: 'disabled', logSeverityLevel: 4};
    let same = 0, failed = 0, skipped = 0, noInputs = 0;
    for (const line of fs.readFileSync(manifestPath, 'utf8').split('\n').filter((l) => l.length)) {
        const [orig, saved, caseDir] = line.split('\t');
        let a, b;
        try { a = await ort.InferenceSession.create(orig, opts); } catch (e) { skipped++; continue; }
        try { b = await ort.InferenceSession.create(saved, opts); } catch (e) {
            console.log(`FAIL ${saved}: ORT refuses it: ${String(e.message || e).split('\n')[0]}`);
            failed++;
            continue;
        }
        if (JSON.stringify(a.inputNames) !== JSON.stringify(b.inputNames) ||
            JSON.stringify(a.outputNames) !== JSON.stringify(b.outputNames)) {
            console.log(`FAIL ${saved}: inputs/outputs ${b.inputNames}/${b.outputNames}, want ${a.inputNames}/${a.outputNames}`);
            failed++;
            continue;
        }
        const feeds = {};
        let usable = true;
        for (let i = 0; i < a.inputNames.length && usable; i++) {
            const f = path.join(caseDir, 'test_data_set_0', `input_${i}.pb`);
            if (!fs.existsSync(f)) { usable = false; break; }
            try { // a SequenceProto or OptionalProto input is not a TensorProto: not usable here
                const t = toOrt(ort, decodeTensor(fs.readFileSync(f)));
                if (!t) usable = false; else feeds[a.inputNames[i]] = t;
            } catch (e) { usable = false; }
        }
        if (!usable) { noInputs++; continue; }
        let ra, rb;
        try { ra = await a.run(feeds); } catch (e) { skipped++; continue; }
        try { rb = await b.run(feeds); } catch (e) {
            console.log(`FAIL ${saved}: runs the original but not ours: ${String(e.message || e).split('\n')[0]}`);
            failed++;
            continue;
        }
        const bad = a.outputNames.filter((n) => !sameTensor(ra[n], rb[n]));
        if (bad.length) { console.log(`FAIL ${saved}: outputs differ: ${bad}`); failed++; } else same++;
    }
    console.log(`ORT ran ${same} of our ORT files with the originals' outputs, ${failed} failed, ${skipped} skipped ` +
                `(ORT refuses or cannot run the original), ${noInputs} without usable recorded inputs`);
    process.exit(failed ? 1 : 0);
}
main().catch((e) => { console.error(String(e)); process.exit(1); });
