/* train_translate_view.c — what `attn train` shows of a translation run
 * (train_translate.h): the printout (d2l's "source => translation, bleu
 * b" lines, the alignment, the probe's cross-attention in the terminal),
 * and --png, --plot, --json, --save; --html's page is
 * train_translate_page.c's, which reads --json's object from here. */
#include "train_translate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
#include "json_writer.h"
#include "output.h"
#include "render.h"
#include "s2s_model_file.h"
#include "term.h"
#include "i18n.h"

/* ---- the printout ------------------------------------------------------------ */

/* m (rows, cols) = the mean over NH heads of block l of att (L, NH, T, T),
 * its first rows × cols entries. */
static void heads_mean(float *m, const float *att, size_t l, size_t NH, size_t T, size_t rows,
                       size_t cols)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            double s = 0.0;
            for (size_t h = 0; h < NH; h++)
                s += att[((l * NH + h) * T + i) * T + j];
            m[i * cols + j] = (float)(s / (double)NH);
        }
}

static void print_summary(const translation_run *r)
{
    const s2s_config *c = &r->tr.model.cfg;
    char layers[48];
    if (c->arch->recurrent) {
        snprintf(layers, sizeof layers, i18n_plural("%zu %s layer", "%zu %s layers", c->layers),
                 c->layers, s2s_rnn_labels[c->rnn]);
        printf(_("attn train: %s, %ld steps in %.2f s, Seq2Seq with Bahdanau attention, %s "
               "a side, d %zu%s%s\n"),
               r->a->data ? "data" : "translate", r->tr.step, r->seconds, layers, c->hiddens,
               s2s_score_notes[c->score], r->a->load ? _(", from --load") : "");
    } else {
        char tail[96]; /* ", additive scores", ", from --load" */
        snprintf(tail, sizeof tail, "%s%s", s2s_score_note(c),
                 r->a->load ? _(", from --load") : "");
        cli_count(layers, sizeof layers, "%zu block", "%zu blocks", c->layers);
        printf(_("attn train: %s, %ld steps in %.2f s, Transformer encoder–decoder, %s "
               "a side, d %zu, %zu heads, FFN %zu%s\n"),
               r->a->data ? "data" : "translate", r->tr.step, r->seconds, layers, c->hiddens,
               c->heads, c->ffn, tail);
    }
    printf(_("final loss %.4f, training accuracy %.1f%% (teacher-forced)"), r->final_train.loss,
           100.0 * r->final_train.accuracy);
    if (r->held.n)
        printf(_(", held-out BLEU %.3f, exact %.1f%% (%zu sentences)"), r->final_bleu,
               100.0 * r->final_exact, r->held.n);
    printf("\n");
    if (!isnan(r->final_align) && !c->arch->has_self)
        printf(_("alignment %.3f: the attention is largest on the English word each French "
               "word translates\n"),
               r->final_align);
    else if (!isnan(r->final_align))
        printf(_("alignment %.3f: in the last decoder block the cross-attention (heads "
               "averaged) is largest\non the English word each French word translates "
               "(the first block: %.3f)\n"),
               r->final_align, r->final_align_first);
    if (c->arch->recurrent)
        fputs(_("at step t′ the query is s(t′−1), the decoder's state after the word before; "
               "the keys\nand values are the encoder's states H, one per source word\n"), stdout);
}

/* d2l's printout: "source => translation, bleu b" for the first held-out
 * pairs. */
static void print_examples(const translation_run *r)
{
    const size_t n = r->held.n < TRANSLATION_EXAMPLES ? r->held.n : TRANSLATION_EXAMPLES;
    if (n == 0)
        return;
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        size_t ns, nt;
        const char *const *src = s2s_src(&r->corpus.heldout, i, &ns);
        const char *const *tgt = s2s_tgt(&r->corpus.heldout, i, &nt);
        char *s = s2s_join(src, ns);
        char *p = s2s_ids_to_sentence(&r->tgt_v, r->pred + i * r->T, r->n_pred[i]);
        char *label = s2s_join(tgt, nt);
        if (s && p && label)
            printf("%s => %s, bleu %.3f\n", s, p, s2s_bleu_text(p, label, 2));
        free(s);
        free(p);
        free(label);
    }
}

