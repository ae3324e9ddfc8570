/* score.c — `attn score` (SPEC.md §13): d2l §10.3, attention scoring
 * functions. The masked softmax on the section's two calls
 * (--masked-softmax), then AdditiveAttention and DotProductAttention on
 * the section's cells or on JSON inputs: each output printed as PyTorch
 * prints it, the weights as numbers and a heatmap (Keys, Queries), every
 * step (--explain), a figure (--png), a page (--html) and JSON (--json).
 * Dimensions as in score.h: B, Nq, Nk, Dq, Dk, Dv, h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "commands.h"
#include "json_in.h"
#include "json_writer.h"
#include "options.h"
#include "output.h"
#include "page_out.h"
#include "render.h"
#include "rng.h"
#include "score.h"
#include "tensor.h"
#include "term.h"

#define MAX_HIDDENS 100000L
#define MAX_LEN OPT_SIZE_MAX /* a valid length; one above Nk masks nothing */

enum { KIND_ADDITIVE, KIND_DOT, NKINDS };
static const char *const score_names[] = {"additive", "dot", NULL}; /* the kinds' order */
static const char *const module_names[] = {"AdditiveAttention", "DotProductAttention"};

struct score_args {
    const char *input, *png, *json, *font, *html;
    const attn_cmap *cmap;
    int color;          /* term_color_mode */
    int score;          /* --score: the index in score_names */
    int score_given;    /* 0: both, additive first */
    int masked_softmax, explain, hiddens_given;
    long seed, hiddens;
    size_t max_mem;
    opt_lens lens;      /* --valid-lens: instead of the cells' or the file's */
    int argc;           /* the command line, for the page */
    char **argv;
};

/* The inputs of one scoring function, and everything it computes. */
typedef struct score_run {
    int kind;
    size_t B, Nq, Nk, Dq, Dk, Dv, h; /* h: additive only */
    tensor queries, keys, values;    /* (B, Nq, Dq), (B, Nk, Dk), (B, Nk, Dv) */
    long *lens;                      /* (B,) or (B, Nq); NULL: no valid_lens */
    size_t vl_ndim;
    score_additive m;                /* additive only */
    int has_state_dict;              /* m came from the file */
    float *qh, *kh;                  /* (B, Nq, h), (B, Nk, h) additive: W_q q, W_k k */
    float *scores, *masked, *weights; /* (B, Nq, Nk) each */
    float *output;                   /* (B, Nq, Dv) */
} score_run;

/* ---- options --------------------------------------------------------- */

#define OPT_ARGS struct score_args

const struct opt score_options[] = {
    OPT_FLAG(0, "masked-softmax", masked_softmax,
             "the section's two masked_softmax calls on a random\n"
             "(2, 2, 4) X, and stop"),
    OPT_CHOICE(0, "score", score, "additive|dot", score_names,
               "one scoring function (default both, additive first)"),
    OPT_INT(0, "score-hiddens", hiddens, "H", 1, MAX_HIDDENS,
            "num_hiddens of AdditiveAttention (default 8)"),
    OPT_VALID_LENS(lens, "1,3 (one per example), 1;3 (one per query: a row\n"
                         "per example) or none (default: the section's 2,6,\n"
                         "or the --input file's valid_lens)"),
    OPT_FILE('i', "input", input,
             "queries, keys, values, valid_lens and state_dict as\n"
             "JSON, - for stdin (default: the section's cells)"),
    OPT_SEED(seed, "random queries, X and weights (default 0)"),
    OPT_FLAG(0, "explain", explain,
             "print every step: the scores, the mask, the weights,\n"
             "the weighted sum"),
    OPT_PNG(png, "the attention weights, one panel per scoring function"),
    OPT_HTML(html, "a page of the weights: a row per scoring function,\n"
                   "a panel per example; hover a cell, change the\n"
                   "inputs"),
    OPT_CMAP(cmap, "Reds"),
    OPT_FONT(font),
    OPT_JSON(json, "scores, attention_weights, output, state_dict; - for\n"
                   "stdout"),
    OPT_COLOR(color),
    OPT_MAX_MEM(max_mem),
    OPT_HELP(),
    OPT_END()
};

const struct opt_rule score_rules[] = {
    OPT_CONFLICTS("masked-softmax", "score score-hiddens valid-lens input explain png html json",
                  "--%s cannot be used with --masked-softmax, which prints the section's "
                  "two masked_softmax calls and stops"),
    OPT_RULES_END()
};

