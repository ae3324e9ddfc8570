/* problem.c — loading, making and writing one attention run (see
 * problem.h; dimensions as in attention.h). */
#include "problem.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "json_in.h"
#include "json_out.h"
#include "rng.h"

#define MAX_LEN 1000000000L /* the largest valid_len accepted */
#define MAX_HEADS 1000000L

const float *problem_keys(const problem *pr)
{
    return pr->keys.data ? pr->keys.data : pr->queries.data;
}

const float *problem_values(const problem *pr)
{
    if (pr->values.data)
        return pr->values.data;
    return problem_keys(pr);
}

static void free_tokens(char **t)
{
    free(t); /* one block: the pointer array followed by the strings */
}

void problem_free(problem *pr)
{
    tensor_free(&pr->queries);
    tensor_free(&pr->keys);
    tensor_free(&pr->values);
    free(pr->valid_lens);
    tensor_free(&pr->params.W_q.weight);
    tensor_free(&pr->params.W_q.bias);
    tensor_free(&pr->params.W_k.weight);
    tensor_free(&pr->params.W_k.bias);
    tensor_free(&pr->params.W_v.weight);
    tensor_free(&pr->params.W_v.bias);
    tensor_free(&pr->params.W_o.weight);
    tensor_free(&pr->params.W_o.bias);
    tensor_free(&pr->params.a_W_q.weight);
    tensor_free(&pr->params.a_W_k.weight);
    tensor_free(&pr->params.a_w_v.weight);
    if (pr->key_tokens != pr->query_tokens)
        free_tokens(pr->key_tokens);
    free_tokens(pr->query_tokens);
    memset(pr, 0, sizeof *pr);
}

/* n strings copied into one block: the pointer array, then the texts. */
static char **copy_tokens(const char *const *src, size_t n)
{
    size_t bytes = n * sizeof(char *), i, len;
    char **dst, *p;
    for (i = 0; i < n; i++)
        if (size_add(bytes, strlen(src[i]) + 1, &bytes) != 0)
            return NULL;
    dst = malloc(bytes);
    if (!dst)
        return NULL;
    p = (char *)(dst + n);
    for (i = 0; i < n; i++) {
        len = strlen(src[i]) + 1;
        memcpy(p, src[i], len);
        dst[i] = p;
        p += len;
    }
    return dst;
}

/* ---- weights --------------------------------------------------------- */

/* nn.Linear's default initialisation: weight and bias uniform in
 * ±1/sqrt(in_features). */