/* The probe's cross-attention of the last block, heads averaged, rows =
 * target words written, columns = source words read. */
static void print_probe(const translation_run *r)
{
    const size_t L = s2s_cross_blocks(&r->tr.model.cfg), NH = r->tr.model.cfg.heads;
    const size_t rows = r->tgt_len, cols = r->src_len;
    float *m = malloc((rows * cols > 0 ? rows * cols : 1) * sizeof *m);
    output_weights_opts o = {r->tgt_labels, r->src_labels, _("source"), _("target"), 0, 0, NULL};
    if (!m)
        return;
    heads_mean(m, r->final_cross, L - 1, NH, r->T, rows, cols);
    printf(_("\n%s (rows: the words written,\ncolumns: the source words read; teacher-forced "
           "on the reference):\n"),
           !r->tr.model.cfg.arch->has_self
               ? _("the attention, its query the decoder's previous state")
               : _("cross-attention of the last decoder block, heads averaged"));
    o.color = term_use_color((term_color_mode)r->a->color, stdout);
    output_weights(stdout, m, rows, cols, &o);
    free(m);
}

/* ---- --json ------------------------------------------------------------------- */

void translation_run_json_history(json_writer *jw, const translation_run *r, int compared)
{
    json_array_begin(jw, "history", JSON_BLOCK);
    for (size_t i = 0; i < r->nhist; i++) { /* one line per logged step */
        const translation_hist *h = &r->hist[i];
        json_object_begin(jw, NULL, JSON_INLINE);
        json_int(jw, "step", h->step);
        if (compared)
            json_number_exact(jw, "seconds", h->seconds);
        json_number_exact(jw, "loss", h->loss);
        if (!compared)
            json_number_exact(jw, "train_accuracy", h->accuracy);
        json_number_exact(jw, "heldout_bleu", h->bleu);
        json_number_exact(jw, "heldout_exact", h->exact);
        json_number_exact(jw, "alignment", h->alignment);
        json_end(jw);
    }
    json_end(jw);
    json_object_begin(jw, "final", JSON_INLINE);
    json_number_exact(jw, "loss", r->final_train.loss);
    if (!compared)
        json_number_exact(jw, "train_accuracy", r->final_train.accuracy);
    json_number_exact(jw, "bleu", r->held.n ? r->final_bleu : NAN);
    json_number_exact(jw, "exact", r->held.n ? r->final_exact : NAN);
    json_number_exact(jw, "alignment", r->held.n ? r->final_align : NAN);
}

int translation_run_write_json(FILE *f, const void *ctx)
{
    const translation_run *r = ctx;
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "train");
    json_string(&jw, "task", "translate");
    json_string(&jw, "arch", r->tr.model.cfg.arch->name);
    /* --rnn lstm, --score dot: said when not the default (as the model
     * file says them) */
    if (r->tr.model.cfg.rnn != S2S_RNN_GRU)
        json_string(&jw, "rnn", s2s_rnn_names[r->tr.model.cfg.rnn]);
    if (r->tr.model.cfg.score != r->tr.model.cfg.arch->default_score)
        json_string(&jw, "score", s2s_score_names[r->tr.model.cfg.score]);
    json_int(&jw, "steps", r->tr.step);
    translation_run_json_history(&jw, r, 0);
    json_end(&jw);
    json_end(&jw);
    return json_writer_finish(&jw);
}

/* ---- --png and --plot ------------------------------------------------------------ */

/* One heatmap figure of the probe: panels (grid_rows, grid_cols), target
 * words down, source words across, on the weights' scale 0 … 1. */
