// tests/browser/group_sweep.js — the √d sweep's page (`attn selfattn
// --scale-sweep --html`) has its controls (SPEC §14): --dims's largest d
// a slider of powers of two, the pairs per d a log slider, the keys a
// slider, the seed; each shows the run's value; moving one reruns (in a
// worker) and the views and #attn-command follow, the views' numbers
// attn's own for the new command line.
"use strict";

module.exports = (h) => ({
  sweep: async () => {
    const {check, attn, nativePageData, tmp, open, until, shellSplit} = h;
    const argv = ["selfattn", "--scale-sweep", "--samples", "1000", "--dims", "2:64"];
    attn([...argv, "--html", "sweep.html"]);
    const p = await open(tmp("sweep.html"), "sweep");
    const page = p.page;
    const state = () => page.evaluate(() => ({
      values: Object.fromEntries(Array.from(document.querySelectorAll(".live [data-attn-option]"), (c) => [
        c.dataset.attnOption, {type: c.type, value: c.value, min: c.min, max: c.max,
          beside: c.parentElement.querySelector(".live-number") ? c.parentElement.querySelector(".live-number").value : null}])),
      command: document.getElementById("attn-command").textContent,
      runs: Number(document.querySelector(".live").dataset.runs || 0),
      busy: Boolean(document.querySelector(".live").dataset.busy),
      error: document.querySelector(".live-status").dataset.error,
      text: document.querySelector(".live-views").textContent,
      data: attnPage.data,
    }));
    let st = await state();
    // the values in force, from the run's own data
    const d = st.values["--dims"], s = st.values["--samples"], k = st.values["--kv"], seed = st.values["--seed"];
    check("sweep: --dims a slider of the powers of two 2 … 4096 at 64, the number beside 64",
          d && d.type === "range" && d.min === "1" && d.max === "12" && d.value === "6" && d.beside === "64",
          JSON.stringify(d));
    check("sweep: --samples a slider at 1000, the number beside", s && s.type === "range" && s.beside === "1000",
          JSON.stringify(s));
    check("sweep: --kv a slider at the run's 16 keys", k && k.type === "range" && k.value === "16" && k.beside === "16",
          JSON.stringify(k));
    check("sweep: --seed shows 0", seed && seed.value === "0", JSON.stringify(seed));
    check("sweep: #attn-command is the page's command", st.command === "attn " + argv.join(" "), st.command);

    // largest d 64 → 256: an input event reruns; the command and the views follow
    await until(page, () => document.querySelector(".live").dataset.ready === "1", 60000);
    const runs0 = st.runs;
    await page.evaluate(() => {
      const c = document.querySelector('[data-attn-option="--dims"]');
      c.value = "8";
      c.dispatchEvent(new Event("input", {bubbles: true}));
    });
    check("sweep: moving largest d reruns",
          await until(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n &&
                      !document.querySelector(".live").dataset.busy, 120000, runs0));
    st = await state();
    check("sweep: #attn-command has --dims 2:256", st.command === "attn selfattn --scale-sweep --samples 1000 --dims 2:256",
          st.command);
    check("sweep: the number beside the slider says 256", st.values["--dims"].beside === "256",
          JSON.stringify(st.values["--dims"]));
    const again = nativePageData(shellSplit(st.command).slice(1));
    delete again.page.command;
    delete st.data.page.command;
    check("sweep: the redrawn views' data is attn's own for that line, d 2 … 256",
          st.error === undefined && JSON.stringify(again) === JSON.stringify(st.data) &&
          st.data.dims.join(",") === "2,4,8,16,32,64,128,256", JSON.stringify([st.error, st.data.dims]));
    const last = again.max_weight_raw[again.max_weight_raw.length - 1].toFixed(4);
    check("sweep: the text says the new largest weight at d = 256",
          st.text.includes(`largest weight ${last} at d = 256`), `${last}: ${st.text.slice(0, 300)}`);

    // the keys: 16 → 4, the uniform line and the title follow
    const runs1 = st.runs;
    await page.evaluate(() => {
      const c = document.querySelector('[data-attn-option="--kv"]');
      c.value = "4";
      c.dispatchEvent(new Event("input", {bubbles: true}));
    });
    await until(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n &&
                !document.querySelector(".live").dataset.busy, 120000, runs1);
    st = await state();
    check("sweep: keys 4 reruns: the command and the views' title",
          st.command === "attn selfattn --scale-sweep --samples 1000 --dims 2:256 --kv 4" &&
          st.data.keys === 4 && st.text.includes("Softmax over 4 keys"), st.command);
    await p.finish();
  },
});
