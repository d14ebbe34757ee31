// Times one model on ONNX Runtime CPU (npm onnxruntime-node): median and best of N runs after a warm-up, on an input
// of 0.5 everywhere with the model's first input shape (symbolic dims as 1). Prints one JSON line.
const ort = require('onnxruntime-node');

(async () => {
  const [path, runsArg, level] = process.argv.slice(2);
  const runs = Number(runsArg || 5);
  const session = await ort.InferenceSession.create(path, {intraOpNumThreads: 2, graphOptimizationLevel: level || 'all'});
  const name = session.inputNames[0];
  const meta = session.inputMetadata ? session.inputMetadata[0] : null;
  const dims = meta && meta.shape ? meta.shape.map(d => (typeof d === 'number' && d > 0 ? d : 1)) : [1, 3, 224, 224];
  const count = dims.reduce((a, b) => a * b, 1);
  const x = new ort.Tensor('float32', new Float32Array(count).fill(0.5), dims);
  await session.run({[name]: x});
  const times = [];
  for (let i = 0; i < runs; ++i) {
    const t = process.hrtime.bigint();
    await session.run({[name]: x});
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({median_ms: times[Math.floor(times.length / 2)], best_ms: times[0],
                              version: require('onnxruntime-node/package.json').version}));
})().catch(e => { console.error(String(e)); process.exit(2); });
