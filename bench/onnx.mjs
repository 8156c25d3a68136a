// onnx.mjs — a minimal protobuf writer for the tiny ONNX models the onnxruntime-web contender runs (no
// dependency, nothing downloaded). Only the fields these models use are written; field numbers are from
// onnx/onnx.proto3 (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto, TypeProto).
// No Node-only API.

// ---- protobuf wire format --------------------------------------------------------------------------------------
class Writer {
  constructor() {
    this.bytes = [];
  }
  varint(v) {
    let x = BigInt.asUintN(64, BigInt(v));
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x !== 0n) b |= 0x80;
      this.bytes.push(b);
    } while (x !== 0n);
    return this;
  }
  tag(field, wire) {
    return this.varint((field << 3) | wire);
  }
  int(field, v) {
    return this.tag(field, 0).varint(v);
  }
  raw(field, u8) {
    this.tag(field, 2).varint(u8.length);
    for (const b of u8) this.bytes.push(b);
    return this;
  }
  string(field, s) {
    return this.raw(field, new TextEncoder().encode(s));
  }
  message(field, w) {
    return this.raw(field, w.finish());
  }
  float(field, f) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, f, true);
    this.tag(field, 5);
    for (const x of b) this.bytes.push(x);
    return this;
  }
  finish() {
    return Uint8Array.from(this.bytes);
  }
}

export const DTYPE = { FLOAT: 1, INT64: 7 };
const ATTR = { FLOAT: 1, INT: 2, STRING: 3 };

/** TensorProto: dims, data_type, name, raw_data (little-endian). */
function tensorProto(name, dtype, dims, data) {
  const w = new Writer();
  for (const d of dims) w.int(1, d);
  w.int(2, dtype);
  w.string(8, name);
  w.raw(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return w;
}

/** ValueInfoProto with a tensor type; dims are numbers or strings (symbolic). */
function valueInfo(name, dtype, dims) {
  const shape = new Writer();
  for (const d of dims) {
    const dim = new Writer();
    if (typeof d === 'number') dim.int(1, d);
    else dim.string(2, d);
    shape.message(1, dim);
  }
  const tensorType = new Writer().int(1, dtype).message(2, shape);
  const type = new Writer().message(1, tensorType);
  return new Writer().string(1, name).message(2, type);
}

function attribute(name, v) {
  const w = new Writer().string(1, name);
  if (Number.isInteger(v)) w.int(3, v).int(20, ATTR.INT);
  else if (typeof v === 'number') w.float(2, v).int(20, ATTR.FLOAT);
  else w.raw(4, new TextEncoder().encode(v)).int(20, ATTR.STRING);
  return w;
}

/**
 * Serialises a model. spec: { opsets: [[domain, version]], nodes: [{ op, domain, inputs, outputs, attrs }],
 * inputs/outputs: [[name, dtype, dims]], initializers: [[name, dtype, dims, typedArray]] }.
 */
export function buildModel(spec) {
  const g = new Writer();
  spec.nodes.forEach((n, i) => {
    const w = new Writer();
    for (const x of n.inputs) w.string(1, x);
    for (const x of n.outputs) w.string(2, x);
    w.string(3, n.name ?? `${n.op}_${i}`);
    w.string(4, n.op);
    for (const [k, v] of Object.entries(n.attrs ?? {})) w.message(5, attribute(k, v));
    if (n.domain) w.string(7, n.domain);
    g.message(1, w);
  });
  g.string(2, spec.name ?? 'bench');
  for (const [name, dtype, dims, data] of spec.initializers ?? []) g.message(5, tensorProto(name, dtype, dims, data));
  for (const [name, dtype, dims] of spec.inputs) g.message(11, valueInfo(name, dtype, dims));
  for (const [name, dtype, dims] of spec.outputs) g.message(12, valueInfo(name, dtype, dims));

  const m = new Writer();
  m.int(1, spec.irVersion ?? 10);
  m.string(2, 'posenc-bench');
  for (const [domain, version] of spec.opsets) m.message(8, new Writer().string(1, domain).int(2, version));
  m.message(7, g);
  return m.finish();
}

/**
 * A model rotating q and k with RotaryEmbedding, cos/sin caches as initializers (as exported LLMs carry them).
 *   op 'contrib': com.microsoft RotaryEmbedding (input, position_ids, cos_cache, sin_cache)
 *   op 'onnx':    ONNX RotaryEmbedding, opset 23 (X, cos_cache, sin_cache, position_ids)
 * bshd uses the 3-D form (batch, seq, heads * head_dim) with num_heads; bhsd the 4-D form (batch, heads, seq,
 * head_dim). Inputs: q, k (float32), position_ids (int64, (batch, seq)); outputs q_rot, k_rot.
 */
export function rotaryModel({ op, shape, layout, pairing, cos, sin, maxPos }) {
  const [B, S, H, D] = shape;
  const nf = D / 2;
  const dims = layout === 'bshd' ? [B, S, H * D] : [B, H, S, D];
  const attrs = { interleaved: pairing === 'interleaved' ? 1 : 0 };
  if (layout === 'bshd') attrs.num_heads = H;
  const node = (x, y) =>
    op === 'contrib'
      ? { op: 'RotaryEmbedding', domain: 'com.microsoft', inputs: [x, 'position_ids', 'cos_cache', 'sin_cache'], outputs: [y], attrs }
      : { op: 'RotaryEmbedding', inputs: [x, 'cos_cache', 'sin_cache', 'position_ids'], outputs: [y], attrs };
  return buildModel({
    opsets: op === 'contrib' ? [['', 21], ['com.microsoft', 1]] : [['', 23]],
    nodes: [node('q', 'q_rot'), node('k', 'k_rot')],
    initializers: [
      ['cos_cache', DTYPE.FLOAT, [maxPos, nf], cos],
      ['sin_cache', DTYPE.FLOAT, [maxPos, nf], sin],
    ],
    inputs: [
      ['q', DTYPE.FLOAT, dims],
      ['k', DTYPE.FLOAT, dims],
      ['position_ids', DTYPE.INT64, [B, S]],
    ],
    outputs: [
      ['q_rot', DTYPE.FLOAT, dims],
      ['k_rot', DTYPE.FLOAT, dims],
    ],
  });
}
