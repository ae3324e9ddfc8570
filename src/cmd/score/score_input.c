/* score_input.c — `attn score`'s inputs (SPEC.md §13): the section's
 * cells, or a JSON file of queries, keys, values, valid_lens and a
 * state_dict, every shape checked with its JSON path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "json_in.h"
#include "rng.h"
#include "score_cmd.h"

#define MAX_LEN OPT_SIZE_MAX /* a valid length; one above Nk masks nothing */
/* --keys random: the keys' own stream of --seed ("keys" in ASCII), the same
 * keys for every scoring function and the queries and weights unchanged */
#define KEYS_STREAM 0x6b657973ULL

void score_run_free(score_run *r)
{
    tensor_free(&r->queries);
    tensor_free(&r->keys);
    tensor_free(&r->values);
    score_additive_free(&r->m);
    score_general_free(&r->g);
    FREE_EACH(r->lens, r->qh, r->kh, r->qw, r->scores, r->masked, r->weights, r->output);
    memset(r, 0, sizeof *r);
}

/* The section's cell for one kind: queries normal(0, 1), keys ones (or
 * normal(0, 1) with --keys random), values arange(40) repeated over the
 * batch, valid_lens [2, 6]; additive's and general's weights drawn after
 * the queries. Additive and general score queries of size 20 against keys
 * of size 2, as the section's additive cell; dot and sum queries of size 2;
 * --queries N queries an example (the book's 1). */
int score_cell(score_run *r, int kind, const struct score_args *a, char *err, size_t errlen)
{
    rng g;
    r->kind = kind;
    r->B = 2, r->Nq = (size_t)a->queries, r->Nk = 10, r->Dk = 2, r->Dv = 4;
    r->Dq = kind == KIND_DOT || kind == KIND_SUM ? 2 : 20;
    r->h = kind == KIND_ADDITIVE ? (size_t)(a->hiddens_given ? a->hiddens : 8) : 0;
    if (tensor_alloc(&r->queries, 3, (size_t[]){r->B, r->Nq, r->Dq}, err, errlen) ||
        tensor_alloc(&r->keys, 3, (size_t[]){r->B, r->Nk, r->Dk}, err, errlen) ||
        tensor_alloc(&r->values, 3, (size_t[]){r->B, r->Nk, r->Dv}, err, errlen) ||
        !(r->lens = malloc(2 * sizeof *r->lens))) {
        snprintf(err, errlen, "%s", _("out of memory for the section's cell"));
        return -1;
    }
    /* one stream per scoring function: dot's queries are the same alone or after additive */
    rng_seed(&g, (unsigned long long)a->seed + (unsigned long long)kind);
    for (size_t i = 0; i < r->queries.size; i++)
        r->queries.data[i] = (float)rng_normal(&g);
    if (a->keys_random) {
        rng kg;
        rng_seed(&kg, (unsigned long long)a->seed + KEYS_STREAM);
        for (size_t i = 0; i < r->keys.size; i++)
            r->keys.data[i] = (float)rng_normal(&kg);
    } else {
        for (size_t i = 0; i < r->keys.size; i++)
            r->keys.data[i] = 1.0f;
    }
    for (size_t i = 0; i < r->values.size; i++)
        r->values.data[i] = (float)(i % (r->Nk * r->Dv));
    r->lens[0] = 2;
    r->lens[1] = 6;
    r->vl_ndim = 1;
    if (kind == KIND_ADDITIVE)
        return score_additive_init(&r->m, r->Dq, r->Dk, r->h, &g, err, errlen);
    if (kind == KIND_GENERAL)
        return score_general_init(&r->g, r->Dq, r->Dk, &g, err, errlen);
    return 0;
}

/* A required 3-D tensor of the file: $.name. */
static int get_input3(const cJSON *root, const char *name, tensor *t, char *err, size_t errlen)
{
    char path[32];
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, name);
    snprintf(path, sizeof path, "$.%s", name);
    if (!node) {
        snprintf(err, errlen, _("$: missing \"%s\""), name);
        return -1;
    }
    return json_get_tensor(node, path, 3, 3, t, err, errlen);
}

