/* model_input.c — a model of attn train as selfattn's input (model_input.h). */
#include "model_input.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "checked.h"
#include "json_in.h"
#include "model_file.h"
#include "posenc.h"
#include "i18n.h"

int model_input_is_model(const char *path, size_t max_bytes)
{
    char err[512];
    cJSON *root, *cmd;
    int yes;
    if (strcmp(path, "-") == 0) /* stdin can be read only once */
        return 0;
    root = json_read_file(path, max_bytes, err, sizeof err);
    cmd = root ? cJSON_GetObjectItemCaseSensitive(root, "command") : NULL;
    yes = cJSON_IsString(cmd) && strcmp(cmd->valuestring, "train") == 0;
    cJSON_Delete(root);
    return yes;
}

/* X (B, N, d) = embedding[ids]·√d + P (posenc, or the learned
 * pos_embedding), the queries of pr. */
static int embed(problem *pr, const tmodel *m, const int *ids, const char *path, char *err,
                 size_t errlen)
{
    const size_t B = pr->B, N = pr->Nq, d = m->cfg.hiddens;
    const double sqrt_d = sqrt((double)d);
    size_t shape[3] = {B, N, d}, bytes;
    float *P = NULL; /* (N, d) */
    const float *add; /* (N, d) what is added by position, or NULL */
    if (m->cfg.learned && N > m->cfg.max_len) {
        snprintf(err, errlen, _("--tokens: %zu tokens, but the learned P of %s holds %zu positions "
                 "(max_len)"), N, path, m->cfg.max_len);
        return -1;
    }
    if (size_mul(N, d, &bytes) || size_mul(bytes, sizeof(float), &bytes) ||
        !(P = calloc(1, bytes ? bytes : 1))) {
        snprintf(err, errlen, "%s", _("out of memory"));
        return -1;
    }
    if (m->cfg.posenc)
        posenc_fill(P, N, d, 10000.0);
    add = tmodel_positions(m, P);
    if (tensor_alloc(&pr->queries, 3, shape, err, errlen)) {
        free(P);
        return -1;
    }
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < N; t++) {
            const float *e = m->embedding.data + (size_t)ids[b * N + t] * d; /* (d,) */
            float *x = pr->queries.data + (b * N + t) * d;
            for (size_t i = 0; i < d; i++)
                x[i] = (float)(e[i] * sqrt_d + (add ? add[t * d + i] : 0.0f));
        }
    free(P);
    return 0;
}

/* A stack: every block run on the sentences ids (B, N) with lens (B,)
 * (NULL: all N), its weights and last output kept in pr. */
static int run_stack(problem *pr, tmodel *m, const int *ids, const long *lens, char *err,
                     size_t errlen)
{
    const size_t B = pr->B, N = pr->Nq, NH = m->cfg.heads, d = m->cfg.hiddens;
    size_t per, all, out;
    tcache c;
    if (size_mul(B, NH, &per) || size_mul(per, N, &per) || size_mul(per, N, &per) ||
        size_mul(per, m->cfg.layers, &all) || size_mul(all, sizeof(float), &all) ||
        size_mul(B, N, &out) || size_mul(out, d, &out) ||
        !(pr->stack_weights = malloc(all)) ||
        !(pr->stack_output = malloc(out * sizeof(float)))) {
        snprintf(err, errlen, "%s", _("out of memory for the stack's attention"));
        return -1;
    }
    if (tcache_alloc(&c, m, B, N, err, errlen))
        return -1;
    if (tmodel_forward(m, &c, ids, lens, B, N, NULL, err, errlen)) {
        tcache_free(&c);
        return -1;
    }
    /* (L, B, NH, N, N): block l's weights after block l−1's */
    for (size_t l = 0; l < m->cfg.layers; l++)
        memcpy(pr->stack_weights + l * per, c.blk[l].A, per * sizeof(float));
    memcpy(pr->stack_output, tcache_features(&c, m), out * sizeof(float));
    pr->layers = m->cfg.layers;
    pr->stack_causal = m->cfg.causal;
    tcache_free(&c);
    return 0;
}

/* The vocabulary ids of words (n), "<pad>" being 0. */
static int token_ids(int *ids, char **words, size_t n, char **vocab, size_t V,
                     const char *path, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        size_t v;
        for (v = 0; v < V && strcmp(vocab[v], words[i]) != 0; v++)
            ;
        if (v == V) {
            snprintf(err, errlen, _("--tokens: '%s' is not in the vocabulary of %s"), words[i],
                     path);
            return -1;
        }
        ids[i] = (int)v;
    }
    return 0;
}

int model_input_load(problem *pr, const char *path, const char *tokens, char *err,
                     size_t errlen, int *usage)
{
    tmodel m;
    char **vocab = NULL, **classes = NULL, **words = NULL;
    size_t V = 0, C = 0, B, N, i;
    long *lens = NULL;
    int *ids = NULL, status = -1;

    memset(pr, 0, sizeof *pr);
    *usage = 0;
    if (!tokens) {
        snprintf(err, errlen, _("%s is a model of attn train: give the sentence to run it on "
                 "with --tokens"), path);
        *usage = 1;
        return -1;
    }
    if (model_file_load(path, &m, &vocab, &V, &classes, &C, 0, 0.0, err, errlen))
        return -1;
    if (problem_split_tokens(tokens, &B, &N, &words, &lens, err, errlen))
        goto done;
    if (size_mul(B, N, &i) || !(ids = malloc(i * sizeof *ids))) {
        snprintf(err, errlen, "%s", _("out of memory"));
        goto done;
    }
    if (token_ids(ids, words, B * N, vocab, V, path, err, errlen))
        goto done;
    pr->self = 1;
    pr->B = B;
    pr->Nq = pr->Nk = N;
    pr->Dq = pr->Dk = pr->Dv = m.cfg.hiddens;
    if (embed(pr, &m, ids, path, err, errlen))
        goto done;
    for (i = 0; i < B; i++)
        if ((size_t)lens[i] != N)
            break;
    if (tmodel_is_stack(&m.cfg) && run_stack(pr, &m, ids, i < B ? lens : NULL, err, errlen))
        goto done;
    /* the attention's weights move from the model into the problem */
    pr->params = m.blk[0].mha; /* a stack's first block */
    pr->params.num_heads = m.cfg.heads;
    pr->params.num_hiddens = m.cfg.hiddens;
    pr->params.score = SCORE_DOT;
    memset(&m.blk[0].mha, 0, sizeof m.blk[0].mha);
    pr->query_tokens = pr->key_tokens = words;
    pr->per_example = 1;
    words = NULL;
    for (i = 0; i < B; i++)
        if ((size_t)lens[i] != N) { /* ragged: the lengths mask the padding */
            pr->valid_lens = lens;
            pr->vl_ndim = 1;
            lens = NULL;
            break;
        }
    status = 0;
done:
    if (status)
        problem_free(pr);
    tmodel_free(&m);
    train_strings_free(vocab, V);
    train_strings_free(classes, C);
    free(words);
    free(lens);
    free(ids);
    return status;
}