void usage_score(FILE *f)
{
    fputs("usage: attn score [--masked-softmax] [--score additive|dot] [--valid-lens LIST]\n"
          "                  [--input FILE] [OPTIONS]\n"
          "\n"
          "d2l §10.3, attention scoring functions: a score a(q, k) for every key, a\n"
          "softmax over the keys that are there (masked_softmax: keys at positions\n"
          ">= valid_len get -1e6), and the weighted sum of the values:\n"
          "    additive  a(q, k) = w_vᵀ tanh(W_q q + W_k k)   (AdditiveAttention)\n"
          "    dot       a(q, k) = q·k / sqrt(d)              (DotProductAttention)\n"
          "Without --input the section's cells: queries normal(0, 1) of shape\n"
          "(2, 1, 20) for additive, (2, 1, 2) for dot, keys ones (2, 10, 2), values\n"
          "arange(40) (2, 10, 4), valid_lens [2, 6]; weights drawn like nn.Linear's\n"
          "default initialisation from --seed.\n"
          "\n", f);
    opt_usage(f, score_options);
    fputs("\n"
          "JSON input: {\"queries\": (B, Nq, Dq), \"keys\": (B, Nk, Dk), \"values\":\n"
          "(B, Nk, Dv), \"valid_lens\": (B,) or (B, Nq) (optional), \"state_dict\":\n"
          "{\"W_q.weight\": (h, Dq), \"W_k.weight\": (h, Dk), \"w_v.weight\": (1, h)}\n"
          "(optional, additive)}.\n"
          "\n"
          "Examples:\n"
          "  attn score                      # both cells: [[ 2.0000, ...]], [[10.0000, ...]]\n"
          "  attn score --masked-softmax     # masked_softmax(X, [2, 3]) and per query\n"
          "  attn score --score dot --explain\n"
          "  attn score --png weights.png    # 0.5 twice, 1/6 six times\n"
          "  attn score --valid-lens 1,3     # 1 for the first key, 1/3 for three\n"
          "  attn score --html score.html    # both functions, a panel per example\n"
          "  attn score --input data/score_additive.json --json out.json\n", f);
}

/* ---- inputs ------------------------------------------------------------ */

static void run_free(score_run *r)
{
    tensor_free(&r->queries);
    tensor_free(&r->keys);
    tensor_free(&r->values);
    score_additive_free(&r->m);
    FREE_EACH(r->lens, r->qh, r->kh, r->scores, r->masked, r->weights, r->output);
    memset(r, 0, sizeof *r);
}

/* The section's cell for one kind: queries normal(0, 1), keys ones,
 * values arange(40) repeated over the batch, valid_lens [2, 6]; additive's
 * weights drawn after the queries. */
static int default_cell(score_run *r, int kind, const struct score_args *a, char *err,
                        size_t errlen)
{
    rng g;
    r->kind = kind;
    r->B = 2, r->Nq = 1, r->Nk = 10, r->Dk = 2, r->Dv = 4;
    r->Dq = kind == KIND_ADDITIVE ? 20 : 2;
    r->h = kind == KIND_ADDITIVE ? (size_t)(a->hiddens_given ? a->hiddens : 8) : 0;
    if (tensor_alloc(&r->queries, 3, (size_t[]){r->B, r->Nq, r->Dq}, err, errlen) ||
        tensor_alloc(&r->keys, 3, (size_t[]){r->B, r->Nk, r->Dk}, err, errlen) ||
        tensor_alloc(&r->values, 3, (size_t[]){r->B, r->Nk, r->Dv}, err, errlen) ||
        !(r->lens = malloc(2 * sizeof *r->lens))) {
        snprintf(err, errlen, "out of memory for the section's cell");
        return -1;
    }
    /* one stream per scoring function: dot's queries are the same alone or after additive */
    rng_seed(&g, (unsigned long long)a->seed + (unsigned long long)kind);
    for (size_t i = 0; i < r->queries.size; i++)
        r->queries.data[i] = (float)rng_normal(&g);
    for (size_t i = 0; i < r->keys.size; i++)
        r->keys.data[i] = 1.0f;
    for (size_t i = 0; i < r->values.size; i++)
        r->values.data[i] = (float)(i % (r->Nk * r->Dv));
    r->lens[0] = 2;
    r->lens[1] = 6;
    r->vl_ndim = 1;
    if (kind == KIND_ADDITIVE)
        return score_additive_init(&r->m, r->Dq, r->Dk, r->h, &g, err, errlen);
    return 0;
}

