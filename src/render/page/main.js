// main.js — read the data once, build the page's views for its kind, and
// record the time from navigation to the first complete drawing.

function pageHeader(pg) {
  return el("header", {class: "top"}, el("h1", {text: pg.title}),
            pg.command ? el("pre", {class: "cmdline"}, el("code", {text: "$ " + pg.command})) : null);
}

const PAGE_KINDS = {
  attention: (root, data, pg) => attentionPage(root, data, pg),
  posenc: (root, data, pg) => posencPage(root, data, pg),
  complexity: (root, data, pg) => complexityPage(root, data, pg),
  train: (root, data, pg) => trainPage(root, data, pg),
  translate: (root, data, pg) => translatePage(root, data, pg),
  compare_arch: (root, data, pg) => compareArchPage(root, data, pg),
  tour: (root, data, pg) => tourPage(root, data, pg),
};

function buildPage(root, data) {
  const pg = data.page;
  root.append(pageHeader(pg));
  const build = PAGE_KINDS[pg.kind];
  if (!build) throw new Error("unknown page kind " + pg.kind);
  build(root, data, pg);
}

(function main() {
  const root = document.getElementById("attn-root");
  const t0 = performance.now();
  const data = readData();
  attnPage.parseMs = performance.now() - t0;
  attnPage.data = data;
  buildPage(root, data);
  attnPage.drawMs = performance.now();
  attnPage.buildMs = attnPage.drawMs - t0;
  document.body.dataset.drawMs = attnPage.drawMs.toFixed(1);
  document.body.dataset.ready = "1";
})();