static int probe_figure(attn_image *img, const translation_run *r, const heat_panel *panels,
                        size_t grid_rows, size_t grid_cols, const char *const *row_titles,
                        text_font *font, char *err, size_t errlen)
{
    heat_figure fig;
    memset(&fig, 0, sizeof fig);
    fig.panels = panels;
    fig.grid_rows = grid_rows;
    fig.grid_cols = grid_cols;
    fig.row_titles = row_titles;
    fig.xlabel = _("Source words");
    fig.ylabel = _("Target words");
    fig.xticklabels = r->src_labels;
    fig.yticklabels = r->tgt_labels;
    fig.vmin = 0.0;
    fig.vmax = 1.0;
    fig.colorbar_label = _("cross-attention weight");
    fig.font = font;
    return output_heatmap_draw(img, &fig, err, errlen);
}

/* --png: the probe's cross-attention of the last block (heads averaged) at
 * each snapshot, over every block × head after the last step. */
static int write_png(const void *ctx, text_font *font, FILE *rep)
{
    const translation_run *r = ctx;
    const size_t L = s2s_cross_blocks(&r->tr.model.cfg), NH = r->tr.model.cfg.heads, T = r->T;
    const int bahdanau = r->tr.model.cfg.arch->recurrent;
    const size_t rows = r->tgt_len, cols = r->src_len, cell = rows * cols;
    const size_t cells = r->nsnap + L * NH; /* panels */
    heat_panel *panels = calloc(cells, sizeof *panels);
    char (*titles)[48] = calloc(cells, sizeof *titles);
    float *data = malloc((cells * cell > 0 ? cells * cell : 1) * sizeof *data);
    char row_buf[1 + TMODEL_MAX_LAYERS][64], err[512], what[160];
    const char *row_titles[1 + TMODEL_MAX_LAYERS];
    attn_image top = {0, 0, NULL}, bottom = {0, 0, NULL}, img = {0, 0, NULL};
    int status = EXIT_RUNTIME;
    if (!panels || !titles || !data) {
        cli_error("%s: out of memory", r->a->png);
        goto done;
    }
    for (size_t s = 0; s < r->nsnap; s++) { /* the steps, heads averaged */
        heads_mean(data + s * cell, r->snap_cross[s], L - 1, NH, T, rows, cols);
        snprintf(titles[s], sizeof titles[s], _("step %ld"), r->snap_step[s]);
        panels[s] = (heat_panel){data + s * cell, rows, cols, titles[s], NULL, NULL};
    }
    snprintf(row_buf[0], sizeof row_buf[0], "%s",
             bahdanau ? "the attention (query: the decoder's previous state)"
                      : "the last block's cross-attention, heads averaged");
    row_titles[0] = row_buf[0];
    for (size_t l = 0; l < L; l++) { /* then every block × head */
        if (bahdanau)
            snprintf(row_buf[1 + l], sizeof row_buf[1 + l], _("step %ld"), r->tr.step);
        else
            snprintf(row_buf[1 + l], sizeof row_buf[1 + l], _("block %zu, step %ld"), l + 1,
                     r->tr.step);
        row_titles[1 + l] = row_buf[1 + l];
        for (size_t h = 0; h < NH; h++) {
            const size_t k = r->nsnap + l * NH + h;
            for (size_t i = 0; i < rows; i++)
                memcpy(data + k * cell + i * cols, r->final_cross + ((l * NH + h) * T + i) * T,
                       cols * sizeof *data);
            if (bahdanau)
                snprintf(titles[k], sizeof titles[k], "%s", _("Attention"));
            else
                snprintf(titles[k], sizeof titles[k], _("Head %zu"), h + 1);
            panels[k] = (heat_panel){data + k * cell, rows, cols, titles[k], NULL, NULL};
        }
    }
    if (probe_figure(&top, r, panels, 1, r->nsnap, row_titles, font, err, sizeof err) ||
        probe_figure(&bottom, r, panels + r->nsnap, L, NH, row_titles + 1, font, err,
                     sizeof err) ||
        image_stack(&img, &top, &bottom, err, sizeof err)) {
        cli_error("%s: %s", r->a->png, err);
        goto done;
    }
    if (bahdanau)
        snprintf(what, sizeof what, _("the probe's attention at %zu steps, then at the end"),
                 r->nsnap);
    else
        snprintf(what, sizeof what, _("the probe's cross-attention at %zu steps, then %zu blocks "
                 "× %zu heads"), r->nsnap, L, NH);
    status = output_png(r->a->png, &img, rep, what);
done:
    image_free(&top);
    image_free(&bottom);
    image_free(&img);
    free(panels);
    free(titles);
    free(data);
    return status;
}

