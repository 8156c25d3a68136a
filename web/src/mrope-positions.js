// mrope-positions.js — pe.mropePositions(inputIds, options): the three M-RoPE position streams of a Qwen-VL
// prompt, as Hugging Face's get_rope_index computes them (pure JS, no wasm).
//
// Primary versions (tests/golden/mrope/README.md, "mrope_index.json"): the token-scanning get_rope_index of
// Qwen2-VL @ 00b676f8, Qwen2.5-VL @ efa7189c and Qwen3-VL @ 68a7b7e2 — the ones that do what the functions'
// own docstrings describe and what later upstream fixes restore. Per batch row, over its unpadded tokens:
//   - text tokens (<|vision_start|> / <|vision_end|> included) take consecutive positions, equal on t, h, w;
//   - a vision block of t*h*w/m^2 placeholder tokens (m = spatial_merge_size; grids consumed in order across
//     the batch) starts at st = the next text position; token (ti, hi, wi), row-major over t, h/m, w/m, gets
//     (st + T(ti), st + hi, st + wi), with T(ti) = ti (Qwen2-VL), trunc(f32(f32(ti * s) * tokens_per_second))
//     for Qwen2.5-VL videos (s = second_per_grid_ts[video], float32, default 1) and 0 for its images, and
//     Qwen3-VL splitting every video into t single-frame grids (so T = 0);
//   - text after a block starts at the block's max position + 1;
//   - padded slots hold 1; deltas[b] = max(row b) + 1 - S, S the padded length.
// Without any grid: cumsum(mask) - 1 (padding 1), or 0 .. S-1 without a mask.
// The later v5 rewrite (aef0409c) differs for multi-frame Qwen2/2.5-VL videos and Qwen2.5-VL still images
// (upstream issues #45325, #45381); it is not followed.

import { checkKnownKeys, typeError, rangeError, INT32_MAX } from './errors.js';
import { typedArrayTag, viewLength } from './memory.js';

const WHERE = 'mropePositions';
const OPTION_KEYS = Object.freeze(['config', 'imageGridThw', 'videoGridThw', 'attentionMask', 'secondPerGridTs']);
const MODELS = Object.freeze({ qwen2_vl: 'qwen2_vl', qwen2_5_vl: 'qwen2_5_vl', qwen3_vl: 'qwen3_vl', qwen3_vl_moe: 'qwen3_vl' });

function isList(v) {
  return Array.isArray(v) || (typedArrayTag(v) !== undefined && typedArrayTag(v) !== 'BigInt64Array' && typedArrayTag(v) !== 'BigUint64Array');
}
function listLength(v) {
  return Array.isArray(v) ? v.length : viewLength(v);
}

/** rows of integers: an array of equal-length rows, or one flat row (batch 1) */
function readRows(name, v, lo, hi) {
  if (!isList(v)) throw typeError(WHERE, `${name} must be an array of rows of token ids (or one row)`, v);
  const n = listLength(v);
  const nested = n > 0 && Array.isArray(v) && isList(v[0]);
  const rowsIn = nested ? Array.from(v) : [v];
  const rows = [];
  let S = -1;
  for (let b = 0; b < rowsIn.length; b++) {
    const r = rowsIn[b];
    const rn = nested ? `${name}[${b}]` : name;
    if (!isList(r)) throw typeError(WHERE, `${rn} must be an array of integers`, r);
    const len = listLength(r);
    if (S === -1) S = len;
    else if (len !== S) throw new RangeError(`${WHERE}: every row of ${name} must have the same length (${S}), ${rn} has ${len}`);
    const out = new Array(len);
    for (let i = 0; i < len; i++) {
      const x = r[i];
      if (typeof x !== 'number') throw typeError(WHERE, `${rn}[${i}] must be an integer in [${lo}, ${hi}]`, x);
      if (!Number.isInteger(x) || x < lo || x > hi) throw rangeError(WHERE, `${rn}[${i}] must be an integer in [${lo}, ${hi}]`, x);
      out[i] = x;
    }
    rows.push(out);
  }
  return rows;
}

