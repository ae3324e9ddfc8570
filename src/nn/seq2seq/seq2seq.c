/* seq2seq.c — the one list of architectures (s2s_archs), and seq2seq.h's
 * s2s_* functions: what every architecture shares (the checks, the
 * parameter list, the loss), the rest asked of the model's table.
 *
 * A pass's sizes are checked here against the cache's before the
 * architecture's loops run: every product of sizes in them is bounded by
 * a buffer its cache_alloc allocated with overflow-checked sizes. */
#include "seq2seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bahdanau.h"
#include "checked.h"
#include "layers.h"
#include "transformer.h"
#include "i18n.h"

/* ---- the architectures ------------------------------------------------- */

const s2s_arch *const s2s_archs[] = {&tfm_arch, &bah_arch, NULL};
const char *const s2s_rnn_names[] = {"gru", "lstm", NULL};
const char *const s2s_score_names[] = {"additive", "dot", NULL};
const char *const s2s_rnn_labels[] = {"GRU", "LSTM", NULL};
const char *const s2s_score_notes[] = {"", ", dot-product attention", NULL};

int s2s_fast_supports(const s2s_config *cfg)
{
    const s2s_arch *a = s2s_arch_of(cfg);
    return a->fast_supports ? a->fast_supports(cfg) : 1;
}

const char *s2s_score_note(const s2s_config *cfg)
{
    if (cfg->score == s2s_arch_of(cfg)->default_score)
        return "";
    return cfg->score == S2S_SCORE_DOT ? s2s_score_notes[S2S_SCORE_DOT] : _(", additive scores");
}

const s2s_arch *s2s_arch_find(const char *name)
{
    for (size_t i = 0; s2s_archs[i]; i++)
        if (strcmp(s2s_archs[i]->name, name) == 0)
            return s2s_archs[i];
    return NULL;
}

const s2s_arch *s2s_arch_of(const s2s_config *cfg)
{
    return cfg->arch ? cfg->arch : s2s_archs[0];
}

size_t s2s_cross_blocks(const s2s_config *cfg)
{
    return s2s_arch_of(cfg)->cross_blocks(cfg);
}

/* ---- the model ----------------------------------------------------------- */

int s2s_config_check(const s2s_config *cfg, char *err, size_t errlen)
{
    if (cfg->src_vocab < 1 || cfg->tgt_vocab < 1 || cfg->hiddens < 1 || cfg->heads < 1) {
        snprintf(err, errlen, "%s", _("the model needs two vocabularies, hiddens and heads"));
        return -1;
    }
    if (cfg->hiddens % cfg->heads != 0) {
        snprintf(err, errlen, _("num_hiddens %zu is not divisible by num_heads %zu"), cfg->hiddens,
                 cfg->heads);
        return -1;
    }
    if (cfg->layers < 1 || cfg->layers > TMODEL_MAX_LAYERS) {
        snprintf(err, errlen, _("%zu layers (1 to %d)"), cfg->layers, TMODEL_MAX_LAYERS);
        return -1;
    }
    return s2s_arch_of(cfg)->config_check(cfg, err, errlen);
}

int s2s_alloc(s2s_model *m, const s2s_config *cfg, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (s2s_config_check(cfg, err, errlen))
        return -1;
    m->cfg = *cfg;
    m->cfg.arch = s2s_arch_of(cfg);
    if (m->cfg.arch->alloc(m, err, errlen)) {
        s2s_free(m);
        return -1;
    }
    return 0;
}

int s2s_set_heads(s2s_model *m, const unsigned char *on)
{
    if (!m->cfg.arch->set_heads)
        return -1;
    m->cfg.arch->set_heads(m, on);
    return 0;
}

void s2s_init(s2s_model *m, unsigned long long seed)
{
    m->cfg.arch->init(m, seed);
}

void s2s_free(s2s_model *m)
{
    if (m->cfg.arch)
        m->cfg.arch->free(m);
    m->net = NULL;
    m->nparams = 0;
    m->total = 0;
}

tparam *s2s_find(s2s_model *m, const char *name)
{
    return tparam_find(m->param, m->nparams, name);
}

void s2s_copy_params(s2s_model *dst, const s2s_model *src)
{
    tparam_copy(dst->param, src->param, src->nparams);
}

/* ---- the cache ------------------------------------------------------------ */

const float *s2s_cross(const s2s_cache *c, const s2s_model *m, size_t l)
{
    (void)m;
    return c->arch->cross(c, l);
}

