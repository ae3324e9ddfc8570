/* test_seq2seq_data.c — the data of translation (SPEC.md §11): d2l's
 * fra.txt read as preprocess_nmt and tokenize_nmt read it, the JSON form,
 * d2l's Vocab and build_array_nmt, teacher forcing's decoder input, BLEU,
 * the alignment count, and the built-in English → French grammar.
 *
 * usage: test_seq2seq_data REF_DIR
 *   REF_DIR  tests/ref/nmt, made by scripts/gen_nmt_ref.py from d2l's own
 *            functions: fra_small.txt and what d2l makes of it
 *            (fra_small_ref.json), Python's str.lower() of U+0000 …
 *            U+017F (lower_ref.json), preprocess_nmt of single lines
 *            (preprocess_ref.json) and bleu() of sentence pairs
 *            (bleu_ref.json).
 * The messages of every bad input are checked word for word.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "s2s_corpus.h"
#include "seq2seq_data.h"
#include "seq2seq_task.h"

static const char *ref_dir;

/* A string check that prints both strings when they differ. */
#define CHECK_STR(got, want) check_str((got), (want), #got, __LINE__)

static void check_str(const char *got, const char *want, const char *expr, int line)
{
    check_count++;
    if (!got || strcmp(got, want) != 0) {
        check_failed++;
        fprintf(stderr, "%s:%d: %s = \"%s\", want \"%s\"\n", __FILE__, line, expr,
                got ? got : "(null)", want);
    }
}

/* The parsed JSON file REF_DIR/name; aborts the test when it is missing. */
static cJSON *ref_json(const char *name)
{
    char path[1024];
    char *text;
    cJSON *root;
    snprintf(path, sizeof path, "%s/%s", ref_dir, name);
    if (!(text = check_read_file(path, NULL)) || !(root = cJSON_Parse(text))) {
        fprintf(stderr, "%s: cannot read (run scripts/gen_nmt_ref.py)\n", path);
        exit(1);
    }
    free(text);
    return root;
}

/* Whether one side of pair i of p has the tokens of the JSON array want. */
static int same_tokens(const char *const *tok, size_t n, const cJSON *want)
{
    const cJSON *w;
    size_t j = 0;
    if ((size_t)cJSON_GetArraySize(want) != n)
        return 0;
    cJSON_ArrayForEach(w, want) if (strcmp(tok[j++], w->valuestring) != 0) return 0;
    return 1;
}

/* The pairs p against the JSON lists of source and target sentences. */
static void check_pairs(const s2s_pairs *p, const cJSON *src, const cJSON *tgt)
{
    CHECK_INT(p->n, cJSON_GetArraySize(src));
    for (size_t i = 0; i < p->n && i < (size_t)cJSON_GetArraySize(src); i++) {
        size_t ns, nt;
        const char *const *s = s2s_src(p, i, &ns), *const *t = s2s_tgt(p, i, &nt);
        CHECK(same_tokens(s, ns, cJSON_GetArrayItem(src, (int)i)));
        CHECK(same_tokens(t, nt, cJSON_GetArrayItem(tgt, (int)i)));
    }
}

/* n ints (or longs, as wide) against a JSON array of numbers. */
static int same_ints(const int *got, size_t n, const cJSON *want)
{
    const cJSON *w;
    size_t j = 0;
    if ((size_t)cJSON_GetArraySize(want) != n)
        return 0;
    cJSON_ArrayForEach(w, want) if (got[j++] != (int)w->valuedouble) return 0;
    return 1;
}

static int same_longs(const long *got, size_t n, const cJSON *want)
{
    const cJSON *w;
    size_t j = 0;
    if ((size_t)cJSON_GetArraySize(want) != n)
        return 0;
    cJSON_ArrayForEach(w, want) if (got[j++] != (long)w->valuedouble) return 0;
    return 1;
}

/* rows (N, T) against a JSON (N, T) array. */
static int same_rows(const int *rows, size_t N, size_t T, const cJSON *want)
{
    const cJSON *w;
    size_t i = 0;
    if ((size_t)cJSON_GetArraySize(want) != N)
        return 0;
    cJSON_ArrayForEach(w, want) if (!same_ints(rows + T * i++, T, w)) return 0;
    return 1;
}

/* ---- fra.txt against d2l --------------------------------------------------------- */

static void check_vocab(const s2s_vocab *v, const cJSON *want)
{
    const cJSON *w;
    size_t i = 0;
    CHECK_INT(v->n, cJSON_GetArraySize(want));
    cJSON_ArrayForEach(w, want)
    {
        if (i < v->n) {
            CHECK_STR(v->tokens[i], w->valuestring);
            CHECK_INT(s2s_vocab_id(v, w->valuestring), i);
        }
        i++;
    }
}

/* One min_freq's vocabularies and arrays against d2l's. */
static void check_vocab_case(const s2s_pairs *p, const cJSON *vc)
{
    s2s_vocab sv, tv;
    char err[256];
    const cJSON *ac;
    size_t min_freq = (size_t)cJSON_GetObjectItem(vc, "min_freq")->valuedouble;
    CHECK(s2s_vocab_build(&sv, p, S2S_SRC, min_freq, err, sizeof err) == 0);
    CHECK(s2s_vocab_build(&tv, p, S2S_TGT, min_freq, err, sizeof err) == 0);
    check_vocab(&sv, cJSON_GetObjectItem(vc, "src_vocab"));
    check_vocab(&tv, cJSON_GetObjectItem(vc, "tgt_vocab"));
    cJSON_ArrayForEach(ac, cJSON_GetObjectItem(vc, "arrays"))
    {
        s2s_arrays a;
        size_t T = (size_t)cJSON_GetObjectItem(ac, "num_steps")->valuedouble;
        const cJSON *s = cJSON_GetObjectItem(ac, "src"), *t = cJSON_GetObjectItem(ac, "tgt");
        CHECK(s2s_arrays_build(&a, p, &sv, &tv, T, err, sizeof err) == 0);
        CHECK(same_rows(a.src, a.n, T, cJSON_GetObjectItem(s, "array")));
        CHECK(same_longs(a.src_valid, a.n, cJSON_GetObjectItem(s, "valid_len")));
        CHECK(same_rows(a.tgt, a.n, T, cJSON_GetObjectItem(t, "array")));
        CHECK(same_longs(a.tgt_valid, a.n, cJSON_GetObjectItem(t, "valid_len")));
        CHECK(same_rows(a.dec_in, a.n, T, cJSON_GetObjectItem(t, "dec_in")));
        s2s_arrays_free(&a);
    }
    s2s_vocab_free(&sv);
    s2s_vocab_free(&tv);
}

