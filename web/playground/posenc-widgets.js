// posenc-widgets.js — what an outside page loads: every <pe-...> element (web/widgets/index.js). The site
// build emits this file as it is named, at the site root next to models/, with the wasm inlined:
//   <script type="module" src="https://…/posenc-widgets.js"></script>
export * from '../widgets/index.js';
