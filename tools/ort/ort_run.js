// ONNX Runtime as an outside oracle for `passcheck suite --oracle ort` (properties/oracles/ort_oracle.c).
//
// A long-lived server: starting node and loading onnxruntime-node costs ~150 ms, far too much per case, so one
// process serves every request of a suite run. It listens on a Unix socket; every client (the process that started
// it, or any process forked from it) opens its own connection, so a case child killed mid-request cannot desync
// anyone else. It exits when its stdin closes, i.e. when the process that started it is gone.
//
// Usage: node ort_run.js ORT_NODE_MODULES_DIR --listen SOCKET_PATH
//   prints "ready <ORT version>" (or "error <message>") on stdout once, then serves.
//        node ort_run.js ORT_NODE_MODULES_DIR --stdio
//   serves one client on stdin/stdout (for debugging and the per-process fallback), no banner.
//
// Wire format (little-endian), one request then one response at a time per connection:
//   request  = u32 0x524f4350 ("PCOR"), u32 version (1 or 2), u64 body length, body:
//              u32 model length, model bytes (a serialized ModelProto), u32 input count, tensor records
//              version 2 (a timed run, `passcheck bench --compare-ort`) appends u32 optimization level (0 disabled,
//              1 basic, 2 extended, 3 all), u32 intra-op threads, u32 warm-up runs, u32 timed runs
//   response = u32 0x53524350 ("PCRS"), u32 status, u64 body length, body:
//              status 0: u32 output count, tensor records (session.outputNames order); version 2 then appends
//              u32 timed runs, f64 milliseconds per run, f64 RSS bytes before the session, f64 peak RSS bytes
//              otherwise: a UTF-8 message
//   tensor   = u32 name length, name, i32 TensorProto.DataType, u32 rank, i64 dims[rank], u64 byte count, bytes
//   status   = 0 ok, 1 ORT refused the model (session creation), 2 the run failed, 3 an element type this
//              helper cannot pass to/from onnxruntime-node, 4 malformed request
// Sessions: CPU EP, graphOptimizationLevel 'disabled' (we check ORT's kernels, not its optimizer), one intra-op
// and one inter-op thread (the suite runs one worker per core).
'use strict';
const fs = require('fs');
const net = require('net');
const path = require('path');

const REQ_MAGIC = 0x524f4350, RESP_MAGIC = 0x53524350, VERSION = 1, VERSION_TIMED = 2;
const LEVELS = ['disabled', 'basic', 'extended', 'all'];
const ST_OK = 0, ST_REJECTED = 1, ST_RUN_FAILED = 2, ST_UNSUPPORTED = 3, ST_BAD_REQUEST = 4;

// TensorProto.DataType -> [onnxruntime-node type name, typed array constructor]
const DTYPES = {
    1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
    5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
    10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
    13: ['uint64', BigUint64Array],
};
const BY_NAME = {};
for (const [code, [name]] of Object.entries(DTYPES)) BY_NAME[name] = Number(code);

class Unsupported extends Error {}

function parseRequest(body, version) {
    let off = 0;
    const need = (n) => {
        if (off + n > body.length) throw new Error(`request truncated at byte ${off} (need ${n} more)`);
    };
    const u32 = () => { need(4); const v = body.readUInt32LE(off); off += 4; return v; };
    const i32 = () => { need(4); const v = body.readInt32LE(off); off += 4; return v; };
    const i64 = () => { need(8); const v = body.readBigInt64LE(off); off += 8; return v; };
    const bytes = (n) => { need(n); const b = body.subarray(off, off + n); off += n; return b; };
    const model = bytes(u32());
    const n = u32();
    const inputs = [];
    for (let i = 0; i < n; i++) {
        const name = bytes(u32()).toString('utf8');
        const dtype = i32();
        const rank = u32();
        if (rank > 64) throw new Error(`input '${name}': rank ${rank} > 64`);
        const dims = [];
        for (let k = 0; k < rank; k++) dims.push(Number(i64()));
        const nbytes = i64();
        if (nbytes < 0n || nbytes > BigInt(body.length)) throw new Error(`input '${name}': bad byte count`);
        inputs.push({name, dtype, dims, data: bytes(Number(nbytes))});
    }
    let timed = null;
    if (version === VERSION_TIMED) {
        timed = {level: u32(), threads: u32(), warmup: u32(), runs: u32()};
        if (timed.level >= LEVELS.length || timed.threads < 1 || timed.threads > 256 || timed.runs < 1)
            throw new Error(`bad timed-run options ${JSON.stringify(timed)}`);
    }
    if (off !== body.length) throw new Error(`request has ${body.length - off} trailing bytes`);
    return {model, inputs, timed};
}

