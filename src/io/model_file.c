/* model_file.c — attn train's model as JSON (see model_file.h). */
#include "model_file.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "checked.h"
#include "json_in.h"
#include "json_writer.h"

#define MAX_MODEL_BYTES ((size_t)1 << 30)

static void write_strings(json_writer *jw, const char *key, const char *const *s, size_t n)
{
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t i = 0; i < n; i++)
        json_string(jw, NULL, s[i]);
    json_end(jw);
}

int model_file_write(FILE *f, const tmodel *m, const char *const *vocab,
                     const char *const *classes)
{
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "train");
    write_strings(&jw, "vocab", vocab, m->cfg.vocab);
    write_strings(&jw, "classes", classes, m->cfg.classes);
    json_uint(&jw, "num_hiddens", m->cfg.hiddens);
    json_uint(&jw, "num_heads", m->cfg.heads);
    if (tmodel_is_stack(&m->cfg)) {
        /* d2l's TransformerEncoder: AddNorm in every block, so no "addnorm" */
        json_uint(&jw, "num_layers", m->cfg.layers);
        json_uint(&jw, "ffn_num_hiddens", m->cfg.ffn);
        json_bool(&jw, "posenc", m->cfg.posenc);
        json_bool(&jw, "causal", m->cfg.causal);
    } else {
        json_bool(&jw, "posenc", m->cfg.posenc);
        json_bool(&jw, "addnorm", m->cfg.addnorm);
    }
    model_file_write_params(&jw, m->param, m->nparams);
    json_end(&jw);
    return json_writer_finish(&jw);
}

int model_file_save(const char *path, const tmodel *m, const char *const *vocab,
                    const char *const *classes, char *err, size_t errlen)
{
    atomic_file af;
    if (atomic_open(&af, path, err, errlen))
        return -1;
    if (model_file_write(af.f, m, vocab, classes)) {
        atomic_abort(&af);
        snprintf(err, errlen, "%s: internal error: malformed JSON", path);
        return -1;
    }
    return atomic_commit(&af, err, errlen);
}

/* An array of distinct non-empty strings at key, copied. */
static int get_names(const cJSON *root, const char *key, char ***out, size_t *n, char *err,
                     size_t errlen)
{
    const char **v = NULL;
    char path[32];
    snprintf(path, sizeof path, "$.%s", key);
    *out = NULL;
    *n = 0;
    if (!cJSON_GetObjectItemCaseSensitive(root, key)) {
        snprintf(err, errlen, "$: missing \"%s\"", key);
        return -1;
    }
    if (json_get_strings(cJSON_GetObjectItemCaseSensitive(root, key), path, &v, n, err, errlen))
        return -1;
    if (*n == 0) {
        snprintf(err, errlen, "%s: empty", path);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < *n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(v[i], v[j]) == 0) {
                snprintf(err, errlen, "%s[%zu]: \"%s\" appears twice", path, i, v[i]);
                free(v);
                return -1;
            }
    if (!(*out = calloc(*n, sizeof **out))) {
        free(v);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < *n; i++) {
        size_t len = strlen(v[i]) + 1;
        if (!((*out)[i] = malloc(len))) {
            train_strings_free(*out, *n);
            *out = NULL;
            free(v);
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
        memcpy((*out)[i], v[i], len);
    }
    free(v);
    return 0;
}

static int get_bool(const cJSON *root, const char *key, int *out, char *err, size_t errlen)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!b) {
        snprintf(err, errlen, "$: missing \"%s\"", key);
        return -1;
    }
    if (!cJSON_IsBool(b)) {
        snprintf(err, errlen, "$.%s: expected true or false, got %s", key, json_type_name(b));
        return -1;
    }
    *out = cJSON_IsTrue(b);
    return 0;
}

/* root an object of the known keys, saved by attn train. */
static int check_root(const cJSON *root, char *err, size_t errlen)
{
    static const char *const keys[] = {"command",   "vocab",      "classes",
                                       "num_hiddens", "num_heads", "num_layers",
                                       "ffn_num_hiddens", "posenc", "addnorm",
                                       "causal",    "state_dict", NULL};
    const cJSON *a, *cmd;
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "$: expected an object, got %s", json_type_name(root));
        return -1;
    }
    cJSON_ArrayForEach(a, root)
    {
        const char *const *k;
        for (k = keys; *k && strcmp(*k, a->string) != 0; k++)
            ;
        if (!*k) {
            snprintf(err, errlen, "$.%s: unknown key (a model of attn train has command, vocab, "
                     "classes, num_hiddens, num_heads, num_layers, ffn_num_hiddens, posenc, addnorm, "
                     "causal, state_dict)", a->string);
            return -1;
        }
    }
    cmd = cJSON_GetObjectItemCaseSensitive(root, "command");
    if (!cJSON_IsString(cmd) || strcmp(cmd->valuestring, "train") != 0) {
        snprintf(err, errlen, "$.command: expected \"train\" (a model saved by attn train)");
        return -1;
    }
    return 0;
}

