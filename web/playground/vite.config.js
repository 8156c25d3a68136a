// Vite root for the playground (`npm start` serves it, `npm run build:web` builds it to web/playground/dist).
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',            // the built site works from any path, e.g. a GitHub Pages subfolder
  build: { target: 'es2022' },
  server: { open: false },
});
