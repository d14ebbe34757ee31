// Times one inference of a model on ONNX Runtime CPU (npm onnxruntime-node) with `threads` intra-op threads (0: its
// default, all cores) and all graph optimisations: best and median of N runs after a warm-up, on zeros of every
// input's shape (symbolic dims as BINDING names them, else 1; int64 inputs as 0). Prints one JSON line; exits 2 with the
// error. BINDING is a JSON object symbol -> extent: the values `kiln run` bound, so that both run the same shapes.
// usage: node ort_run_time.js MODEL RUNS THREADS [BINDING]
const ort = require('onnxruntime-node');

const arrays = {float32: Float32Array, float16: Uint16Array, int64: BigInt64Array, int32: Int32Array,
                uint8: Uint8Array, int8: Int8Array, bool: Uint8Array, float64: Float64Array};

(async () => {
  const [path, runsArg, threadsArg, bindingArg] = process.argv.slice(2);
  const binding = bindingArg ? JSON.parse(bindingArg) : {};
  const runs = Number(runsArg || 3), threads = Number(threadsArg || 1);
  const options = {graphOptimizationLevel: 'all'};
  if (threads > 0) Object.assign(options, {intraOpNumThreads: threads, interOpNumThreads: 1});
  const session = await ort.InferenceSession.create(path, options);
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const meta = session.inputMetadata ? session.inputMetadata[i] : null;
    const dims = meta && meta.shape ? meta.shape.map(d => (typeof d === 'number' && d > 0 ? d : (binding[d] || 1))) : [1];
    const type = meta && meta.type ? meta.type : 'float32';
    const count = dims.reduce((a, b) => a * b, 1);
    feeds[name] = new ort.Tensor(type, new (arrays[type] || Float32Array)(count), dims);
  });
  await session.run(feeds);
  const times = [];
  for (let i = 0; i < runs; ++i) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({best_ms: times[0], median_ms: times[Math.floor(times.length / 2)],
                              version: require('onnxruntime-node/package.json').version}));
})().catch(e => { console.error(String(e).split('\n')[0]); process.exit(2); });
