// safetensors.js — reading a shipped model's weights in a widget, through the public parser (posenc's
// parseSafetensors from 'posenc/model': header, dtypes, shapes and byte ranges, checked).
//
//   const file = readSafetensors(bytes)      // { parsed, f32(name) }
//   file.f32('model.embed_positions.weight') // a new Float32Array of that F32 tensor

import { parseSafetensors } from '../../src/model.js'; // the public 'posenc/model' entry

export function readSafetensors(bytes) {
  const parsed = parseSafetensors(bytes);
  const f32 = (name) => {
    const t = parsed.tensors.get(name);
    if (!t) throw new Error(`safetensors: no tensor '${name}'`);
    if (t.dtype !== 'F32') throw new Error(`safetensors: tensor '${name}' is ${t.dtype}, not F32`);
    return new Float32Array(bytes.slice(parsed.dataOffset + t.begin, parsed.dataOffset + t.end).buffer);
  };
  return { parsed, f32 };
}