static void test_fra_reference(void)
{
    cJSON *ref = ref_json("fra_small_ref.json");
    const cJSON *vc;
    s2s_corpus c;
    char path[1024], err[256];
    size_t max = (size_t)cJSON_GetObjectItem(ref, "max_examples")->valuedouble;
    snprintf(path, sizeof path, "%s/fra_small.txt", ref_dir);
    CHECK(s2s_corpus_load(&c, path, max, err, sizeof err) == 0);
    check_pairs(&c.train, cJSON_GetObjectItem(ref, "source"), cJSON_GetObjectItem(ref, "target"));
    CHECK(c.heldout.n == 0 && c.train.align == NULL);
    cJSON_ArrayForEach(vc, cJSON_GetObjectItem(ref, "vocabs")) check_vocab_case(&c.train, vc);
    s2s_corpus_free(&c);
    /* max_examples 0: every line, as d2l's `if num_examples and …` */
    CHECK(s2s_corpus_load(&c, path, 0, err, sizeof err) == 0);
    check_pairs(&c.train, cJSON_GetObjectItem(ref, "all_source"),
                cJSON_GetObjectItem(ref, "all_target"));
    s2s_corpus_free(&c);
    cJSON_Delete(ref);
}

/* c (below U+0800) in UTF-8 at out; the bytes written. */
static size_t put2(char *out, unsigned long c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    out[0] = (char)(0xC0 | (c >> 6));
    out[1] = (char)(0x80 | (c & 0x3F));
    return 2;
}

/* Python's str.lower() for every code point U+0000 … U+017F. */
static void test_lower(void)
{
    cJSON *ref = ref_json("lower_ref.json");
    const cJSON *w;
    unsigned long c = 0;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(ref, "lower"))
    {
        char out[8];
        unsigned long second;
        size_t n = put2(out, s2s_lower(c, &second));
        if (second)
            n += put2(out + n, second);
        check_count++;
        /* U+0000 is an empty C string: compare bytes with its length */
        if (n != strlen(w->valuestring) + (c == 0) || memcmp(out, w->valuestring, n) != 0) {
            check_failed++;
            fprintf(stderr, "lower(U+%04lX) differs from Python's \"%s\"\n", c, w->valuestring);
        }
        c++;
    }
    CHECK_INT(c, 0x180);
    CHECK_INT(s2s_lower(0x3A3, &c), 0x3A3); /* Greek and the rest: kept */
    cJSON_Delete(ref);
}

static void test_preprocess(void)
{
    cJSON *ref = ref_json("preprocess_ref.json");
    const cJSON *cs;
    char out[512];
    size_t len;
    cJSON_ArrayForEach(cs, cJSON_GetObjectItem(ref, "cases"))
    {
        const char *line = cJSON_GetObjectItem(cs, "line")->valuestring;
        CHECK(s2s_preprocess_line(line, strlen(line), 1, out, &len) == 0);
        CHECK_STR(out, cJSON_GetObjectItem(cs, "out")->valuestring);
        CHECK_INT(len, strlen(cJSON_GetObjectItem(cs, "out")->valuestring));
    }
    /* a line that does not start the file: its first character follows '\n' */
    CHECK(s2s_preprocess_line(".a", 2, 0, out, &len) == 0);
    CHECK_STR(out, " .a");
    CHECK(s2s_preprocess_line(".a", 2, 1, out, &len) == 0);
    CHECK_STR(out, ".a");
    /* bytes that are not UTF-8, or a NUL: the offset + 1 of the first */
    CHECK_INT(s2s_preprocess_line("ab\xC3", 3, 1, out, &len), 3);
    CHECK_INT(s2s_preprocess_line("a\xC3\xA9\x80", 4, 1, out, &len), 4);
    CHECK_INT(s2s_preprocess_line("\xED\xA0\x80", 3, 1, out, &len), 1); /* a surrogate */
    CHECK_INT(s2s_preprocess_line("\xC0\xAF", 2, 1, out, &len), 1);     /* overlong */
    CHECK_INT(s2s_preprocess_line("ab\0c", 4, 1, out, &len), 3);
    cJSON_Delete(ref);
}

/* s2s_sentence_tokens(s, flags) must give the tokens want (n of them),
 * joined by '|' in want ("" for none). */
static void check_sentence(const char *s, int flags, const char *want, int line)
{
    char err[128], *joined = NULL;
    size_t n = 0;
    char **tok = s2s_sentence_tokens(s, flags, &n, err, sizeof err);
    check_count++;
    if (!tok) {
        check_failed++;
        fprintf(stderr, "%s:%d: \"%s\": %s\n", __FILE__, line, s, err);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char *j = malloc((joined ? strlen(joined) : 0) + strlen(tok[i]) + 2);
        sprintf(j, "%s%s%s", joined ? joined : "", i ? "|" : "", tok[i]);
        free(joined);
        joined = j;
    }
    check_str(joined ? joined : "", want, s, line);
    free(joined);
    free(tok);
}

static void test_sentence(void)
{
    char err[128];
    size_t n;
    const int L = S2S_SENTENCE_LOWER, P = S2S_SENTENCE_PUNCT, W = S2S_SENTENCE_WORDS;
    check_sentence("The big  red Dog.", L, "the|big||red|dog.", __LINE__); /* d2l's */
    check_sentence("The big  red Dog.", L | P, "the|big||red|dog|.", __LINE__);
    check_sentence("The big  red Dog.", W, "The|big|red|Dog.", __LINE__);
    check_sentence(" The big  red Dog. ", L | P | W, "the|big|red|dog|.", __LINE__);
    check_sentence("\u00c9COLE\u00a0!", L | P, "\u00e9cole|!", __LINE__);
    check_sentence("....", P, ".|.|.|.", __LINE__);
    check_sentence("", 0, "", __LINE__); /* one empty token, as "".split(' ') */
    {
        char **tok = s2s_sentence_tokens("", 0, &n, err, sizeof err);
        CHECK(tok && n == 1 && tok[0][0] == '\0');
        free(tok);
        tok = s2s_sentence_tokens("  ", W, &n, err, sizeof err);
        CHECK(tok && n == 0);
        free(tok);
    }
    CHECK(s2s_sentence_tokens("a\xff", L, &n, err, sizeof err) == NULL);
    CHECK_STR(err, "byte 2: not valid UTF-8");
}