/** a list of [t, h, w] grids of positive integers, h and w multiples of m; null/undefined -> [] */
function readGrids(name, v, m) {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw typeError(WHERE, `${name} must be an array of [t, h, w] grids`, v);
  return v.map((g, i) => {
    if (!isList(g)) throw typeError(WHERE, `${name}[${i}] must be [t, h, w] (integers >= 1)`, g);
    if (listLength(g) !== 3) throw new RangeError(`${WHERE}: ${name}[${i}] must be [t, h, w], got length ${listLength(g)}`);
    const out = [0, 0, 0];
    for (let a = 0; a < 3; a++) {
      const x = g[a];
      const what = `${name}[${i}][${a}] must be an integer in [1, ${INT32_MAX}]`;
      if (typeof x !== 'number') throw typeError(WHERE, what, x);
      if (!Number.isInteger(x) || x < 1 || x > INT32_MAX) throw rangeError(WHERE, what, x);
      out[a] = x;
    }
    if (out[1] % m !== 0 || out[2] % m !== 0) {
      throw new RangeError(`${WHERE}: ${name}[${i}] = [${out.join(', ')}]: h and w must be multiples of spatial_merge_size (${m})`);
    }
    return out;
  });
}

function configInt(config, key, fallback) {
  let v = config[key];
  if ((v === undefined || v === null) && config.vision_config && typeof config.vision_config === 'object') v = config.vision_config[key];
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    throw typeError(WHERE, `options.config.${key} must be an integer (a token id of the model's config.json)`, v);
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw (typeof v === 'number' ? rangeError : typeError)(WHERE, `options.config.${key} must be an integer >= ${fallback === undefined ? 0 : 1}`, v);
  }
  return v;
}

