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
#include "json_writer.h"
#include "rng.h"
#include "utf8.h"
#include "i18n.h"

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
    free(pr->stack_weights);
    free(pr->stack_output);
    pr->stack_weights = pr->stack_output = NULL;
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
    size_t bytes = n * sizeof(char *);
    for (size_t i = 0; i < n; i++)
        if (size_add(bytes, strlen(src[i]) + 1, &bytes) != 0)
            return NULL;
    char **dst = malloc(bytes);
    if (!dst)
        return NULL;
    char *p = (char *)(dst + n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(src[i]) + 1;
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
    size_t shape[2] = {out, in};
    double bound = 1.0 / sqrt((double)in);
    if (tensor_alloc(&l->weight, 2, shape, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < l->weight.size; i++)
        l->weight.data[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
    if (bias) {
        if (tensor_alloc(&l->bias, 1, shape, err, errlen) != 0)
            return -1;
        for (size_t i = 0; i < out; i++)
            l->bias.data[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
    }
    return 0;
}

/* The identity as a (n, n) Linear without bias (--no-proj). */
static int identity_linear(linear *l, size_t n, char *err, size_t errlen)
{
    size_t shape[2] = {n, n};
    if (tensor_alloc(&l->weight, 2, shape, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
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
    int plain = (*key >= 'a' && *key <= 'z') || (*key >= 'A' && *key <= 'Z') || *key == '_';
    for (const char *c = key; *c && plain; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                (*c >= '0' && *c <= '9') || *c == '_';
    snprintf(buf, n, plain ? ".%s" : "[\"%s\"]", key);
    return buf;
}

/* Every key of obj is known and appears once. */
static int check_keys(const cJSON *obj, const char *path, const char *const *known, char *err,
                      size_t errlen)
{
    const cJSON *a;
    char kp[160];
    cJSON_ArrayForEach(a, obj)
    {
        if (!in_list(a->string, known)) {
            char list[400] = "";
            for (const char *const *k = known; *k; k++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         k == known ? "" : ", ", *k);
            snprintf(err, errlen, _("%s%s: unknown key (known: %s)"), path,
                     key_path(a->string, kp, sizeof kp), list);
            return -1;
        }
        for (const cJSON *b = a->next; b; b = b->next)
            if (strcmp(a->string, b->string) == 0) {
                snprintf(err, errlen, _("%s%s: the key appears twice"), path,
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
        snprintf(err, errlen, _("%s: expected shape %s (%s), got %s"), path, want, why, got);
        tensor_free(t);
        return -1;
    }
    return 0;
}

/* The rows of a 2-D weight of the state_dict (the head count of W_q, the
 * additive hidden size of attention.W_q), read before its full check. */
static int weight_rows(const cJSON *sd, const char *key, size_t *rows, char *err,
                       size_t errlen)
{
    char path[96];
    tensor t = {0};
    snprintf(path, sizeof path, "$.state_dict[\"%s\"]", key);
    if (json_get_tensor(cJSON_GetObjectItemCaseSensitive(sd, key), path, 2, 2, &t, err, errlen))
        return -1;
    *rows = t.shape[0];
    tensor_free(&t);
    return 0;
}

/* The state_dict's keys, and num_hiddens from W_q's rows against --hiddens
 * and num_heads. */
static int state_dict_hiddens(problem *pr, const cJSON *sd, const problem_opts *o,
                              const char *heads_origin, char *err, size_t errlen, int *usage)
{
    static const char *const need[] = {"W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"};
    size_t H;

    if (!cJSON_IsObject(sd)) {
        snprintf(err, errlen, _("$.state_dict: expected an object, got %s"), json_type_name(sd));
        return -1;
    }
    if (check_keys(sd, "$.state_dict", sd_keys, err, errlen))
        return -1;
    for (size_t i = 0; i < 4; i++)
        if (!cJSON_GetObjectItemCaseSensitive(sd, need[i])) {
            snprintf(err, errlen, _("$.state_dict: missing \"%s\" (W_q, W_k, W_v and W_o "
                     "weights are all needed)"), need[i]);
            return -1;
        }
    if (weight_rows(sd, "W_q.weight", &H, err, errlen))
        return -1;
    if (o->hiddens && (size_t)o->hiddens != H) {
        snprintf(err, errlen, _("$.state_dict[\"W_q.weight\"]: has %zu rows (num_hiddens) but "
                 "--hiddens is %ld"), H, o->hiddens);
        return -1;
    }
    pr->params.num_hiddens = H;
    if (H % pr->params.num_heads != 0) {
        snprintf(err, errlen, _("num_hiddens %zu (the rows of W_q.weight) is not divisible by "
                 "num_heads %zu%s"), H, pr->params.num_heads, heads_origin);
        *usage = 1;
        return -1;
    }
    return 0;
}

/* W_q, W_k, W_v, W_o: (H, Dq), (H, Dk), (H, Dv), (H, H), and their (H,)
 * biases when given. */
static int load_projections(problem *pr, const cJSON *sd, char *err, size_t errlen)
{
    static const char *const names[] = {"W_q", "W_k", "W_v", "W_o"};
    static const char *const sizes[] = {"query_size", "key_size", "value_size", NULL};
    mha_params *m = &pr->params;
    linear *ls[] = {&m->W_q, &m->W_k, &m->W_v, &m->W_o};
    const size_t H = m->num_hiddens, cols[] = {pr->Dq, pr->Dk, pr->Dv, H};
    char key[32], why[96];

    for (size_t i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "%s.weight", names[i]);
        if (sizes[i])
            snprintf(why, sizeof why, "num_hiddens × %s %zu", sizes[i], cols[i]);
        else
            snprintf(why, sizeof why, "num_hiddens × num_hiddens");
        if (get_weight(sd, key, H, cols[i], 0, &ls[i]->weight, why, err, errlen))
            return -1;
    }
    for (size_t i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "%s.bias", names[i]);
        if (cJSON_GetObjectItemCaseSensitive(sd, key) &&
            get_weight(sd, key, H, 0, 1, &ls[i]->bias, "num_hiddens", err, errlen))
            return -1;
    }
    return 0;
}

/* d2l's additive scoring: attention.W_q, attention.W_k (A, p) and
 * attention.w_v (1, A), p the head width; they make the score additive. */
static int load_additive(problem *pr, const cJSON *sd, const problem_opts *o, char *err,
                         size_t errlen)
{
    mha_params *m = &pr->params;
    const size_t p = m->num_hiddens / m->num_heads;
    const int has_q = cJSON_GetObjectItemCaseSensitive(sd, "attention.W_q.weight") != NULL,
              has_k = cJSON_GetObjectItemCaseSensitive(sd, "attention.W_k.weight") != NULL,
              has_v = cJSON_GetObjectItemCaseSensitive(sd, "attention.w_v.weight") != NULL;
    char why[96];
    size_t A;

    if (o->score_given && o->score == SCORE_DOT && (has_q || has_k || has_v)) {
        snprintf(err, errlen, "%s", _("$.state_dict: has attention.* weights, which belong to "
                 "--score additive, but --score is dot"));
        return -1;
    }
    if (has_q || has_k || has_v)
        m->score = SCORE_ADDITIVE;
    if (m->score != SCORE_ADDITIVE)
        return 0;
    if (!has_q || !has_k || !has_v) {
        snprintf(err, errlen, "%s", _("$.state_dict: --score additive needs attention.W_q.weight, "
                 "attention.W_k.weight and attention.w_v.weight"));
        return -1;
    }
    if (weight_rows(sd, "attention.W_q.weight", &A, err, errlen))
        return -1;
    snprintf(why, sizeof why, "additive hiddens × head width %zu", p);
    if (get_weight(sd, "attention.W_q.weight", A, p, 0, &m->a_W_q.weight, why, err, errlen) ||
        get_weight(sd, "attention.W_k.weight", A, p, 0, &m->a_W_k.weight, why, err, errlen) ||
        get_weight(sd, "attention.w_v.weight", 1, A, 0, &m->a_w_v.weight,
                   "1 × additive hiddens", err, errlen))
        return -1;
    return 0;
}

/* The state_dict: every weight's shape against the inputs and the others. */
static int load_state_dict(problem *pr, const cJSON *sd, const problem_opts *o,
                           const char *heads_origin, char *err, size_t errlen, int *usage)
{
    if (state_dict_hiddens(pr, sd, o, heads_origin, err, errlen, usage) ||
        load_projections(pr, sd, err, errlen) || load_additive(pr, sd, o, err, errlen))
        return -1;
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
        snprintf(err, errlen, _("%s: expected %zu labels, got %zu"), path, want, n);
        free(v);
        return -1;
    }
    *out = copy_tokens(v, n);
    free(v);
    if (!*out) {
        snprintf(err, errlen, _("%s: out of memory"), path);
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
        snprintf(err, errlen, _("$.tokens: expected %zu sentences (one per example), got %d"),
                 pr->B, cJSON_GetArraySize(node));
        return -1;
    }
    flat = calloc(pr->B * pr->Nq, sizeof *flat);
    if (!flat) {
        snprintf(err, errlen, "%s", _("$.tokens: out of memory"));
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
            snprintf(err, errlen, _("%s: expected %zu labels, got %zu"), path, pr->Nq, n);
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
        snprintf(err, errlen, "%s", _("$.tokens: out of memory"));
        return -1;
    }
    pr->per_example = 1;
    return 0;
}

/* The inputs: X (B, N, D), or queries (B, Nq, Dq) with optional keys
 * (B, Nk, Dk) and values (B, Nk, Dv), each (N, D) read as batch 1. */
static int load_inputs(problem *pr, const cJSON *root, const problem_opts *o, char *err,
                       size_t errlen)
{
    if (o->self) {
        if (!cJSON_GetObjectItemCaseSensitive(root, "X")) {
            snprintf(err, errlen, "%s", _("$: missing \"X\", the input sequence (batch, n, d)"));
            return -1;
        }
        return get_input(root, "X", &pr->queries, err, errlen);
    }
    if (!cJSON_GetObjectItemCaseSensitive(root, "queries")) {
        snprintf(err, errlen, "%s", _("$: missing \"queries\" (batch, num_queries, query_size)"));
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
        snprintf(err, errlen, "%s", _("$.values: given without \"keys\" (values pair with keys)"));
        return -1;
    }
    return 0;
}

/* B, Nq, Dq, Nk, Dk, Dv from the inputs, the keys and values checked
 * against the queries and each other (absent keys are the queries, absent
 * values the keys). */
static int input_sizes(problem *pr, char *err, size_t errlen)
{
    const tensor *k = pr->keys.data ? &pr->keys : &pr->queries;
    const tensor *v = pr->values.data ? &pr->values : k;
    char a[64], b[64];

    pr->B = pr->queries.shape[0];
    pr->Nq = pr->queries.shape[1];
    pr->Dq = pr->queries.shape[2];
    if (k->shape[0] != pr->B) {
        shape_text(a, sizeof a, k);
        shape_text(b, sizeof b, &pr->queries);
        snprintf(err, errlen, _("$.keys: expected batch %zu like $.queries %s, got shape %s"),
                 pr->B, b, a);
        return -1;
    }
    if (v->shape[0] != pr->B || v->shape[1] != k->shape[1]) {
        shape_text(a, sizeof a, v);
        shape_text(b, sizeof b, k);
        snprintf(err, errlen, _("$.values: expected shape (%zu, %zu, value_size) to pair with "
                 "$.keys %s, got %s"), pr->B, k->shape[1], b, a);
        return -1;
    }
    pr->Nk = k->shape[1];
    pr->Dk = k->shape[2];
    pr->Dv = v->shape[2];
    return 0;
}

/* num_heads: from the file, the option, or the chapter's 5; *origin says
 * which, for messages. */
static int load_heads(problem *pr, const cJSON *root, const problem_opts *o,
                      const char **origin, char *err, size_t errlen, int *usage)
{
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, "num_heads");
    long heads = 0;
    if (node && json_get_count(node, "$.num_heads", 1, MAX_HEADS, &heads, err, errlen))
        return -1;
    if (node && o->heads && o->heads != heads) {
        snprintf(err, errlen, _("$.num_heads is %ld but --heads is %ld"), heads, o->heads);
        *usage = 1;
        return -1;
    }
    pr->params.num_heads = (size_t)(heads ? heads : o->heads ? o->heads : 5);
    *origin = heads ? " ($.num_heads)" : o->heads ? " (--heads)"
                                      : " (the chapter's 5: give $.num_heads or --heads)";
    return 0;
}

/* valid_lens: (B,) or (B, Nq), or null; not both in the file and as
 * --valid-lens. */
static int load_lens(problem *pr, const cJSON *root, const problem_opts *o, char *err,
                     size_t errlen, int *usage)
{
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, "valid_lens");
    size_t vshape[2];
    if (node && o->valid_lens) {
        snprintf(err, errlen, "%s", _("$.valid_lens: given in the file and by --valid-lens"));
        *usage = 1;
        return -1;
    }
    if (!node || cJSON_IsNull(node))
        return 0;
    if (json_get_lens(node, "$.valid_lens", MAX_LEN, &pr->valid_lens, &pr->vl_ndim, vshape,
                      err, errlen))
        return -1;
    if (vshape[0] == pr->B && (pr->vl_ndim == 1 || vshape[1] == pr->Nq))
        return 0;
    if (pr->vl_ndim == 1)
        snprintf(err, errlen,
                 i18n_plural("$.valid_lens: expected %zu length (one per example) or a (%zu, %zu) "
                             "array, got %zu",
                             "$.valid_lens: expected %zu lengths (one per example) or a (%zu, %zu) "
                             "array, got %zu", pr->B),
                 pr->B, pr->B, pr->Nq, vshape[0]);
    else
        snprintf(err, errlen, _("$.valid_lens: expected shape (%zu,) or (%zu, %zu), got "
                 "(%zu, %zu)"), pr->B, pr->B, pr->Nq, vshape[0], vshape[1]);
    return -1;
}

/* Without a state_dict: random weights (or identities with --no-proj) of
 * num_hiddens = --hiddens or the input width. */
static int init_weights(problem *pr, const problem_opts *o, const char *heads_origin,
                        char *err, size_t errlen, int *usage)
{
    mha_params *m = &pr->params;
    size_t A;
    m->num_hiddens = (size_t)(o->hiddens ? o->hiddens : (long)pr->Dq);
    if (m->num_hiddens % m->num_heads != 0) {
        snprintf(err, errlen, _("num_hiddens %zu (%s) is not divisible by num_heads %zu%s"),
                 m->num_hiddens,
                 o->hiddens ? "--hiddens" : o->self ? "the width of $.X" : "the width of $.queries",
                 m->num_heads, heads_origin);
        *usage = 1;
        return -1;
    }
    if (o->no_proj && (pr->Dq != m->num_hiddens || pr->Dk != pr->Dq || pr->Dv != pr->Dq)) {
        snprintf(err, errlen, _("--no-proj needs inputs of width num_hiddens %zu, got %zu"),
                 m->num_hiddens, pr->Dq);
        *usage = 1;
        return -1;
    }
    A = (size_t)(o->score_hiddens ? o->score_hiddens : (long)(m->num_hiddens / m->num_heads));
    return init_params(m, pr->Dq, pr->Dk, pr->Dv, A, o->bias, o->no_proj, o->seed, err, errlen);
}

/* Token labels: tokens (Nq,) or one sentence per example for self-attention,
 * query_tokens (Nq,) and key_tokens (Nk,) otherwise. */
static int load_labels(problem *pr, const cJSON *root, const problem_opts *o, char *err,
                       size_t errlen)
{
    if (o->self) {
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, "tokens");
        if (node && cJSON_IsArray(node) && cJSON_IsArray(node->child)) {
            if (load_sentences(node, pr, err, errlen))
                return -1;
        } else if (load_tokens(root, "tokens", pr->Nq, &pr->query_tokens, err, errlen)) {
            return -1;
        }
        pr->key_tokens = pr->query_tokens;
        return 0;
    }
    if (load_tokens(root, "query_tokens", pr->Nq, &pr->query_tokens, err, errlen) ||
        load_tokens(root, "key_tokens", pr->Nk, &pr->key_tokens, err, errlen))
        return -1;
    return 0;
}

static int load_root(problem *pr, const cJSON *root, const problem_opts *o, char *err,
                     size_t errlen, int *usage)
{
    const cJSON *sd;
    const char *heads_origin;

    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, _("$: expected an object, got %s"), json_type_name(root));
        return -1;
    }
    sd = cJSON_GetObjectItemCaseSensitive(root, "state_dict");
    if (check_keys(root, "$", o->self ? top_keys_self : top_keys_cross, err, errlen) ||
        load_inputs(pr, root, o, err, errlen) || input_sizes(pr, err, errlen) ||
        load_heads(pr, root, o, &heads_origin, err, errlen, usage))
        return -1;
    pr->params.score = o->score_given ? o->score : SCORE_DOT;
    if (load_lens(pr, root, o, err, errlen, usage))
        return -1;
    /* the weights: from the file, or drawn */
    if (sd && o->no_proj) {
        snprintf(err, errlen, "%s", _("$.state_dict: given, but --no-proj asks for identity "
                 "projections"));
        *usage = 1;
        return -1;
    }
    if (sd ? load_state_dict(pr, sd, o, heads_origin, err, errlen, usage)
           : init_weights(pr, o, heads_origin, err, errlen, usage))
        return -1;
    return load_labels(pr, root, o, err, errlen);
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
            snprintf(err, errlen, _("--valid-lens: expected %zu lengths (one per example of %s), "
                     "got %zu"), pr->B, name, o->vl_shape[0]);
            *usage = 1;
            problem_free(pr);
            return -1;
        }
        pr->vl_ndim = o->vl_ndim;
        pr->valid_lens = malloc(n * sizeof(long));
        if (!pr->valid_lens) {
            snprintf(err, errlen, "%s", _("out of memory"));
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
    rng r;
    for (; *s; s++) {
        h ^= *s;
        h *= 1099511628211ULL;
    }
    rng_seed(&r, h);
    for (size_t i = 0; i < D; i++)
        x[i] = (float)rng_normal(&r);
}

