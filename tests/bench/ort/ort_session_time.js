// Times ONNX Runtime CPU session creation (graph optimisation at the given level, default 'extended': what
// `kiln compile` is compared with) for one model: best and median of N creations after one warm-up. One JSON line.
const ort = require('onnxruntime-node');

(async () => {
  const [path, runsArg, level] = process.argv.slice(2);
  const runs = Number(runsArg || 5);
  const options = {intraOpNumThreads: 2, graphOptimizationLevel: level || 'extended', logSeverityLevel: 3};
  await ort.InferenceSession.create(path, options);
  const times = [];
  for (let i = 0; i < runs; ++i) {
    const t = process.hrtime.bigint();
    const s = await ort.InferenceSession.create(path, options);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (s.release) await s.release();
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({best_ms: times[0], median_ms: times[Math.floor(times.length / 2)],
                              version: require('onnxruntime-node/package.json').version}));
})().catch(e => { console.error(String(e)); process.exit(2); });