/** pe.mropePositions(inputIds, { config, imageGridThw, videoGridThw, attentionMask, secondPerGridTs }) */
export function mropePositions(inputIds, options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw typeError(WHERE, 'options must be an object such as { config, imageGridThw }', options);
  }
  const o = { ...options };
  checkKnownKeys(WHERE, 'options', o, OPTION_KEYS);
  const config = o.config;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw typeError(WHERE, "options.config must be the model's config.json (an object with model_type)", config);
  }
  const model = MODELS[config.model_type];
  if (model === undefined) {
    throw rangeError(WHERE, `options.config.model_type must be one of ${Object.keys(MODELS).map((k) => `'${k}'`).join(', ')}`, config.model_type);
  }
  const m = configInt(config, 'spatial_merge_size', 2);
  if (m < 1) throw rangeError(WHERE, 'options.config.spatial_merge_size must be an integer >= 1', m);
  const imageId = configInt(config, 'image_token_id');
  const videoId = configInt(config, 'video_token_id');
  const startId = configInt(config, 'vision_start_token_id');
  // Qwen2.5-VL's temporal step for videos; required only when a video block is met (no default assumed: the
  // published configs set it, e.g. 2 in vision_config)
  let tps;
  if (model === 'qwen2_5_vl') {
    tps = config.tokens_per_second ?? config.vision_config?.tokens_per_second;
    if (tps !== undefined && tps !== null && (typeof tps !== 'number' || !Number.isFinite(tps))) {
      throw (typeof tps === 'number' ? rangeError : typeError)(WHERE, 'options.config.tokens_per_second (or vision_config.tokens_per_second) must be a finite number', tps);
    }
  }

  const ids = readRows('inputIds', inputIds, 0, Number.MAX_SAFE_INTEGER);
  const B = ids.length;
  const S = B > 0 ? ids[0].length : 0;
  let mask = null;
  if (o.attentionMask !== undefined && o.attentionMask !== null) {
    mask = readRows('options.attentionMask', o.attentionMask, 0, 1);
    if (mask.length !== B || (B > 0 && mask[0].length !== S)) {
      throw new RangeError(`${WHERE}: options.attentionMask must have the shape of inputIds [${B}, ${S}], got [${mask.length}, ${mask[0]?.length ?? 0}]`);
    }
  }
  const images = readGrids('options.imageGridThw', o.imageGridThw, m);
  let videos = readGrids('options.videoGridThw', o.videoGridThw, m);
  const videoNames = videos.map((_, i) => `options.videoGridThw[${i}]`);
  let spg = null;
  if (o.secondPerGridTs !== undefined && o.secondPerGridTs !== null) {
    if (model !== 'qwen2_5_vl') throw typeError(WHERE, 'options.secondPerGridTs is read by Qwen2.5-VL only (model_type qwen2_5_vl)', o.secondPerGridTs);
    if (!isList(o.secondPerGridTs)) throw typeError(WHERE, 'options.secondPerGridTs must be an array of numbers, one per video', o.secondPerGridTs);
    spg = Array.from(o.secondPerGridTs, (x, i) => {
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0) {
        throw (typeof x === 'number' ? rangeError : typeError)(WHERE, `options.secondPerGridTs[${i}] must be a finite number >= 0`, x);
      }
      return Math.fround(x);
    });
    if (spg.length !== videos.length) {
      throw new RangeError(`${WHERE}: options.secondPerGridTs must have one entry per video (${videos.length}), got ${spg.length}`);
    }
  }
  if (model === 'qwen3_vl') {
    // Qwen3-VL: each frame of a video is its own <vs> ... <ve> block behind a timestamp
    const split = [];
    const names = [];
    videos.forEach((g, i) => {
      for (let f = 0; f < g[0]; f++) {
        split.push([1, g[1], g[2]]);
        names.push(`options.videoGridThw[${i}] (frame ${f})`);
      }
    });
    videos = split;
    videoNames.length = 0;
    videoNames.push(...names);
  }

  const positions = new Int32Array(3 * B * S);
  const deltas = new Int32Array(B);
  const noGrids = o.imageGridThw == null && o.videoGridThw == null;
  let imageIndex = 0;
  let videoIndex = 0;
  for (let b = 0; b < B; b++) {
    const row = ids[b];
    const valid = [];
    for (let s = 0; s < S; s++) if (mask === null || mask[b][s] === 1) valid.push(s);
    const tpos = new Array(valid.length);
    const hpos = new Array(valid.length);
    const wpos = new Array(valid.length);
    if (noGrids) {
      for (let i = 0; i < valid.length; i++) tpos[i] = hpos[i] = wpos[i] = i;
    } else {
      const toks = valid.map((s) => row[s]);
      let nImages = 0;
      let nVideos = 0;
      for (let i = 0; i + 1 < toks.length; i++) {
        if (toks[i] !== startId) continue;
        if (toks[i + 1] === imageId) nImages++;
        else if (toks[i + 1] === videoId) nVideos++;
      }
      let st = 0; // next token index
      let next = 0; // next text position
      const text = (end) => {
        for (; st < end; st++, next++) tpos[st] = hpos[st] = wpos[st] = next;
      };
      while (nImages + nVideos > 0) {
        const edImage = nImages > 0 ? toks.indexOf(imageId, st) : -1;
        const edVideo = nVideos > 0 ? toks.indexOf(videoId, st) : -1;
        const isImage = edImage !== -1 && (edVideo === -1 || edImage < edVideo);
        const ed = isImage ? edImage : edVideo;
        if (ed === -1) break; // counted from <vs> + placeholder pairs, so found; kept for safety
        let grid;
        let gname;
        let second = 0;
        if (isImage) {
          if (imageIndex >= images.length) {
            throw new RangeError(`${WHERE}: inputIds[${b}] has more image blocks than options.imageGridThw has grids (${images.length})`);
          }
          gname = `options.imageGridThw[${imageIndex}]`;
          grid = images[imageIndex++];
          nImages--;
        } else {
          if (videoIndex >= videos.length) {
            throw new RangeError(`${WHERE}: inputIds[${b}] has more video blocks than options.videoGridThw has grids (${videos.length})`);
          }
          gname = videoNames[videoIndex];
          second = spg === null ? 1 : spg[videoIndex];
          if (model === 'qwen2_5_vl' && (tps === undefined || tps === null)) {
            throw typeError(WHERE, 'options.config.tokens_per_second (or vision_config.tokens_per_second) must be a finite number for Qwen2.5-VL videos', tps);
          }
          grid = videos[videoIndex++];
          nVideos--;
        }
        const [t, h, w] = grid;
        const gh = h / m;
        const gw = w / m;
        const count = t * gh * gw;
        const token = isImage ? imageId : videoId;
        let have = 0;
        while (ed + have < toks.length && toks[ed + have] === token && have < count) have++;
        const runEnd = ed + have < toks.length && toks[ed + have] === token;
        if (have !== count || runEnd) {
          let run = have;
          while (ed + run < toks.length && toks[ed + run] === token) run++;
          throw new RangeError(
            `${WHERE}: ${gname} = [${t}, ${h}, ${w}] needs ${count} ${isImage ? 'image' : 'video'} placeholder tokens (t * h * w / ${m * m}), but inputIds[${b}] has ${run} at that block`,
          );
        }
        text(ed);
        const base = next;
        let maxp = base - 1;
        for (let ti = 0; ti < t; ti++) {
          let T = ti;
          if (model === 'qwen2_5_vl') T = isImage ? 0 : Math.trunc(Math.fround(Math.fround(ti * second) * tps));
          for (let hi = 0; hi < gh; hi++)
            for (let wi = 0; wi < gw; wi++, st++) {
              tpos[st] = base + T;
              hpos[st] = base + hi;
              wpos[st] = base + wi;
              maxp = Math.max(maxp, tpos[st], hpos[st], wpos[st]);
            }
        }
        next = maxp + 1;
      }
      for (let i = st; i < toks.length; i++) {
        if (toks[i] === imageId || toks[i] === videoId) {
          throw new RangeError(`${WHERE}: inputIds[${b}][${valid[i]}] is a ${toks[i] === imageId ? 'image' : 'video'} placeholder token outside any grid's block (no <|vision_start|> before it, or more placeholders than the grids cover)`);
        }
      }
      text(toks.length);
    }
    let max = -Infinity;
    for (let s = 0; s < S; s++) positions[s + b * S] = positions[B * S + b * S + s] = positions[2 * B * S + b * S + s] = 1;
    valid.forEach((s, i) => {
      positions[b * S + s] = tpos[i];
      positions[B * S + b * S + s] = hpos[i];
      positions[2 * B * S + b * S + s] = wpos[i];
    });
    // HF: the text-only branch takes the max over the whole row (padding's 1 included), the vision branch over
    // the valid tokens' positions only
    if (noGrids) for (let a = 0; a < 3; a++) for (let s = 0; s < S; s++) max = Math.max(max, positions[a * B * S + b * S + s]);
    else for (let i = 0; i < valid.length; i++) max = Math.max(max, tpos[i], hpos[i], wpos[i]);
    if (max === -Infinity) max = S === 0 ? -1 : 1;
    deltas[b] = max + 1 - S;
  }
  if (!noGrids) {
    if (imageIndex !== images.length) {
      throw new RangeError(`${WHERE}: options.imageGridThw has ${images.length} grids, but inputIds hold ${imageIndex} image blocks (<|vision_start|> then image tokens)`);
    }
    if (videoIndex !== videos.length) {
      throw new RangeError(`${WHERE}: options.videoGridThw has ${videos.length} ${model === 'qwen3_vl' ? 'frames (grids split per frame)' : 'grids'}, but inputIds hold ${videoIndex} video blocks`);
    }
  }
  return { positions, deltas };
}