/* ---- fra.txt: lines, fields, errors -------------------------------------------------- */

/* text read as fra.txt named "f.txt" with max_examples max: 0 and the
 * pairs, or -1 with the message in err. */
static int read_fra(s2s_corpus *c, const char *text, size_t max, char *err, size_t errlen)
{
    return s2s_corpus_read_fra(c, text, strlen(text), "f.txt", max, err, errlen);
}

/* The message read_fra gives for text (checked to fail). */
static void check_fra_error(const char *text, size_t max, const char *want, int line)
{
    s2s_corpus c;
    char err[256] = "";
    int rc = read_fra(&c, text, max, err, sizeof err);
    CHECK_INT(rc, -1);
    check_str(err, want, "error", line);
    CHECK(c.train.n == 0 && c.train.src_tok == NULL); /* nothing left behind */
}

static void test_fra_lines(void)
{
    s2s_corpus c;
    char err[256];
    size_t n;
    const char *const *t;
    /* a third and fourth field are dropped; no final '\n'; CRLF keeps '\r' */
    CHECK(read_fra(&c, "A b.\tC d.\tCC-BY\textra\r\nE\tF\r", 0, err, sizeof err) == 0);
    CHECK_INT(c.train.n, 2);
    t = s2s_tgt(&c.train, 0, &n);
    CHECK(n == 3 && !strcmp(t[0], "c") && !strcmp(t[1], "d") && !strcmp(t[2], "."));
    t = s2s_src(&c.train, 1, &n);
    CHECK(n == 1 && !strcmp(t[0], "e"));
    t = s2s_tgt(&c.train, 1, &n);
    CHECK(n == 1 && !strcmp(t[0], "f\r"));
    s2s_corpus_free(&c);
    /* lines 0 … max: a bad line after them is never read */
    CHECK(read_fra(&c, "a\tb\n\nc\td\nno tab here\n", 2, err, sizeof err) == 0);
    CHECK_INT(c.train.n, 2);
    s2s_corpus_free(&c);
    /* blank lines (spaces, tabs, '\r') are skipped; they still count */
    CHECK(read_fra(&c, " \t \r\n\t\n  \na\tb\n", 3, err, sizeof err) == 0);
    CHECK_INT(c.train.n, 1);
    s2s_corpus_free(&c);
    /* a side of spaces with a word: empty tokens kept, as split(' ') */
    CHECK(read_fra(&c, " a  b \tc", 0, err, sizeof err) == 0);
    t = s2s_src(&c.train, 0, &n);
    CHECK(n == 5 && !strcmp(t[0], "") && !strcmp(t[1], "a") && !strcmp(t[2], "") &&
          !strcmp(t[3], "b") && !strcmp(t[4], ""));
    s2s_corpus_free(&c);
}

static void test_fra_errors(void)
{
    check_fra_error("", 0, "f.txt: no sentence pairs (expected lines of English<TAB>French)",
                    __LINE__);
    check_fra_error("\n\n \r\n", 0,
                    "f.txt: no sentence pairs (expected lines of English<TAB>French)", __LINE__);
    check_fra_error("a\tb\n\nHello there\n", 0,
                    "f.txt: line 3: no tab between the source and the target", __LINE__);
    check_fra_error("a\tb\n\t.\n", 0, "f.txt: line 2: the source (before the tab) is empty",
                    __LINE__);
    check_fra_error("a\tb\n   \tx\n", 0, "f.txt: line 2: the source (before the tab) is empty",
                    __LINE__);
    check_fra_error("Go.\t\tCC-BY\n", 0, "f.txt: line 1: the target (after the tab) is empty",
                    __LINE__);
    check_fra_error("Go.\t \u00a0\u202f\n", 0,
                    "f.txt: line 1: the target (after the tab) is empty", __LINE__);
    check_fra_error("a\tb\nça\tc\xE9\n", 0, "f.txt: line 2, byte 6: not valid UTF-8",
                    __LINE__);
    check_fra_error("a\tb\nca\tc\xE9t\xC3\xA9\n", 0, "f.txt: line 2, byte 5: not valid UTF-8",
                    __LINE__);
}

static void test_fra_files(void)
{
    s2s_corpus c;
    char err[256], dir[] = "/tmp/attn-nmt-XXXXXX", path[256];
    FILE *f;
    static const char nul[] = "a\tb\nx\ty\0z\n";
    /* a NUL byte */
    CHECK(s2s_corpus_read_fra(&c, nul, sizeof nul - 1, "f.txt", 0, err, sizeof err) == -1);
    CHECK_STR(err, "f.txt: line 2, byte 4: a NUL byte");
    /* files: missing, a folder, text and JSON told apart by the first byte */
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/none.txt", dir);
    CHECK(s2s_corpus_load(&c, path, 0, err, sizeof err) == -1);
    snprintf(path, sizeof path, "%s/none.txt: cannot open: No such file or directory", dir);
    CHECK_STR(err, path);
    CHECK(s2s_corpus_load(&c, dir, 0, err, sizeof err) == -1);
    snprintf(path, sizeof path, "%s: cannot read: Is a directory", dir);
    CHECK_STR(err, path);
    snprintf(path, sizeof path, "%s/d.json", dir);
    CHECK((f = fopen(path, "w")) != NULL);
    fputs(" \n {\"pairs\": [[\"Hi .\", \"Salut !\"]]}\n", f);
    fclose(f);
    CHECK(s2s_corpus_load(&c, path, 0, err, sizeof err) == 0);
    CHECK(c.train.n == 1 && !strcmp(c.train.src_tok[0], "Hi")); /* as written */
    s2s_corpus_free(&c);
    CHECK((f = fopen(path, "w")) != NULL);
    fputs("{\"pairs\": [[\"a\", \"b\"],]}", f);
    fclose(f);
    CHECK(s2s_corpus_load(&c, path, 0, err, sizeof err) == -1);
    CHECK(strstr(err, "d.json: line 1, column 23: invalid JSON at ']'") != NULL);
    CHECK(remove(path) == 0);
    CHECK(rmdir(dir) == 0);
    CHECK(s2s_corpus_format("\r\n\t {", 5) == S2S_CORPUS_JSON);
    CHECK(s2s_corpus_format("[", 1) == S2S_CORPUS_TEXT);
    CHECK(s2s_corpus_format("", 0) == S2S_CORPUS_TEXT);
}

