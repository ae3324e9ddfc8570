/* train_translate_page.c — `attn train --task translate --html FILE` (and
 * --data PAIRS --html): the probe pair's attention at every logged step,
 * kept as the loop runs, and the page that scrubs through it (the view of
 * translate_page.h with a step slider, the loss, BLEU and alignment
 * curves, and the held-out translations).
 *
 * At each kept step: the probe's cross-attention (L, NH, Tq, Ts), the
 * encoder's self-attention (L, NH, Ts, Ts) and the decoder's (L, NH, Tq,
 * Tq), teacher-forced on its reference, Ts and Tq its valid lengths
 * (<eos> included, no <pad>), and its greedy translation. A run that
 * would keep more than XPAGE_MAX_FLOATS numbers keeps every stride-th
 * logged step (and the last); --json's history keeps every one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "page_out.h"
#include "translate_page.h"
#include "train_translate.h"
#include "i18n.h"

#define XPAGE_MAX_FLOATS ((size_t)1 << 21) /* 8 MiB of float32 */
#define XPAGE_TABLE 100                    /* held-out translations shown */

enum { XP_CROSS, XP_ENC, XP_DEC, XP_KINDS };

struct translation_run_page {
    size_t L, NH, T, Ts, Tq; /* L: the cross-attention's blocks (Bahdanau's: 1) */
    int selfs;               /* the self-attentions kept (the Transformer's; Bahdanau has none) */
    size_t per[XP_KINDS]; /* one step's numbers of each attention */
    long steps, every, stride;
    size_t logged; /* logged steps seen */
    size_t nkept, cap;
    long *kept;            /* (cap,) the steps kept */
    float *att[XP_KINDS];  /* (cap, L, NH, Tq, Ts), (cap, L, NH, Ts, Ts), (cap, L, NH, Tq, Tq) */
    float *full[XP_KINDS]; /* (L, NH, T, T) s2s_trainer_attention's */
    int *pred;             /* (cap, T) the probe's greedy translation */
    size_t *npred;         /* (cap,) */
};

/* Pass s of the loop (s steps made) is logged as one_step logs its
 * history: the first step, every `every`-th and the last; and 0, the
 * weights before training. */
static int logged(long s, long steps, long every)
{
    return s == 0 || s == 1 || s == steps || s % every == 0;
}

void translation_run_page_free(translation_run *r)
{
    struct translation_run_page *p = r->page;
    if (!p)
        return;
    for (int k = 0; k < XP_KINDS; k++) {
        free(p->att[k]);
        free(p->full[k]);
    }
    free(p->kept);
    free(p->pred);
    free(p->npred);
    free(p);
    r->page = NULL;
}

/* The stride that keeps the page within XPAGE_MAX_FLOATS and the number
 * of steps kept; 0, or -1 when the sizes overflow. */
static int plan(struct translation_run_page *p, size_t *per_step)
{
    const size_t LH = p->L * p->NH; /* ≤ 12 × 4096 */
    size_t nlogged = 0, per = 0, all;
    int over = size_mul(LH * p->Tq, p->Ts, &p->per[XP_CROSS]) ||
               size_mul(LH * p->Ts, p->Ts, &p->per[XP_ENC]) ||
               size_mul(LH * p->Tq, p->Tq, &p->per[XP_DEC]);
    if (!p->selfs)
        p->per[XP_ENC] = p->per[XP_DEC] = 0;
    for (int k = 0; !over && k < XP_KINDS; k++)
        over = size_add(per, p->per[k], &per);
    for (long s = 0; s <= p->steps; s++)
        nlogged += (size_t)logged(s, p->steps, p->every);
    if (over || size_mul(nlogged, per, &all))
        return -1;
    p->stride = 1;
    if (all > XPAGE_MAX_FLOATS)
        p->stride = (long)((all + XPAGE_MAX_FLOATS - 1) / XPAGE_MAX_FLOATS);
    p->cap = (nlogged + (size_t)p->stride - 1) / (size_t)p->stride + 1; /* + the last */
    *per_step = per;
    return 0;
}

/* Room for cap steps of n numbers each (checked), or NULL. */
static void *alloc_steps(size_t cap, size_t n, size_t size)
{
    size_t bytes;
    if (size_mul(cap, n ? n : 1, &bytes) || size_mul(bytes, size, &bytes))
        return NULL;
    return malloc(bytes);
}