/* A required 3-D tensor of the file: $.name. */
static int get_input3(const cJSON *root, const char *name, tensor *t, char *err, size_t errlen)
{
    char path[32];
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, name);
    snprintf(path, sizeof path, "$.%s", name);
    if (!node) {
        snprintf(err, errlen, "$: missing \"%s\"", name);
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
        snprintf(err, errlen, "$.keys: expected batch %zu like $.queries %s, got shape %s", r->B,
                 q, k);
        return -1;
    }
    if (r->values.shape[0] != r->B || r->values.shape[1] != r->Nk) {
        snprintf(err, errlen, "$.values: expected shape (%zu, %zu, value_size), one value per "
                 "key of $.keys %s, got %s", r->B, r->Nk, k, v);
        return -1;
    }
    if (r->kind == KIND_DOT && r->Dq != r->Dk) {
        snprintf(err, errlen, "$.queries: dot-product scoring needs queries of the keys' size "
                 "%zu, got %zu (--score additive scores queries and keys of different sizes)",
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
        snprintf(err, errlen, "$.valid_lens: expected %zu lengths (one per example), got %zu",
                 r->B, shape[0]);
    else
        snprintf(err, errlen, "$.valid_lens: expected (%zu, %zu) lengths (one per query), got "
                 "(%zu, %zu)", r->B, r->Nq, shape[0], shape[1]);
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
            snprintf(err, errlen, "%s: unknown key \"%s\" (%s)", path, item->string, list);
            return -1;
        }
    }
    return 0;
}

/* One state_dict entry: a (rows, cols) matrix; rows 0 takes the file's. */
static int get_weight(const cJSON *sd, const char *name, size_t rows, size_t cols, linear *l,
                      char *err, size_t errlen)
{
    char path[64];
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(sd, name);
    snprintf(path, sizeof path, "$.state_dict[\"%s\"]", name);
    if (!node) {
        snprintf(err, errlen, "$.state_dict: missing \"%s\" (%zu, %zu)", name, rows, cols);
        return -1;
    }
    if (json_get_tensor(node, path, 2, 2, &l->weight, err, errlen))
        return -1;
    if ((rows && l->weight.shape[0] != rows) || l->weight.shape[1] != cols) {
        char want[48];
        snprintf(want, sizeof want, rows ? "(%zu, %zu)" : "(num_hiddens, %zu)",
                 rows ? rows : cols, cols);
        snprintf(err, errlen, "%s: expected shape %s, got (%zu, %zu)", path, want,
                 l->weight.shape[0], l->weight.shape[1]);
        return -1;
    }
    return 0;
}

/* AdditiveAttention's state_dict: W_q.weight (h, Dq) sets h. */
static int get_state_dict(score_run *r, const cJSON *sd, char *err, size_t errlen)
{
    static const char *const known[] = {"W_q.weight", "W_k.weight", "w_v.weight"};
    if (!cJSON_IsObject(sd)) {
        snprintf(err, errlen, "$.state_dict: expected an object, got %s", json_type_name(sd));
        return -1;
    }
    if (known_members(sd, known, 3, "$.state_dict",
                      "AdditiveAttention has W_q.weight, W_k.weight, w_v.weight", err, errlen) ||
        get_weight(sd, "W_q.weight", 0, r->Dq, &r->m.W_q, err, errlen))
        return -1;
    r->h = r->m.W_q.weight.shape[0];
    r->has_state_dict = 1;
    return get_weight(sd, "W_k.weight", r->h, r->Dk, &r->m.W_k, err, errlen) ||
                   get_weight(sd, "w_v.weight", 1, r->h, &r->m.w_v, err, errlen)
               ? -1
               : 0;
}

/* One run's inputs from the parsed file; *usage is set for an error of
 * the options (--score-hiddens with a state_dict). */
static int run_from_json(score_run *r, int kind, const cJSON *root, const struct score_args *a,
                         char *err, size_t errlen, int *usage)
{
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(root, "state_dict");
    r->kind = kind;
    if (get_input3(root, "queries", &r->queries, err, errlen) ||
        get_input3(root, "keys", &r->keys, err, errlen) ||
        get_input3(root, "values", &r->values, err, errlen) || check_sizes(r, err, errlen) ||
        get_lens(r, root, err, errlen))
        return -1;
    if (kind != KIND_ADDITIVE)
        return 0;
    if (sd && a->hiddens_given) {
        snprintf(err, errlen, "--score-hiddens: the file's state_dict sets num_hiddens "
                 "(the rows of W_q.weight); give one");
        *usage = 1;
        return -1;
    }
    if (sd)
        return get_state_dict(r, sd, err, errlen);
    rng g;
    rng_seed(&g, (unsigned long long)a->seed);
    r->h = (size_t)(a->hiddens_given ? a->hiddens : 8);
    return score_additive_init(&r->m, r->Dq, r->Dk, r->h, &g, err, errlen);
}

/* Only the members the format has: a misspelt "valid_len" is not ignored. */
static int check_members(const cJSON *root, char *err, size_t errlen)
{
    static const char *const known[] = {"queries", "keys", "values", "valid_lens", "state_dict"};
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "$: expected an object with queries, keys and values, got %s",
                 json_type_name(root));
        return -1;
    }
    return known_members(root, known, 5, "$",
                         "expected queries, keys, values, valid_lens, state_dict", err, errlen);
}