/* ---- the JSON form -------------------------------------------------------------------- */

/* The message s2s_corpus_from_json gives for text (checked to fail). */
static void check_json_error(const char *text, const char *want, int line)
{
    s2s_corpus c;
    char err[256] = "";
    cJSON *root = cJSON_Parse(text);
    CHECK(root != NULL);
    CHECK_INT(s2s_corpus_from_json(&c, root, "d.json", err, sizeof err), -1);
    check_str(err, want, "error", line);
    CHECK(c.train.n == 0 && c.heldout.n == 0 && c.train.text == NULL);
    cJSON_Delete(root);
}

static void test_json(void)
{
    s2s_corpus c;
    char err[256];
    size_t n;
    const char *const *t;
    cJSON *root = cJSON_Parse(
        "{\"pairs\": [[\"the red car\", \"la voiture rouge\"], [\" Go  now \", \"Va !\"]],"
        " \"heldout\": {\"pairs\": [[\"a <unk>\", \"b\"]]}}");
    CHECK(s2s_corpus_is_pairs(root));
    CHECK(s2s_corpus_from_json(&c, root, "d.json", err, sizeof err) == 0);
    CHECK(c.train.n == 2 && c.heldout.n == 1);
    t = s2s_src(&c.train, 1, &n);
    CHECK(n == 2 && !strcmp(t[0], "Go") && !strcmp(t[1], "now")); /* runs of spaces */
    t = s2s_tgt(&c.train, 0, &n);
    CHECK(n == 3 && !strcmp(t[2], "rouge"));
    t = s2s_src(&c.heldout, 0, &n);
    CHECK(n == 2 && !strcmp(t[1], "<unk>"));
    s2s_corpus_free(&c);
    cJSON_Delete(root);
    /* "heldout": null and an empty held-out part are no held-out pairs */
    root = cJSON_Parse("{\"pairs\": [[\"a\", \"b\"]], \"heldout\": {\"pairs\": []}}");
    CHECK(s2s_corpus_from_json(&c, root, "d.json", err, sizeof err) == 0 && c.heldout.n == 0);
    s2s_corpus_free(&c);
    cJSON_Delete(root);
    root = cJSON_Parse("{\"sequences\": [[\"a\"]], \"targets\": [[\"b\"]]}");
    CHECK(!s2s_corpus_is_pairs(root)); /* SPEC §9's data */
    cJSON_Delete(root);

    check_json_error("[]", "d.json: $: expected an object with \"pairs\", got an array",
                     __LINE__);
    check_json_error("{}", "d.json: $.pairs: missing (an array of [source, target] pairs)",
                     __LINE__);
    check_json_error("{\"pairs\": {}}",
                     "d.json: $.pairs: expected an array of [source, target] pairs, got an "
                     "object", __LINE__);
    check_json_error("{\"pairs\": []}", "d.json: $.pairs: empty: expected at least one pair",
                     __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"b\"], \"a b\"]}",
                     "d.json: $.pairs[1]: expected a pair [source, target], got a string",
                     __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"b\", \"c\"]]}",
                     "d.json: $.pairs[0]: expected a pair [source, target], got 3 entries",
                     __LINE__);
    check_json_error("{\"pairs\": [[\"a\"]]}",
                     "d.json: $.pairs[0]: expected a pair [source, target], got 1 entry",
                     __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"b\"], [\"a\", \"b\"], [\"a\", \"b\"], [\"a\", 3]]}",
                     "d.json: $.pairs[3][1]: expected a string (a sentence), got a number",
                     __LINE__);
    check_json_error("{\"pairs\": [[[\"a\"], \"b\"]]}",
                     "d.json: $.pairs[0][0]: expected a string (a sentence), got an array",
                     __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"  \"]]}", "d.json: $.pairs[0][1]: an empty sentence",
                     __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"b\"]], \"colour\": 1}",
                     "d.json: $.colour: unknown key (known: pairs, heldout)", __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"b\"]], \"heldout\": []}",
                     "d.json: $.heldout: expected an object with \"pairs\", got an array",
                     __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"b\"]], \"heldout\": {\"pair\": []}}",
                     "d.json: $.heldout.pair: unknown key (known: pairs)", __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"b\"]], \"heldout\": {}}",
                     "d.json: $.heldout.pairs: missing (an array of [source, target] pairs)",
                     __LINE__);
    check_json_error("{\"pairs\": [[\"a\", \"b\"]], \"heldout\": {\"pairs\": [[\"\", \"b\"]]}}",
                     "d.json: $.heldout.pairs[0][0]: an empty sentence", __LINE__);
}

/* ---- vocabularies and arrays by hand ----------------------------------------------------- */

/* Pairs from sentences written with spaces (split on runs of spaces). */
static void make_pairs(s2s_pairs *p, const char *const (*s)[2], size_t n)
{
    s2s_builder b;
    size_t k;
    s2s_builder_init(&b);
    for (size_t i = 0; i < n; i++) {
        CHECK(s2s_builder_split_words(&b, S2S_SRC, s[i][0], strlen(s[i][0]), &k) == 0);
        CHECK(s2s_builder_split_words(&b, S2S_TGT, s[i][1], strlen(s[i][1]), &k) == 0);
        CHECK(s2s_builder_pair(&b, NULL) == 0);
    }
    CHECK(s2s_builder_finish(&b, p) == 0);
}