/* --plot: the loss, then held-out BLEU and alignment, against the step. */
static int write_plot(const void *ctx, text_font *font, FILE *rep)
{
    const translation_run *r = ctx;
    const size_t n = r->nhist;
    double *x = malloc((n ? n : 1) * 4 * sizeof *x), *loss = x + n, *bleu = x + 2 * n,
           *align = x + 3 * n;
    plot_series ls, ss[2];
    plot_figure f1, f2;
    attn_image i1 = {0, 0, NULL}, i2 = {0, 0, NULL}, img = {0, 0, NULL};
    char err[512];
    int status = EXIT_RUNTIME;
    if (!x) {
        cli_error("%s: out of memory", r->a->plot);
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)r->hist[i].step;
        loss[i] = r->hist[i].loss;
        bleu[i] = r->hist[i].bleu;
        align[i] = r->hist[i].alignment;
    }
    ls = (plot_series){x, loss, n, _("training loss (the batch's)")};
    ss[0] = (plot_series){x, bleu, n, _("held-out BLEU (greedy)")};
    ss[1] = (plot_series){x, align, n,
                          !r->tr.model.cfg.arch->has_self
                              ? "alignment (the attention)"
                              : "alignment (last block's cross-attention)"};
    memset(&f1, 0, sizeof f1);
    f1.series = &ls;
    f1.nseries = 1;
    f1.title = r->a->data ? "data" : "translate";
    f1.xlabel = _("step");
    f1.ylabel = "loss";
    f1.font = font;
    f2 = f1;
    f2.title = NULL;
    f2.series = ss;
    f2.nseries = r->builtin ? 2 : 1;
    f2.ylabel = _("score");
    if (plot_draw(&i1, &f1, err, sizeof err) ||
        (r->held.n && (plot_draw(&i2, &f2, err, sizeof err) ||
                       image_stack(&img, &i1, &i2, err, sizeof err)))) {
        cli_error("%s: %s", r->a->plot, err);
        goto done;
    }
    status = output_png(r->a->plot, r->held.n ? &img : &i1, rep,
                        r->builtin ? "loss, BLEU and alignment against the step"
                        : r->held.n ? "loss and BLEU against the step"
                                    : "loss against the step");
done:
    image_free(&i1);
    image_free(&i2);
    image_free(&img);
    free(x);
    return status;
}

int translation_run_outputs(const translation_run *r)
{
    const struct train_args *a = r->a;
    FILE *rep = output_report_stream(a->json);
    char err[1024];
    int status;
    if (rep == stdout) { /* with --json -, stdout is the JSON's */
        print_summary(r);
        print_examples(r);
        print_probe(r);
        printf("\n");
    }
    if (a->save) {
        if (s2s_model_save(a->save, &r->tr.model, (const char *const *)r->src_v.tokens,
                           (const char *const *)r->tgt_v.tokens, r->T, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        fprintf(rep, _("wrote %s: the model (attn translate --input %s \"…\" translates with "
                "it)\n"), a->save, a->save);
    }
    status = output_figures(a->font, a->png, write_png, a->plot, write_plot, r, rep);
    if (status == EXIT_OK && a->json)
        status = output_json(a->json, translation_run_write_json, r, rep,
                             "the history and the final figures");
    return status;
}