/* 1 when [a, b) is one word of Chinese or Japanese: no space in it, at
 * least two characters, every one CJK (utf8_is_cjk). */
static int cjk_run(const char *a, const char *b)
{
    size_t n = 0;
    while (a < b) {
        uint32_t cp = utf8_next(&a);
        if (cp == 0 || a > b || !utf8_is_cjk(cp))
            return 0;
        n++;
    }
    return n >= 2;
}

/* text with a space after every character of each sentence that is one
 * unspaced run of CJK ("我爱北京 | a b" → "我 爱 北 京 | a b"): Chinese and
 * Japanese do not space their words, and a learner typing 我爱北京 means
 * its characters as the tokens. Other text is copied as it is. NULL when
 * out of memory. */
static char *space_cjk(const char *text)
{
    size_t len = strlen(text), cap;
    char *out, *o;
    /* at most one space a byte, and the NUL */
    if (size_mul(len, 2, &cap) != 0 || size_add(cap, 1, &cap) != 0 || !(out = malloc(cap)))
        return NULL;
    o = out;
    for (const char *sent = text;;) {
        const char *end = sent + strcspn(sent, "|");
        const char *a = sent, *b = end;
        while (a < b && strchr(" \t\n", *a))
            a++;
        while (b > a && strchr(" \t\n", b[-1]))
            b--;
        if (cjk_run(a, b)) {
            /* each character, then a space */
            for (const char *p = a; p < b; *o++ = ' ') {
                const char *c = p;
                (void)utf8_next(&p);
                memcpy(o, c, (size_t)(p - c));
                o += p - c;
            }
        } else {
            memcpy(o, sent, (size_t)(end - sent));
            o += end - sent;
        }
        if (*end == '\0')
            break;
        *o++ = '|';
        sent = end + 1;
    }
    *o = '\0';
    return out;
}