/* ---- the computation --------------------------------------------------- */

/* A run's buffers, their bytes added to *bytes first (for --max-mem). */
static int run_alloc(score_run *r, size_t *bytes, int dry)
{
    size_t nqk, nout, nqh = 0, nkh = 0, total = 0;
    int bad = size_mul(r->B * r->Nq, r->Nk, &nqk) || size_mul(r->B * r->Nq, r->Dv, &nout) ||
              size_mul(r->B * r->Nq, r->h, &nqh) || size_mul(r->B * r->Nk, r->h, &nkh) ||
              size_add(nqk, nqk, &total) || size_add(total, nqk, &total) ||
              size_add(total, nout, &total) || size_add(total, nqh, &total) ||
              size_add(total, nkh, &total) || size_mul(total, sizeof(float), &total) ||
              size_add(*bytes, total, bytes);
    if (bad || dry)
        return bad ? -1 : 0;
    r->scores = float_alloc(nqk ? nqk : 1);
    r->masked = float_alloc(nqk ? nqk : 1);
    r->weights = float_alloc(nqk ? nqk : 1);
    r->output = float_alloc(nout ? nout : 1);
    r->qh = r->h ? float_alloc(nqh ? nqh : 1) : NULL;
    r->kh = r->h ? float_alloc(nkh ? nkh : 1) : NULL;
    return !r->scores || !r->masked || !r->weights || !r->output ||
                   (r->h && (!r->qh || !r->kh))
               ? -1
               : 0;
}

/* The section's forward pass: scores, masked_softmax, bmm with the values. */
static void run_forward(score_run *r)
{
    const mha_masks mask = {r->lens, r->vl_ndim == 2, 0};
    const size_t n = r->B * r->Nq * r->Nk;
    /* 1. scores (B, Nq, Nk) */
    if (r->kind == KIND_ADDITIVE)
        score_additive_scores(r->scores, r->qh, r->kh, r->queries.data, r->keys.data, r->B,
                              r->Nq, r->Nk, &r->m);
    else
        score_dot(r->scores, r->queries.data, r->keys.data, r->B, r->Nq, r->Nk, r->Dq);
    /* 2. the mask, kept for --explain; 3. the softmax over the keys */
    memcpy(r->masked, r->scores, n * sizeof(float));
    score_mask(r->masked, r->B, r->Nq, r->Nk, &mask);
    memcpy(r->weights, r->masked, n * sizeof(float));
    score_masked_softmax(r->weights, r->B, r->Nq, r->Nk, &mask);
    /* 4. the weighted sum of the values */
    score_weighted_sum(r->output, r->weights, r->values.data, r->B, r->Nq, r->Nk, r->Dv);
}

/* ---- what a learner sees --------------------------------------------- */

/* "[2, 6]", "[[1, 3], [2, 4]]" or "None", cut with "…" when long. */
static void lens_text(char *buf, size_t n, const score_run *r)
{
    const size_t count = r->vl_ndim == 2 ? r->B * r->Nq : r->B, per = r->vl_ndim == 2 ? r->Nq : 0;
    size_t used = 0, i;
    if (!r->lens) {
        snprintf(buf, n, "None");
        return;
    }
    used += (size_t)snprintf(buf, n, "[");
    for (i = 0; i < count && used + 48 < n; i++) {
        const int open = per && i % per == 0, close = per && i % per == per - 1;
        used += (size_t)snprintf(buf + used, n - used, "%s%s%ld%s", i ? ", " : "",
                                 open ? "[" : "", r->lens[i], close ? "]" : "");
    }
    snprintf(buf + used, n - used, "%s]", i < count ? ", …" : "");
}

static void print_module(const score_run *r, const struct score_args *a)
{
    char q[64], k[64], v[64], lens[256];
    tensor_shape_str(q, sizeof q, 3, r->queries.shape);
    tensor_shape_str(k, sizeof k, 3, r->keys.shape);
    tensor_shape_str(v, sizeof v, 3, r->values.shape);
    lens_text(lens, sizeof lens, r);
    if (r->kind == KIND_ADDITIVE)
        printf("AdditiveAttention(key_size=%zu, query_size=%zu, num_hiddens=%zu): "
               "a(q, k) = w_vᵀ tanh(W_q q + W_k k)\n", r->Dk, r->Dq, r->h);
    else
        printf("DotProductAttention(): a(q, k) = q·k / sqrt(%zu)\n", r->Dq);
    if (a->input)
        printf("queries %s, keys %s, values %s, valid_lens %s; from the file%s\n", q, k, v,
               lens, r->kind == KIND_ADDITIVE && !r->has_state_dict
                         ? ", weights random (nn.Linear's initialisation)" : "");
    else
        printf("queries %s normal(0, 1), keys %s ones, values %s arange(40), valid_lens %s\n", q,
               k, v, lens);
}

