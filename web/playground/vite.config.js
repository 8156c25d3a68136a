// Vite root for the playground (`npm start` serves it, `npm run build:web` builds it to web/playground/dist).
//
// Pages: index.html (the playground: every section) and blog.html (an example blog post). Both load the widgets
// the way any outside page does, with one <script type="module" src="./posenc-widgets.js" vite-ignore> tag;
// the build emits that script as dist/posenc-widgets.js (an entry of its own, the wasm inlined, KaTeX fonts and
// lazily loaded chunks under assets/), next to dist/models/ where the widgets look for the tiny models.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

// package.json says "sideEffects": false (true of the npm package, web/src). The widget files register custom
// elements when imported, so they do have side effects: say so, or the bundler drops them.
const widgetsHaveSideEffects = {
  name: 'posenc-widgets-side-effects',
  transform(code, id) {
    if (/[\\/]web[\\/](widgets|playground)[\\/]/.test(id)) return { code, map: null, moduleSideEffects: true };
    return null;
  },
};

export default defineConfig({
  plugins: [widgetsHaveSideEffects],
  base: './',            // the built site works from any path, e.g. a GitHub Pages subfolder
  build: {
    target: 'es2022',
    chunkSizeWarningLimit: 2048, // the widgets bundle carries both wasm builds inlined
    assetsInlineLimit: 0,        // fonts and other assets stay files next to the bundle
    rollupOptions: {
      input: {
        index: here('./index.html'),
        blog: here('./blog.html'),
        'posenc-widgets': here('./posenc-widgets.js'),
      },
      preserveEntrySignatures: 'exports-only',
      output: {
        entryFileNames: (chunk) => (chunk.name === 'posenc-widgets' ? 'posenc-widgets.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
  worker: { format: 'es' }, // the tiny-model evaluation worker (web/widgets/lib/eval-worker.js) is a module
  server: { open: false },
});