/* Split "a b c | d e" into sentences of whitespace-separated tokens. On
 * success *words holds the B·N labels (row-major, "<pad>" after a short
 * sentence) and lens the B lengths. */
static int split_spaced(const char *text, size_t *B, size_t *N, char ***words, long **lens,
                        char *err, size_t errlen)
{
    size_t b = 0, n = 0, maxn = 0, nsent = 1, i, t;
    const char **flat = NULL; /* (B, N) pointers into copies */
    char *buf = NULL, *tok, *save = NULL, *sent, *save_s = NULL;
    int status = -1;

    for (const char *p = text; *p; p++)
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
            snprintf(err, errlen, _("--tokens: sentence %zu has no tokens"), b + 1);
            goto fail;
        }
        (*lens)[b++] = (long)n;
        if (n > maxn)
            maxn = n;
        if (!sent || b == nsent)
            break;
    }
    if (b != nsent) {
        snprintf(err, errlen, _("--tokens: sentence %zu has no tokens"), b + 1);
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
    snprintf(err, errlen, "%s", _("--tokens: out of memory"));
fail:
    free(*lens);
    *lens = NULL;
done:
    free(flat);
    free(buf);
    return status;
}

/* split_spaced on the text with its unspaced CJK sentences spaced. */
static int split_sentences(const char *text, size_t *B, size_t *N, char ***words, long **lens,
                           char *err, size_t errlen)
{
    char *spaced = space_cjk(text);
    int status;
    if (!spaced) {
        snprintf(err, errlen, "%s", _("--tokens: out of memory"));
        *lens = NULL;
        return -1;
    }
    status = split_spaced(spaced, B, N, words, lens, err, errlen);
    free(spaced);
    return status;
}