/* The output as PyTorch prints it, then the weights as numbers and (on a
 * colour terminal) as a heatmap, d2l's show_heatmaps of (B·Nq, Nk). */
static void print_result(const score_run *r, const struct score_args *a)
{
    printf("attention(queries, keys, values, valid_lens)\n");
    term_tensor3(stdout, r->output, (size_t[]){r->B, r->Nq, r->Dv}, 4,
                 r->kind == KIND_ADDITIVE ? "grad_fn=<BmmBackward0>" : NULL);
    printf("\nattention.attention_weights: a softmax over the keys that are there\n");
    term_tensor3(stdout, r->weights, (size_t[]){r->B, r->Nq, r->Nk}, 4, NULL);
    if (term_use_color(a->color, stdout)) {
        term_heatmap_opts o;
        memset(&o, 0, sizeof o);
        o.cmap = a->cmap;
        o.vmin = 0.0;
        o.vmax = 1.0;
        printf("\nKeys → across, Queries ↓ (examples one after the other)\n");
        term_heatmap(stdout, r->weights, r->B * r->Nq, r->Nk, &o);
    }
}

/* --explain: one example's four steps. */
static void explain_example(const score_run *r, size_t b)
{
    const size_t Nq = r->Nq, Nk = r->Nk, h = r->h, nn = Nq * Nk;
    char len[64] = "";
    if (r->lens && r->vl_ndim == 1)
        snprintf(len, sizeof len, ", valid_len %ld", r->lens[b]);
    else if (r->lens)
        snprintf(len, sizeof len, ", valid_lens per query");
    printf("\n=== %s, example %zu%s ===\n", module_names[r->kind], b, len);
    if (r->kind == KIND_ADDITIVE) {
        printf("\nStep 1. Scores: a(q, k) = w_vᵀ tanh(W_q q + W_k k)\n");
        printf("W_q q  (%zu, %zu)\n", Nq, h);
        term_matrix(stdout, r->qh + b * Nq * h, Nq, h, 4, 6);
        printf("W_k k  (%zu, %zu)\n", Nk, h);
        term_matrix(stdout, r->kh + b * Nk * h, Nk, h, 4, 6);
        printf("scores: w_vᵀ tanh(W_q q + W_k k) for every query and key  (%zu, %zu)\n", Nq, Nk);
    } else {
        printf("\nStep 1. Scores: a(q, k) = q·k / sqrt(%zu) = q·k / %.4f  (%zu, %zu)\n", r->Dq,
               sqrt((double)r->Dq), Nq, Nk);
    }
    term_matrix(stdout, r->scores + b * nn, Nq, Nk, 4, 6);
    printf("\nStep 2. Masked: keys at k >= valid_len get -1e6  (%zu, %zu)\n", Nq, Nk);
    term_matrix(stdout, r->masked + b * nn, Nq, Nk, 4, 6);
    printf("\nStep 3. Attention weights: softmax over keys, each row sums to 1  (%zu, %zu)\n", Nq,
           Nk);
    term_matrix(stdout, r->weights + b * nn, Nq, Nk, 4, 6);
    printf("\nStep 4. Output: the weighted sum of the values, weights · values  (%zu, %zu)\n", Nq,
           r->Dv);
    term_matrix(stdout, r->output + b * Nq * r->Dv, Nq, r->Dv, 4, 6);
}

/* --masked-softmax: the section's two calls, on X drawn as torch.rand. */
static int print_masked_softmax(const struct score_args *a)
{
    static const long lens1[2] = {2, 3}, lens2[4] = {1, 3, 2, 4};
    const mha_masks masks[2] = {{lens1, 0, 0}, {lens2, 1, 0}};
    static const char *const calls[2] = {"torch.tensor([2, 3])",
                                         "torch.tensor([[1, 3], [2, 4]])"};
    float X[2 * 2 * 4];
    rng g;
    rng_seed(&g, (unsigned long long)a->seed);
    printf("masked_softmax(X, valid_lens): keys at k >= valid_len get -1e6, then a softmax\n"
           "over the keys; X is torch.rand(2, 2, 4) drawn from attn's --seed %ld (the\n"
           "book's draw differs, so do the numbers; the zeros fall where the book's do)\n",
           a->seed);
    for (size_t c = 0; c < 2; c++) {
        for (size_t i = 0; i < 16; i++)
            X[i] = (float)rng_uniform(&g);
        printf("\nmasked_softmax(torch.rand(2, 2, 4), %s)\n", calls[c]);
        score_masked_softmax(X, 2, 2, 4, &masks[c]);
        term_tensor3(stdout, X, (size_t[]){2, 2, 4}, 4, NULL);
    }
    return EXIT_OK;
}

