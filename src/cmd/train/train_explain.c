/* train_explain.c — attn train --explain's member (see train_explain.h):
 * each kept step's paths written as JSON text when the loop is at it. */
#include "train_explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "explain_json.h"
#include "page_out.h"
#include "problem.h"
#include "train_page.h"
#include "i18n.h"

#define TE_MAX_PROBES 4

struct train_explain {
    train_explain_probe probes[TE_MAX_PROBES];
    size_t nprobes, T, layers, heads, d;
    int causal;
    long steps, every, stride;
    size_t logged;        /* logged steps seen */
    long *kept;           /* (cap,) the steps kept */
    char **text;          /* (cap,) each one's JSON */
    size_t *len;          /* (cap,) its length */
    size_t nkept, cap;
    /* one layer's run: out (T, d), weights (NH, T, T), the trace */
    float *out, *weights;
    float *Q, *K, *V, *concat;       /* (T, d) */
    float *scores, *scaled, *masked; /* (NH, T, T) */
    problem pr;           /* B = 1, Nq = Nk = T: explain_json's sizes */
    long vl;              /* its valid length: T */
    explain_buffers eb;
    int eb_ready;
};

void train_explain_free(train_explain *ex)
{
    if (!ex)
        return;
    for (size_t i = 0; i < ex->nkept; i++)
        free(ex->text[i]);
    free(ex->text);
    free(ex->len);
    free(ex->kept);
    free(ex->out);
    free(ex->weights);
    free(ex->Q);
    free(ex->K);
    free(ex->V);
    free(ex->concat);
    free(ex->scores);
    free(ex->scaled);
    free(ex->masked);
    if (ex->eb_ready)
        explain_json_free(&ex->eb);
    free(ex);
}

/* The numbers of one kept step's paths: per probe and layer, q, k, v and
 * the head outputs (NH, T, F), five (NH, T, T) and two (NH, T). */
static size_t step_floats(const train_explain *ex)
{
    const size_t p = ex->d / ex->heads, F = p < EXPLAIN_FIRST ? p : EXPLAIN_FIRST;
    size_t a = 0, b = 0, c = 0, n = 0;
    if (size_mul(4 * F + 5 * ex->T + 2, ex->heads, &a) || size_mul(a, ex->T, &b) ||
        size_mul(b, ex->layers, &c) || size_mul(c, ex->nprobes, &n))
        return SIZE_MAX;
    return n;
}

/* The stride (a multiple of the page's) and room for the kept steps. */
static int plan(train_explain *ex)
{
    const size_t att = ex->nprobes * ex->layers * ex->heads * ex->T * ex->T; /* the page's */
    const long page = train_page_stride(att, ex->steps, ex->every, TP_MAX_FLOATS);
    const long mine = train_page_stride(step_floats(ex), ex->steps, ex->every, TE_MAX_FLOATS);
    size_t nlogged = 0;
    ex->stride = (mine + page - 1) / page * page;
    for (long s = 0; s <= ex->steps; s++)
        nlogged += (size_t)train_page_logged(s, ex->steps, ex->every);
    ex->cap = (nlogged + (size_t)ex->stride - 1) / (size_t)ex->stride + 1; /* + the last */
    ex->kept = calloc(ex->cap, sizeof *ex->kept);
    ex->text = calloc(ex->cap, sizeof *ex->text);
    ex->len = calloc(ex->cap, sizeof *ex->len);
    return ex->kept && ex->text && ex->len ? 0 : -1;
}

/* The scratch of one layer's run. */
static int scratch(train_explain *ex, const trainer *tr)
{
    size_t td = 0, htt = 0;
    int failed = size_mul(ex->T, ex->d, &td) || size_mul(ex->heads * ex->T, ex->T, &htt);
    float **vec[] = {&ex->out, &ex->Q, &ex->K, &ex->V, &ex->concat};
    float **mat[] = {&ex->weights, &ex->scores, &ex->scaled, &ex->masked};
    for (size_t i = 0; i < 5 && !failed; i++)
        failed = !(*vec[i] = malloc(td * sizeof(float)));
    for (size_t i = 0; i < 4 && !failed; i++)
        failed = !(*mat[i] = malloc(htt * sizeof(float)));
    if (failed)
        return -1;
    ex->pr.self = 1;
    ex->pr.B = 1;
    ex->pr.Nq = ex->pr.Nk = ex->T;
    ex->pr.Dq = ex->pr.Dk = ex->pr.Dv = ex->d;
    ex->pr.vl_ndim = 1;
    ex->pr.params = tr->model.blk[0].mha; /* the sizes; each layer's at its run */
    if (explain_json_alloc(&ex->eb, &ex->pr))
        return -1;
    ex->eb_ready = 1;
    return 0;
}