/* The sizes of a random run: the options' or d2l's defaults (B 2, Nq 4,
 * Nk 6, H 100, 5 heads), or --tokens' sentences (*words (B, Nq) and their
 * *lens (B,), for the caller to free). Usage errors only. */
static int random_sizes(problem *pr, const problem_opts *o, char ***words, long **lens,
                        char *err, size_t errlen)
{
    const size_t H = (size_t)(o->hiddens ? o->hiddens : 100);
    const size_t NH = (size_t)(o->heads ? o->heads : 5);
    pr->B = (size_t)(o->batch ? o->batch : 2);
    pr->Nq = (size_t)(o->queries ? o->queries : 4);
    pr->Nk = o->self ? pr->Nq : (size_t)(o->kv ? o->kv : 6);
    if (o->tokens) {
        size_t tb, tn;
        if (split_sentences(o->tokens, &tb, &tn, words, lens, err, errlen))
            return -1;
        if (o->batch && (size_t)o->batch != tb) {
            snprintf(err, errlen,
                     i18n_plural("--batch %ld disagrees with --tokens, which has %zu sentence",
                                 "--batch %ld disagrees with --tokens, which has %zu sentences", tb),
                     o->batch, tb);
            return -1;
        }
        if (o->queries && (size_t)o->queries != tn) {
            snprintf(err, errlen, _("--queries %ld disagrees with --tokens, whose longest "
                     "sentence has %zu tokens"), o->queries, tn);
            return -1;
        }
        pr->B = tb;
        pr->Nq = pr->Nk = tn;
    }
    pr->Dq = o->self ? H : (size_t)(o->query_size ? o->query_size : (long)H);
    pr->Dk = o->self ? H : (size_t)(o->key_size ? o->key_size : (long)H);
    pr->Dv = o->self ? H : (size_t)(o->value_size ? o->value_size : (long)H);
    if (H % NH != 0) {
        snprintf(err, errlen, _("--hiddens %zu is not divisible by --heads %zu"), H, NH);
        return -1;
    }
    pr->params.num_heads = NH;
    pr->params.num_hiddens = H;
    return 0;
}