/* ---- output files ------------------------------------------------------ */

struct score_out {
    const score_run *runs;
    size_t nruns;
    const struct score_args *args;
    const float *page_weights; /* (nruns, B, Nq, Nk) for --html, else NULL */
};

/* The lengths as key: (B,) or (B, Nq), or null; layout that of the outer
 * array of (B, Nq). */
static void write_lens(json_writer *jw, const char *key, const score_run *r, json_layout layout)
{
    if (!r->lens) {
        json_null(jw, key);
        return;
    }
    json_array_begin(jw, key, r->vl_ndim == 2 ? layout : JSON_INLINE);
    for (size_t b = 0; b < r->B; b++) {
        if (r->vl_ndim == 1) {
            json_int(jw, NULL, r->lens[b]);
            continue;
        }
        json_array_begin(jw, NULL, JSON_INLINE);
        for (size_t q = 0; q < r->Nq; q++)
            json_int(jw, NULL, r->lens[b * r->Nq + q]);
        json_end(jw);
    }
    json_end(jw);
}

static void write_run(json_writer *jw, const score_run *r)
{
    const size_t qk[3] = {r->B, r->Nq, r->Nk}, out[3] = {r->B, r->Nq, r->Dv};
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_string(jw, "score", score_names[r->kind]);
    json_tensor(jw, "queries", r->queries.data, 3, r->queries.shape);
    json_tensor(jw, "keys", r->keys.data, 3, r->keys.shape);
    json_tensor(jw, "values", r->values.data, 3, r->values.shape);
    write_lens(jw, "valid_lens", r, JSON_BLOCK);
    json_tensor(jw, "scores", r->scores, 3, qk);
    json_tensor(jw, "attention_weights", r->weights, 3, qk);
    json_tensor(jw, "output", r->output, 3, out);
    if (r->kind == KIND_ADDITIVE) {
        json_object_begin(jw, "state_dict", JSON_BLOCK);
        json_tensor(jw, "W_q.weight", r->m.W_q.weight.data, 2, r->m.W_q.weight.shape);
        json_tensor(jw, "W_k.weight", r->m.W_k.weight.data, 2, r->m.W_k.weight.shape);
        json_tensor(jw, "w_v.weight", r->m.w_v.weight.data, 2, r->m.w_v.weight.shape);
        json_end(jw);
    }
    json_end(jw);
}

static void write_members(json_writer *jw, const void *arg)
{
    const struct score_out *o = arg;
    json_string(jw, "command", "score");
    json_array_begin(jw, "results", JSON_BLOCK);
    for (size_t i = 0; i < o->nruns; i++)
        write_run(jw, &o->runs[i]);
    json_end(jw);
}

static int write_json(FILE *f, const void *arg)
{
    return json_document(f, 0, write_members, arg);
}

/* --html: the attention page (page/attention.js) with a row of panels per
 * scoring function and a panel per example (the page's columns, its
 * "heads"), each panel masked by its example's lengths. */
static void write_page_row(json_writer *jw, const score_run *r)
{
    char title[96];
    if (r->kind == KIND_ADDITIVE)
        snprintf(title, sizeof title, "AdditiveAttention: a(q, k) = w_vᵀ tanh(W_q q + W_k k)");
    else
        snprintf(title, sizeof title, "DotProductAttention: a(q, k) = q·k / sqrt(%zu)", r->Dq);
    json_object_begin(jw, NULL, JSON_INLINE);
    json_string(jw, "name", score_names[r->kind]);
    json_string(jw, "title", title);
    page_tokens(jw, "query_tokens", NULL, r->Nq);
    page_tokens(jw, "key_tokens", NULL, r->Nk);
    json_null(jw, "valid_lens");
    write_lens(jw, "head_valid_lens", r, JSON_INLINE);
    json_end(jw);
}

/* The page member; whole 0 (a large page's preview, page_out.h) keeps
 * only the weights' shape: they are in the data's page, after the script. */