static int init_linear(linear *l, size_t out, size_t in, int bias, rng *r, char *err,
                       size_t errlen)
{
    size_t shape[2] = {out, in}, i;
    double bound = 1.0 / sqrt((double)in);
    if (tensor_alloc(&l->weight, 2, shape, err, errlen) != 0)
        return -1;
    for (i = 0; i < l->weight.size; i++)
        l->weight.data[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
    if (bias) {
        if (tensor_alloc(&l->bias, 1, shape, err, errlen) != 0)
            return -1;
        for (i = 0; i < out; i++)
            l->bias.data[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
    }
    return 0;
}

/* The identity as a (n, n) Linear without bias (--no-proj). */
static int identity_linear(linear *l, size_t n, char *err, size_t errlen)
{
    size_t shape[2] = {n, n}, i;
    if (tensor_alloc(&l->weight, 2, shape, err, errlen) != 0)
        return -1;
    for (i = 0; i < n; i++)
        l->weight.data[i * n + i] = 1.0f;
    return 0;
}

/* Draw every weight the module has, in the order d2l creates them. */
static int init_params(mha_params *m, size_t Dq, size_t Dk, size_t Dv, size_t A, int bias,
                       int no_proj, unsigned long long seed, char *err, size_t errlen)
{
    const size_t H = m->num_hiddens, p = H / m->num_heads;
    rng r;
    rng_seed(&r, seed);
    if (no_proj)
        return identity_linear(&m->W_q, H, err, errlen) || identity_linear(&m->W_k, H, err, errlen) ||
                       identity_linear(&m->W_v, H, err, errlen) || identity_linear(&m->W_o, H, err, errlen)
                   ? -1
                   : 0;
    if (init_linear(&m->W_q, H, Dq, bias, &r, err, errlen) || init_linear(&m->W_k, H, Dk, bias, &r, err, errlen) ||
        init_linear(&m->W_v, H, Dv, bias, &r, err, errlen) || init_linear(&m->W_o, H, H, bias, &r, err, errlen))
        return -1;
    if (m->score == SCORE_ADDITIVE) {
        /* d2l's AdditiveAttention creates W_k, W_q, w_v, all without bias */
        if (init_linear(&m->a_W_k, A, p, 0, &r, err, errlen) || init_linear(&m->a_W_q, A, p, 0, &r, err, errlen) ||
            init_linear(&m->a_w_v, 1, A, 0, &r, err, errlen))
            return -1;
    }
    return 0;
}

/* ---- JSON input ------------------------------------------------------ */

/* The input keys; the keys only a run's output has ("command", "shape",
 * "output", "attention_weights") are accepted and ignored, so that an
 * output file can be fed back as input. */
static const char *const top_keys_cross[] = {
    "queries", "keys", "values", "valid_lens", "num_heads", "state_dict",
    "query_tokens", "key_tokens", "command", "shape", "output", "attention_weights", NULL};
static const char *const top_keys_self[] = {
    "X", "valid_lens", "num_heads", "state_dict", "tokens",
    "command", "shape", "output", "attention_weights", NULL};
static const char *const sd_keys[] = {
    "W_q.weight", "W_q.bias", "W_k.weight", "W_k.bias", "W_v.weight", "W_v.bias",
    "W_o.weight", "W_o.bias", "attention.W_q.weight", "attention.W_k.weight",
    "attention.w_v.weight", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

/* ".key", or ["key"] when the key is not a plain name (W_q.weight). */
static const char *key_path(const char *key, char *buf, size_t n)
{
    const char *c;
    int plain = (*key >= 'a' && *key <= 'z') || (*key >= 'A' && *key <= 'Z') || *key == '_';
    for (c = key; *c && plain; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                (*c >= '0' && *c <= '9') || *c == '_';
    snprintf(buf, n, plain ? ".%s" : "[\"%s\"]", key);
    return buf;
}

/* Every key of obj is known and appears once. */
static int check_keys(const cJSON *obj, const char *path, const char *const *known, char *err,
                      size_t errlen)
{
    const cJSON *a, *b;
    char kp[160];
    cJSON_ArrayForEach(a, obj)
    {
        if (!in_list(a->string, known)) {
            char list[400] = "";
            const char *const *k;
            for (k = known; *k; k++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         k == known ? "" : ", ", *k);
            snprintf(err, errlen, "%s%s: unknown key (known: %s)", path,
                     key_path(a->string, kp, sizeof kp), list);
            return -1;
        }
        for (b = a->next; b; b = b->next)
            if (strcmp(a->string, b->string) == 0) {
                snprintf(err, errlen, "%s%s: the key appears twice", path,
                         key_path(a->string, kp, sizeof kp));
                return -1;
            }
    }
    return 0;
}

/* A 2-D (N, D) array becomes (1, N, D): batch 1. */
static void as_batch(tensor *t)
{
    if (t->ndim == 2) {
        t->shape[2] = t->shape[1];
        t->shape[1] = t->shape[0];
        t->shape[0] = 1;
        t->ndim = 3;
    }
}

static int get_input(const cJSON *root, const char *key, tensor *t, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof path, "$.%s", key);
    if (json_get_tensor(cJSON_GetObjectItemCaseSensitive(root, key), path, 2, 3, t, err,
                        errlen) != 0)
        return -1;
    as_batch(t);
    return 0;
}

static void shape_text(char *buf, size_t n, const tensor *t)
{
    tensor_shape_str(buf, n, t->ndim, t->shape);
}

/* A weight of the state_dict with the expected (rows, cols), or a bias (rows,). */
static int get_weight(const cJSON *sd, const char *key, size_t rows, size_t cols, int is_bias,
                      tensor *t, const char *why, char *err, size_t errlen)
{
    char path[96], want[64], got[64];
    size_t shape[2] = {rows, cols};
    snprintf(path, sizeof path, "$.state_dict[\"%s\"]", key);
    if (json_get_tensor(cJSON_GetObjectItemCaseSensitive(sd, key), path, 1, 2, t, err, errlen))
        return -1;
    if (t->ndim != (is_bias ? 1u : 2u) || t->shape[0] != rows || (!is_bias && t->shape[1] != cols)) {
        tensor_shape_str(want, sizeof want, is_bias ? 1 : 2, shape);
        shape_text(got, sizeof got, t);
        snprintf(err, errlen, "%s: expected shape %s (%s), got %s", path, want, why, got);
        tensor_free(t);
        return -1;
    }
    return 0;
}

/* The state_dict: every weight's shape against the inputs and the others. */
static int load_state_dict(problem *pr, const cJSON *sd, const problem_opts *o,
                           const char *heads_origin, char *err, size_t errlen, int *usage)
{
    mha_params *m = &pr->params;
    tensor t = {0};
    char why[96];
    size_t H, p;
    static const char *const need[] = {"W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"};
    size_t i;
    int has_add;

    if (!cJSON_IsObject(sd)) {
        snprintf(err, errlen, "$.state_dict: expected an object, got %s", json_type_name(sd));
        return -1;
    }
    if (check_keys(sd, "$.state_dict", sd_keys, err, errlen))
        return -1;
    for (i = 0; i < 4; i++)
        if (!cJSON_GetObjectItemCaseSensitive(sd, need[i])) {
            snprintf(err, errlen, "$.state_dict: missing \"%s\" (W_q, W_k, W_v and W_o "
                     "weights are all needed)", need[i]);
            return -1;
        }
    /* num_hiddens from W_q's rows */
    if (json_get_tensor(cJSON_GetObjectItemCaseSensitive(sd, "W_q.weight"),
                        "$.state_dict[\"W_q.weight\"]", 2, 2, &t, err, errlen))
        return -1;
    H = t.shape[0];
    tensor_free(&t);
    if (o->hiddens && (size_t)o->hiddens != H) {
        snprintf(err, errlen, "$.state_dict[\"W_q.weight\"]: has %zu rows (num_hiddens) but "
                 "--hiddens is %ld", H, o->hiddens);
        return -1;
    }
    m->num_hiddens = H;
    if (H % m->num_heads != 0) {
        snprintf(err, errlen, "num_hiddens %zu (the rows of W_q.weight) is not divisible by "
                 "num_heads %zu%s", H, m->num_heads, heads_origin);
        *usage = 1;
        return -1;
    }
    p = H / m->num_heads;
    snprintf(why, sizeof why, "num_hiddens × query_size %zu", pr->Dq);
    if (get_weight(sd, "W_q.weight", H, pr->Dq, 0, &m->W_q.weight, why, err, errlen))
        return -1;
    snprintf(why, sizeof why, "num_hiddens × key_size %zu", pr->Dk);
    if (get_weight(sd, "W_k.weight", H, pr->Dk, 0, &m->W_k.weight, why, err, errlen))
        return -1;
    snprintf(why, sizeof why, "num_hiddens × value_size %zu", pr->Dv);
    if (get_weight(sd, "W_v.weight", H, pr->Dv, 0, &m->W_v.weight, why, err, errlen))
        return -1;
    if (get_weight(sd, "W_o.weight", H, H, 0, &m->W_o.weight, "num_hiddens × num_hiddens", err,
                   errlen))
        return -1;
    {
        static const char *const bias_keys[] = {"W_q.bias", "W_k.bias", "W_v.bias", "W_o.bias"};
        linear *ls[] = {&m->W_q, &m->W_k, &m->W_v, &m->W_o};
        for (i = 0; i < 4; i++)
            if (cJSON_GetObjectItemCaseSensitive(sd, bias_keys[i]) &&
                get_weight(sd, bias_keys[i], H, 0, 1, &ls[i]->bias, "num_hiddens", err, errlen))
                return -1;
    }
    has_add = cJSON_GetObjectItemCaseSensitive(sd, "attention.W_q.weight") ||
              cJSON_GetObjectItemCaseSensitive(sd, "attention.W_k.weight") ||
              cJSON_GetObjectItemCaseSensitive(sd, "attention.w_v.weight");
    if (o->score_given && o->score == SCORE_DOT && has_add) {
        snprintf(err, errlen, "$.state_dict: has attention.* weights, which belong to "
                 "--score additive, but --score is dot");
        return -1;
    }
    if (has_add)
        m->score = SCORE_ADDITIVE;
    if (m->score == SCORE_ADDITIVE) {
        size_t A;
        if (!cJSON_GetObjectItemCaseSensitive(sd, "attention.W_q.weight") ||
            !cJSON_GetObjectItemCaseSensitive(sd, "attention.W_k.weight") ||
            !cJSON_GetObjectItemCaseSensitive(sd, "attention.w_v.weight")) {
            snprintf(err, errlen, "$.state_dict: --score additive needs attention.W_q.weight, "
                     "attention.W_k.weight and attention.w_v.weight");
            return -1;
        }
        if (json_get_tensor(cJSON_GetObjectItemCaseSensitive(sd, "attention.W_q.weight"),
                            "$.state_dict[\"attention.W_q.weight\"]", 2, 2, &t, err, errlen))
            return -1;
        A = t.shape[0];
        tensor_free(&t);
        snprintf(why, sizeof why, "additive hiddens × head width %zu", p);
        if (get_weight(sd, "attention.W_q.weight", A, p, 0, &m->a_W_q.weight, why, err, errlen) ||
            get_weight(sd, "attention.W_k.weight", A, p, 0, &m->a_W_k.weight, why, err, errlen) ||
            get_weight(sd, "attention.w_v.weight", 1, A, 0, &m->a_w_v.weight,
                       "1 × additive hiddens", err, errlen))
            return -1;
    }
    return 0;
}

/* Token labels: count must match the axis they label. */
static int load_tokens(const cJSON *root, const char *key, size_t want, char ***out, char *err,
                       size_t errlen)
{
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, key);
    const char **v;
    size_t n;
    char path[32];
    if (!node)
        return 0;
    snprintf(path, sizeof path, "$.%s", key);
    if (json_get_strings(node, path, &v, &n, err, errlen))
        return -1;
    if (n != want) {
        snprintf(err, errlen, "%s: expected %zu labels, got %zu", path, want, n);
        free(v);
        return -1;
    }
    *out = copy_tokens(v, n);
    free(v);
    if (!*out) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return 0;
}

/* "tokens": [[…], […]]: one sentence of Nq labels per example. */
static int load_sentences(const cJSON *node, problem *pr, char *err, size_t errlen)
{
    const char **flat, **row;
    const cJSON *item;
    size_t b = 0, n;
    char path[48];

    if ((size_t)cJSON_GetArraySize(node) != pr->B) {
        snprintf(err, errlen, "$.tokens: expected %zu sentences (one per example), got %d",
                 pr->B, cJSON_GetArraySize(node));
        return -1;
    }
    flat = calloc(pr->B * pr->Nq, sizeof *flat);
    if (!flat) {
        snprintf(err, errlen, "$.tokens: out of memory");
        return -1;
    }
    cJSON_ArrayForEach(item, node)
    {
        snprintf(path, sizeof path, "$.tokens[%zu]", b);
        if (json_get_strings(item, path, &row, &n, err, errlen)) {
            free(flat);
            return -1;
        }
        if (n != pr->Nq) {
            snprintf(err, errlen, "%s: expected %zu labels, got %zu", path, pr->Nq, n);
            free(row);
            free(flat);
            return -1;
        }
        memcpy(flat + b * pr->Nq, row, n * sizeof *row);
        free(row);
        b++;
    }
    pr->query_tokens = copy_tokens(flat, pr->B * pr->Nq);
    free(flat);
    if (!pr->query_tokens) {
        snprintf(err, errlen, "$.tokens: out of memory");
        return -1;
    }
    pr->per_example = 1;
    return 0;
}

static int load_root(problem *pr, const cJSON *root, const problem_opts *o, char *err,
                     size_t errlen, int *usage)
{
    const cJSON *node;
    char a[64], b[64];
    long heads = 0;
    size_t vshape[2];
    const char *heads_origin;

    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "$: expected an object, got %s", json_type_name(root));
        return -1;
    }
    if (check_keys(root, "$", o->self ? top_keys_self : top_keys_cross, err, errlen))
        return -1;

    /* inputs: queries (B, Nq, Dq), keys (B, Nk, Dk), values (B, Nk, Dv) */
    if (o->self) {
        if (!cJSON_GetObjectItemCaseSensitive(root, "X")) {
            snprintf(err, errlen, "$: missing \"X\", the input sequence (batch, n, d)");
            return -1;
        }
        if (get_input(root, "X", &pr->queries, err, errlen))
            return -1;
    } else {
        if (!cJSON_GetObjectItemCaseSensitive(root, "queries")) {
            snprintf(err, errlen, "$: missing \"queries\" (batch, num_queries, query_size)");
            return -1;
        }
        if (get_input(root, "queries", &pr->queries, err, errlen))
            return -1;
        if (cJSON_GetObjectItemCaseSensitive(root, "keys") &&
            get_input(root, "keys", &pr->keys, err, errlen))
            return -1;
        if (cJSON_GetObjectItemCaseSensitive(root, "values") &&
            get_input(root, "values", &pr->values, err, errlen))
            return -1;
        if (pr->values.data && !pr->keys.data) {
            snprintf(err, errlen, "$.values: given without \"keys\" (values pair with keys)");
            return -1;
        }
    }
    pr->B = pr->queries.shape[0];
    pr->Nq = pr->queries.shape[1];
    pr->Dq = pr->queries.shape[2];
    {
        const tensor *k = pr->keys.data ? &pr->keys : &pr->queries;
        const tensor *v = pr->values.data ? &pr->values : k;
        if (k->shape[0] != pr->B) {
            shape_text(a, sizeof a, k);
            shape_text(b, sizeof b, &pr->queries);
            snprintf(err, errlen, "$.keys: expected batch %zu like $.queries %s, got shape %s",
                     pr->B, b, a);
            return -1;
        }
        if (v->shape[0] != pr->B || v->shape[1] != k->shape[1]) {
            shape_text(a, sizeof a, v);
            shape_text(b, sizeof b, k);
            snprintf(err, errlen, "$.values: expected shape (%zu, %zu, value_size) to pair with "
                     "$.keys %s, got %s", pr->B, k->shape[1], b, a);
            return -1;
        }
        pr->Nk = k->shape[1];
        pr->Dk = k->shape[2];
        pr->Dv = v->shape[2];
    }

    /* num_heads: from the file, the option, or the chapter's 5 */
    node = cJSON_GetObjectItemCaseSensitive(root, "num_heads");
    if (node && json_get_count(node, "$.num_heads", 1, MAX_HEADS, &heads, err, errlen))
        return -1;
    if (node && o->heads && o->heads != heads) {
        snprintf(err, errlen, "$.num_heads is %ld but --heads is %ld", heads, o->heads);
        *usage = 1;
        return -1;
    }
    pr->params.num_heads = (size_t)(heads ? heads : o->heads ? o->heads : 5);
    heads_origin = heads ? " ($.num_heads)" : o->heads ? " (--heads)"
                                          : " (the chapter's 5: give $.num_heads or --heads)";
    pr->params.score = o->score_given ? o->score : SCORE_DOT;

    /* valid_lens: (B,) or (B, Nq) */
    node = cJSON_GetObjectItemCaseSensitive(root, "valid_lens");
    if (node && o->valid_lens) {
        snprintf(err, errlen, "$.valid_lens: given in the file and by --valid-lens");
        *usage = 1;
        return -1;
    }
    if (node && !cJSON_IsNull(node)) {
        if (json_get_lens(node, "$.valid_lens", MAX_LEN, &pr->valid_lens, &pr->vl_ndim, vshape,
                          err, errlen))
            return -1;
        if (vshape[0] != pr->B || (pr->vl_ndim == 2 && vshape[1] != pr->Nq)) {
            if (pr->vl_ndim == 1)
                snprintf(err, errlen, "$.valid_lens: expected %zu length%s (one per example) or "
                         "a (%zu, %zu) array, got %zu", pr->B, pr->B == 1 ? "" : "s", pr->B,
                         pr->Nq, vshape[0]);
            else
                snprintf(err, errlen, "$.valid_lens: expected shape (%zu,) or (%zu, %zu), got "
                         "(%zu, %zu)", pr->B, pr->B, pr->Nq, vshape[0], vshape[1]);
            return -1;
        }
    }

    /* the weights */
    node = cJSON_GetObjectItemCaseSensitive(root, "state_dict");
    if (node) {
        if (o->no_proj) {
            snprintf(err, errlen, "$.state_dict: given, but --no-proj asks for identity "
                     "projections");
            *usage = 1;
            return -1;
        }
        if (load_state_dict(pr, node, o, heads_origin, err, errlen, usage))
            return -1;
    } else {
        size_t A;
        pr->params.num_hiddens = (size_t)(o->hiddens ? o->hiddens : (long)pr->Dq);
        if (pr->params.num_hiddens % pr->params.num_heads != 0) {
            snprintf(err, errlen, "num_hiddens %zu (%s) is not divisible by num_heads %zu%s",
                     pr->params.num_hiddens,
                     o->hiddens ? "--hiddens" : o->self ? "the width of $.X" : "the width of $.queries",
                     pr->params.num_heads, heads_origin);
            *usage = 1;
            return -1;
        }
        if (o->no_proj && (pr->Dq != pr->params.num_hiddens || pr->Dk != pr->Dq || pr->Dv != pr->Dq)) {
            snprintf(err, errlen, "--no-proj needs inputs of width num_hiddens %zu, got %zu",
                     pr->params.num_hiddens, pr->Dq);
            *usage = 1;
            return -1;
        }
        A = (size_t)(o->score_hiddens ? o->score_hiddens
                                      : (long)(pr->params.num_hiddens / pr->params.num_heads));
        if (init_params(&pr->params, pr->Dq, pr->Dk, pr->Dv, A, o->bias, o->no_proj, o->seed,
                        err, errlen))
            return -1;
    }

    /* token labels */
    if (o->self) {
        node = cJSON_GetObjectItemCaseSensitive(root, "tokens");
        if (node && cJSON_IsArray(node) && cJSON_IsArray(node->child)) {
            if (load_sentences(node, pr, err, errlen))
                return -1;
        } else if (load_tokens(root, "tokens", pr->Nq, &pr->query_tokens, err, errlen)) {
            return -1;
        }
        pr->key_tokens = pr->query_tokens;
    } else if (load_tokens(root, "query_tokens", pr->Nq, &pr->query_tokens, err, errlen) ||
               load_tokens(root, "key_tokens", pr->Nk, &pr->key_tokens, err, errlen)) {
        return -1;
    }
    return 0;
}