/* --max-mem against the inputs and weights, before allocating any. */
static int random_fits(const problem *pr, const problem_opts *o, char *err, size_t errlen)
{
    const size_t B = pr->B, H = pr->params.num_hiddens;
    size_t bytes, total = 0;
    int overflow = 0;
    overflow |= tensor_bytes(3, (size_t[]){B, pr->Nq, pr->Dq}, &bytes) ||
                size_add(total, bytes, &total);
    if (!o->self) {
        overflow |= tensor_bytes(3, (size_t[]){B, pr->Nk, pr->Dk}, &bytes) ||
                    size_add(total, bytes, &total);
        overflow |= tensor_bytes(3, (size_t[]){B, pr->Nk, pr->Dv}, &bytes) ||
                    size_add(total, bytes, &total);
    }
    overflow |= tensor_bytes(2, (size_t[]){H, pr->Dq + pr->Dk + pr->Dv + H}, &bytes) ||
                size_add(total, bytes, &total);
    if (!overflow && total <= o->max_mem)
        return 0;
    format_mem_limit(err, errlen, "the inputs and weights", 1, total, overflow, o->max_mem,
                     NULL);
    return -1;
}

/* queries (B, Nq, Dq), and keys (B, Nk, Dk) and values (B, Nk, Dv) unless
 * self: ones (the chapter's cells) or standard normal; with words, each
 * query row the token's embedding (zeros past the sentence's length). */
