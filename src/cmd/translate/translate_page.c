/* translate_page.c — the page of a translation (see translate_page.h):
 * the members both pages share, and one translation's page. */
#include "translate_page.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "page_out.h"
#include "seq2seq.h"
#include "seq2seq_data.h"
#include "i18n.h"

/* The words of tok (n,) joined by spaces, without a last "<eos>": a new
 * string, or NULL when out of memory. */
static char *words_text(const char *const *tok, size_t n)
{
    if (n > 0 && strcmp(tok[n - 1], "<eos>") == 0)
        n--;
    return s2s_join(tok, n);
}

/* "sentence": {"source", "reference", "translation", "bleu"} */
static void sentence_member(json_writer *jw, const translate_page_view *v, const char *translation)
{
    char *src = v->sentence ? NULL : words_text(v->source, v->Ts);
    json_object_begin(jw, "sentence", JSON_INLINE);
    json_string(jw, "source", v->sentence ? v->sentence : src); /* NULL: null */
    json_string(jw, "reference", v->reference);
    json_string(jw, "translation", translation);
    json_number_exact(jw, "bleu", v->reference ? v->bleu : NAN); /* NaN: null */
    json_end(jw);
    free(src);
}

void translate_page_members(json_writer *jw, const translate_page_view *v, const char *title,
                            const char *rows_are, const char *translation, int argc, char **argv)
{
    page_head(jw, "translate", title, argc, argv, v->cmap ? v->cmap : cmap_find("Reds"));
    json_object_begin(jw, "model", JSON_INLINE);
    json_string(jw, "arch", v->arch ? v->arch : "transformer");
    json_uint(jw, "layers", v->layers);
    if (v->rnn_layers)
        json_uint(jw, "gru_layers", v->rnn_layers);
    /* SPEC §15's --rnn lstm and --score dot (a GRU model's page as it was) */
    if (v->rnn != S2S_RNN_GRU)
        json_string(jw, "rnn", s2s_rnn_names[v->rnn]);
    if (v->score != s2s_arch_find(v->arch ? v->arch : "transformer")->default_score)
        json_string(jw, "score", s2s_score_names[v->score]);
    json_uint(jw, "heads", v->heads);
    json_uint(jw, "hiddens", v->hiddens);
    json_uint(jw, "ffn", v->ffn);
    json_end(jw);
    page_tokens(jw, "source", v->source, v->Ts);
    page_tokens(jw, "target", v->target, v->Tq);
    /* the decoder's input at each target position: <bos>, then the words
     * before it (teacher forcing, or greedy decoding's own words) */
    json_array_begin(jw, "decoder_input", JSON_INLINE);
    for (size_t t = 0; t < v->Tq; t++)
        json_string(jw, NULL, t == 0 ? "<bos>" : v->target[t - 1]);
    json_end(jw);
    json_string(jw, "rows", rows_are);
    sentence_member(jw, v, translation);
    if (v->model_json)
        json_raw(jw, "model_file", v->model_json, v->model_len);
}

void translate_page_crop(float *dst, const float *src, size_t n, size_t T, size_t rows, size_t cols)
{
    if (T == 0) {
        memcpy(dst, src, n * rows * cols * sizeof *dst);
        return;
    }
    for (size_t m = 0; m < n; m++)
        for (size_t i = 0; i < rows; i++)
            memcpy(dst + (m * rows + i) * cols, src + (m * T + i) * T, cols * sizeof *dst);
}

/* ---- attn translate --html ------------------------------------------------ */

struct page_ctx {
    const translate_page_view *v;
    int argc;
    char **argv;
};

/* One attention of v as the page's tensor key (1, L, NH, rows, cols), or
 * null when src is NULL. 0, or -1 (sizes, memory). */
static int write_attention(json_writer *jw, const char *key, const translate_page_view *v,
                           const float *src, size_t rows, size_t cols)
{
    size_t n, total;
    float *m;
    if (!src)
        return json_null(jw, key);
    if (size_mul(v->layers, v->heads, &n) || size_mul(n, rows, &total) ||
        size_mul(total, cols, &total) || size_mul(total, sizeof *m, &total) ||
        !(m = malloc(total ? total : 1)))
        return -1;
    translate_page_crop(m, src, n, v->T, rows, cols);
    json_tensor_base64(jw, key, m, 5, (size_t[]){1, v->layers, v->heads, rows, cols});
    free(m);
    return 0;
}

static int page_object(FILE *f, const void *ctx)
{
    const struct page_ctx *c = ctx;
    const translate_page_view *v = c->v;
    char *translation = words_text(v->target, v->Tq);
    json_writer jw;
    int bad;
    json_writer_init(&jw, f);
    jw.base64_from = PAGE_BASE64_FROM;
    json_object_begin(&jw, NULL, JSON_BLOCK);
    translate_page_members(&jw, v, "attn translate", "translation", translation, c->argc, c->argv);
    json_null(&jw, "steps");
    bad = !translation;
    bad |= write_attention(&jw, "cross", v, v->cross, v->Tq, v->Ts) != 0;
    bad |= write_attention(&jw, "encoder", v, v->encoder, v->Ts, v->Ts) != 0;
    bad |= write_attention(&jw, "decoder", v, v->decoder, v->Tq, v->Tq) != 0;
    json_end(&jw);
    free(translation);
    return bad || json_writer_finish(&jw) ? -1 : 0;
}

static int only_command(FILE *f, const void *ctx)
{
    (void)ctx;
    return fputs("{\"command\": \"translate\"}\n", f) < 0 ? -1 : 0;
}

/* The sizes make sense: a model, a cross-attention, rows and columns
 * within T. */
static int view_ok(const translate_page_view *v)
{
    return v->cross && v->layers > 0 && v->heads > 0 && v->source && v->target &&
           (v->T == 0 || (v->Tq <= v->T && v->Ts <= v->T));
}

int translate_page_data(const translate_page_view *v, int argc, char **argv,
                        int (*write_json)(FILE *f, const void *ctx), const void *json_ctx,
                        char **data, size_t *len)
{
    const struct page_ctx ctx = {v, argc, argv};
    *data = NULL;
    *len = 0;
    if (!view_ok(v))
        return -1;
    return page_data_write(write_json ? write_json : only_command, json_ctx, page_object, &ctx,
                           data, len);
}

int translate_page_write(const char *path, const translate_page_view *v, int argc, char **argv,
                         int (*write_json)(FILE *f, const void *ctx), const void *json_ctx,
                         FILE *rep)
{
    char *data = NULL, what[160];
    size_t len = 0;
    if (!view_ok(v)) {
        cli_error("--html %s: internal error: no attention, or sizes past T", path);
        return EXIT_RUNTIME;
    }
    if (translate_page_data(v, argc, argv, write_json, json_ctx, &data, &len)) {
        cli_error("--html %s: out of memory", path);
        return EXIT_RUNTIME;
    }
    if (v->arch && strcmp(v->arch, "bahdanau") == 0)
        snprintf(what, sizeof what, "%s", _("a page of the translation's attention (Bahdanau's, its "
                 "query s(t′−1))"));
    else
    {
        char blocks[32], heads[32];
        cli_count(blocks, sizeof blocks, "%zu block", "%zu blocks", v->layers);
        cli_count(heads, sizeof heads, "%zu head", "%zu heads", v->heads);
        snprintf(what, sizeof what, _("a page of the translation's attention, %s × %s"), blocks,
                 heads);
    }
    return output_page_text(path, "attn translate", data, len, rep, what);
}