static void write_page_object(json_writer *jw, const struct score_out *o, int whole)
{
    const score_run *r = &o->runs[0]; /* every run has its B, Nq, Nk */
    const size_t shape[4] = {o->nruns, r->B, r->Nq, r->Nk};
    json_object_begin(jw, "page", JSON_BLOCK);
    page_head(jw, "attention", "attn score", o->args->argc, o->args->argv, o->args->cmap);
    if (whole) {
        json_tensor_base64(jw, "weights", o->page_weights, 4, shape);
    } else {
        json_object_begin(jw, "weights", JSON_INLINE);
        json_string(jw, "dtype", "float32");
        json_array_begin(jw, "shape", JSON_INLINE);
        for (size_t i = 0; i < 4; i++)
            json_uint(jw, NULL, shape[i]);
        json_end(jw);
        json_string(jw, "omitted", "in the data's page");
        json_end(jw);
    }
    json_bool(jw, "causal", 0);
    json_string(jw, "xlabel", "Keys");
    json_string(jw, "ylabel", "Queries");
    json_string(jw, "column", "example");
    json_array_begin(jw, "titles", JSON_INLINE);
    for (size_t b = 0; b < r->B; b++) {
        char name[32];
        snprintf(name, sizeof name, "example %zu", b);
        json_string(jw, NULL, name);
    }
    json_end(jw);
    json_array_begin(jw, "rows", JSON_BLOCK);
    for (size_t i = 0; i < o->nruns; i++)
        write_page_row(jw, &o->runs[i]);
    json_end(jw);
    json_end(jw);
}

static void write_preview_page(json_writer *jw, const void *arg)
{
    write_page_object(jw, arg, 0);
}

static void write_page_data(json_writer *jw, const void *arg)
{
    write_members(jw, arg);
    write_page_object(jw, arg, 1);
}

/* The page: every run's weights one after the other as the page draws
 * them, (nruns, B, Nq, Nk). */
static int write_page(const struct score_out *o, FILE *rep)
{
    const score_run *r = &o->runs[0];
    const size_t each = r->B * r->Nq * r->Nk, total = each * o->nruns; /* allocated: fits */
    const size_t shape[4] = {o->nruns, r->B, r->Nq, r->Nk};
    struct score_out po = *o;
    char what[128];
    float *w = malloc((total > 0 ? total : 1) * sizeof *w);
    if (!w) {
        cli_error("--html %s: out of memory", o->args->html);
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < o->nruns; i++)
        memcpy(w + i * each, o->runs[i].weights, each * sizeof *w);
    po.page_weights = w;
    const page_weights pw = {w, 4, shape, write_preview_page};
    snprintf(what, sizeof what, "a page of the attention weights, %zu scoring function%s × %zu "
             "example%s", o->nruns, o->nruns == 1 ? "" : "s", r->B, r->B == 1 ? "" : "s");
    const int status = output_page_weights(o->args->html, "attn score", write_page_data, &po,
                                           &pw, rep, what);
    free(w);
    return status;
}

/* The weights as d2l draws them: each run's (B·Nq, Nk), side by side. */
static int figure_png(const void *ctx, text_font *font, FILE *rep)
{
    const struct score_out *o = ctx;
    const struct score_args *a = o->args;
    heat_panel panels[NKINDS];
    heat_figure fig;
    memset(panels, 0, sizeof panels);
    memset(&fig, 0, sizeof fig);
    for (size_t i = 0; i < o->nruns; i++) {
        panels[i].data = o->runs[i].weights;
        panels[i].rows = o->runs[i].B * o->runs[i].Nq;
        panels[i].cols = o->runs[i].Nk;
        panels[i].title = module_names[o->runs[i].kind];
    }
    fig.panels = panels;
    fig.grid_rows = 1;
    fig.grid_cols = o->nruns;
    fig.xlabel = "Keys";
    fig.ylabel = "Queries";
    fig.cmap = a->cmap;
    fig.vmin = NAN;
    fig.vmax = NAN;
    fig.font = font;
    return output_heatmap(a->png, &fig, rep, "the attention weights (Keys, Queries)");
}

/* ---- the command ----------------------------------------------------- */