int train_explain_begin(train_explain **out, const trainer *tr, const train_explain_probe *probes,
                        size_t n, long steps, long every)
{
    train_explain *ex = calloc(1, sizeof *ex);
    *out = NULL;
    if (!ex)
        goto oom;
    ex->layers = tr->model.cfg.layers ? tr->model.cfg.layers : 1;
    ex->heads = tr->model.cfg.heads;
    ex->d = tr->model.cfg.hiddens;
    ex->causal = tr->model.cfg.causal;
    ex->steps = steps;
    ex->every = every;
    for (size_t i = 0; i < n && ex->nprobes < TE_MAX_PROBES; i++)
        if (probes[i].len > 0 && (ex->nprobes == 0 || probes[i].len == ex->T)) {
            ex->probes[ex->nprobes++] = probes[i]; /* one length, as the page's */
            ex->T = probes[i].len;
        }
    if (ex->nprobes == 0) {
        *out = ex; /* nothing to explain: an empty member */
        return EXIT_OK;
    }
    ex->vl = (long)ex->T;
    if (plan(ex) || scratch(ex, tr))
        goto oom;
    *out = ex;
    return EXIT_OK;
oom:
    train_explain_free(ex);
    cli_error("--explain: out of memory for the paths");
    return EXIT_RUNTIME;
}

/* Layer l of the probe the trainer's cache has just run: its attention
 * again on its input x (T, d), with the trace, as a layer object. */
static int layer_object(json_writer *jw, train_explain *ex, trainer *tr, size_t l, const float *x,
                        char *err, size_t errlen)
{
    const mha_masks mask = {&ex->vl, 0, ex->causal, 0};
    mha_trace t = {ex->Q, ex->K, ex->V, ex->scores, ex->scaled, ex->masked, ex->concat};
    if (mha_forward(ex->out, ex->weights, &t, x, x, x, 1, ex->T, ex->T, &tr->model.blk[l].mha,
                    &mask, NULL, err, errlen))
        return -1;
    ex->pr.params = tr->model.blk[l].mha;
    ex->pr.valid_lens = &ex->vl;
    json_object_begin(jw, NULL, JSON_BLOCK);
    explain_json_member(jw, &ex->pr, &t, ex->causal, &ex->eb);
    json_tensor(jw, "attention_weights", ex->weights, 4, (size_t[]){1, ex->heads, ex->T, ex->T});
    json_end(jw);
    return 0;
}

/* Step s's object into jw: every probe's layers. */
static int step_object(json_writer *jw, train_explain *ex, trainer *tr, long s, char *err,
                       size_t errlen)
{
    tcache *c = &tr->cache[0];
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_int(jw, "step", s);
    json_array_begin(jw, "probes", JSON_BLOCK);
    for (size_t p = 0; p < ex->nprobes; p++) {
        if (ex->T > c->Tmax) {
            snprintf(err, errlen, _("a probe of %zu tokens (at most %zu)"), ex->T, c->Tmax);
            return -1;
        }
        if (tmodel_forward(&tr->model, c, ex->probes[p].tokens, &ex->vl, 1, ex->T, NULL, err, errlen))
            return -1;
        json_array_begin(jw, NULL, JSON_BLOCK);
        for (size_t l = 0; l < ex->layers; l++)
            if (layer_object(jw, ex, tr, l, l ? tcache_block_out(c, &tr->model, l - 1) : c->X, err,
                             errlen))
                return -1;
        json_end(jw);
    }
    json_end(jw);
    json_end(jw);
    return 0;
}

int train_explain_record(train_explain *ex, trainer *tr, long s)
{
    char err[512], *text = NULL;
    size_t len = 0;
    json_writer jw;
    FILE *f;
    if (!ex || ex->nprobes == 0 || !train_page_logged(s, ex->steps, ex->every))
        return EXIT_OK;
    /* every stride-th logged step, and the last */
    if (ex->logged++ % (size_t)ex->stride != 0 && s != ex->steps)
        return EXIT_OK;
    if (ex->nkept == ex->cap)
        return EXIT_OK; /* cannot happen: plan counted them */
    if (!(f = open_memstream(&text, &len))) {
        cli_error("--explain: out of memory for the paths");
        return EXIT_RUNTIME;
    }
    json_writer_init(&jw, f);
    snprintf(err, sizeof err, "%s", _("out of memory for the paths"));
    int failed = step_object(&jw, ex, tr, s, err, sizeof err);
    failed |= json_writer_finish(&jw) != 0;
    failed |= (ferror(f) | fclose(f)) != 0;
    if (failed) {
        free(text);
        cli_error("--explain: %s", err);
        return EXIT_RUNTIME;
    }
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    ex->kept[ex->nkept] = s;
    ex->text[ex->nkept] = text;
    ex->len[ex->nkept++] = len;
    return EXIT_OK;
}

void train_explain_member(json_writer *jw, const train_explain *ex)
{
    json_object_begin(jw, "explain", JSON_BLOCK);
    json_uint(jw, "layers", ex->layers);
    json_uint(jw, "heads", ex->heads);
    json_uint(jw, "length", ex->T);
    json_bool(jw, "causal", ex->causal);
    json_int(jw, "stride", ex->stride ? ex->stride : 1);
    json_array_begin(jw, "probes", JSON_BLOCK);
    for (size_t p = 0; p < ex->nprobes; p++) {
        json_object_begin(jw, NULL, JSON_INLINE);
        json_string(jw, "name", ex->probes[p].name); /* NULL: null */
        page_tokens(jw, "tokens", ex->probes[p].labels, ex->probes[p].len);
        json_end(jw);
    }
    json_end(jw);
    json_array_begin(jw, "steps", JSON_BLOCK);
    for (size_t i = 0; i < ex->nkept; i++)
        json_raw(jw, NULL, ex->text[i], ex->len[i]);
    json_end(jw);
    json_end(jw);
}
