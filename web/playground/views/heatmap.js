// Draws a row-major (rows, cols) Float32Array as a heatmap, one canvas pixel per value; CSS scales it up.
// Values map through a diverging blue–white–red scale over [-range, range].

const NEG = [33, 102, 172];
const MID = [247, 247, 247];
const POS = [178, 24, 43];

/**
 * @param {HTMLCanvasElement} canvas
 * @param {Float32Array} values  row-major, values[r * cols + c]
 * @param {number} rows
 * @param {number} cols
 * @param {{ transpose?: boolean, range?: number }} [opts]  transpose: draw rows as x and cols as y
 */
export function drawHeatmap(canvas, values, rows, cols, { transpose = false, range = 1 } = {}) {
  const width = transpose ? rows : cols;
  const height = transpose ? cols : rows;
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(width, height);
  const px = img.data;
  const inv = range > 0 ? 1 / range : 1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = transpose ? values[x * cols + y] : values[y * cols + x];
      const t = Math.max(-1, Math.min(1, v * inv));
      const end = t < 0 ? NEG : POS;
      const a = Math.abs(t);
      const o = (y * width + x) * 4;
      px[o] = MID[0] + (end[0] - MID[0]) * a;
      px[o + 1] = MID[1] + (end[1] - MID[1]) * a;
      px[o + 2] = MID[2] + (end[2] - MID[2]) * a;
      px[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
}