static void test_vocab(void)
{
    static const char *const s[][2] = {{"b a b", "x"}, {"c a <eos>", "y x"}, {"a", "x z"}};
    static const char *const v0[] = {"<unk>", "<pad>", "<bos>", "<eos>", "a", "b", "c"};
    s2s_pairs p;
    s2s_vocab v;
    char err[256];
    make_pairs(&p, s, 3);
    /* a 3, b 2, c 1, <eos> 1 (reserved: not added again); ties by first appearance */
    CHECK(s2s_vocab_build(&v, &p, S2S_SRC, 0, err, sizeof err) == 0);
    CHECK_INT(v.n, 7);
    for (size_t i = 0; i < 7 && i < v.n; i++)
        CHECK_STR(v.tokens[i], v0[i]);
    CHECK_INT(s2s_vocab_id(&v, "zz"), S2S_UNK);
    CHECK_INT(s2s_vocab_find(&v, "zz"), -1);
    CHECK_INT(s2s_vocab_find(&v, "c"), 6);
    CHECK_INT(s2s_vocab_id(&v, "<eos>"), S2S_EOS);
    s2s_vocab_free(&v);
    CHECK(s2s_vocab_build(&v, &p, S2S_SRC, 2, err, sizeof err) == 0);
    CHECK(v.n == 6 && !strcmp(v.tokens[4], "a") && !strcmp(v.tokens[5], "b"));
    s2s_vocab_free(&v);
    CHECK(s2s_vocab_build(&v, &p, S2S_TGT, 1, err, sizeof err) == 0);
    CHECK(v.n == 7 && !strcmp(v.tokens[4], "x") && !strcmp(v.tokens[5], "y") &&
          !strcmp(v.tokens[6], "z"));
    s2s_vocab_free(&v);
    s2s_pairs_free(&p);
    s2s_vocab_free(&v); /* a zeroed vocabulary frees */

    /* a saved model's list */
    CHECK(s2s_vocab_from_list(&v, v0, 7, "$.src_vocab", err, sizeof err) == 0);
    CHECK_INT(s2s_vocab_find(&v, "b"), 5);
    s2s_vocab_free(&v);
    CHECK(s2s_vocab_from_list(&v, v0, 3, "$.src_vocab", err, sizeof err) == -1);
    CHECK_STR(err, "$.src_vocab: expected at least 4 tokens (<unk>, <pad>, <bos>, <eos>), got 3");
    {
        const char *bad[] = {"<unk>", "<pad>", "x", "<eos>"};
        CHECK(s2s_vocab_from_list(&v, bad, 4, "$.tgt_vocab", err, sizeof err) == -1);
        CHECK_STR(err, "$.tgt_vocab[2]: expected \"<bos>\" (a vocabulary starts <unk>, <pad>, "
                       "<bos>, <eos>), got \"x\"");
    }
    {
        const char *dup[] = {"<unk>", "<pad>", "<bos>", "<eos>", "a", "b", "a"};
        CHECK(s2s_vocab_from_list(&v, dup, 7, "$.src_vocab", err, sizeof err) == -1);
        CHECK_STR(err, "$.src_vocab[6]: \"a\" again (it is entry 4)");
        dup[5] = "<pad>";
        CHECK(s2s_vocab_from_list(&v, dup, 6, "$.src_vocab", err, sizeof err) == -1);
        CHECK_STR(err, "$.src_vocab[5]: \"<pad>\" again (it is entry 1)");
        CHECK(v.n == 0 && v.tokens == NULL);
    }
}

static void test_arrays(void)
{
    static const char *const s[][2] = {{"b a b", "a b a"}, {"c a <eos>", "zz"}, {"<pad> a", "b"}};
    static const int src5[] = {5, 4, 5, 3, 1, 6, 4, 3, 3, 1, 1, 4, 3, 1, 1};
    static const int tgt5[] = {4, 5, 4, 3, 1, 0, 3, 1, 1, 1, 5, 3, 1, 1, 1};
    static const int dec5[] = {2, 4, 5, 4, 3, 2, 0, 3, 1, 1, 2, 5, 3, 1, 1};
    static const long sv5[] = {4, 4, 2}, tv5[] = {4, 2, 2};
    s2s_pairs p;
    s2s_vocab sv, tv;
    s2s_arrays a;
    char err[256];
    int row[3], cut;
    const char *tok[] = {"b", "a", "b"};
    make_pairs(&p, s, 3);
    CHECK(s2s_vocab_build(&sv, &p, S2S_SRC, 0, err, sizeof err) == 0); /* a b c */
    CHECK(s2s_vocab_build(&tv, &p, S2S_TGT, 0, err, sizeof err) == 0); /* a b zz */
    CHECK(s2s_arrays_build(&a, &p, &sv, &tv, 5, err, sizeof err) == 0);
    CHECK(a.n == 3 && a.T == 5 && a.n_cut == 0);
    CHECK(memcmp(a.src, src5, sizeof src5) == 0);
    /* tgt vocab: a 3 (4), b 3 (5), zz 1 (6); "zz" is known here */
    CHECK(memcmp(a.tgt, (int[]){4, 5, 4, 3, 1, 6, 3, 1, 1, 1, 5, 3, 1, 1, 1}, sizeof tgt5) == 0);
    CHECK(memcmp(a.src_valid, sv5, sizeof sv5) == 0);
    CHECK(memcmp(a.tgt_valid, tv5, sizeof tv5) == 0);
    CHECK(memcmp(a.dec_in, (int[]){2, 4, 5, 4, 3, 2, 6, 3, 1, 1, 2, 5, 3, 1, 1}, sizeof dec5) ==
          0);
    s2s_arrays_free(&a);
    /* with a target vocabulary that lacks "zz": <unk> */
    s2s_vocab_free(&tv);
    CHECK(s2s_vocab_build(&tv, &p, S2S_TGT, 2, err, sizeof err) == 0);
    CHECK(s2s_arrays_build(&a, &p, &sv, &tv, 5, err, sizeof err) == 0);
    CHECK(memcmp(a.tgt, tgt5, sizeof tgt5) == 0);
    CHECK(memcmp(a.dec_in, dec5, sizeof dec5) == 0);
    s2s_arrays_free(&a);
    /* T 3: cut (the <eos> does not fit) */
    CHECK(s2s_arrays_build(&a, &p, &sv, &tv, 3, err, sizeof err) == 0);
    CHECK_INT(a.n_cut, 3); /* source 0 and 1, target 0 */
    CHECK(memcmp(a.src, (int[]){5, 4, 5, 6, 4, 3, 1, 4, 3}, 9 * sizeof(int)) == 0);
    CHECK(a.src_valid[0] == 3 && a.src_valid[1] == 3 && a.src_valid[2] == 2);
    s2s_arrays_free(&a);
    CHECK(s2s_arrays_build(&a, &p, &sv, &tv, 0, err, sizeof err) == -1);
    CHECK_STR(err, "num_steps 0: a sentence needs at least one position");
    /* one sentence */
    CHECK_INT(s2s_vocab_encode(row, &sv, tok, 3, 3, &cut), 3);
    CHECK(cut == 1 && row[0] == 5 && row[2] == 5);
    CHECK_INT(s2s_vocab_encode(row, &sv, tok, 0, 3, &cut), 1);
    CHECK(cut == 0 && row[0] == S2S_EOS && row[1] == S2S_PAD);
    s2s_vocab_free(&sv);
    s2s_vocab_free(&tv);
    s2s_pairs_free(&p);
}