/* An optional count at key, in [lo, hi], into *out (left as it is when
 * the key is absent). */
static int get_opt_count(const cJSON *root, const char *key, long lo, long hi, size_t *out,
                         char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    char path[48];
    long n;
    if (!v)
        return 0;
    snprintf(path, sizeof path, "$.%s", key);
    if (json_get_count(v, path, lo, hi, &n, err, errlen))
        return -1;
    *out = (size_t)n;
    return 0;
}

/* The configuration: vocab and classes (copied into *vocab, *classes),
 * num_hiddens, num_heads, posenc, and addnorm (a one-layer model) or
 * num_layers and ffn_num_hiddens (a stack, AddNorm implied); causal as
 * the file says, else as given. */
static int read_config(const cJSON *root, tmodel_config *cfg, char ***vocab, size_t *V,
                       char ***classes, size_t *C, char *err, size_t errlen)
{
    long d, h;
    if (get_names(root, "vocab", vocab, V, err, errlen) ||
        get_names(root, "classes", classes, C, err, errlen))
        return -1;
    if (strcmp((*vocab)[0], "<pad>") != 0) {
        snprintf(err, errlen, "$.vocab[0]: expected \"<pad>\", got \"%s\"", (*vocab)[0]);
        return -1;
    }
    if (!cJSON_GetObjectItemCaseSensitive(root, "num_hiddens") ||
        !cJSON_GetObjectItemCaseSensitive(root, "num_heads")) {
        snprintf(err, errlen, "$: missing \"num_hiddens\" or \"num_heads\"");
        return -1;
    }
    if (json_get_count(cJSON_GetObjectItemCaseSensitive(root, "num_hiddens"), "$.num_hiddens", 1,
                       100000, &d, err, errlen) ||
        json_get_count(cJSON_GetObjectItemCaseSensitive(root, "num_heads"), "$.num_heads", 1,
                       100000, &h, err, errlen))
        return -1;
    cfg->vocab = *V;
    cfg->classes = *C;
    cfg->hiddens = (size_t)d;
    cfg->heads = (size_t)h;
    cfg->layers = 1;
    if (get_opt_count(root, "num_layers", 1, TMODEL_MAX_LAYERS, &cfg->layers, err, errlen) ||
        get_opt_count(root, "ffn_num_hiddens", 0, 100000, &cfg->ffn, err, errlen))
        return -1;
    if (get_bool(root, "posenc", &cfg->posenc, err, errlen))
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(root, "causal") &&
        get_bool(root, "causal", &cfg->causal, err, errlen))
        return -1;
    if (tmodel_is_stack(cfg))
        cfg->addnorm = 1;
    else if (get_bool(root, "addnorm", &cfg->addnorm, err, errlen))
        return -1;
    return 0;
}

/* Parameter p from the state_dict sd, of its shape. */
static int read_param(const cJSON *sd, const tparam *p, char *err, size_t errlen)
{
    tensor *t = p->t, got = {0};
    char path[96], want[64], gs[64];
    snprintf(path, sizeof path, "$.state_dict[\"%s\"]", p->name);
    if (!cJSON_GetObjectItemCaseSensitive(sd, p->name)) {
        snprintf(err, errlen, "$.state_dict: missing \"%s\"", p->name);
        return -1;
    }
    if (json_get_tensor(cJSON_GetObjectItemCaseSensitive(sd, p->name), path, 1, 2, &got, err,
                        errlen))
        return -1;
    if (got.ndim != t->ndim || got.shape[0] != t->shape[0] ||
        (t->ndim == 2 && got.shape[1] != t->shape[1])) {
        tensor_shape_str(want, sizeof want, t->ndim, t->shape);
        tensor_shape_str(gs, sizeof gs, got.ndim, got.shape);
        snprintf(err, errlen, "%s: expected shape %s, got %s", path, want, gs);
        tensor_free(&got);
        return -1;
    }
    memcpy(t->data, got.data, t->size * sizeof(float));
    tensor_free(&got);
    return 0;
}

