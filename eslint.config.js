// ESLint (flat config): @eslint/js's recommended rules (and no-new) over every JS folder, with the globals of
// where each folder's code runs. `npm run lint` runs it (scripts/lint.sh), and `npm test` runs lint as a phase.
import js from '@eslint/js';
import globals from 'globals';

export default [
  {
    ignores: ['**/node_modules/', 'dist/', 'build/', 'test-results/', 'web/playground/dist/', 'web/src/wasm-inline.js'],
  },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module' },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A leading underscore marks a binding kept on purpose (a destructured-away field, an unused parameter
      // of a callback's fixed signature).
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      // `new X()` only for its side effects is a mistake unless marked (memory.js probes a detached buffer so).
      'no-new': 'error',
      // `proto.isPrototypeOf(v)` on a known prototype object (the typed-array checks) is what the code means.
      'no-prototype-builtins': 'off',
    },
  },
  // The npm package runs in browsers, workers and Node: only the globals they share.
  // `process` is read only behind a typeof check (url.js: Node reads file: URLs from disk).
  { files: ['web/src/**/*.js'], languageOptions: { globals: { ...globals['shared-node-browser'], process: 'readonly' } } },
  // Widgets and the playground run in the page.
  { files: ['web/widgets/**/*.js', 'web/playground/**/*.js'], languageOptions: { globals: globals.browser } },
  { files: ['web/playground/vite.config.js'], languageOptions: { globals: globals.node } },
  // Tests, benchmarks, scripts and the fuzzers' helpers run in Node.
  {
    files: ['tests/**/*.{js,mjs}', 'bench/**/*.{js,mjs}', 'scripts/**/*.{js,mjs}', 'fuzz/**/*.{js,mjs}'],
    languageOptions: { globals: globals.node },
  },
  // Browser and pack tests and some scripts drive Chromium from Node; what they pass to page.evaluate runs in the page.
  {
    files: ['tests/browser/**/*.js', 'tests/pack/**/*.js', 'scripts/**/*.{js,mjs}'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  // Some benchmarks also run in the page (the speed widget's shared core).
  { files: ['bench/**/*.{js,mjs}'], languageOptions: { globals: { ...globals.node, ...globals.browser } } },
];
