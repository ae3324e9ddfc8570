// tests/browser/group_lang.js — a page speaks the language it was written
// in (SPEC §17): written under --lang zh it starts in Chinese (<html
// lang>, its controls and headings, and the text its module prints, which
// runs with --lang zh); the 中文 / English switch turns the page's words and
// the module's text (attnLive.runText) to English and back, the numbers and the command line
// the same in both. Written in English it starts in English (the browser
// here says en-US).
"use strict";
const fs = require("fs");

// The target tokens a translate page's data holds (the model's words, not the page's).
function attnTokens(file) {
  const m = /<script type="application\/json" id="attn-data">([\s\S]*?)<\/script>/.exec(fs.readFileSync(file, "utf8"));
  const d = JSON.parse(m[1]);
  return [].concat(d.target || [], d.source || []).map(String);
}

module.exports = (h) => {
  const groups = {
    lang: async () => {
      const {check, attn, tmp, open, until} = h;
      attn(["--lang", "zh", "pool", "--html", "zh.html"]);
      attn(["pool", "--html", "en.html"]);
      const state = (page) => page.evaluate(() => ({
        lang: document.documentElement.lang,
        pageLang: attnPage.lang,
        pressed: Array.from(document.querySelectorAll(".lang-switch button"),
                            (b) => [b.textContent, b.getAttribute("aria-pressed")]),
        h2: Array.from(document.querySelectorAll("h2"), (x) => x.textContent),
        labels: Array.from(document.querySelectorAll(".live-field > span"), (x) => x.textContent),
        copy: document.querySelector(".live-copy").textContent,
        command: document.getElementById("attn-command").textContent,
        runs: Number(document.querySelector(".live").dataset.runs || 0),
        busy: Boolean(document.querySelector(".live").dataset.busy),
        text: document.querySelector(".live-views").textContent,
        mse: attnPage.data.results.map((r) => r.mse),
      }));

      const en = await open(tmp("en.html"), "lang-en");
      let st = await state(en.page);
      check("lang: a page written in English starts in English", st.lang === "en" && st.pageLang === "en",
            JSON.stringify([st.lang, st.pageLang]));
      check("lang: its headings are English", st.h2.includes("Change the inputs"), st.h2.join(" | "));
      await en.finish();

      const p = await open(tmp("zh.html"), "lang-zh");
      const page = p.page;
      st = await state(page);
      check("lang: a page written under --lang zh says so: <html lang=zh-CN>, the page in 中文",
            st.lang === "zh-CN" && st.pageLang === "zh", JSON.stringify([st.lang, st.pageLang]));
      check("lang: the switch shows 中文 pressed", JSON.stringify(st.pressed) ===
            JSON.stringify([["中文", "true"], ["English", "false"]]), JSON.stringify(st.pressed));
      check("lang: the controls in Chinese (改变输入, 方法, 核, 种子, 复制)",
            st.h2[0] === "改变输入" && st.labels.includes("方法") && st.labels.includes("核") &&
            st.labels.includes("种子") && st.copy === "复制", JSON.stringify([st.h2[0], st.labels, st.copy]));
      check("lang: the headings in Chinese", st.h2.includes("拟合，以及一个查询的权重") && st.h2.includes("结果"),
            st.h2.join(" | "));
      // the page's attn speaks the page's language (a printed block rerun with its view)
      const printed = () => page.evaluate(() => attnLive.runText(["posenc", "--binary", "2"]));
      check("lang: the page's attn prints in Chinese", (await printed()) === "0的二进制是：0\n1的二进制是：1\n",
            JSON.stringify(await printed()));
      const zhMse = st.mse, zhCommand = st.command;

      // to English: the page's words and the module's, rerun with the page's command
      const runs0 = st.runs;
      await page.click('.lang-switch button[lang="en"]');
      check("lang: English reruns the command in English",
            await until(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n &&
                        !document.querySelector(".live").dataset.busy, 60000, runs0));
      st = await state(page);
      check("lang: English: <html lang=en>, English pressed", st.lang === "en" &&
            JSON.stringify(st.pressed) === JSON.stringify([["中文", "false"], ["English", "true"]]),
            JSON.stringify([st.lang, st.pressed]));
      check("lang: English: the controls and headings in English",
            st.h2[0] === "Change the inputs" && st.labels.includes("method") && st.copy === "Copy" &&
            st.h2.includes("Results"), JSON.stringify([st.h2, st.labels]));
      check("lang: English: the page's attn prints in English",
            (await printed()) === "0 in binary is 0\n1 in binary is 1\n", JSON.stringify(await printed()));
      check("lang: English: the results table in English", st.text.includes("MSE against the truth"),
            st.text.slice(0, 300));
      check("lang: the same numbers and command line in both languages",
            JSON.stringify(st.mse) === JSON.stringify(zhMse) && st.command === zhCommand,
            JSON.stringify([st.mse, zhMse, st.command, zhCommand]));

      // and back to 中文
      const runs1 = st.runs;
      await page.click('.lang-switch button[lang="zh"]');
      await until(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n &&
                  !document.querySelector(".live").dataset.busy, 60000, runs1);
      st = await state(page);
      check("lang: back to 中文: the controls, headings and attn's text in Chinese again",
            st.lang === "zh-CN" && st.h2[0] === "改变输入" && (await printed()).startsWith("0的二进制是"),
            JSON.stringify([st.lang, st.h2[0]]));
      await p.finish();
      await groups.langwords();
    },

    // Written under --lang zh, a page shows no English of its own: its text,
    // its [title] and [aria-label] attributes, a hovered cell's tooltip and
    // path panel. Allowed: the command line, PyTorch's printouts, the axis
    // labels the book's code writes, the user's tokens, option names, and
    // the names a field spells in Latin letters (BLEU, softmax, …).
    langwords: async () => {
      const {check, attn, tmp, open, until} = h;
      const ALLOWED = new Set(["attn", "BLEU", "English", "MSE", "softmax", "Transformer", "Bahdanau", "Nadaraya",
        "Watson", "PyTorch", "BertViz", "Seq", "seq", "predict", "bleu", "AdditiveAttention", "DotProductAttention",
        "sqrt", "log", "tanh", "exp", "float32", "float", "JSON", "PNG", "HTML", "WebAssembly", "GRU", "LSTM", "ReLU", "RoPE",
        "sin", "cos", "max", "eos", "bos", "pad", "unk", "FFN", "ViT", "Adam", "SGD", "d2l", "ms", "KB", "MB",
        "Enter", "Esc", "Tab", "Home", "End", "Shift",
        // Fashion-MNIST, the <cls> token, and d2l's text_labels (the zh edition's code keeps them English)
        "Fashion", "cls", "shirt", "trouser", "pullover", "dress", "coat", "sandal", "sneaker", "bag", "ankle", "boot"]);
      // the axis labels the book's code writes (and attn's PNGs, after it), the switch's bilingual name
      const PHRASES = ["Sorted training inputs", "Row (position)", "Column (encoding dimension)", "Sorted testing inputs",
                       "Key positions", "Query positions", "Keys", "Queries", "Truth", "Pred", "Col", "language / 语言"];
      // the words of 3+ ASCII letters a page leaves in English, but for the
      // user's words and the values its <select>s offer (the command line's)
      const leftover = (page, user) => page.evaluate(([user, phrases]) => {
        // PyTorch's printouts and the book's, the tokens (a heatmap's ticks, a sentence's words), and
        // on the tour, the text of its steps (the C catalogue's words, not the page's) and the pictures'
        // file names: hidden while read
        const tour = ".tour-step > pre, .tour-step > h2 + p, .tour-step pre.output, .tour-picture figcaption";
        const drop = Array.from(document.querySelectorAll(`#attn-command, pre, code, .tick, .words, ${tour}`))
          .filter((n) => n.id === "attn-command" || n.matches(`.tick, .words, ${tour}`) ||
                  /torch\.Size|tensor\(|^epoch \d+, loss /.test(n.textContent));
        const was = drop.map((n) => n.style.display);
        for (const n of drop) n.style.display = "none";
        // the command line wherever it is shown: "$ attn …", a heading "attn pool", "探索：attn …"
        let text = document.body.innerText.replace(/(^|[\s$：])attn [^\n]*/gm, " ");
        drop.forEach((n, i) => { n.style.display = was[i]; });
        for (const n of document.querySelectorAll("[title], [aria-label]"))
          if (!drop.includes(n)) text += "\n" + (n.getAttribute("title") || "") + "\n" + (n.getAttribute("aria-label") || "");
        text = text.replace(/--[a-z][a-z0-9-]*/g, " ");
        for (const phrase of phrases) text = text.split(phrase).join(" ");
        const allowed = new Set(user);
        for (const o of document.querySelectorAll("select option")) allowed.add(o.value);
        for (const c of document.querySelectorAll("[data-attn-choice]")) allowed.add(c.dataset.attnChoice);
        // (a word in capitals is a metavar of the command line: SENTENCE, FILE)
        return (text.match(/[A-Za-z][A-Za-z]{2,}/g) || []).filter((w) => !allowed.has(w) && !/^[A-Z]+$/.test(w));
      }, [user || [], PHRASES]);
      const cleanOf = async (name, page, user) => {
        const words = (await leftover(page, user)).filter((w) => !ALLOWED.has(w));
        const shown = Array.from(new Set(words));
        check(`langwords: ${name} under --lang zh shows no English of its own`, shown.length === 0,
              shown.slice(0, 60).join(" "));
        return shown;
      };
      // hover the first attention cell (its tooltip and path panel); false when the page has none
      const hoverCell = async (page) => {
        const pt = await page.evaluate(() => {
          const cv = document.querySelector("canvas[data-panel][data-rows]");
          if (!cv) return null;
          cv.scrollIntoView({block: "center"});
          const b = cv.getBoundingClientRect();
          return {x: b.left + cv.clientLeft + 0.5 * cv.clientWidth / Number(cv.dataset.cols),
                  y: b.top + cv.clientTop + 0.5 * cv.clientHeight / Number(cv.dataset.rows)};
        });
        if (!pt) return false;
        await page.mouse.move(pt.x, pt.y);
        await until(page, () => {
          const a = document.querySelector("aside.cellpath");
          return !a || (a.dataset.state !== "loading" && a.dataset.state !== "idle");
        }, 30000);
        return true;
      };
      const heads = require("path").join(__dirname, "..", "..", "data", "heatmap_heads.json");
      const pages = [
        ["multihead", ["multihead"]],
        ["selfattn", ["selfattn", "--tokens", "I love Beijing"], ["love", "Beijing"]],
        ["pool", ["pool"]],
        ["score", ["score"]],
        ["posenc", ["posenc"]],
        ["complexity", ["complexity"]],
        ["heatmap", ["heatmap", heads], heads.split(/[^A-Za-z]+/)],
        ["train", ["train", "--steps", "20"]],
      ];
      const english = [];
      for (const [name, args, user] of pages) {
        attn(["--lang", "zh", ...args, "--html", name + ".html"]);
        const p = await open(tmp(name + ".html"), "langwords-" + name);
        await until(p.page, () => document.body.dataset.attnReady === "1", 30000);
        await hoverCell(p.page);
        await cleanOf(name, p.page, user);
        if (name === "multihead") {
          // the check can fail: the same page in English lists its words
          await p.page.click('.lang-switch button[lang="en"]');
          await hoverCell(p.page);
          english.push(...(await leftover(p.page, [])).filter((w) => !ALLOWED.has(w)));
        }
        await p.finish();
      }
      check("langwords: the check finds the English of an English page", english.length > 20 &&
            english.includes("Head"), english.slice(0, 20).join(" "));
      // the tour (its index page) and translate (a tiny saved model)
      attn(["--lang", "zh", "tour", "--out", "t", "--html"]);
      let p = await open(tmp("t/index.html"), "langwords-tour");
      await cleanOf("tour", p.page, ["fruit", "company"]); // the apple task's sentence sets, as its data names them
      await p.finish();
      attn(["train", "--task", "translate", "--steps", "5", "--layers", "1", "--hiddens", "8", "--heads", "2",
            "--ffn", "16", "--save", "tm.json"]);
      const sentence = "the dog sees a cat .";
      attn(["--lang", "zh", "translate", "--input", "tm.json", "--all", "--html", "tr.html", sentence]);
      p = await open(tmp("tr.html"), "langwords-translate");
      await until(p.page, () => document.body.dataset.attnReady === "1", 60000);
      await hoverCell(p.page);
      const tokens = Array.from(new Set(sentence.split(" ").concat(attnTokens(tmp("tr.html")))));
      await cleanOf("translate", p.page, tokens.sort((a, b) => b.length - a.length));
      await p.finish();
    },
  };
  return groups;
};