int model_file_read_params(const cJSON *sd, const tparam *params, size_t n, char *err,
                           size_t errlen)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, sd)
    {
        size_t i;
        for (i = 0; i < n && strcmp(params[i].name, a->string) != 0; i++)
            ;
        if (i == n) {
            snprintf(err, errlen, "$.state_dict[\"%s\"]: not a parameter of this model%s",
                     a->string, strstr(a->string, "bias") ? " (W_q.bias gives the biases)" : "");
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (read_param(sd, &params[i], err, errlen))
            return -1;
    return 0;
}

void model_file_write_params(json_writer *jw, const tparam *params, size_t n)
{
    json_object_begin(jw, "state_dict", JSON_BLOCK);
    for (size_t i = 0; i < n; i++) {
        const tensor *t = params[i].t;
        json_tensor(jw, params[i].name, t->data, t->ndim, t->shape);
    }
    json_end(jw);
}

size_t model_file_count_numbers(const cJSON *node)
{
    size_t n = cJSON_IsNumber(node) ? 1 : 0;
    for (const cJSON *c = node->child; c; c = c->next)
        n += model_file_count_numbers(c);
    return n;
}

/* A configuration that needs far more parameters than the state_dict sd
 * holds numbers is refused before anything is allocated: a file of 100
 * bytes saying num_hiddens 100000 would ask for 4·d² floats (160 GB).
 * Up to 1 Mi parameters, or twice the numbers in the file, are allocated
 * and then checked tensor by tensor (the messages name the tensor). The
 * count is a lower bound, (V + C + 4·d)·d: every model has the embedding,
 * W_q, W_k, W_v, W_o and the head. */
static int check_size(const cJSON *sd, const tmodel_config *cfg, char *err, size_t errlen)
{
    /* need = (V + C + L·(4·d + 2·H))·d: the weight matrices alone */
    size_t have = model_file_count_numbers(sd), need = 0, a = 0, b = 0;
    size_t L = cfg->layers ? cfg->layers : 1;
    int over = size_mul(4, cfg->hiddens, &a) || size_mul(2, cfg->ffn, &b) ||
               size_add(a, b, &a) || size_mul(a, L, &a) || size_add(a, cfg->vocab, &a) ||
               size_add(a, cfg->classes, &a) || size_mul(a, cfg->hiddens, &need);
    char count[64] = "more than this machine can address";
    if (!over && (need <= ((size_t)1 << 20) || need / 2 <= have))
        return 0;
    if (!over)
        snprintf(count, sizeof count, "at least %zu", need);
    snprintf(err, errlen,
             "$.state_dict: %zu numbers, far fewer than a model of num_hiddens %zu with %zu "
             "words and %zu classes has parameters (%s)",
             have, cfg->hiddens, cfg->vocab, cfg->classes, count);
    return -1;
}

static int load_root(const cJSON *root, tmodel *m, char ***vocab, size_t *V, char ***classes,
                     size_t *C, int causal, double dropout, char *err, size_t errlen)
{
    const cJSON *sd;
    tmodel_config cfg = {0};
    cfg.causal = causal;
    if (check_root(root, err, errlen) || read_config(root, &cfg, vocab, V, classes, C, err, errlen))
        return -1;
    cfg.dropout = dropout;
    sd = cJSON_GetObjectItemCaseSensitive(root, "state_dict");
    if (!cJSON_IsObject(sd)) {
        snprintf(err, errlen, "$.state_dict: expected an object, got %s", json_type_name(sd));
        return -1;
    }
    cfg.bias = cJSON_GetObjectItemCaseSensitive(
                   sd, tmodel_is_stack(&cfg) ? "blks.block0.attention.W_q.bias" : "W_q.bias") !=
               NULL;
    if (check_size(sd, &cfg, err, errlen) || tmodel_alloc(m, &cfg, err, errlen))
        return -1;
    return model_file_read_params(sd, m->param, m->nparams, err, errlen);
}

int model_file_load(const char *path, tmodel *m, char ***vocab, size_t *V, char ***classes,
                    size_t *C, int causal, double dropout, char *err, size_t errlen)
{
    char msg[512];
    cJSON *root = json_read_file(path, MAX_MODEL_BYTES, err, errlen);
    int rc;
    memset(m, 0, sizeof *m);
    *vocab = *classes = NULL;
    *V = *C = 0;
    if (!root)
        return -1;
    rc = load_root(root, m, vocab, V, classes, C, causal, dropout, msg, sizeof msg);
    cJSON_Delete(root);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, msg);
        tmodel_free(m);
        train_strings_free(*vocab, *V);
        train_strings_free(*classes, *C);
        *vocab = *classes = NULL;
        *V = *C = 0;
    }
    return rc;
}
