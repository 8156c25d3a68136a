// Playground entry: reads the controls, asks compute/ for RoPE tables, hands them to views/ to draw.
import { ropeTables, ORIGINAL_CONTEXT } from './compute/rope.js';
import { drawHeatmap } from './views/heatmap.js';

const form = document.getElementById('controls');
const status = document.getElementById('status');
const root = document.documentElement;
document.getElementById('orig-ctx').textContent = String(ORIGINAL_CONTEXT);

function settings() {
  const f = new FormData(form);
  return {
    headDim: Number(f.get('headDim')),
    base: Number(f.get('base')),
    scaling: String(f.get('scaling')),
    positions: Number(f.get('positions')),
  };
}

let draws = 0;
let pending = Promise.resolve();

async function redraw() {
  const s = settings();
  try {
    const t = await ropeTables(s);
    // Tables are (positions, frequencies); draw position along x, frequency along y.
    const range = Math.max(1, t.attentionScaling);
    drawHeatmap(document.getElementById('cos'), t.cos, t.nPositions, t.nFreq, { transpose: true, range });
    drawHeatmap(document.getElementById('sin'), t.sin, t.nPositions, t.nFreq, { transpose: true, range });
    status.className = '';
    status.textContent = `${t.simd ? 'SIMD128' : 'scalar'} build · ${t.nFreq} frequencies × ${t.nPositions} positions`
      + ` · attention scaling ${t.attentionScaling.toFixed(4)}`;
    root.dataset.draws = String(++draws);
    root.dataset.state = 'ready';
  } catch (err) {
    status.className = 'error';
    status.textContent = `${err.name}: ${err.message}`;
    root.dataset.state = 'error';
    console.error(err);
  }
}

// Redraws run one after another, so a slow one cannot overwrite a newer one.
const schedule = () => { pending = pending.then(redraw); };
form.addEventListener('input', schedule);
form.addEventListener('submit', (e) => e.preventDefault());
schedule();