/* Keys and values against the queries: one batch, as many values as keys. */
static int check_sizes(score_run *r, char *err, size_t errlen)
{
    char q[64], k[64], v[64];
    tensor_shape_str(q, sizeof q, 3, r->queries.shape);
    tensor_shape_str(k, sizeof k, 3, r->keys.shape);
    tensor_shape_str(v, sizeof v, 3, r->values.shape);
    r->B = r->queries.shape[0], r->Nq = r->queries.shape[1], r->Dq = r->queries.shape[2];
    r->Nk = r->keys.shape[1], r->Dk = r->keys.shape[2], r->Dv = r->values.shape[2];
    if (r->keys.shape[0] != r->B) {
        snprintf(err, errlen, _("$.keys: expected batch %zu like $.queries %s, got shape %s"), r->B,
                 q, k);
        return -1;
    }
    if (r->values.shape[0] != r->B || r->values.shape[1] != r->Nk) {
        snprintf(err, errlen, _("$.values: expected shape (%zu, %zu, value_size), one value per "
                 "key of $.keys %s, got %s"), r->B, r->Nk, k, v);
        return -1;
    }
    if (r->kind == KIND_SUM && r->Dq != r->Dk) {
        snprintf(err, errlen, _("$.queries: the sum score Σᵢ (qᵢ + kᵢ) needs queries of the keys' "
                 "size %zu, got %zu (--score additive or general scores queries and keys of "
                 "different sizes)"), r->Dk, r->Dq);
        return -1;
    }
    if (r->kind == KIND_DOT && r->Dq != r->Dk) {
        snprintf(err, errlen, _("$.queries: dot-product scoring needs queries of the keys' size "
                 "%zu, got %zu (--score additive or general scores queries and keys of "
                 "different sizes)"),
                 r->Dk, r->Dq);
        return -1;
    }
    return 0;
}

/* valid_lens: (B,) one per example, or (B, Nq) one per query; absent or null: none. */
static int get_lens(score_run *r, const cJSON *root, char *err, size_t errlen)
{
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, "valid_lens");
    size_t shape[2];
    if (!node || cJSON_IsNull(node))
        return 0;
    if (json_get_lens(node, "$.valid_lens", MAX_LEN, &r->lens, &r->vl_ndim, shape, err, errlen))
        return -1;
    if (shape[0] == r->B && (r->vl_ndim == 1 || shape[1] == r->Nq))
        return 0;
    if (r->vl_ndim == 1)
        snprintf(err, errlen, _("$.valid_lens: expected %zu lengths (one per example), got %zu"),
                 r->B, shape[0]);
    else
        snprintf(err, errlen, _("$.valid_lens: expected (%zu, %zu) lengths (one per query), got "
                 "(%zu, %zu)"), r->B, r->Nq, shape[0], shape[1]);
    return -1;
}

/* The members of object obj are among known[0 … n): 0, or -1 naming the
 * first other one, at path, with the list of those it may have. */
static int known_members(const cJSON *obj, const char *const *known, size_t n, const char *path,
                         const char *list, char *err, size_t errlen)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, obj) {
        size_t i = 0;
        while (i < n && strcmp(item->string, known[i]) != 0)
            i++;
        if (i == n) {
            snprintf(err, errlen, _("%s: unknown key \"%s\" (%s)"), path, item->string, list);
            return -1;
        }
    }
    return 0;
}

/* One state_dict entry: a (rows, cols) matrix; rows 0 takes the file's;
 * note (or "") follows the expected shape of a wrong one. */
static int get_weight(const cJSON *sd, const char *name, size_t rows, size_t cols,
                      const char *note, linear *l, char *err, size_t errlen)
{
    char path[64], want[48];
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(sd, name);
    snprintf(path, sizeof path, "$.state_dict[\"%s\"]", name);
    snprintf(want, sizeof want, rows ? "(%zu, %zu)" : "(num_hiddens, %zu)", rows ? rows : cols,
             cols);
    if (!node) {
        snprintf(err, errlen, _("$.state_dict: missing \"%s\" %s"), name, want);
        return -1;
    }
    if (json_get_tensor(node, path, 2, 2, &l->weight, err, errlen))
        return -1;
    if ((rows && l->weight.shape[0] != rows) || l->weight.shape[1] != cols) {
        snprintf(err, errlen, _("%s: expected shape %s%s, got (%zu, %zu)"), path, want, note,
                 l->weight.shape[0], l->weight.shape[1]);
        return -1;
    }
    return 0;
}