static int parse_args(int argc, char **argv, struct score_args *a)
{
    opt_given g;
    int status;
    memset(a, 0, sizeof *a);
    a->cmap = cmap_find("Reds");
    a->color = TERM_COLOR_AUTO;
    a->max_mem = CLI_DEFAULT_MAX_MEM;
    a->argc = argc;
    a->argv = argv;
    status = opt_parse(score_options, score_rules, argc, argv, a, &g);
    if (status != EXIT_OK)
        return status;
    a->score_given = opt_is_given(&g, "score");
    a->hiddens_given = opt_is_given(&g, "score-hiddens");
    if (a->hiddens_given && a->score_given && a->score == KIND_DOT) {
        cli_error("--score-hiddens is for --score additive");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* --valid-lens instead of the run's lengths, checked against its B and
 * Nq; "none": no lengths. EXIT_OK, or the exit status after the message. */
static int override_lens(score_run *r, const struct score_args *a)
{
    const opt_lens *l = &a->lens;
    const char *from = !a->input ? NULL : strcmp(a->input, "-") == 0 ? "stdin" : a->input;
    if (!l->ndim && !l->none)
        return EXIT_OK;
    free(r->lens);
    r->lens = NULL;
    r->vl_ndim = 0;
    if (l->none)
        return EXIT_OK;
    if (opt_lens_check(l, r->B, r->Nq, from))
        return EXIT_USAGE;
    const size_t n = l->shape[0] * l->shape[1];
    if (!(r->lens = malloc(n * sizeof *r->lens))) {
        cli_error("out of memory for --valid-lens");
        return EXIT_RUNTIME;
    }
    memcpy(r->lens, l->v, n * sizeof *r->lens);
    r->vl_ndim = l->ndim;
    return EXIT_OK;
}

/* The runs' inputs: the cells, or the file read once for every run; then
 * --valid-lens. */
static int load_runs(score_run *runs, size_t n, const struct score_args *a)
{
    char err[512];
    int usage = 0, status = 0;
    cJSON *root = NULL;
    if (a->input) {
        root = json_read_file(a->input, a->max_mem / 8, err, sizeof err);
        if (!root || check_members(root, err, sizeof err)) {
            cli_error("%s: %s", a->input, err);
            cJSON_Delete(root);
            return EXIT_RUNTIME;
        }
    }
    for (size_t i = 0; i < n && !status; i++) {
        const int kind = a->score_given ? a->score : (int)i;
        status = root ? run_from_json(&runs[i], kind, root, a, err, sizeof err, &usage)
                      : default_cell(&runs[i], kind, a, err, sizeof err);
    }
    cJSON_Delete(root);
    if (status) {
        if (usage || !a->input)
            cli_error("%s", err);
        else
            cli_error("%s: %s", a->input, err);
        return usage ? EXIT_USAGE : EXIT_RUNTIME;
    }
    for (size_t i = 0; i < n && status == EXIT_OK; i++)
        status = override_lens(&runs[i], a);
    return status;
}

/* Check the memory, allocate, compute. */
static int compute_runs(score_run *runs, size_t n, const struct score_args *a)
{
    size_t bytes = 0;
    int over = 0;
    for (size_t i = 0; i < n; i++)
        over |= run_alloc(&runs[i], &bytes, 1);
    if (cli_check_mem("the scores, weights and outputs", bytes, over, a->max_mem, NULL))
        return EXIT_RUNTIME;
    for (size_t i = 0; i < n; i++) {
        size_t unused = 0;
        if (run_alloc(&runs[i], &unused, 0)) {
            cli_error("out of memory for the scores and weights");
            return EXIT_RUNTIME;
        }
        run_forward(&runs[i]);
    }
    return EXIT_OK;
}

static void print_runs(const score_run *runs, size_t n, const struct score_args *a)
{
    for (size_t i = 0; i < n; i++) {
        printf(i ? "\n\n" : "");
        print_module(&runs[i], a);
        for (size_t b = 0; a->explain && b < runs[i].B; b++)
            explain_example(&runs[i], b);
        printf("\n");
        print_result(&runs[i], a);
    }
}

int cmd_score(int argc, char **argv)
{
    struct score_args a;
    score_run runs[NKINDS];
    int status = parse_args(argc, argv, &a);
    if (status != EXIT_OK) /* --help: the usage, exit 0 */
        return status == OPT_HELP_ASKED ? (usage_score(stdout), EXIT_OK) : status;
    if (a.masked_softmax)
        return print_masked_softmax(&a);
    status = output_check_files((const char *const[]){a.json, a.png},
                                (const char *const[]){"--json", "--png"}, 2);
    if (status == EXIT_OK)
        status = output_page_check(a.html);
    if (status != EXIT_OK)
        return status;
    memset(runs, 0, sizeof runs);
    const size_t n = a.score_given ? 1 : NKINDS;
    status = load_runs(runs, n, &a);
    if (status == EXIT_OK)
        status = compute_runs(runs, n, &a);
    if (status == EXIT_OK) {
        FILE *rep = output_report_stream(a.json);
        struct score_out o = {runs, n, &a, NULL};
        if (!(a.json && strcmp(a.json, "-") == 0))
            print_runs(runs, n, &a);
        if (a.json)
            status = output_json(a.json, write_json, &o, rep, "scores, weights and outputs as JSON");
        if (status == EXIT_OK && a.png)
            status = output_figures(a.font, a.png, figure_png, NULL, NULL, &o, rep);
        if (status == EXIT_OK && a.html)
            status = write_page(&o, rep);
    }
    for (size_t i = 0; i < n; i++)
        run_free(&runs[i]);
    return status;
}