static int random_inputs(problem *pr, const problem_opts *o, char **words, const long *lens,
                         char *err, size_t errlen)
{
    tensor *in[3] = {&pr->queries, &pr->keys, &pr->values};
    rng r;
    if (tensor_alloc(&pr->queries, 3, (size_t[]){pr->B, pr->Nq, pr->Dq}, err, errlen) ||
        (!o->self &&
         (tensor_alloc(&pr->keys, 3, (size_t[]){pr->B, pr->Nk, pr->Dk}, err, errlen) ||
          tensor_alloc(&pr->values, 3, (size_t[]){pr->B, pr->Nk, pr->Dv}, err, errlen))))
        return -1;
    rng_seed(&r, o->seed ^ 0x5eed5eed5eed5eedULL);
    for (size_t i = 0; i < 3; i++)
        for (size_t e = 0; in[i]->data && e < in[i]->size; e++)
            in[i]->data[e] = o->fill_random ? (float)rng_normal(&r) : 1.0f;
    for (size_t b = 0; words && b < pr->B; b++)
        for (size_t t = 0; t < pr->Nq; t++) {
            float *x = pr->queries.data + (b * pr->Nq + t) * pr->Dq; /* (Dq,) */
            if ((long)t < lens[b])
                token_embedding(x, pr->Dq, words[b * pr->Nq + t]);
            else
                memset(x, 0, pr->Dq * sizeof *x); /* padding: zeros */
        }
    return 0;
}