static void test_decode(void)
{
    static const char *const s[][2] = {{"x", "a b"}};
    s2s_pairs p;
    s2s_vocab v;
    char err[256], *t;
    make_pairs(&p, s, 1);
    CHECK(s2s_vocab_build(&v, &p, S2S_TGT, 0, err, sizeof err) == 0); /* a 4, b 5 */
    t = s2s_ids_to_sentence(&v, (int[]){4, 5, -1, 99, 1, 3, 4}, 7);
    CHECK_STR(t, "a b <unk> <unk> <pad>");
    free(t);
    t = s2s_ids_to_sentence(&v, (int[]){3, 4}, 2);
    CHECK_STR(t, "");
    free(t);
    t = s2s_ids_to_sentence(&v, (int[]){5, 5}, 2);
    CHECK_STR(t, "b b");
    free(t);
    CHECK_INT(s2s_until_eos((int[]){4, 5, 3, 3}, 4), 2);
    CHECK_INT(s2s_until_eos((int[]){4, 5}, 2), 2);
    CHECK_INT(s2s_until_eos(NULL, 0), 0);
    t = s2s_join((const char *[]){"la", "", "pomme"}, 3);
    CHECK_STR(t, "la  pomme");
    free(t);
    s2s_vocab_free(&v);
    s2s_pairs_free(&p);
}

static void test_builder(void)
{
    s2s_builder b;
    s2s_pairs p;
    size_t k;
    const long al[] = {1, 0};
    s2s_builder_init(&b);
    CHECK(s2s_builder_split_d2l(&b, S2S_SRC, "", 0, &k) == 0 && k == 1);
    CHECK(s2s_builder_token(&b, S2S_TGT, "x", 1) == 0);
    CHECK(s2s_builder_pair(&b, NULL) == 0);
    CHECK(s2s_builder_token(&b, S2S_SRC, "dropped", 7) == 0);
    s2s_builder_drop(&b);
    CHECK(s2s_builder_split_d2l(&b, S2S_SRC, "a b", 3, &k) == 0 && k == 2);
    CHECK(s2s_builder_split_d2l(&b, S2S_TGT, "B A", 3, &k) == 0 && k == 2);
    CHECK(s2s_builder_pair(&b, al) == 0);
    CHECK(s2s_builder_split_words(&b, S2S_SRC, " c ", 3, &k) == 0 && k == 1);
    CHECK(s2s_builder_split_words(&b, S2S_TGT, "C", 1, &k) == 0 && k == 1);
    CHECK(s2s_builder_pair(&b, NULL) == 0);
    CHECK(s2s_builder_token(&b, S2S_SRC, "unended", 7) == 0);
    CHECK(s2s_builder_finish(&b, &p) == 0);
    CHECK(p.n == 3 && p.src_start[3] == 4 && p.tgt_start[3] == 4);
    CHECK(!strcmp(p.src_tok[0], "") && !strcmp(p.src_tok[1], "a") && !strcmp(p.src_tok[3], "c"));
    CHECK(p.align != NULL);
    if (p.align)
        CHECK(p.align[0] == -1 && p.align[1] == 1 && p.align[2] == 0 && p.align[3] == -1);
    CHECK(s2s_align(&p, 1) == p.align + 1);
    s2s_pairs_free(&p);
    s2s_builder_init(&b);
    CHECK(s2s_builder_finish(&b, &p) == 0 && p.n == 0 && p.src_start[0] == 0);
    s2s_pairs_free(&p);
}

/* ---- the alignment count ---------------------------------------------------------------- */

static void test_alignment(void)
{
    /* weights (H 2, Tq 3, S 4) */
    static const float w[2 * 3 * 4] = {
        0.1f, 0.6f, 0.2f, 0.1f,  0.5f, 0.1f, 0.1f, 0.3f,  0.25f, 0.25f, 0.25f, 0.25f,
        0.7f, 0.1f, 0.1f, 0.1f,  0.1f, 0.1f, 0.1f, 0.7f,  0.25f, 0.25f, 0.25f, 0.25f};
    size_t counted = 0;
    /* head sums: row 0 [0.8 0.7 0.3 0.2] → 0; row 1 [0.6 0.2 0.2 1.0] → 3;
     * row 2 uniform → 0 (the first on ties) */
    CHECK_INT(s2s_alignment_hits(w, 2, 3, 4, (const long[]){0, 3, 1}, 3, &counted), 2);
    CHECK_INT(counted, 3);
    CHECK_INT(s2s_alignment_hits(w, 2, 3, 4, (const long[]){-1, 3, 0}, 3, &counted), 2);
    CHECK_INT(counted, 5);
    CHECK_INT(s2s_alignment_hits(w, 2, 3, 4, (const long[]){0, 9}, 2, &counted), 1);
    CHECK_INT(counted, 7);
    /* one head: row 0's largest is at 1 */
    counted = 0;
    CHECK_INT(s2s_alignment_hits(w, 1, 3, 4, (const long[]){1, 0}, 2, &counted), 2);
    CHECK_INT(counted, 2);
}

/* ---- the grammar ------------------------------------------------------------------------- */

/* translate_english of the sentence en (words split on spaces) must give
 * fr with the alignment al. */
static void check_translation(const char *en, const char *fr, const long *al, int line)
{
    const char *w[16], *out[TRANSLATE_MAX_WORDS];
    long got_al[TRANSLATE_MAX_WORDS];
    char buf[256], *s, *joined;
    size_t n = 0;
    int m;
    snprintf(buf, sizeof buf, "%s", en);
    for (s = strtok(buf, " "); s && n < 16; s = strtok(NULL, " "))
        w[n++] = s;
    m = translate_english(w, n, out, got_al);
    check_count++;
    if (m != (int)n) {
        check_failed++;
        fprintf(stderr, "%s:%d: \"%s\": %d words, want %zu\n", __FILE__, line, en, m, n);
        return;
    }
    joined = s2s_join(out, n);
    check_str(joined, fr, en, line);
    free(joined);
    for (size_t i = 0; i < n; i++)
        if (got_al[i] != al[i]) {
            check_failed++;
            fprintf(stderr, "%s:%d: \"%s\": French word %zu translates %ld, want %ld\n",
                    __FILE__, line, en, i, got_al[i], al[i]);
        }
}