int problem_from_json(problem *pr, const cJSON *root, const char *name, const problem_opts *o,
                      char *err, size_t errlen, int *usage)
{
    char inner[512];

    memset(pr, 0, sizeof *pr);
    pr->self = o->self;
    *usage = 0;
    if (load_root(pr, root, o, inner, sizeof inner, usage)) {
        snprintf(err, errlen, "%s: %s", name, inner);
        problem_free(pr);
        return -1;
    }
    if (o->valid_lens) { /* --valid-lens with a file that has none */
        size_t n = o->vl_shape[0] * o->vl_shape[1];
        if (o->vl_shape[0] != pr->B || (o->vl_ndim == 2 && o->vl_shape[1] != pr->Nq)) {
            snprintf(err, errlen, "--valid-lens: expected %zu lengths (one per example of %s), "
                     "got %zu", pr->B, name, o->vl_shape[0]);
            *usage = 1;
            problem_free(pr);
            return -1;
        }
        pr->vl_ndim = o->vl_ndim;
        pr->valid_lens = malloc(n * sizeof(long));
        if (!pr->valid_lens) {
            snprintf(err, errlen, "out of memory");
            problem_free(pr);
            return -1;
        }
        memcpy(pr->valid_lens, o->valid_lens, n * sizeof(long));
    }
    return 0;
}

