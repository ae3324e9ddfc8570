"""Group i18n: the language attn speaks (SPEC.md §17). The environment
chooses it as for every GNU program (LANGUAGE, LC_ALL, LC_MESSAGES, LANG),
--lang zh|en for one run; a missing zh_CN.UTF-8 locale is said in one line,
then English; --json is the same bytes in both languages. The Chinese is
checked against the zh edition's own words (po/terms.md)."""
import os

from .common import check, expect, run

ZH = {"LANG": "zh_CN.UTF-8"}
C = {"LANG": "C"}


def group_i18n(tmp):
    # the tour's list: the zh edition's section titles, 10.1 … 10.7
    rc, zh, err = run(["tour", "--list"], env=ZH)
    check(rc == 0 and err == "", "LANG=zh_CN.UTF-8 attn tour --list: exit 0, no stderr (%r)" % err)
    lines = [l for l in zh.splitlines() if l[:2].strip().isdigit()]
    check(len(lines) == 18, "the zh list has the 18 steps: %d" % len(lines))
    for want in [" 1  cues        注意力提示：查询、键和值（10.1 注意力提示）",
                 " 2  pooling     10.2 注意力汇聚：Nadaraya-Watson 核回归",
                 " 3  scoring     10.3 注意力评分函数",
                 " 5  bahdanau    10.4 Bahdanau 注意力",
                 " 6  multihead   10.5 多头注意力",
                 " 7  selfattn    10.6.1 自注意力",
                 " 9  complexity  10.6.2 比较卷积神经网络、循环神经网络和自注意力",
                 "11  posenc      10.6.3 位置编码",
                 "12  binary      10.6.3.1 绝对位置信息",
                 "13  relative    10.6.3.2 相对位置信息",
                 "16  circuits    两层：归纳头（10.7 Transformer · 10.7.4 编码器，堆叠起来）"]:
        check(want in lines, "the zh list has %r" % want)
    # the commands a step runs are never translated
    check("      attn heatmap --eye 10 --png @01-heatmap-eye.png" in zh.splitlines(),
          "the zh list keeps the commands as typed")
    rc, en, _ = run(["tour", "--list"], env=C)
    check(" 1  cues        Attention cues: queries, keys and values (zh 10.1)" in en.splitlines(),
          "LANG=C: the list in English")
    check(run(["tour", "--list"])[1] == en, "no locale set: English, the same bytes as LANG=C")
    check(run(["tour", "--list"], env={"LANG": "C.UTF-8"})[1] == en, "LANG=C.UTF-8: English")
    # the order GNU gettext reads: LC_ALL, then LC_MESSAGES, then LANG
    check(run(["tour", "--list"], env={"LANG": "C", "LC_MESSAGES": "zh_CN.UTF-8"})[1] == zh,
          "LC_MESSAGES=zh_CN.UTF-8 outranks LANG=C")
    check(run(["tour", "--list"], env={"LANG": "C", "LC_ALL": "zh_CN.UTF-8"})[1] == zh,
          "LC_ALL=zh_CN.UTF-8 outranks LANG=C")
    check(run(["tour", "--list"], env={"LANG": "zh_CN.UTF-8", "LC_ALL": "C"})[1] == en,
          "LC_ALL=C outranks LANG=zh_CN.UTF-8")
    check(run(["tour", "--list"], env={"LANG": "zh_CN.UTF-8", "LANGUAGE": "en"})[1] == en,
          "LANGUAGE=en outranks LANG=zh_CN.UTF-8, as in GNU gettext")
    # --lang: for one run, before or after the command, whatever the locale
    check(run(["--lang", "zh", "tour", "--list"], env=C)[1] == zh, "--lang zh under LANG=C")
    check(run(["tour", "--list", "--lang=zh"], env=C)[1] == zh, "--lang=zh after the command")
    check(run(["tour", "--lang", "zh", "--list"], env={"LANG": "C", "LANGUAGE": "en"})[1] == zh,
          "--lang zh outranks LANGUAGE=en")
    check(run(["--lang", "en", "tour", "--list"], env=ZH)[1] == en, "--lang en under zh_CN.UTF-8")
    expect(["--lang", "fr", "tour", "--list"], 2, err="attn: --lang: expected zh or en, got 'fr'")
    expect(["--lang", "fr", "tour"], 2, err="attn: --lang：应为 zh 或 en，得到的是“fr”", env=ZH)
    expect(["tour", "--lang"], 2, err="attn: option '--lang' needs a value")
    expect(["--lang", "zh", "--lang", "en", "tour"], 2, err="attn: option '--lang' given twice")
    # a missing locale: one line, then English (LOCPATH: an empty folder of
    # locales, as on a fresh Debian without zh_CN.UTF-8)
    empty = os.path.join(tmp, "no-locales")
    os.mkdir(empty)
    line = ("attn: the locale zh_CN.UTF-8 is missing on this machine (scripts/setup.sh makes it: "
            "localedef -i zh_CN -f UTF-8 zh_CN.UTF-8); writing English\n")
    rc, out, err = run(["tour", "--list"], env={"LANG": "zh_CN.UTF-8", "LOCPATH": empty})
    check(rc == 0 and out == en and err == line,
          "zh_CN.UTF-8 missing: English and one line (%r)" % err)
    rc, out, err = run(["--lang", "zh", "tour", "--list"], env={"LANG": "C", "LOCPATH": empty})
    check(rc == 0 and out == en and err == line, "--lang zh without the locale: the same")
    # help: the book's words, option names as they are
    rc, out, _ = run(["--help"], env=ZH)
    for want in ["用法：attn 命令 [选项]", "命令：\n",
                 "  score       注意力评分函数：掩蔽softmax操作、加性注意力和缩放点积注意力\n",
                 "  pool        注意力汇聚：Nadaraya-Watson 核回归、平均汇聚、各种核、学习得到的 w\n",
                 "退出状态：0 成功，1 运行时错误或数据错误，2 用法错误。"]:
        check(want in out, "LANG=zh_CN.UTF-8 attn --help has %r" % want)
    check(run(["--help"], env=C)[1].startswith("usage: attn COMMAND [OPTIONS]\n"),
          "LANG=C attn --help: English")
    expect(["tour", "--help"], 0, env=ZH,
           out_has=["用法：attn tour [--out DIR] [--step N|NAME] [--list]", "步骤：\n",
                    "   3  scoring     注意力评分函数\n", "选项：\n",
                    "  -h, --help               显示本帮助\n",
                    "  -s, --step N|NAME        只运行一步，按编号或名字\n", "示例：\n"])
    # errors: the same exit codes, the message in the reader's language
    expect(["tour", "--step", "99"], 2, env=ZH,
           err="attn tour: --step：应为 1 到 18 之间的整数，得到的是“99”")
    expect(["tour", "--step", "99"], 2, err="attn tour: --step: expected an integer from 1 to 18, "
           "got '99'")
    expect(["tour", "--list", "--step", "2"], 2, env=ZH,
           err="attn tour: --list 不运行任何东西；与它一起给出的 --step 没有作用")
    expect(["tour", "--frobnicate"], 2, env=ZH,
           err="attn tour: 未知选项“--frobnicate”（见 attn tour --help）")
    expect(["frobnicate"], 2, env=ZH, err="attn: 未知命令“frobnicate”（见 attn --help）")
    expect(["posenc", "--dim", "0"], 2, env=ZH,
           err="attn posenc: --dim：应为 1 到 1000000000 之间的整数，得到的是“0”")
    expect(["score", "--valid-lens", "1,2,3"], 2, env=ZH,
           err="attn score: --valid-lens：应有 2 个长度（每个样本一个），得到 3 个")
    expect(["score", "--valid-lens", "1,2,3"], 2,
           err="attn score: --valid-lens: expected 2 lengths (one per example), got 3")
    # a step in Chinese: its heading and text; the commands' own output and
    # numbers as they are
    rc, out, _ = run(["tour", "--step", "12"], env=ZH)
    check(out.startswith("第 12 步，共 18 步 · 10.6.3.1 绝对位置信息\n"),
          "step 12's zh heading: %r" % out[:80])
    check("较高比特位的交替频率低于较低比特位" in out, "step 12's zh text, the book's words")
    check("$ attn posenc --binary 8\n" in out, "step 12 runs its command as typed")
    # score --explain: each step in the book's words, the numbers as they are
    rc, out, _ = run(["score", "--explain", "--score", "dot"], env=ZH)
    en = run(["score", "--explain", "--score", "dot"], env=C)[1]
    for want in ["=== DotProductAttention，样本 0，valid_len 2 ===\n",
                 "第 1 步。评分：a(q, k) = q·k / sqrt(2) = q·k / 1.4142  (1, 10)\n",
                 "第 2 步。掩蔽：k >= valid_len 处的键评分为 -1e6  (1, 10)\n",
                 "第 3 步。注意力权重：在键上做 softmax，每行之和为 1  (1, 10)\n",
                 "第 4 步。输出：值的加权和，权重 · 值  (1, 4)\n[[2.0000, 3.0000, 4.0000, 5.0000]]\n"]:
        check(want in out, "LANG=zh_CN.UTF-8 attn score --explain has %r" % want)
    numbers = lambda t: [l for l in t.splitlines() if l.startswith("[")]
    check(numbers(out) == numbers(en) and len(numbers(en)) == 8,
          "score --explain: the same matrices in both languages")
    rc, out, _ = run(["score", "--keys", "random"], env=ZH)
    check("                           评分跨度   最大的 |w - 1/valid_len|\n"
          "  AdditiveAttention          0.4893                     0.0421\n" in out,
          "score --keys random: the zh table's columns over the numbers")
    expect(["score", "--score-hiddens", "4", "--score", "dot"], 2, env=ZH,
           err="attn score: --score-hiddens 只用于 --score additive")
    # pool: the report in the book's words; the book's own "epoch N, loss X"
    # lines as d2l prints them
    rc, out, _ = run(["pool"], env=ZH)
    for want in ["注意力汇聚：测试输入是查询，训练输入是键，它们的 y 是值\n",
                 "  在每个测试输入上 y_hat = mean(y_train) = 2.265487\n",
                 "  w 的初值为 0.136071（由种子在 [0, 1) 上均匀抽取）；SGD，lr 0.5，5 个周期；"
                 "每个训练点的键和值是其余 49 个\n",
                 "epoch 1, loss 57.796242\n",
                 "  学习得到的 w 25.223997：宽度为 σ = 1/|w| = 0.039645 的高斯核\n",
                 "  与真实值的均方误差 0.191323\n"]:
        check(want in out, "LANG=zh_CN.UTF-8 attn pool has %r" % want)
    rc, out, _ = run(["pool", "--method", "nonparametric", "--kernel", "boxcar", "--sigma",
                      "0.02"], env=ZH)
    check("  在 11 个测试输入（共 50 个）上与真实值的均方误差为 0.299651；39 个在 σ 之内没有训练点"
          in out,
          "pool --kernel boxcar --sigma 0.02: the unreached count in zh (%r)" % out[-300:])
    expect(["pool", "--w-init", "1", "--method", "average"], 2, env=ZH,
           err="attn pool: --w-init 用于 --method parametric，但没有要求它")
    # posenc: the report, the zh edition's own binary lines, errors
    rc, out, _ = run(["posenc", "--binary", "3"], env=ZH)
    check(out == "0的二进制是：00\n1的二进制是：01\n2的二进制是：10\n",
          "posenc --binary 3 under zh: the zh edition's lines (%r)" % out)
    rc, out, _ = run(["posenc", "--steps", "100", "--check-relative", "1:3"], env=ZH)
    check("  δ = 1    99 个位置 × 16 对   最大 |差| = 5.99e-08\n" in out
          and "δ = 1 … 3 中最差：5.99e-08（δ = 1）\n" in out,
          "posenc --check-relative under zh: %r" % out)
    expect(["posenc", "--cols", "40", "--plot", os.path.join(tmp, "c.png")], 2, env=ZH,
           err="attn posenc: --cols：--dim 32 时没有第 40 列（列为 0 … 31）")
    expect(["posenc", "--cols", "40", "--plot", os.path.join(tmp, "c.png")], 2,
           err="attn posenc: --cols: column 40 does not exist for --dim 32 (columns 0 … 31)")
    # --json: the same bytes in every language
    for args in (["posenc", "--json", "-"], ["multihead", "--json", "-"],
                 ["score", "--explain", "--json", "-"]):
        a, b = run(args, env=C)[1], run(args, env=ZH)[1]
        check(a == b and a.startswith("{"), "attn %s: the same JSON under zh_CN.UTF-8"
              % " ".join(args))