const float *s2s_self(const s2s_cache *c, int side, size_t l)
{
    return c->arch->self ? c->arch->self(c, side, l) : NULL;
}

int s2s_check_ids(const s2s_model *m, const int *src, const int *dec_in, const int *targets,
                  size_t B, size_t Ts, size_t Tt, char *err, size_t errlen)
{
    const long Vs = (long)m->cfg.src_vocab, Vt = (long)m->cfg.tgt_vocab;
    size_t ns, nt;
    if (size_mul(B, Ts, &ns) || size_mul(B, Tt, &nt)) {
        snprintf(err, errlen, _("a batch of %zu pairs of %zu and %zu positions is too large"), B, Ts,
                 Tt);
        return -1;
    }
    for (size_t i = 0; src && i < ns; i++)
        if (src[i] < 0 || src[i] >= Vs) {
            snprintf(err, errlen, _("source [%zu][%zu]: id %d is not in the vocabulary of %ld"),
                     i / Ts, i % Ts, src[i], Vs);
            return -1;
        }
    for (size_t i = 0; dec_in && i < nt; i++)
        if (dec_in[i] < 0 || dec_in[i] >= Vt) {
            snprintf(err, errlen, _("decoder input [%zu][%zu]: id %d is not in the vocabulary of %ld"),
                     i / Tt, i % Tt, dec_in[i], Vt);
            return -1;
        }
    for (size_t i = 0; targets && i < nt; i++)
        if (targets[i] < -1 || targets[i] >= Vt) {
            snprintf(err, errlen, _("target [%zu][%zu]: id %d is not -1 or in the vocabulary of %ld"),
                     i / Tt, i % Tt, targets[i], Vt);
            return -1;
        }
    return 0;
}

/* ---- the passes ----------------------------------------------------------- */

int s2s_forward(const s2s_model *m, s2s_cache *c, const int *src, const long *src_lens,
                const int *dec_in, size_t B, size_t Ts, size_t Tt, const mha_dropout *drop,
                char *err, size_t errlen)
{
    if (B > c->Bmax || Ts > c->Ts_max || Tt > c->Tt_max) {
        snprintf(err, errlen,
                 _("a batch of %zu pairs of %zu and %zu positions exceeds the cache's %zu of %zu "
                 "and %zu"),
                 B, Ts, Tt, c->Bmax, c->Ts_max, c->Tt_max);
        return -1;
    }
    if (s2s_check_ids(m, src, dec_in, NULL, B, Ts, Tt, err, errlen))
        return -1;
    return m->cfg.arch->forward(m, c, src, src_lens, dec_in, B, Ts, Tt, drop, err, errlen);
}

double s2s_loss(const s2s_cache *c, const s2s_model *m, const int *targets, size_t *count,
                size_t *correct)
{
    return crossentropy_forward(c->logits, targets, c->B * c->Tt, m->cfg.tgt_vocab, count, correct);
}

int s2s_backward(double *grads, s2s_cache *c, const s2s_model *m, const int *src,
                 const long *src_lens, const int *dec_in, const int *targets, double scale,
                 const mha_dropout *drop, char *err, size_t errlen)
{
    if (s2s_check_ids(m, src, dec_in, targets, c->B, c->Ts, c->Tt, err, errlen))
        return -1;
    /* d logits (B, Tt, Vt) = (softmax(logits) − one-hot(target)) · scale,
     * zero at <pad> */
    crossentropy_backward(c->dlogits, c->logits, targets, c->B * c->Tt, m->cfg.tgt_vocab, scale);
    return m->cfg.arch->backward(grads, c, m, src, src_lens, dec_in, drop, err, errlen);
}

/* ---- greedy decoding ------------------------------------------------------ */

int s2s_greedy(const s2s_model *m, const int *src, long src_len, size_t Ts, int bos, int eos,
               size_t max_len, int *out, size_t *n_out, float *cross, char *err, size_t errlen)
{
    const size_t Vt = m->cfg.tgt_vocab;
    *n_out = 0;
    if (bos < 0 || (size_t)bos >= Vt || eos < 0 || (size_t)eos >= Vt) {
        snprintf(err, errlen, _("<bos> %d or <eos> %d is not in the vocabulary of %zu"), bos, eos, Vt);
        return -1;
    }
    if (s2s_check_ids(m, src, NULL, NULL, 1, Ts, 0, err, errlen))
        return -1;
    return m->cfg.arch->greedy(m, src, src_len, Ts, bos, eos, max_len, out, n_out, cross, err,
                               errlen);
}
