// tests/browser/group_lang.js — a page speaks the language it was written
// in (SPEC §17): written under --lang zh it starts in Chinese (<html
// lang>, its controls and headings, and the text its module prints, which
// runs with --lang zh); the 中文 / English switch turns the page's words and
// the module's text (attnLive.runText) to English and back, the numbers and the command line
// the same in both. Written in English it starts in English (the browser
// here says en-US).
"use strict";

module.exports = (h) => ({
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
  },
});
