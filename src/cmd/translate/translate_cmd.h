/* translate_cmd.h — what `attn translate` (translate.c, SPEC.md §11)
 * computed for one sentence, in one struct that every view reads: the
 * printout, --png, --json and the page of --html (translate.c; the page
 * itself is translate_page.c's, which knows nothing of this struct).
 *
 * Dimensions: L blocks a side (cfg.layers), NH heads (cfg.heads), T
 * num_steps, S the source entries read (the attention's columns), R the
 * decoding's rows (the words written, and the <eos> step's row when the
 * decoding stopped at <eos>). Every attention here holds the valid rows
 * and columns only (no padding), row-major, the last index fastest.
 *
 * The run: the sentence is read as s2s_sentence_tokens(LOWER | PUNCT |
 * WORDS) reads it (lower case, a space before , . ! ?, split on runs of
 * spaces); each token's id in the source vocabulary (<unk> when it has
 * none), then <eos>, cut or padded to T (s2s_vocab_encode: S is the valid
 * length); greedy decoding on the fast path (s2s_fast_greedy, d2l's
 * predict_seq2seq, max_len T), whose cross-attention rows are those of
 * the steps that wrote each word. With --all, the forward pass on
 * decoder_input = <bos> + the translation (teacher-forced on the model's
 * own output: greedy decoding computes exactly this) gives the encoder's
 * and the decoder's self-attention.
 *
 * Who owns what: the run (translate.c) owns every pointer below and
 * keeps it valid until its views are written; a view only reads.
 */
#ifndef ATTN_TRANSLATE_CMD_H
#define ATTN_TRANSLATE_CMD_H

#include <stddef.h>

#include "json_writer.h"
#include "render.h"
#include "seq2seq.h"

typedef struct translate_view {
    /* the model (--input) */
    const char *model_path; /* as given ("-": standard input) */
    const char *arch;       /* "transformer" or "bahdanau" */
    size_t blocks;          /* the cross-attention's blocks: L, or Bahdanau's 1 */
    s2s_config cfg;         /* L, d, NH, the FFN's width, Vs, Vt */
    size_t num_steps;       /* T */

    /* the sentence: as typed (the operands joined by spaces), its tokens as
     * read, the tokens outside the source vocabulary (each once, in order:
     * read as <unk>), whether the tokens and <eos> did not fit in T (cut) */
    const char *sentence;
    const char *const *typed; /* (n_typed,) */
    size_t n_typed;
    const char *const *unknown; /* (n_unknown,) */
    size_t n_unknown;
    int cut;
    /* the source entries read, the columns: as the model read them, its
     * vocabulary's words, "<unk>", then "<eos>" (unless cut) */
    size_t S;
    const char *const *source; /* (S,) */

    /* the translation: the words written (no <eos>); whether the decoding
     * chose <eos> (else it wrote T words); the rows: the translation, then
     * "<eos>" when it stopped at it (row t: what step t wrote) */
    const char *const *translation; /* (n_translation,) */
    size_t n_translation;
    int stopped_at_eos;
    size_t R;                  /* n_translation + stopped_at_eos */
    const char *const *target; /* (R,) */

    /* --reference: its tokens, read as the sentence's (NULL without it),
     * and d2l's bleu(translation, reference, k=2) (NaN without it) */
    const char *const *reference; /* (n_reference,) */
    size_t n_reference;
    double bleu;

    /* the attention weights, valid rows and columns only:
     *   cross  decoder block l's cross-attention (queries: the decoder,
     *          keys: the source), row t from the step that wrote target[t]
     *   enc    the encoder's self-attention (NULL without --all)
     *   self   the decoder's masked self-attention, row t sees columns
     *          0 … t (NULL without --all)
     *   decoder_input  self's columns: "<bos>", then target[0 … R−2], the
     *          decoder's input at each position (NULL without --all) */
    const float *cross;               /* (L, NH, R, S) */
    const float *enc;                 /* (L, NH, S, S) */
    const float *self;                /* (L, NH, R, R) */
    const char *const *decoder_input; /* (R,) */

    /* --explain: the "explain" member --json writes (translate_explain.h),
     * or NULL */
    const struct translate_explain *explain;

    /* for the figures and the page */
    const attn_cmap *cmap; /* --cmap (NULL: Reds) */
    int argc;              /* the command line, as typed (page_command) */
    char **argv;
} translate_view;

/* The members of the object --json writes (the object itself is the
 * caller's: a page_data_fn of page_out.h, so that the page's data is the
 * same object):
 *   "command": "translate",
 *   "model": {"file", "arch", "num_layers", "num_hiddens", "num_heads",
 *             "ffn_num_hiddens", "score" (a Transformer's "additive" only),
 *             "num_steps", "src_vocab_size",
 *             "tgt_vocab_size"},
 *   "sentence": "…", "source": [S tokens], "unknown": [words],
 *   "translation": [tokens], "target": [R tokens],
 *   "reference": [tokens] or null, "bleu": b or null,
 *   "cross_attention": (L, NH, R, S),
 *   with --all "decoder_input": [R tokens], "encoder_attention": (L, NH,
 *   S, S), "decoder_attention": (L, NH, R, R); with --explain "explain"
 *   (translate_explain.h). */
void translate_view_json(json_writer *jw, const void *view);

#endif
