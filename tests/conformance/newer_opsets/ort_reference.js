// Step 2 of generate.py: runs every case under OUT with onnxruntime-node (one intra-op thread, no graph
// optimisation, so each op runs as written) and writes each output's raw bytes and a description (ort.json).
// Usage: node ort_reference.js OUT   (with onnxruntime-node installed where node can find it: NODE_PATH)
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const arrays = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array, uint8: Uint8Array,
  int8: Int8Array, bool: Uint8Array, uint16: Uint16Array, int16: Int16Array,
};
const ortType = { float32: 'float32', float64: 'float64', int64: 'int64', int32: 'int32', uint8: 'uint8', int8: 'int8',
                  bool: 'bool', uint16: 'uint16', int16: 'int16' };
const npType = { float32: 'float32', float64: 'float64', int64: 'int64', int32: 'int32', uint8: 'uint8', int8: 'int8',
                 bool: 'bool', uint16: 'uint16', int16: 'int16' };

async function runCase(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json')));
  const feeds = {};
  manifest.inputs.forEach((inp, i) => {
    if (inp.type === 'string') {
      const strings = JSON.parse(fs.readFileSync(path.join(dir, `input_${i}.json`)));
      feeds[inp.name] = new ort.Tensor('string', strings, inp.dims);
      return;
    }
    const bytes = fs.readFileSync(path.join(dir, `input_${i}.raw`));
    const Arr = arrays[inp.type];
    const data = new Arr(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    feeds[inp.name] = new ort.Tensor(ortType[inp.type], data, inp.dims);
  });
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    intraOpNumThreads: 1, graphOptimizationLevel: 'disabled',
  });
  const results = await session.run(feeds);
  const outputs = manifest.outputs.map((name, i) => {
    const t = results[name];
    if (t.type === 'string') {
      fs.writeFileSync(path.join(dir, `output_${i}.json`), JSON.stringify(Array.from(t.data)));
      return { name, type: 'string', dims: t.dims };
    }
    const data = t.type === 'bool' ? Uint8Array.from(t.data, (b) => (b ? 1 : 0)) : t.data;
    fs.writeFileSync(path.join(dir, `output_${i}.raw`), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    return { name, type: npType[t.type], dims: t.dims };
  });
  return { outputs };
}

(async () => {
  const out = process.argv[2];
  for (const name of fs.readdirSync(out).sort()) {
    const dir = path.join(out, name);
    let result;
    try {
      result = await runCase(dir);
    } catch (e) {
      result = { error: String(e.message || e) };
      console.log(`${name}: ${result.error.split('\n')[0]}`);
    }
    fs.writeFileSync(path.join(dir, 'ort.json'), JSON.stringify(result));
  }
})();
