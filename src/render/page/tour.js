// tour.js — the page of `attn tour --html`: every step in order, each with
// its heading, formula and what to look for, the command lines as a
// learner types them, what they printed, and the interactive view of a
// run (the same views as the commands' own pages) or, for a command
// without a page, its figure as a picture.

// A run's figure: {"name", "type": "image/png", "base64"}, shown from a
// data: URL (the page loads nothing from outside itself).
function tourPicture(pic) {
  if (pic.type !== "image/png" || !/^[A-Za-z0-9+/]*={0,2}$/.test(pic.base64)) return null;
  return el("figure", {class: "tour-picture"},
    el("img", {src: "data:image/png;base64," + pic.base64, alt: pic.name, "data-picture": pic.name}),
    el("figcaption", {text: pic.name}));
}

function tourPage(root, data) {
  attnPage.embedded = true; // views share the page: no page-wide keys
  const toc = el("nav", {class: "toc", "aria-label": "steps"});
  const ol = el("ol");
  toc.append(ol);
  root.append(el("p", {class: "note", text: "The attention chapters of Dive into Deep Learning, step by step: " +
                                            "every number below was printed by the command above it."}), toc);
  for (const st of data.steps) {
    const id = `step-${st.number}`;
    ol.append(el("li", {}, el("a", {href: "#" + id, text: st.title})));
    const sec = el("section", {class: "view tour-step", id, "data-step": st.name},
      el("h2", {text: `Step ${st.number} · ${st.title}`}),
      el("p", {class: "note", text: st.where}),
      el("pre", {class: "formula", text: st.text}));
    for (const run of st.runs) {
      sec.append(el("pre", {class: "cmdline"}, el("code", {text: "$ " + run.command})));
      if (run.output) sec.append(el("pre", {class: "output", text: run.output}));
      if (run.view) {
        const box = el("div", {class: "tour-view", "data-kind": run.view.page.kind});
        sec.append(el("details", {open: true}, el("summary", {text: "explore: " + run.command}), box));
        PAGE_KINDS[run.view.page.kind](box, run.view, run.view.page);
      } else if (run.picture) {
        sec.append(el("details", {open: true}, el("summary", {text: "figure: " + run.picture.name}),
                      tourPicture(run.picture)));
      }
    }
    root.append(sec);
  }
  attnPage.state.kind = "tour";
}