/* valid_lens: --valid-lens, the sentences' lengths when they differ (taking
 * *lens), or the chapter's 3, 2. -1 with *usage set for a --valid-lens of
 * the wrong shape, -1 when out of memory. */
static int random_lens(problem *pr, const problem_opts *o, long **lens, char *err,
                       size_t errlen, int *usage)
{
    const size_t B = pr->B, Nq = pr->Nq;
    if (o->valid_lens) {
        size_t n = o->vl_shape[0] * o->vl_shape[1];
        if (o->vl_shape[0] != B || (o->vl_ndim == 2 && o->vl_shape[1] != Nq)) {
            *usage = 1;
            if (o->vl_ndim == 1)
                snprintf(err, errlen,
                         i18n_plural("--valid-lens: expected %zu length (one per example), got %zu",
                                     "--valid-lens: expected %zu lengths (one per example), got %zu",
                                     B),
                         B, o->vl_shape[0]);
            else
                snprintf(err, errlen, _("--valid-lens: expected %zu rows of %zu (one per example "
                         "and query), got %zu rows of %zu"), B, Nq, o->vl_shape[0], o->vl_shape[1]);
            return -1;
        }
        if (!(pr->valid_lens = malloc(n * sizeof(long))))
            goto oom;
        memcpy(pr->valid_lens, o->valid_lens, n * sizeof(long));
        pr->vl_ndim = o->vl_ndim;
    } else if (*lens) {
        int ragged = 0;
        for (size_t i = 0; i < B; i++)
            ragged |= (size_t)(*lens)[i] != Nq;
        if (ragged && !o->no_valid_lens) {
            pr->valid_lens = *lens;
            pr->vl_ndim = 1;
            *lens = NULL;
        }
    } else if (!o->batch && !o->no_valid_lens) {
        if (!(pr->valid_lens = malloc(2 * sizeof(long))))
            goto oom;
        pr->valid_lens[0] = 3;
        pr->valid_lens[1] = 2;
        pr->vl_ndim = 1;
    }
    return 0;
oom:
    snprintf(err, errlen, "%s", _("out of memory"));
    return -1;
}

int problem_random(problem *pr, const problem_opts *o, char *err, size_t errlen, int *usage)
{
    char **words = NULL;
    long *lens = NULL;
    size_t A;

    memset(pr, 0, sizeof *pr);
    pr->self = o->self;
    *usage = 1; /* until the options are known to fit together */
    if (random_sizes(pr, o, &words, &lens, err, errlen))
        goto fail;
    *usage = 0; /* from here on, failures are run-time errors */
    if (random_fits(pr, o, err, errlen))
        goto fail;
    pr->params.score = o->score_given ? o->score : SCORE_DOT;
    A = (size_t)(o->score_hiddens ? o->score_hiddens
                                  : (long)(pr->params.num_hiddens / pr->params.num_heads));
    if (init_params(&pr->params, pr->Dq, pr->Dk, pr->Dv, A, o->bias, o->no_proj, o->seed, err,
                    errlen) ||
        random_inputs(pr, o, words, lens, err, errlen))
        goto fail;
    if (words) {
        pr->query_tokens = words;
        pr->key_tokens = words;
        pr->per_example = 1;
        words = NULL;
    }
    if (random_lens(pr, o, &lens, err, errlen, usage))
        goto fail;
    free(lens);
    return 0;
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

static void write_lens(json_writer *jw, const problem *pr)
{
    size_t cols = pr->vl_ndim == 2 ? pr->Nq : 1;
    if (!pr->valid_lens) {
        json_null(jw, "valid_lens");
        return;
    }
    json_array_begin(jw, "valid_lens", JSON_INLINE);
    for (size_t i = 0; i < pr->B; i++) {
        if (pr->vl_ndim == 2)
            json_array_begin(jw, NULL, JSON_INLINE);
        for (size_t j = 0; j < cols; j++)
            json_int(jw, NULL, pr->valid_lens[i * cols + j]);
        if (pr->vl_ndim == 2)
            json_end(jw);
    }
    json_end(jw);
}

/* tokens[0 … n-1] as an array of strings (key NULL: inside an array). */
static void write_tokens(json_writer *jw, const char *key, char *const *tokens, size_t n)
{
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t i = 0; i < n; i++)
        json_string(jw, NULL, tokens[i]);
    json_end(jw);
}