function toOrtTensor(ort, t) {
    const spec = DTYPES[t.dtype];
    if (!spec) throw new Unsupported(`input '${t.name}': element type ${t.dtype} is not passed to onnxruntime-node`);
    const [name, Ctor] = spec;
    if (t.data.length % Ctor.BYTES_PER_ELEMENT)
        throw new Error(`input '${t.name}': ${t.data.length} bytes is not a whole number of ${name} elements`);
    // copy: typed arrays need an aligned offset, and the request buffer is reused
    const ab = new ArrayBuffer(t.data.length);
    new Uint8Array(ab).set(t.data);
    return new ort.Tensor(name, new Ctor(ab), t.dims);
}

function tensorRecord(name, tensor) {
    const code = BY_NAME[tensor.type];
    if (code === undefined)
        throw new Unsupported(`output '${name}': onnxruntime-node type '${tensor.type}' is not passed back`);
    const d = tensor.data;
    const raw = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
    const nameBuf = Buffer.from(name, 'utf8');
    const head = Buffer.alloc(4 + nameBuf.length + 4 + 4 + 8 * tensor.dims.length + 8);
    let off = head.writeUInt32LE(nameBuf.length, 0);
    off += nameBuf.copy(head, off);
    off = head.writeInt32LE(code, off);
    off = head.writeUInt32LE(tensor.dims.length, off);
    for (const dim of tensor.dims) off = head.writeBigInt64LE(BigInt(dim), off);
    head.writeBigUInt64LE(BigInt(raw.length), off);
    return [head, raw];
}

function frame(status, parts) {
    const len = parts.reduce((s, p) => s + p.length, 0);
    const head = Buffer.alloc(16);
    head.writeUInt32LE(RESP_MAGIC, 0);
    head.writeUInt32LE(status, 4);
    head.writeBigUInt64LE(BigInt(len), 8);
    return [head, ...parts];
}

function firstLine(e) {
    return String(e && e.message !== undefined ? e.message : e).split('\n')[0];
}

async function serve(ort, body, version) {
    let req;
    try {
        req = parseRequest(body, version);
    } catch (e) {
        return frame(ST_BAD_REQUEST, [Buffer.from(firstLine(e))]);
    }
    let feeds = {};
    try {
        for (const t of req.inputs) feeds[t.name] = toOrtTensor(ort, t);
    } catch (e) {
        return frame(e instanceof Unsupported ? ST_UNSUPPORTED : ST_BAD_REQUEST, [Buffer.from(firstLine(e))]);
    }
    const t = req.timed;
    const opts = {executionProviders: ['cpu'], graphOptimizationLevel: t ? LEVELS[t.level] : 'disabled',
                  intraOpNumThreads: t ? t.threads : 1, interOpNumThreads: 1, logSeverityLevel: 3};
    const rssBefore = process.memoryUsage().rss;
    let session;
    try {
        session = await ort.InferenceSession.create(new Uint8Array(req.model), opts);
    } catch (e) {
        return frame(ST_REJECTED, [Buffer.from(String(e && e.message !== undefined ? e.message : e))]);
    }
    try {
        let result;
        const times = [];
        try {
            if (t) {
                for (let r = 0; r < t.warmup; r++) await session.run(feeds);
                for (let r = 0; r < t.runs; r++) {
                    const t0 = process.hrtime.bigint();
                    result = await session.run(feeds);
                    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
                }
            } else {
                result = await session.run(feeds);
            }
        } catch (e) {
            return frame(ST_RUN_FAILED, [Buffer.from(String(e && e.message !== undefined ? e.message : e))]);
        }
        const count = Buffer.alloc(4);
        count.writeUInt32LE(session.outputNames.length, 0);
        const parts = [count];
        try {
            for (const name of session.outputNames) parts.push(...tensorRecord(name, result[name]));
        } catch (e) {
            return frame(e instanceof Unsupported ? ST_UNSUPPORTED : ST_RUN_FAILED, [Buffer.from(firstLine(e))]);
        }
        if (t) {
            // maxRSS is in kilobytes and covers the process's life: with one timed request per process (as
            // `passcheck bench` sends) its excess over rssBefore is what the session and its runs took
            const tail = Buffer.alloc(4 + 8 * times.length + 16);
            let off = tail.writeUInt32LE(times.length, 0);
            for (const ms of times) off = tail.writeDoubleLE(ms, off);
            off = tail.writeDoubleLE(rssBefore, off);
            tail.writeDoubleLE(process.resourceUsage().maxRSS * 1024, off);
            parts.push(tail);
        }
        return frame(ST_OK, parts);
    } finally {
        feeds = null;
        await session.release();
    }
}

