/* translate_page.h — the page of a translation (SPEC.md §10, §11): one
 * sentence, its source words across and its target words down, and the
 * encoder–decoder's attention over them as a grid of blocks × heads:
 * the cross-attention (Q from the decoder, K = V from the encoder), and
 * beside it, chosen on the page, the encoder's self-attention and the
 * decoder's causal self-attention; hover a cell for the target word, the
 * source word and the weight.
 *
 * Two commands write it:
 *   attn translate --html FILE    one greedy translation: translate_page_write
 *   attn train --task translate --html FILE (and --data PAIRS)
 *                                 the probe at every logged step, with a
 *                                 step slider, the curves and the held-out
 *                                 translations (train_translate_page.c)
 *
 * Dimensions: L blocks a side, NH heads, Ts source entries (the words and
 * <eos>, no <pad>), Tq target entries (the words written and <eos>),
 * T num_steps, the size attn's attention buffers are allocated with. */
#ifndef ATTN_TRANSLATE_PAGE_H
#define ATTN_TRANSLATE_PAGE_H

#include <stddef.h>
#include <stdio.h>

#include "json_writer.h"
#include "render.h"

/* One sentence's attention, as plain arrays the caller owns.
 *
 * The arrays are (L, NH, T, T) when T > 0 — attn's buffers, as
 * s2s_greedy and s2s_trainer_attention fill them: only the first Tq rows
 * and Ts columns of each (T, T) matrix are read — or dense when T is 0:
 * cross (L, NH, Tq, Ts), encoder (L, NH, Ts, Ts), decoder (L, NH, Tq, Tq).
 * Row-major, the last index fastest. The decoder's input at target
 * position t, its keys' labels, is <bos> for t = 0 and target[t - 1]
 * after: greedy decoding feeds back what it wrote. */
typedef struct translate_page_view {
    size_t layers, heads, hiddens, ffn; /* L, NH, d, H: the model's sizes (L: the
                                         * cross-attention's blocks, Bahdanau's 1) */
    const char *const *source;          /* (Ts,) the entries the encoder read, "<eos>" last */
    size_t Ts;
    const char *const *target;          /* (Tq,) the words written, then "<eos>" if it came */
    size_t Tq;
    size_t T;                           /* the arrays' allocated last two sizes, or 0: dense */
    const float *cross;                 /* rows = target entries (queries), columns = source */
    const float *encoder;               /* or NULL: source × source */
    const float *decoder;               /* or NULL: target × the decoder's input, causal */
    const char *sentence;               /* the source as typed, or NULL: the words joined */
    const char *reference;              /* --reference, or NULL */
    double bleu;                        /* against reference (read only with one) */
    const attn_cmap *cmap;              /* --cmap, or NULL: Reds */
    const char *arch;                   /* "bahdanau", or NULL: "transformer" */
    size_t rnn_layers;                  /* Bahdanau's GRU layers a side (0 otherwise) */
    /* The model as its file holds it (s2s_model_write), model_len bytes,
     * for the page's own attn (SPEC §14: it translates another sentence
     * with the model read from standard input), or NULL. */
    const char *model_json;
    size_t model_len;
    int rnn, score; /* --rnn (Bahdanau's) and --score (S2S_RNN_*, S2S_SCORE_*; 0: GRU, additive);
                     * the page names a score that is not the architecture's default */
} translate_page_view;

/* `attn translate --html PATH`, in one line from translate.c:
 *
 *   status = translate_page_write(path, &pv, v->argc, v->argv, write_page_json, v, rep);
 *
 * after output_page_check(PATH) before any work (page_out.h). The data
 * element is the object write_json(f, json_ctx) writes (--json's, SPEC
 * §10) plus "page"; write_json NULL: {"command": "translate", "page": …}.
 * argc, argv: the words after "attn", shown as the command line. Then
 * "wrote PATH: a page of the attention of …, N KB" on rep. EXIT_OK, or
 * EXIT_RUNTIME after one line on stderr. */
int translate_page_write(const char *path, const translate_page_view *v, int argc, char **argv,
                         int (*write_json)(FILE *f, const void *ctx), const void *json_ctx,
                         FILE *rep);

/* The data element's JSON text of that page, without the page around it
 * (for the tests and the fuzz harness): *data malloc'd, *len bytes. 0, or
 * -1 (out of memory, sizes that overflow). */
int translate_page_data(const translate_page_view *v, int argc, char **argv,
                        int (*write_json)(FILE *f, const void *ctx), const void *json_ctx,
                        char **data, size_t *len);

/* ---- for train_translate_page.c: what both pages' "page" objects hold -- */

/* The members that describe the sentence and the model: "kind":
 * "translate", "title", "command", "cmap", "model", "source", "target",
 * "decoder_input", "rows" (what the target rows are: rows_are, e.g.
 * "translation" or "reference"), "sentence": {"source", "reference",
 * "translation", "bleu"} (translation: NULL writes null). The caller
 * adds the tensors "cross", "encoder", "decoder" (S, L, NH, …) and
 * "steps". */
void translate_page_members(json_writer *jw, const translate_page_view *v, const char *title,
                            const char *rows_are, const char *translation, int argc, char **argv);

/* dst (n, rows, cols) = the first rows × cols entries of each of the n
 * matrices of src (n, T, T); T 0: src is dense (n, rows, cols). */
void translate_page_crop(float *dst, const float *src, size_t n, size_t T, size_t rows,
                         size_t cols);

#endif