static void write_linear(json_writer *jw, const char *name, const linear *l)
{
    char key[64];
    if (!l->weight.data)
        return;
    snprintf(key, sizeof key, "%s.weight", name);
    json_tensor(jw, key, l->weight.data, l->weight.ndim, l->weight.shape);
    if (l->bias.data) {
        snprintf(key, sizeof key, "%s.bias", name);
        json_tensor(jw, key, l->bias.data, 1, l->bias.shape);
    }
}

/* The inputs, so that the output file is also a complete input. */
static void write_inputs(json_writer *jw, const problem *pr)
{
    if (pr->self) {
        json_tensor(jw, "X", pr->queries.data, 3, pr->queries.shape);
    } else {
        size_t kshape[3] = {pr->B, pr->Nk, pr->Dk}, vshape[3] = {pr->B, pr->Nk, pr->Dv};
        json_tensor(jw, "queries", pr->queries.data, 3, pr->queries.shape);
        json_tensor(jw, "keys", problem_keys(pr), 3, kshape);
        json_tensor(jw, "values", problem_values(pr), 3, vshape);
    }
    json_uint(jw, "num_heads", pr->params.num_heads);
    if (pr->self && pr->query_tokens && pr->per_example) {
        json_array_begin(jw, "tokens", JSON_INLINE);
        for (size_t b = 0; b < pr->B; b++)
            write_tokens(jw, NULL, pr->query_tokens + b * pr->Nq, pr->Nq);
        json_end(jw);
    } else if (pr->self && pr->query_tokens) {
        write_tokens(jw, "tokens", pr->query_tokens, pr->Nq);
    } else {
        if (pr->query_tokens)
            write_tokens(jw, "query_tokens", pr->query_tokens, pr->Nq);
        if (pr->key_tokens)
            write_tokens(jw, "key_tokens", pr->key_tokens, pr->Nk);
    }
}

void problem_write_members(json_writer *jw, const problem *pr, const char *command,
                           const float *out, const float *weights)
{
    const mha_params *m = &pr->params;
    size_t oshape[3] = {pr->B, pr->Nq, m->num_hiddens};
    size_t wshape[4] = {pr->B, m->num_heads, pr->Nq, pr->Nk};

    json_string(jw, "command", command);
    json_array_begin(jw, "shape", JSON_INLINE);
    for (size_t i = 0; i < 3; i++)
        json_uint(jw, NULL, oshape[i]);
    json_end(jw);
    json_tensor(jw, "output", out, 3, oshape);
    if (weights && jw->base64_from) /* a page: the weights it draws, whole */
        json_tensor_base64(jw, "attention_weights", weights, 4, wshape);
    else if (weights)
        json_tensor(jw, "attention_weights", weights, 4, wshape);
    else
        json_null(jw, "attention_weights");
    write_lens(jw, pr);
    write_inputs(jw, pr);
    json_object_begin(jw, "state_dict", JSON_BLOCK);
    write_linear(jw, "W_q", &m->W_q);
    write_linear(jw, "W_k", &m->W_k);
    write_linear(jw, "W_v", &m->W_v);
    write_linear(jw, "W_o", &m->W_o);
    if (m->score == SCORE_ADDITIVE) {
        write_linear(jw, "attention.W_q", &m->a_W_q);
        write_linear(jw, "attention.W_k", &m->a_W_k);
        write_linear(jw, "attention.w_v", &m->a_w_v);
    }
    json_end(jw);
}

int problem_write_json(FILE *f, const problem *pr, const char *command, const float *out,
                       const float *weights)
{
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    problem_write_members(&jw, pr, command, out, weights);
    json_end(&jw);
    return json_writer_finish(&jw);
}

int problem_split_tokens(const char *text, size_t *B, size_t *N, char ***words, long **lens,
                         char *err, size_t errlen)
{
    return split_sentences(text, B, N, words, lens, err, errlen);
}
