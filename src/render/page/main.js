// main.js — read the data once, build the page's views for its kind, and
// record the time from navigation to the first drawing (and, on a large
// page drawn first from its preview, to the complete one).

function pageHeader(pg) {
  return el("header", {class: "top"}, langSwitch(), el("h1", {text: pg.title}),
            pg.command ? el("pre", {class: "cmdline"}, el("code", {text: "$ " + pg.command})) : null);
}

// 中文 / English: the page's words (loc) and the module's (--lang) in the
// other language. The page is built again from its latest data, and each
// command with controls run again, so that what attn printed is in the
// new language too (a training is not: it keeps what it printed).
function langSwitch() {
  const box = el("div", {class: "lang-switch", role: "group", "aria-label": "language / 语言"});
  for (const [code, name] of [["zh", "中文"], ["en", "English"]]) {
    const b = el("button", {type: "button", lang: code, "aria-pressed": String(attnLang === code),
                            text: name});
    b.addEventListener("click", () => setLanguage(code));
    box.append(b);
  }
  return box;
}

function setLanguage(code) {
  if (code === attnLang) return;
  attnLang = code;
  attnPage.lang = code;
  document.documentElement.lang = code === "zh" ? "zh-CN" : "en";
  const root = document.getElementById("attn-root");
  root.replaceChildren();
  buildPage(root, attnPage.data || readData());
  for (const panel of root.querySelectorAll("section.live"))
    if (panel.rerunInLanguage) panel.rerunInLanguage();
}

const PAGE_KINDS = {
  attention: (root, data, pg) => attentionPage(root, data, pg),
  posenc: (root, data, pg) => posencPage(root, data, pg),
  complexity: (root, data, pg) => complexityPage(root, data, pg),
  scale_sweep: (root, data, pg) => scaleSweepPage(root, data, pg),
  pool: (root, data, pg) => poolPage(root, data, pg),
  train: (root, data, pg) => trainPage(root, data, pg),
  translate: (root, data, pg) => translatePage(root, data, pg),
  compare_arch: (root, data, pg) => compareArchPage(root, data, pg),
  tour: (root, data, pg) => tourPage(root, data, pg),
  vit: (root, data, pg) => vitPage(root, data, pg),
};

// Whether data is a language model's page (attn train --task lm), alone
// or two compared.
function trainIsLm(data) {
  const doc = data.runs ? data.runs[0] : data;
  return data.command === "train" && Boolean(doc) && doc.task === "lm";
}

function buildPage(root, data) {
  const pg = data.page;
  root.append(pageHeader(pg));
  const build = PAGE_KINDS[pg.kind];
  if (!build) throw new Error("unknown page kind " + pg.kind);
  // a command with controls: its views in their own element, drawn again
  // from each rerun of the page's attn (live.js)
  // (the ViT's page reruns `attn vit` for each pick, not its training)
  // (a language model's page has no controls: its text is a file the page
  // does not hold)
  const argv = pg.kind === "vit" || trainIsLm(data) ? null : liveArgv(pg);
  if (!argv || !liveSpecs(argv) || argv[0] !== data.command) {
    build(root, data, pg);
    return;
  }
  let views = el("div", {class: "live-views"});
  // a file the page holds (translate's model), as the module reads it
  let fileText = null;
  const file = pg.model_file ? () => (fileText = fileText || JSON.stringify(pg.model_file)) : null;
  root.append(liveControls(argv, (next) => {
    const fresh = el("div", {class: "live-views"});
    views.replaceWith(fresh);
    attnPage.data = next;
    PAGE_KINDS[next.page.kind](fresh, next, next.page);
    fresh.dataset.redrawn = String(Number(views.dataset.redrawn || 0) + 1);
    views = fresh;
  }, {fileText: file}), views);
  build(views, data, pg);
}

// A large page (page.h): its preview, drawn at once, before the browser
// has read the data after this script; the rest once it has.
const PREVIEW_KINDS = {
  attention: (root, pv) => attentionPreviewPage(root, pv),
};

// Drawn (data-ready, drawMs): what the first screen shows. Complete
// (data-complete, completeMs): every view from the whole data, hover with
// its numbers. On a page without a preview both come at once.
function drawn() {
  attnPage.drawMs = performance.now();
  document.body.dataset.drawMs = attnPage.drawMs.toFixed(1);
  document.body.dataset.ready = "1";
}
function completed() {
  attnPage.completeMs = performance.now();
  document.body.dataset.completeMs = attnPage.completeMs.toFixed(1);
  document.body.dataset.complete = "1";
}

(function main() {
  const root = document.getElementById("attn-root");
  const previewNode = document.getElementById("attn-preview");
  const t0 = performance.now();
  if (previewNode) {
    const pv = JSON.parse(previewNode.textContent);
    root.append(pageHeader(pv.page));
    const finish = PREVIEW_KINDS[pv.page.kind](root, pv);
    attnPage.buildMs = performance.now() - t0;
    drawn();
    // the data element follows this script: read once the parser is done
    document.addEventListener("DOMContentLoaded", () => {
      if (!document.getElementById("attn-data")) { // a file cut short: the preview stays
        root.append(el("p", {class: "note", role: "alert",
                             text: loc("This page's data is missing (the file is cut short): only its preview is drawn.")}));
        return;
      }
      const t1 = performance.now();
      const data = readData();
      attnPage.parseMs = performance.now() - t1;
      attnPage.data = data;
      finish(data);
      completed();
    });
    return;
  }
  const data = readData();
  attnPage.parseMs = performance.now() - t0;
  attnPage.data = data;
  buildPage(root, data);
  drawn();
  attnPage.buildMs = attnPage.drawMs - t0;
  completed();
})();