/* The state_dict: AdditiveAttention's W_q.weight (h, Dq), which sets h,
 * W_k.weight and w_v.weight, or the general score's W.weight (Dk, Dq), as
 * the run's kind needs; a file may hold both, for both kinds. */
static int get_state_dict(score_run *r, const cJSON *sd, char *err, size_t errlen)
{
    static const char *const known[] = {"W_q.weight", "W_k.weight", "w_v.weight", "W.weight"};
    if (!cJSON_IsObject(sd)) {
        snprintf(err, errlen, _("$.state_dict: expected an object, got %s"), json_type_name(sd));
        return -1;
    }
    if (known_members(sd, known, 4, "$.state_dict",
                      "AdditiveAttention has W_q.weight, W_k.weight, w_v.weight; the general "
                      "score W.weight", err, errlen))
        return -1;
    r->has_state_dict = 1;
    if (r->kind == KIND_GENERAL) {
        /* nn.Linear(Dq, Dk, bias=False): (Dk, Dq) */
        char note[96];
        snprintf(note, sizeof note, _(", nn.Linear(%zu, %zu)'s (key_size, query_size)"), r->Dq,
                 r->Dk);
        return get_weight(sd, "W.weight", r->Dk, r->Dq, note, &r->g.W, err, errlen);
    }
    if (get_weight(sd, "W_q.weight", 0, r->Dq, "", &r->m.W_q, err, errlen))
        return -1;
    r->h = r->m.W_q.weight.shape[0];
    return get_weight(sd, "W_k.weight", r->h, r->Dk, "", &r->m.W_k, err, errlen) ||
                   get_weight(sd, "w_v.weight", 1, r->h, "", &r->m.w_v, err, errlen)
               ? -1
               : 0;
}

/* One run's inputs from the parsed file; *usage is set for an error of
 * the options (--score-hiddens with a state_dict). Without a state_dict,
 * the weights are drawn from --seed as nn.Linear draws them. */
int score_run_from_json(score_run *r, int kind, const cJSON *root, const struct score_args *a,
                        char *err, size_t errlen, int *usage)
{
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(root, "state_dict");
    rng g;
    r->kind = kind;
    if (get_input3(root, "queries", &r->queries, err, errlen) ||
        get_input3(root, "keys", &r->keys, err, errlen) ||
        get_input3(root, "values", &r->values, err, errlen) || check_sizes(r, err, errlen) ||
        get_lens(r, root, err, errlen))
        return -1;
    if (kind == KIND_DOT || kind == KIND_SUM)
        return 0;
    if (sd && a->hiddens_given && kind == KIND_ADDITIVE) {
        snprintf(err, errlen, "%s", _("--score-hiddens: the file's state_dict sets num_hiddens "
                 "(the rows of W_q.weight); give one"));
        *usage = 1;
        return -1;
    }
    if (sd)
        return get_state_dict(r, sd, err, errlen);
    rng_seed(&g, (unsigned long long)a->seed);
    if (kind == KIND_GENERAL)
        return score_general_init(&r->g, r->Dq, r->Dk, &g, err, errlen);
    r->h = (size_t)(a->hiddens_given ? a->hiddens : 8);
    return score_additive_init(&r->m, r->Dq, r->Dk, r->h, &g, err, errlen);
}

/* Only the members the format has: a misspelt "valid_len" is not ignored. */
int score_check_members(const cJSON *root, char *err, size_t errlen)
{
    static const char *const known[] = {"queries", "keys", "values", "valid_lens", "state_dict"};
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, _("$: expected an object with queries, keys and values, got %s"),
                 json_type_name(root));
        return -1;
    }
    return known_members(root, known, 5, "$",
                         "expected queries, keys, values, valid_lens, state_dict", err, errlen);
}