int translation_run_page_open(translation_run *r)
{
    const s2s_config *c = &r->tr.model.cfg;
    struct translation_run_page *p;
    size_t per, full;
    int bad;
    if (!r->a->html)
        return EXIT_OK;
    if (!(p = calloc(1, sizeof *p))) {
        cli_error("--html: out of memory");
        return EXIT_RUNTIME;
    }
    r->page = p;
    p->L = s2s_cross_blocks(c);
    p->NH = c->heads;
    p->selfs = c->arch->has_self;
    p->T = r->T;
    p->Ts = r->src_len;
    p->Tq = r->tgt_len;
    p->steps = r->steps;
    p->every = r->a->log_every;
    bad = plan(p, &per) || size_mul(p->L * p->NH, p->T * p->T, &full);
    for (int k = 0; !bad && k < (p->selfs ? XP_KINDS : XP_CROSS + 1); k++)
        bad = !(p->att[k] = alloc_steps(p->cap, p->per[k], sizeof(float))) ||
              !(p->full[k] = alloc_steps(1, full, sizeof(float)));
    if (bad || !(p->kept = alloc_steps(p->cap, 1, sizeof *p->kept)) ||
        !(p->pred = alloc_steps(p->cap, p->T, sizeof *p->pred)) ||
        !(p->npred = alloc_steps(p->cap, 1, sizeof *p->npred))) {
        cli_error("--html: out of memory for the probe's attention at %zu steps", p->cap);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

int translation_run_page_record(translation_run *r, long s)
{
    struct translation_run_page *p = r->page;
    const s2s_arrays *set = r->probe_set;
    const size_t T = p->T, i = p->nkept, LH = p->L * p->NH;
    const int *src = set->src + r->probe * T, *dec_in = set->dec_in + r->probe * T;
    const long src_len = set->src_valid[r->probe];
    char err[512];
    if (!logged(s, p->steps, p->every))
        return EXIT_OK;
    /* every stride-th logged step, and the last */
    if (p->logged++ % (size_t)p->stride != 0 && s != p->steps)
        return EXIT_OK;
    if (i == p->cap)
        return EXIT_OK; /* cannot happen: plan counted them */
    if (s2s_trainer_attention(&r->tr, src, src_len, dec_in, p->full[XP_ENC], p->full[XP_DEC],
                              p->full[XP_CROSS], err, sizeof err) || /* Bahdanau: NULL, NULL */
        s2s_trainer_translate(&r->tr, src, src_len, p->pred + i * T, &p->npred[i], NULL, err,
                              sizeof err)) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    translate_page_crop(p->att[XP_CROSS] + i * p->per[XP_CROSS], p->full[XP_CROSS], LH, T, p->Tq,
                        p->Ts);
    if (p->selfs) {
        translate_page_crop(p->att[XP_ENC] + i * p->per[XP_ENC], p->full[XP_ENC], LH, T, p->Ts,
                            p->Ts);
        translate_page_crop(p->att[XP_DEC] + i * p->per[XP_DEC], p->full[XP_DEC], LH, T, p->Tq,
                            p->Tq);
    }
    p->kept[p->nkept++] = s;
    return EXIT_OK;
}

/* ---- the page --------------------------------------------------------------- */

/* "translations": the first XPAGE_TABLE held-out pairs, each {"source",
 * "translation" (greedy, after the last step), "reference", "bleu"},
 * and their count; null without held-out pairs. 0, or -1 (memory). */
static int write_translations(json_writer *jw, const translation_run *r)
{
    const size_t n = r->held.n < XPAGE_TABLE ? r->held.n : XPAGE_TABLE;
    int bad = 0;
    if (r->held.n == 0 || !r->pred)
        return json_null(jw, "translations");
    json_object_begin(jw, "translations", JSON_BLOCK);
    json_uint(jw, "count", r->held.n);
    json_number_exact(jw, "exact", r->final_exact);
    json_array_begin(jw, "shown", JSON_BLOCK);
    for (size_t i = 0; i < n && !bad; i++) {
        size_t ns, nt;
        const char *const *src = s2s_src(&r->corpus.heldout, i, &ns);
        const char *const *tgt = s2s_tgt(&r->corpus.heldout, i, &nt);
        char *s = s2s_join(src, ns), *ref = s2s_join(tgt, nt);
        char *t = s2s_ids_to_sentence(&r->tgt_v, r->pred + i * r->T, r->n_pred[i]);
        bad = !s || !ref || !t;
        if (!bad) {
            json_object_begin(jw, NULL, JSON_INLINE);
            json_string(jw, "source", s);
            json_string(jw, "translation", t);
            json_string(jw, "reference", ref);
            json_number_exact(jw, "bleu", s2s_bleu_text(t, ref, 2));
            json_end(jw);
        }
        free(s);
        free(ref);
        free(t);
    }
    json_end(jw);
    json_end(jw);
    return bad ? -1 : 0;
}

/* "steps", "stride", "step_translations" (the probe's greedy translation
 * at each kept step) and the three attentions (S, L, NH, …). 0, or -1. */
static int write_steps(json_writer *jw, const translation_run *r, int selfs)
{
    const struct translation_run_page *p = r->page;
    const size_t S = p->nkept;
    int bad = 0;
    json_int(jw, "stride", p->stride);
    json_array_begin(jw, "steps", JSON_INLINE);
    for (size_t i = 0; i < S; i++)
        json_int(jw, NULL, p->kept[i]);
    json_end(jw);
    json_array_begin(jw, "step_translations", JSON_BLOCK);
    for (size_t i = 0; i < S && !bad; i++) {
        char *t = s2s_ids_to_sentence(&r->tgt_v, p->pred + i * p->T, p->npred[i]);
        bad = !t;
        if (t)
            json_string(jw, NULL, t);
        free(t);
    }
    json_end(jw);
    json_tensor_base64(jw, "cross", p->att[XP_CROSS], 5, (size_t[]){S, p->L, p->NH, p->Tq, p->Ts});
    if (!selfs)
        return bad ? -1 : 0;
    if (!p->selfs) { /* Bahdanau's model: its one attention */
        json_null(jw, "encoder");
        json_null(jw, "decoder");
        return bad ? -1 : 0;
    }
    json_tensor_base64(jw, "encoder", p->att[XP_ENC], 5, (size_t[]){S, p->L, p->NH, p->Ts, p->Ts});
    json_tensor_base64(jw, "decoder", p->att[XP_DEC], 5, (size_t[]){S, p->L, p->NH, p->Tq, p->Tq});
    return bad ? -1 : 0;
}

/* "align": the source position each of the probe's target words
 * translates (-1: none), the grammar's; null for --data. */
static void write_align(json_writer *jw, const translation_run *r)
{
    size_t nt;
    const long *al = s2s_align(r->probe_pairs, r->probe);
    (void)s2s_tgt(r->probe_pairs, r->probe, &nt);
    if (!al) {
        json_null(jw, "align");
        return;
    }
    json_array_begin(jw, "align", JSON_INLINE);
    for (size_t t = 0; t < nt && t < r->page->Tq; t++)
        json_int(jw, NULL, al[t]);
    json_end(jw);
}

int translation_run_page_members(json_writer *jw, const translation_run *r)
{
    write_align(jw, r);
    return write_steps(jw, r, 0);
}

static int page_object(FILE *f, const void *ctx)
{
    const translation_run *r = ctx;
    const struct translation_run_page *p = r->page;
    const s2s_config *c = &r->tr.model.cfg;
    size_t ns, nt;
    const char *const *src = s2s_src(r->probe_pairs, r->probe, &ns);
    const char *const *tgt = s2s_tgt(r->probe_pairs, r->probe, &nt);
    char *sentence = s2s_join(src, ns), *reference = s2s_join(tgt, nt);
    char *last = p->nkept ? s2s_ids_to_sentence(&r->tgt_v, p->pred + (p->nkept - 1) * p->T,
                                                    p->npred[p->nkept - 1])
                          : NULL;
    translate_page_view v = {.layers = p->L, .heads = c->heads, .hiddens = c->hiddens,
                             .arch = c->arch->name,
                             .rnn_layers = c->arch->recurrent ? c->layers : 0,
                             .rnn = c->rnn,
                             .score = c->score,
                             .ffn = c->ffn, .source = r->src_labels, .Ts = p->Ts,
                             .target = r->tgt_labels, .Tq = p->Tq, .T = r->T,
                             .sentence = sentence, .reference = reference, .bleu = NAN};
    json_writer jw;
    int bad = !sentence || !reference || (p->nkept && !last);
    if (!bad) {
        v.bleu = last ? s2s_bleu_text(last, reference, 2) : NAN;
        json_writer_init(&jw, f);
        jw.base64_from = PAGE_BASE64_FROM;
        json_object_begin(&jw, NULL, JSON_BLOCK);
        translate_page_members(&jw, &v, "attn train", "reference", last, r->argc, r->argv);
        json_object_begin(&jw, "probe", JSON_INLINE);
        json_string(&jw, "set", r->held.n ? "held-out" : "training");
        json_uint(&jw, "index", r->probe);
        json_end(&jw);
        write_align(&jw, r);
        bad = write_steps(&jw, r, 1) || write_translations(&jw, r);
        json_end(&jw);
        bad = bad || json_writer_finish(&jw);
    }
    free(sentence);
    free(reference);
    free(last);
    return bad ? -1 : 0;
}

int translation_run_page_write(const translation_run *r, FILE *rep)
{
    char what[128];
    snprintf(what, sizeof what, i18n_plural("a page of the probe's attention at %zu step",
                                            "a page of the probe's attention at %zu steps",
                                            r->page->nkept),
             r->page->nkept);
    return output_page_docs(r->a->html, "attn train", translation_run_write_json, r, page_object,
                            r, rep, what);
}
