/* seq2seq_shared.c — the s2s_* functions (seq2seq.h) that the
 * architectures' own files call: a cache of either architecture (made and
 * released through the table its model carries), greedy decoding's loop
 * and argmax, and an attention module's dropout stream. They know no architecture by
 * name, so the architectures' files use this one and seq2seq.c, which
 * lists the architectures, stays above them all. */
#include "seq2seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "layers.h"
#include "i18n.h"

int s2s_cache_alloc(s2s_cache *c, const s2s_model *m, size_t Bmax, size_t Ts_max, size_t Tt_max,
                    char *err, size_t errlen)
{
    const size_t Tmax = Ts_max > Tt_max ? Ts_max : Tt_max;
    size_t n;
    memset(c, 0, sizeof *c);
    if (size_mul(Bmax, Ts_max, &n) || size_mul(Bmax, Tt_max, &n) || size_mul(Bmax, Tmax, &n)) {
        snprintf(err, errlen, _("a batch of %zu pairs of %zu and %zu positions is too large"), Bmax,
                 Ts_max, Tt_max);
        return -1;
    }
    c->arch = m->cfg.arch;
    c->Bmax = Bmax;
    c->Ts_max = Ts_max;
    c->Tt_max = Tt_max;
    return c->arch->cache_alloc(c, m, err, errlen);
}

void s2s_cache_free(s2s_cache *c)
{
    if (c->arch)
        c->arch->cache_free(c);
    free(c->logits);
    free(c->dlogits);
    memset(c, 0, sizeof *c);
}

const mha_dropout *s2s_module_dropout(mha_dropout *out, const mha_dropout *drop,
                                     size_t example0, size_t k, size_t per)
{
    const unsigned long long gamma = 0x9e3779b97f4a7c15ULL; /* SplitMix64's step */
    unsigned long long at;
    if (!drop || !(drop->p > 0))
        return NULL;
    at = ((unsigned long long)k << 40) + (unsigned long long)example0 * per;
    out->p = drop->p;
    out->seed = drop->seed + at * gamma;
    return out;
}

void s2s_ends_free(tensor *enc_embedding, tensor *dec_embedding, linear *dense)
{
    tensor_free(enc_embedding);
    tensor_free(dec_embedding);
    linear_free(dense);
}

int s2s_argmax(const float *x, size_t n)
{
    size_t best = 0;
    for (size_t k = 1; k < n; k++)
        if (x[k] > x[best])
            best = k;
    return (int)best;
}

int s2s_greedy_loop(s2s_step_fn *step, void *ctx, int *dec_in, size_t Vt, int bos, int eos,
                    size_t max_len, int *out, size_t *n_out, char *err, size_t errlen)
{
    dec_in[0] = bos;
    for (size_t t = 0; t < max_len; t++) {
        const float *logits = step(ctx, dec_in, t, err, errlen);
        int next;
        if (!logits)
            return -1;
        next = s2s_argmax(logits, Vt);
        if (next == eos)
            break;
        out[(*n_out)++] = next;
        if (t + 1 < max_len)
            dec_in[t + 1] = next;
    }
    return 0;
}