static int not_grammar(const char *en)
{
    const char *w[16], *out[TRANSLATE_MAX_WORDS];
    char buf[256], *s;
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", en);
    for (s = strtok(buf, " "); s && n < 16; s = strtok(NULL, " "))
        w[n++] = s;
    return translate_english(w, n, out, NULL) == -1;
}

static void test_grammar_by_hand(void)
{
    check_translation("the small green apple wants the big blue boy .",
                      "la petite pomme verte veut le grand garçon bleu .",
                      (const long[]){0, 1, 3, 2, 4, 5, 6, 8, 7, 9}, __LINE__);
    check_translation("a white cat likes a pretty white car .",
                      "un chat blanc aime une jolie voiture blanche .",
                      (const long[]){0, 2, 1, 3, 4, 5, 7, 6, 8}, __LINE__);
    check_translation("the dog sees a house .", "le chien voit une maison .",
                      (const long[]){0, 1, 2, 3, 4, 5}, __LINE__);
    check_translation("a big black horse follows the pretty flower .",
                      "un grand cheval noir suit la jolie fleur .",
                      (const long[]){0, 1, 3, 2, 4, 5, 6, 7, 8}, __LINE__);
    check_translation("the red cake finds a small girl .",
                      "le gâteau rouge trouve une petite fille .",
                      (const long[]){0, 2, 1, 3, 4, 5, 6, 7}, __LINE__);
    check_translation("a green book takes the black door .",
                      "un livre vert prend la porte noire .",
                      (const long[]){0, 2, 1, 3, 4, 6, 5, 7}, __LINE__);
    check_translation("the pretty blue chair watches a big white hat .",
                      "la jolie chaise bleue regarde un grand chapeau blanc .",
                      (const long[]){0, 1, 3, 2, 4, 5, 6, 8, 7, 9}, __LINE__);
    CHECK(not_grammar("the red small apple sees a cat ."));  /* colour before adjective */
    CHECK(not_grammar("the apple sees a cat"));              /* no "." */
    CHECK(not_grammar("the apple sees a cat . ."));
    CHECK(not_grammar("apple sees a cat ."));                /* no determiner */
    CHECK(not_grammar("the apple eats a cat ."));            /* not a verb of the grammar */
    CHECK(not_grammar("the apple sees ."));
    CHECK(not_grammar("the big big apple sees a cat ."));
    CHECK(not_grammar(""));
}

/* The gender of a French word of the grammar: 'm', 'f', 'b' (both: rouge),
 * 'n' for a noun's own gender below, 0 for the others. */
static const char *const fem_nouns[] = {"pomme", "voiture", "fille", "maison", "chaise",
                                        "fleur", "porte", NULL};
static const char *const masc_nouns[] = {"chat", "chien", "garçon", "livre", "cheval",
                                         "chapeau", "gâteau", NULL};
static const char *const fem_words[] = {"la", "une", "petite", "grande", "jolie", "noire",
                                        "blanche", "verte", "bleue", "rouge", NULL};
static const char *const masc_words[] = {"le", "un", "petit", "grand", "joli", "noir",
                                         "blanc", "vert", "bleu", "rouge", NULL};
static const char *const colour_words[] = {"rouge", "noir", "noire", "blanc", "blanche",
                                           "vert", "verte", "bleu", "bleue", NULL};

static int in_list(const char *const *list, const char *w)
{
    for (; *list; list++)
        if (strcmp(*list, w) == 0)
            return 1;
    return 0;
}

/* A French sentence's noun phrases: every word before a noun (back to the
 * verb or the start) and the colour after it agree with the noun. */
static int agrees(const char *const *t, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        int f = in_list(fem_nouns, t[i]), m = in_list(masc_nouns, t[i]);
        if (!f && !m) {
            /* a colour comes right after a noun, never before it */
            if (in_list(colour_words, t[i]) &&
                (i == 0 || !(in_list(fem_nouns, t[i - 1]) || in_list(masc_nouns, t[i - 1]))))
                return 0;
            continue;
        }
        for (size_t j = from; j < i; j++)
            if (!in_list(f ? fem_words : masc_words, t[j]))
                return 0;
        if (i + 1 < n && in_list(colour_words, t[i + 1]) &&
            !in_list(f ? fem_words : masc_words, t[i + 1]))
            return 0;
        from = i + 2 + (i + 1 < n && in_list(colour_words, t[i + 1])); /* past the verb */
    }
    return 1;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The source sentences of p, joined, sorted (n of them); the caller frees
 * each and the array. */
static char **sorted_sources(const s2s_pairs *p)
{
    char **s = malloc((p->n ? p->n : 1) * sizeof *s);
    for (size_t i = 0; s && i < p->n; i++) {
        size_t n;
        const char *const *t = s2s_src(p, i, &n);
        s[i] = s2s_join(t, n);
    }
    if (s && p->n)
        qsort(s, p->n, sizeof *s, by_str);
    return s;
}

static void free_strings(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
}

/* Every pair of p is the grammar's translation, with its alignment, in
 * agreement, 6 … 10 words. */
static void check_task_pairs(const s2s_pairs *p)
{
    size_t bad = 0;
    CHECK(p->align != NULL);
    for (size_t i = 0; p->align && i < p->n; i++) {
        size_t ns, nt;
        const char *const *s = s2s_src(p, i, &ns), *const *t = s2s_tgt(p, i, &nt);
        const long *al = s2s_align(p, i);
        const char *out[TRANSLATE_MAX_WORDS];
        long want[TRANSLATE_MAX_WORDS];
        int m = translate_english(s, ns, out, want);
        int ok = m == (int)nt && ns == nt && ns >= 6 && ns <= TRANSLATE_MAX_WORDS && agrees(t, nt);
        for (size_t j = 0; ok && j < nt; j++)
            ok = strcmp(out[j], t[j]) == 0 && al[j] == want[j];
        bad += !ok;
    }
    CHECK_INT(bad, 0);
}

