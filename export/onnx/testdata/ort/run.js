// run.js runs an ONNX model in ONNX Runtime (onnxruntime-node, CPU) on
// rows read from a file, for the Go tests and benchmarks of export/onnx.
//
//   node run.js REQUESTS.json
//
// REQUESTS is a JSON array of requests, run in order in one process (the
// runtime loads once). Each holds:
//   model      path of the .onnx file
//   input      path of the rows: rows × cols float64, little-endian
//   rows, cols their shape
//   float32    feed the rows as float32 (a float32 graph)
//   batch      rows per run (default: all)
//   out        path of the JSON written: {outputs: {NAME: {type, dims,
//              data}}} with every output of every batch, concatenated
//   threads    intra-op threads (default 1)
//   repeat     optional: time `repeat` runs of the first `batch` rows
//              after `warmup` runs, and write {seconds_per_run} instead
//
// The session is created with the runtime's default checks: a graph the
// ONNX checker refuses fails to load, and the error is printed.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const reqs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (const req of reqs) {
    try {
      await runOne(req);
    } catch (e) {
      throw new Error(`${req.model}: ${e && e.message ? e.message : e}`);
    }
  }
}

async function runOne(req) {
  const session = await ort.InferenceSession.create(req.model, {
    intraOpNumThreads: req.threads || 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const inputName = session.inputNames[0];
  const raw = fs.readFileSync(req.input);
  const all = new Float64Array(raw.buffer, raw.byteOffset, req.rows * req.cols);
  const batch = req.batch || req.rows;
  const feed = (lo, hi) => {
    const n = hi - lo;
    const src = all.subarray(lo * req.cols, hi * req.cols);
    const data = req.float32 ? Float32Array.from(src) : Float64Array.from(src);
    return { [inputName]: new ort.Tensor(req.float32 ? 'float32' : 'float64', data, [n, req.cols]) };
  };
  if (req.repeat) {
    const f = feed(0, Math.min(batch, req.rows));
    for (let i = 0; i < (req.warmup || 3); i++) await session.run(f);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < req.repeat; i++) await session.run(f);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    fs.writeFileSync(req.out, JSON.stringify({ seconds_per_run: s / req.repeat, runs: req.repeat }));
    return;
  }
  const outputs = {};
  for (const name of session.outputNames) outputs[name] = { type: '', dims: [], data: [] };
  for (let lo = 0; lo < req.rows; lo += batch) {
    const hi = Math.min(lo + batch, req.rows);
    const res = await session.run(feed(lo, hi));
    for (const name of session.outputNames) {
      const t = res[name];
      const o = outputs[name];
      o.type = t.type;
      o.dims = t.dims.map(Number);
      for (const v of t.data) o.data.push(typeof v === 'bigint' ? Number(v) : v);
    }
  }
  for (const name of session.outputNames) outputs[name].dims[0] = req.rows;
  fs.writeFileSync(req.out, JSON.stringify({ outputs }));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