// One client stream: requests are served strictly one after the other.
function attach(ort, input, output) {
    let chunks = [], have = 0, busy = false, closed = false;
    const pump = async () => {
        if (busy) return;
        busy = true;
        try {
            for (;;) {
                if (have < 16) break;
                let buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
                chunks = [buf];
                const magic = buf.readUInt32LE(0), version = buf.readUInt32LE(4);
                const len = Number(buf.readBigUInt64LE(8));
                if (magic !== REQ_MAGIC || (version !== VERSION && version !== VERSION_TIMED)) {
                    // not our protocol: answer once and drop the connection (nothing after it can be framed)
                    for (const p of frame(ST_BAD_REQUEST, [Buffer.from('bad magic or version')])) output.write(p);
                    closed = true;
                    if (output.end) output.end();
                    return;
                }
                if (have < 16 + len) break;
                const body = buf.subarray(16, 16 + len);
                const rest = buf.subarray(16 + len);
                chunks = rest.length ? [Buffer.from(rest)] : [];
                have = rest.length;
                const parts = await serve(ort, body, version);
                if (closed) return;
                for (const p of parts) output.write(p);
            }
        } finally {
            // data that arrived during `serve` was appended to chunks and read by the loop above
            busy = false;
        }
    };
    input.on('data', (d) => {
        chunks.push(d);
        have += d.length;
        pump();
    });
    input.on('error', () => { closed = true; });
    input.on('close', () => { closed = true; });
    if (output !== input) output.on('error', () => { closed = true; });
}

function main() {
    const [ortDir, mode, sockPath] = process.argv.slice(2);
    if (!ortDir || (mode !== '--listen' && mode !== '--stdio') || (mode === '--listen' && !sockPath)) {
        console.error('usage: node ort_run.js ORT_NODE_MODULES_DIR (--listen SOCKET_PATH | --stdio)');
        process.exit(2);
    }
    let ort;
    try {
        ort = require(path.join(ortDir, 'onnxruntime-node'));
    } catch (e) {
        const msg = `cannot load onnxruntime-node from ${path.join(ortDir, 'onnxruntime-node')}: ${firstLine(e)}`;
        if (mode === '--listen') process.stdout.write(`error ${msg}\n`);
        else console.error(msg);
        process.exit(3);
    }
    if (mode === '--stdio') {
        attach(ort, process.stdin, process.stdout);
        return;
    }
    const server = net.createServer((sock) => attach(ort, sock, sock));
    server.on('error', (e) => {
        process.stdout.write(`error cannot listen on ${sockPath}: ${firstLine(e)}\n`);
        process.exit(3);
    });
    server.listen(sockPath, () => {
        const v = ort.env && ort.env.versions ? ort.env.versions.common : '?';
        process.stdout.write(`ready ${v}\n`);
    });
    // The starter holds our stdin: when it exits (normally, killed, or crashed) we go too. A starter that was
    // killed cannot remove our private folder, so we do (only a folder named like the ones it creates).
    const ownerGone = () => {
        const dir = path.dirname(sockPath);
        if (path.basename(dir).startsWith('pc-ort-')) {
            for (const f of [sockPath, path.join(dir, 'stderr.log')]) {
                try { fs.unlinkSync(f); } catch (e) { /* already gone */ }
            }
            try { fs.rmdirSync(dir); } catch (e) { /* not empty or gone: leave it */ }
        }
        process.exit(0);
    };
    process.stdin.on('end', ownerGone);
    process.stdin.on('close', ownerGone);
    process.stdin.on('error', ownerGone);
    process.stdout.on('error', ownerGone); // the starter died before reading our banner
    process.stdin.resume();
}

main();