/* No string of a (na, sorted) in b (nb, sorted), none twice in either. */
static void check_disjoint(char **a, size_t na, char **b, size_t nb)
{
    size_t twice = 0, shared = 0;
    for (size_t i = 1; i < na; i++)
        twice += strcmp(a[i - 1], a[i]) == 0;
    for (size_t i = 1; i < nb; i++)
        twice += strcmp(b[i - 1], b[i]) == 0;
    for (size_t i = 0; i < na; i++)
        shared += bsearch(&a[i], b, nb, sizeof *b, by_str) != NULL;
    CHECK_INT(twice, 0);
    CHECK_INT(shared, 0);
}

static void test_grammar_task(void)
{
    s2s_corpus c, d;
    s2s_vocab v;
    char err[256], **tr, **ho, **ho2;
    CHECK(translate_task_make(&c, 7, 2000, 200, err, sizeof err) == 0);
    CHECK(c.train.n == 2000 && c.heldout.n == 200);
    check_task_pairs(&c.train);
    check_task_pairs(&c.heldout);
    tr = sorted_sources(&c.train);
    ho = sorted_sources(&c.heldout);
    check_disjoint(ho, 200, tr, 2000);
    /* every word of the tables appears: 4 reserved + 33 English (an with
     * a and the), + 41 French */
    CHECK(s2s_vocab_build(&v, &c.train, S2S_SRC, 0, err, sizeof err) == 0);
    CHECK_INT(v.n, 4 + 33);
    /* English's article: "an" exactly before a vowel ("an apple"), "a" before
     * a consonant */
    for (size_t i = 0; i + 1 < c.train.src_start[c.train.n]; i++) {
        const char *w = c.train.src_tok[i], *next = c.train.src_tok[i + 1];
        if (strcmp(w, "a") == 0)
            CHECK(!strchr("aeiou", next[0]));
        if (strcmp(w, "an") == 0)
            CHECK(strchr("aeiou", next[0]) != NULL);
    }
    for (size_t i = 4; i < v.n; i++)
        CHECK(in_list(translate_english_words, v.tokens[i]));
    s2s_vocab_free(&v);
    CHECK(s2s_vocab_build(&v, &c.train, S2S_TGT, 0, err, sizeof err) == 0);
    CHECK_INT(v.n, 4 + 41);
    for (size_t i = 4; i < v.n; i++)
        CHECK(in_list(translate_french_words, v.tokens[i]));
    s2s_vocab_free(&v);
    /* the same seed, the same pairs; the held-out ones whatever n_train */
    CHECK(translate_task_make(&d, 7, 2000, 200, err, sizeof err) == 0);
    CHECK(d.train.tgt_start[2000] == c.train.tgt_start[2000]);
    for (size_t i = 0; i < c.train.src_start[2000] && i < d.train.src_start[2000]; i++)
        if (strcmp(c.train.src_tok[i], d.train.src_tok[i]) != 0) {
            CHECK(!"the same seed gave other pairs");
            break;
        }
    s2s_corpus_free(&d);
    CHECK(translate_task_make(&d, 7, 50, 200, err, sizeof err) == 0);
    ho2 = sorted_sources(&d.heldout);
    for (size_t i = 0; i < 200; i++)
        CHECK_STR(ho2[i], ho[i]);
    free_strings(ho2, 200);
    s2s_corpus_free(&d);
    CHECK(translate_task_make(&d, 8, 2000, 200, err, sizeof err) == 0);
    ho2 = sorted_sources(&d.heldout);
    {
        size_t same = 0; /* another seed, other sentences */
        for (size_t i = 0; i < 200; i++)
            same += bsearch(&ho2[i], ho, 200, sizeof *ho, by_str) != NULL;
        CHECK(same < 10);
    }
    free_strings(ho2, 200);
    s2s_corpus_free(&d);
    free_strings(tr, 2000);
    free_strings(ho, 200);
    s2s_corpus_free(&c);
    /* no held-out pairs; errors */
    CHECK(translate_task_make(&d, 1, 3, 0, err, sizeof err) == 0 && d.heldout.n == 0);
    s2s_corpus_free(&d);
    CHECK(translate_task_make(&d, 1, 0, 10, err, sizeof err) == -1);
    CHECK_STR(err, "the translate task needs at least one training pair");
    CHECK(translate_task_make(&d, 1, 999999, 2, err, sizeof err) == -1);
    CHECK_STR(err, "999999 training and 2 held-out pairs: more than the translate task draws "
                   "(1000000 in all)");
}

/* ---- BLEU ----------------------------------------------------------------------------------- */

static void test_bleu(void)
{
    cJSON *ref = ref_json("bleu_ref.json");
    const cJSON *cs;
    size_t n = 0;
    cJSON_ArrayForEach(cs, cJSON_GetObjectItem(ref, "cases"))
    {
        const char *pred = cJSON_GetObjectItem(cs, "pred")->valuestring;
        const char *label = cJSON_GetObjectItem(cs, "label")->valuestring;
        unsigned k = (unsigned)cJSON_GetObjectItem(cs, "k")->valuedouble;
        double want = cJSON_GetObjectItem(cs, "bleu")->valuedouble;
        double got = s2s_bleu_text(pred, label, k);
        check_count++;
        if (!(fabs(got - want) <= 1e-15)) {
            check_failed++;
            fprintf(stderr, "bleu(\"%s\", \"%s\", %u) = %.17g, want %.17g\n", pred, label, k,
                    got, want);
        }
        n++;
    }
    CHECK(n >= 60);
    /* token lists: an empty prediction scores 0 (d2l divides by zero) */
    CHECK(s2s_bleu(NULL, 0, (const char *[]){"a"}, 1, 2) == 0.0);
    CHECK(s2s_bleu((const char *[]){"a", "b"}, 2, (const char *[]){"a", "b"}, 2, 2) == 1.0);
    CHECK(s2s_bleu((const char *[]){"a"}, 1, (const char *[]){"a"}, 1, 2) == 0.0);
    cJSON_Delete(ref);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_seq2seq_data REF_DIR (tests/ref/nmt)\n");
        return 2;
    }
    ref_dir = argv[1];
    test_fra_reference();
    test_lower();
    test_preprocess();
    test_sentence();
    test_fra_lines();
    test_fra_errors();
    test_fra_files();
    test_json();
    test_vocab();
    test_arrays();
    test_decode();
    test_builder();
    test_alignment();
    test_grammar_by_hand();
    test_grammar_task();
    test_bleu();
    return check_summary("test_seq2seq_data");
}