int problem_load(problem *pr, const char *path, const problem_opts *o, char *err,
                 size_t errlen, int *usage)
{
    cJSON *root;
    int status;

    memset(pr, 0, sizeof *pr);
    *usage = 0;
    /* cJSON needs roughly 8 bytes of memory per byte of number text */
    root = json_read_file(path, o->max_mem / 8, err, errlen);
    if (!root)
        return -1;
    status = problem_from_json(pr, root, path, o, err, errlen, usage);
    cJSON_Delete(root);
    return status;
}

/* ---- random inputs --------------------------------------------------- */

void token_embedding(float *x, size_t D, const char *token)
{
    /* FNV-1a of the text seeds the stream: same token, same vector */
    unsigned long long h = 14695981039346656037ULL;
    const unsigned char *s = (const unsigned char *)token;
    size_t i;
    rng r;
    for (; *s; s++) {
        h ^= *s;
        h *= 1099511628211ULL;
    }
    rng_seed(&r, h);
    for (i = 0; i < D; i++)
        x[i] = (float)rng_normal(&r);
}

/* Split "a b c | d e" into sentences of whitespace-separated tokens. On
 * success *words holds the B·N labels (row-major, "<pad>" after a short
 * sentence) and lens the B lengths. */
static int split_sentences(const char *text, size_t *B, size_t *N, char ***words, long **lens,
                           char *err, size_t errlen)
{
    const char *p;
    size_t b = 0, n = 0, maxn = 0, nsent = 1, i, t;
    const char **flat = NULL; /* (B, N) pointers into copies */
    char *buf = NULL, *tok, *save = NULL, *sent, *save_s = NULL;
    int status = -1;

    for (p = text; *p; p++)
        if (*p == '|')
            nsent++;
    buf = malloc(strlen(text) + 1);
    *lens = calloc(nsent, sizeof **lens);
    if (!buf || !*lens)
        goto oom;
    /* first pass: lengths */
    strcpy(buf, text);
    for (sent = strtok_r(buf, "|", &save_s); sent || b < nsent; sent = strtok_r(NULL, "|", &save_s)) {
        n = 0;
        if (sent)
            for (tok = strtok_r(sent, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
                n++;
        if (n == 0) {
            snprintf(err, errlen, "--tokens: sentence %zu has no tokens", b + 1);
            goto fail;
        }
        (*lens)[b++] = (long)n;
        if (n > maxn)
            maxn = n;
        if (!sent || b == nsent)
            break;
    }
    if (b != nsent) {
        snprintf(err, errlen, "--tokens: sentence %zu has no tokens", b + 1);
        goto fail;
    }
    if (size_mul(nsent, maxn, &t) != 0 || (flat = calloc(t, sizeof *flat)) == NULL)
        goto oom;
    /* second pass: the labels */
    strcpy(buf, text);
    b = 0;
    for (sent = strtok_r(buf, "|", &save_s); sent && b < nsent; sent = strtok_r(NULL, "|", &save_s)) {
        i = 0;
        for (tok = strtok_r(sent, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
            flat[b * maxn + i++] = tok;
        for (; i < maxn; i++)
            flat[b * maxn + i] = "<pad>";
        b++;
    }
    *words = copy_tokens(flat, nsent * maxn);
    if (!*words)
        goto oom;
    *B = nsent;
    *N = maxn;
    status = 0;
    goto done;
oom:
    snprintf(err, errlen, "--tokens: out of memory");
fail:
    free(*lens);
    *lens = NULL;
done:
    free(flat);
    free(buf);
    return status;
}

int problem_random(problem *pr, const problem_opts *o, char *err, size_t errlen, int *usage)
{
    size_t B, Nq, Nk, H, NH, A, i, shape[3], bytes, total = 0;
    char **words = NULL;
    long *lens = NULL;
    int overflow = 0;
    rng r;

    memset(pr, 0, sizeof *pr);
    pr->self = o->self;
    *usage = 1; /* until the options are known to fit together */
    B = (size_t)(o->batch ? o->batch : 2);
    Nq = (size_t)(o->queries ? o->queries : 4);
    Nk = o->self ? Nq : (size_t)(o->kv ? o->kv : 6);
    H = (size_t)(o->hiddens ? o->hiddens : 100);
    NH = (size_t)(o->heads ? o->heads : 5);
    if (o->tokens) {
        size_t tb, tn;
        if (split_sentences(o->tokens, &tb, &tn, &words, &lens, err, errlen))
            return -1;
        if (o->batch && (size_t)o->batch != tb) {
            snprintf(err, errlen, "--batch %ld disagrees with --tokens, which has %zu "
                     "sentence%s", o->batch, tb, tb == 1 ? "" : "s");
            goto fail;
        }
        if (o->queries && (size_t)o->queries != tn) {
            snprintf(err, errlen, "--queries %ld disagrees with --tokens, whose longest "
                     "sentence has %zu tokens", o->queries, tn);
            goto fail;
        }
        B = tb;
        Nq = Nk = tn;
    }
    pr->B = B;
    pr->Nq = Nq;
    pr->Nk = Nk;
    pr->Dq = o->self ? H : (size_t)(o->query_size ? o->query_size : (long)H);
    pr->Dk = o->self ? H : (size_t)(o->key_size ? o->key_size : (long)H);
    pr->Dv = o->self ? H : (size_t)(o->value_size ? o->value_size : (long)H);
    if (H % NH != 0) {
        snprintf(err, errlen, "--hiddens %zu is not divisible by --heads %zu", H, NH);
        goto fail;
    }
    A = (size_t)(o->score_hiddens ? o->score_hiddens : (long)(H / NH));

    /* memory: inputs and weights, before allocating any */
    overflow |= tensor_bytes(3, (size_t[]){B, Nq, pr->Dq}, &bytes) || size_add(total, bytes, &total);
    if (!o->self) {
        overflow |= tensor_bytes(3, (size_t[]){B, Nk, pr->Dk}, &bytes) || size_add(total, bytes, &total);
        overflow |= tensor_bytes(3, (size_t[]){B, Nk, pr->Dv}, &bytes) || size_add(total, bytes, &total);
    }
    overflow |= tensor_bytes(2, (size_t[]){H, pr->Dq + pr->Dk + pr->Dv + H}, &bytes) ||
                size_add(total, bytes, &total);
    *usage = 0; /* from here on, failures are run-time errors */
    if (overflow || total > o->max_mem) {
        char need[32], have[32];
        format_bytes(have, sizeof have, (double)o->max_mem);
        format_bytes(need, sizeof need, overflow ? 1e30 : (double)total);
        snprintf(err, errlen, "the inputs and weights need %s%s, more than --max-mem %s",
                 overflow ? "more than this machine can address" : "about ",
                 overflow ? "" : need, have);
        goto fail;
    }

    pr->params.num_heads = NH;
    pr->params.num_hiddens = H;
    pr->params.score = o->score_given ? o->score : SCORE_DOT;
    if (init_params(&pr->params, pr->Dq, pr->Dk, pr->Dv, A, o->bias, o->no_proj, o->seed, err,
                    errlen))
        goto fail;

    /* inputs: ones (the chapter's cells), standard normal, or token embeddings */
    shape[0] = B;
    shape[1] = Nq;
    shape[2] = pr->Dq;
    if (tensor_alloc(&pr->queries, 3, shape, err, errlen))
        goto fail;
    if (!o->self) {
        shape[1] = Nk;
        shape[2] = pr->Dk;
        if (tensor_alloc(&pr->keys, 3, shape, err, errlen))
            goto fail;
        shape[2] = pr->Dv;
        if (tensor_alloc(&pr->values, 3, shape, err, errlen))
            goto fail;
    }
    rng_seed(&r, o->seed ^ 0x5eed5eed5eed5eedULL);
    {
        tensor *in[3] = {&pr->queries, &pr->keys, &pr->values};
        for (i = 0; i < 3; i++) {
            size_t e;
            if (!in[i]->data)
                continue;
            for (e = 0; e < in[i]->size; e++)
                in[i]->data[e] = o->fill_random ? (float)rng_normal(&r) : 1.0f;
        }
    }
    if (words) {
        size_t b, t;
        for (b = 0; b < B; b++)
            for (t = 0; t < Nq; t++) {
                float *x = pr->queries.data + (b * Nq + t) * pr->Dq;
                if ((long)t < lens[b])
                    token_embedding(x, pr->Dq, words[b * Nq + t]);
                else
                    memset(x, 0, pr->Dq * sizeof *x); /* padding: zeros */
            }
        pr->query_tokens = words;
        pr->key_tokens = words;
        pr->per_example = 1;
        words = NULL;
    }

    /* valid_lens: --valid-lens, the sentences' lengths, or the chapter's 3, 2 */
    if (o->valid_lens) {
        size_t n = o->vl_shape[0] * o->vl_shape[1];
        if (o->vl_shape[0] != B || (o->vl_ndim == 2 && o->vl_shape[1] != Nq)) {
            *usage = 1;
            if (o->vl_ndim == 1)
                snprintf(err, errlen, "--valid-lens: expected %zu length%s (one per example), "
                         "got %zu", B, B == 1 ? "" : "s", o->vl_shape[0]);
            else
                snprintf(err, errlen, "--valid-lens: expected %zu rows of %zu (one per example "
                         "and query), got %zu rows of %zu", B, Nq, o->vl_shape[0], o->vl_shape[1]);
            goto fail;
        }
        pr->valid_lens = malloc(n * sizeof(long));
        if (!pr->valid_lens)
            goto oom;
        memcpy(pr->valid_lens, o->valid_lens, n * sizeof(long));
        pr->vl_ndim = o->vl_ndim;
    } else if (lens) {
        int ragged = 0;
        for (i = 0; i < B; i++)
            ragged |= (size_t)lens[i] != Nq;
        if (ragged && !o->no_valid_lens) {
            pr->valid_lens = lens;
            pr->vl_ndim = 1;
            lens = NULL;
        }
    } else if (!o->batch && !o->no_valid_lens) {
        pr->valid_lens = malloc(2 * sizeof(long));
        if (!pr->valid_lens)
            goto oom;
        pr->valid_lens[0] = 3;
        pr->valid_lens[1] = 2;
        pr->vl_ndim = 1;
    }
    free(lens);
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    free_tokens(words);
    free(lens);
    problem_free(pr);
    return -1;
}

int problem_run_bytes(const problem *pr, int weights, int explain, size_t *bytes)
{
    const size_t H = pr->params.num_hiddens, NH = pr->params.num_heads;
    const size_t N = pr->Nq > pr->Nk ? pr->Nq : pr->Nk;
    size_t total = 0, b;
    /* Q, K, V, the heads copied out, concat, output: at most 8 (B, N, H) */
    if (tensor_bytes(3, (size_t[]){pr->B, N, H}, &b) || size_mul(b, 8, &b) ||
        size_add(total, b, &total))
        return -1;
    /* each thread's scores: 64 query rows × Nk (or × 256 streaming) */
    if (tensor_bytes(2, (size_t[]){64 * 16, weights ? pr->Nk : 256}, &b) ||
        size_add(total, b, &total))
        return -1;
    /* the attention weights (B, NH, Nq, Nk), and three more with --explain */
    if (weights && (tensor_bytes(4, (size_t[]){pr->B, NH, pr->Nq, pr->Nk}, &b) ||
                    size_mul(b, explain ? 4 : 1, &b) || size_add(total, b, &total)))
        return -1;
    *bytes = total;
    return 0;
}

/* ---- JSON output ----------------------------------------------------- */

static void write_lens(FILE *f, const problem *pr)
{
    size_t i, j, cols = pr->vl_ndim == 2 ? pr->Nq : 1;
    if (!pr->valid_lens) {
        fputs("null", f);
        return;
    }
    fputc('[', f);
    for (i = 0; i < pr->B; i++) {
        if (i)
            fputs(", ", f);
        if (pr->vl_ndim == 2)
            fputc('[', f);
        for (j = 0; j < cols; j++)
            fprintf(f, "%s%ld", j ? ", " : "", pr->valid_lens[i * cols + j]);
        if (pr->vl_ndim == 2)
            fputc(']', f);
    }
    fputc(']', f);
}

static void write_tokens(FILE *f, const char *key, char **tokens, size_t n)
{
    size_t i;
    fprintf(f, ",\n  \"%s\": [", key);
    for (i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        json_write_string(f, tokens[i]);
    }
    fputc(']', f);
}

static void write_linear(FILE *f, const char *name, const linear *l, int *first)
{
    if (!l->weight.data)
        return;
    fprintf(f, "%s\n    \"%s.weight\": ", *first ? "" : ",", name);
    json_write_tensor(f, l->weight.data, l->weight.ndim, l->weight.shape, 4);
    *first = 0;
    if (l->bias.data) {
        fprintf(f, ",\n    \"%s.bias\": ", name);
        json_write_tensor(f, l->bias.data, 1, l->bias.shape, 4);
    }
}

void problem_write_json(FILE *f, const problem *pr, const char *command, const float *out,
                        const float *weights)
{
    const mha_params *m = &pr->params;
    size_t oshape[3] = {pr->B, pr->Nq, m->num_hiddens};
    size_t wshape[4] = {pr->B, m->num_heads, pr->Nq, pr->Nk};
    int first = 1;

    fputs("{\n  \"command\": ", f);
    json_write_string(f, command);
    fprintf(f, ",\n  \"shape\": [%zu, %zu, %zu],\n  \"output\": ", oshape[0], oshape[1],
            oshape[2]);
    json_write_tensor(f, out, 3, oshape, 2);
    fputs(",\n  \"attention_weights\": ", f);
    if (weights)
        json_write_tensor(f, weights, 4, wshape, 2);
    else
        fputs("null", f);
    fputs(",\n  \"valid_lens\": ", f);
    write_lens(f, pr);
    /* the inputs, so that this file is also a complete input */
    if (pr->self) {
        fputs(",\n  \"X\": ", f);
        json_write_tensor(f, pr->queries.data, 3, pr->queries.shape, 2);
    } else {
        size_t kshape[3] = {pr->B, pr->Nk, pr->Dk}, vshape[3] = {pr->B, pr->Nk, pr->Dv};
        fputs(",\n  \"queries\": ", f);
        json_write_tensor(f, pr->queries.data, 3, pr->queries.shape, 2);
        fputs(",\n  \"keys\": ", f);
        json_write_tensor(f, problem_keys(pr), 3, kshape, 2);
        fputs(",\n  \"values\": ", f);
        json_write_tensor(f, problem_values(pr), 3, vshape, 2);
    }
    fprintf(f, ",\n  \"num_heads\": %zu", m->num_heads);
    if (pr->self && pr->query_tokens && pr->per_example) {
        size_t b;
        fputs(",\n  \"tokens\": [", f);
        for (b = 0; b < pr->B; b++) {
            size_t t;
            fputs(b ? ", [" : "[", f);
            for (t = 0; t < pr->Nq; t++) {
                if (t)
                    fputs(", ", f);
                json_write_string(f, pr->query_tokens[b * pr->Nq + t]);
            }
            fputc(']', f);
        }
        fputc(']', f);
    } else if (pr->self && pr->query_tokens) {
        write_tokens(f, "tokens", pr->query_tokens, pr->Nq);
    } else {
        if (pr->query_tokens)
            write_tokens(f, "query_tokens", pr->query_tokens, pr->Nq);
        if (pr->key_tokens)
            write_tokens(f, "key_tokens", pr->key_tokens, pr->Nk);
    }
    fputs(",\n  \"state_dict\": {", f);
    write_linear(f, "W_q", &m->W_q, &first);
    write_linear(f, "W_k", &m->W_k, &first);
    write_linear(f, "W_v", &m->W_v, &first);
    write_linear(f, "W_o", &m->W_o, &first);
    if (m->score == SCORE_ADDITIVE) {
        write_linear(f, "attention.W_q", &m->a_W_q, &first);
        write_linear(f, "attention.W_k", &m->a_W_k, &first);
        write_linear(f, "attention.w_v", &m->a_w_v, &first);
    }
    fputs("\n  }\n}\n", f);
}

int problem_split_tokens(const char *text, size_t *B, size_t *N, char ***words, long **lens,
                         char *err, size_t errlen)
{
    return split_sentences(text, B, N, words, lens, err, errlen);
}
