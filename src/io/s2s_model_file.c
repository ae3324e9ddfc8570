/* s2s_model_file.c — a translation model as JSON (see s2s_model_file.h). */
#include "s2s_model_file.h"

#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "checked.h"
#include "json_in.h"
#include "json_writer.h"
#include "encoder_task.h"

#define MAX_MODEL_BYTES ((size_t)1 << 30)

/* d2l's Vocab(…, reserved_tokens=['<pad>', '<bos>', '<eos>']): <unk> first. */
static const char *const reserved[4] = {"<unk>", "<pad>", "<bos>", "<eos>"};

static void write_strings(json_writer *jw, const char *key, const char *const *s, size_t n)
{
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t i = 0; i < n; i++)
        json_string(jw, NULL, s[i]);
    json_end(jw);
}

int s2s_model_write(FILE *f, const s2s_model *m, const char *const *src_vocab,
                    const char *const *tgt_vocab, size_t num_steps)
{
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "train");
    json_string(&jw, "task", "translate");
    json_string(&jw, "arch", m->cfg.arch->name);
    write_strings(&jw, "src_vocab", src_vocab, m->cfg.src_vocab);
    write_strings(&jw, "tgt_vocab", tgt_vocab, m->cfg.tgt_vocab);
    json_uint(&jw, "num_hiddens", m->cfg.hiddens);
    json_uint(&jw, "num_heads", m->cfg.heads);
    json_uint(&jw, "num_layers", m->cfg.layers);
    if (m->cfg.arch->has_ffn) /* Bahdanau's model has none */
        json_uint(&jw, "ffn_num_hiddens", m->cfg.ffn);
    json_uint(&jw, "num_steps", num_steps);
    json_object_begin(&jw, "state_dict", JSON_BLOCK);
    for (size_t i = 0; i < m->nparams; i++) {
        const tensor *t = m->param[i].t;
        json_tensor(&jw, m->param[i].name, t->data, t->ndim, t->shape);
    }
    json_end(&jw);
    json_end(&jw);
    return json_writer_finish(&jw);
}

int s2s_model_save(const char *path, const s2s_model *m, const char *const *src_vocab,
                   const char *const *tgt_vocab, size_t num_steps, char *err, size_t errlen)
{
    atomic_file af;
    if (atomic_open(&af, path, err, errlen))
        return -1;
    if (s2s_model_write(af.f, m, src_vocab, tgt_vocab, num_steps)) {
        atomic_abort(&af);
        snprintf(err, errlen, "%s: internal error: malformed JSON", path);
        return -1;
    }
    return atomic_commit(&af, err, errlen);
}

/* ---- reading ------------------------------------------------------------ */

/* A vocabulary at key: d2l's four reserved tokens first, every token once;
 * copied into *out (n strings). */
static int get_vocab(const cJSON *root, const char *key, char ***out, size_t *n, char *err,
                     size_t errlen)
{
    const char **v = NULL;
    char path[32];
    int rc = -1;
    snprintf(path, sizeof path, "$.%s", key);
    *out = NULL;
    *n = 0;
    if (!cJSON_GetObjectItemCaseSensitive(root, key)) {
        snprintf(err, errlen, "$: missing \"%s\"", key);
        return -1;
    }
    if (json_get_strings(cJSON_GetObjectItemCaseSensitive(root, key), path, &v, n, err, errlen))
        return -1;
    for (size_t i = 0; i < 4; i++)
        if (i >= *n || strcmp(v[i], reserved[i]) != 0) {
            snprintf(err, errlen,
                     "%s[%zu]: expected \"%s\" (d2l's Vocab begins <unk> <pad> "
                     "<bos> <eos>), got %s%s%s",
                     path, i, reserved[i], i < *n ? "\"" : "", i < *n ? v[i] : "nothing",
                     i < *n ? "\"" : "");
            goto done;
        }
    for (size_t i = 0; i < *n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(v[i], v[j]) == 0) {
                snprintf(err, errlen, "%s[%zu]: \"%s\" appears twice", path, i, v[i]);
                goto done;
            }
    if (!(*out = calloc(*n, sizeof **out)))
        goto oom;
    for (size_t i = 0; i < *n; i++) {
        size_t len = strlen(v[i]) + 1;
        if (!((*out)[i] = malloc(len)))
            goto oom;
        memcpy((*out)[i], v[i], len);
    }
    rc = 0;
    goto done;
oom:
    snprintf(err, errlen, "%s: out of memory", path);
    train_strings_free(*out, *n);
    *out = NULL;
done:
    free(v);
    if (rc)
        *n = 0;
    return rc;
}

/* A required count at key in [lo, hi]. */
static int get_count(const cJSON *root, const char *key, long lo, long hi, size_t *out, char *err,
                     size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    char path[48];
    long n;
    if (!v) {
        snprintf(err, errlen, "$: missing \"%s\"", key);
        return -1;
    }
    snprintf(path, sizeof path, "$.%s", key);
    if (json_get_count(v, path, lo, hi, &n, err, errlen))
        return -1;
    *out = (size_t)n;
    return 0;
}

/* The string at key, which must be want. */
static int expect_string(const cJSON *root, const char *key, const char *want, char *err,
                         size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        snprintf(err, errlen, "$: missing \"%s\"", key);
        return -1;
    }
    if (!cJSON_IsString(v) || strcmp(v->valuestring, want) != 0) {
        snprintf(err, errlen, "$.%s: expected \"%s\", got %s%s%s", key, want,
                 cJSON_IsString(v) ? "\"" : "",
                 cJSON_IsString(v) ? v->valuestring : json_type_name(v),
                 cJSON_IsString(v) ? "\"" : "");
        return -1;
    }
    return 0;
}

/* root an object of the known keys, of a translation Transformer. */
static int check_root(const cJSON *root, char *err, size_t errlen)
{
    static const char *const keys[] = {"command",         "task",        "arch",       "src_vocab",
                                       "tgt_vocab",       "num_hiddens", "num_heads",  "num_layers",
                                       "ffn_num_hiddens", "num_steps",   "state_dict", NULL};
    const cJSON *a;
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "$: expected an object, got %s", json_type_name(root));
        return -1;
    }
    /* attn train's self-attention models (SPEC §9) have "vocab" and no
     * "task": named as such, before their keys are found unknown here */
    if (!cJSON_GetObjectItemCaseSensitive(root, "task") &&
        cJSON_GetObjectItemCaseSensitive(root, "vocab")) {
        snprintf(err, errlen,
                 "$: a self-attention model of attn train (it has \"vocab\", no \"task\": "
                 "\"translate\"), not a translation model; attn selfattn --input reads it");
        return -1;
    }
    cJSON_ArrayForEach(a, root)
    {
        const char *const *k;
        for (k = keys; *k && strcmp(*k, a->string) != 0; k++)
            ;
        if (!*k) {
            snprintf(err, errlen,
                     "$.%s: unknown key (a translation model has command, task, "
                     "arch, src_vocab, tgt_vocab, num_hiddens, num_heads, num_layers, "
                     "ffn_num_hiddens, num_steps, state_dict)",
                     a->string);
            return -1;
        }
    }
    return expect_string(root, "command", "train", err, errlen) ||
           expect_string(root, "task", "translate", err, errlen);
}

/* The names of s2s_archs as a message lists them: "a", "b" or "c". */
static void arch_names(char *out, size_t len)
{
    size_t n = 0, at = 0;
    while (s2s_archs[n])
        n++;
    out[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s\"%s\"",
                               i == 0 ? "" : i + 1 == n ? " or " : ", ", s2s_archs[i]->name);
}

/* "arch": the name of one of s2s_archs (SPEC §11: "transformer" or
 * "bahdanau"). */
static int get_arch(const cJSON *root, const s2s_arch **arch, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "arch");
    char names[256];
    if (!v) {
        snprintf(err, errlen, "$: missing \"arch\"");
        return -1;
    }
    if (cJSON_IsString(v) && (*arch = s2s_arch_find(v->valuestring)))
        return 0;
    arch_names(names, sizeof names);
    snprintf(err, errlen, "$.arch: expected %s, got %s%s%s", names,
             cJSON_IsString(v) ? "\"" : "", cJSON_IsString(v) ? v->valuestring : json_type_name(v),
             cJSON_IsString(v) ? "\"" : "");
    return -1;
}

/* The numbers in the tree at node. */
static size_t count_numbers(const cJSON *node)
{
    size_t n = cJSON_IsNumber(node) ? 1 : 0;
    for (const cJSON *c = node->child; c; c = c->next)
        n += count_numbers(c);
    return n;
}

/* A configuration that needs far more parameters than the state_dict sd
 * holds numbers is refused before anything is allocated (a file of 100
 * bytes saying num_hiddens 100000 would ask for gigabytes). The count is
 * a lower bound: the embeddings, dense and every block's weight matrices,
 * (Vs + 2·Vt + L·(12·d + 4·H))·d. */
static int check_size(const cJSON *sd, const s2s_config *cfg, char *err, size_t errlen)
{
    size_t have = count_numbers(sd), need = 0, a = 0, b = 0, v = 0;
    int over = size_mul(12, cfg->hiddens, &a) || size_mul(4, cfg->ffn, &b) || size_add(a, b, &a) ||
               size_mul(a, cfg->layers, &a) || size_mul(2, cfg->tgt_vocab, &v) ||
               size_add(v, cfg->src_vocab, &v) || size_add(a, v, &a) ||
               size_mul(a, cfg->hiddens, &need);
    char count[64] = "more than this machine can address";
    if (!over && (need <= ((size_t)1 << 20) || need / 2 <= have))
        return 0;
    if (!over)
        snprintf(count, sizeof count, "at least %zu", need);
    snprintf(err, errlen,
             "$.state_dict: %zu numbers, far fewer than a model of num_hiddens %zu, "
             "%zu layers and vocabularies of %zu and %zu has parameters (%s)",
             have, cfg->hiddens, cfg->layers, cfg->src_vocab, cfg->tgt_vocab, count);
    return -1;
}

/* Parameter i of m from the state_dict sd, of m's shape. */
static int read_param(const cJSON *sd, s2s_model *m, size_t i, char *err, size_t errlen)
{
    tensor *t = m->param[i].t, got = {0};
    char path[96], want[64], gs[64];
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(sd, m->param[i].name);
    snprintf(path, sizeof path, "$.state_dict[\"%s\"]", m->param[i].name);
    if (!node) {
        snprintf(err, errlen, "$.state_dict: missing \"%s\"", m->param[i].name);
        return -1;
    }
    if (json_get_tensor(node, path, 1, 2, &got, err, errlen))
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

/* The configuration from root (vocabularies already read); biases when
 * the state_dict has the first attention's. */
static int read_config(const cJSON *root, s2s_config *cfg, size_t *num_steps, char *err,
                       size_t errlen)
{
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(root, "state_dict");
    const s2s_arch *arch = cfg->arch;
    if (get_count(root, "num_hiddens", 1, 100000, &cfg->hiddens, err, errlen) ||
        get_count(root, "num_heads", 1, 100000, &cfg->heads, err, errlen) ||
        get_count(root, "num_layers", 1, TMODEL_MAX_LAYERS, &cfg->layers, err, errlen) ||
        (arch->has_ffn &&
         get_count(root, "ffn_num_hiddens", 1, 100000, &cfg->ffn, err, errlen)) ||
        get_count(root, "num_steps", 1, 100000, num_steps, err, errlen))
        return -1;
    if (!arch->has_self && cfg->heads != 1) {
        snprintf(err, errlen, "$.num_heads: %zu, but %s (\"arch\": \"%s\") has one attention",
                 cfg->heads, arch->label, arch->name);
        return -1;
    }
    if (!arch->has_ffn && cJSON_GetObjectItemCaseSensitive(root, "ffn_num_hiddens")) {
        snprintf(err, errlen, "$.ffn_num_hiddens: %s (\"arch\": \"%s\") has no FFN",
                 arch->label, arch->name);
        return -1;
    }
    if (cfg->hiddens % cfg->heads != 0) {
        snprintf(err, errlen, "$.num_heads: %zu does not divide num_hiddens %zu", cfg->heads,
                 cfg->hiddens);
        return -1;
    }
    if (!cJSON_IsObject(sd)) {
        snprintf(err, errlen, "$.state_dict: expected an object, got %s", json_type_name(sd));
        return -1;
    }
    cfg->bias =
        cJSON_GetObjectItemCaseSensitive(sd, "encoder.blks.block0.attention.W_q.bias") != NULL;
    return 0;
}

/* The state_dict into m: every key a parameter of this configuration,
 * every parameter there. */
static int read_state_dict(const cJSON *sd, s2s_model *m, char *err, size_t errlen)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, sd)
    {
        if (!s2s_find(m, a->string)) {
            snprintf(err, errlen, "$.state_dict[\"%s\"]: not a parameter of this model%s",
                     a->string,
                     strstr(a->string, ".bias") && strstr(a->string, ".W_")
                         ? " (an attention's bias: the file has no encoder.blks.block0."
                           "attention.W_q.bias, so the model has none)"
                         : "");
            return -1;
        }
    }
    for (size_t i = 0; i < m->nparams; i++)
        if (read_param(sd, m, i, err, errlen))
            return -1;
    return 0;
}

int s2s_model_from_json(const cJSON *root, s2s_model *m, char ***src_vocab, char ***tgt_vocab,
                        size_t *num_steps, double dropout, char *err, size_t errlen)
{
    s2s_config cfg = {0};
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(root, "state_dict");
    memset(m, 0, sizeof *m);
    *src_vocab = *tgt_vocab = NULL;
    cfg.dropout = dropout;
    if (check_root(root, err, errlen) || get_arch(root, &cfg.arch, err, errlen) ||
        get_vocab(root, "src_vocab", src_vocab, &cfg.src_vocab, err, errlen) ||
        get_vocab(root, "tgt_vocab", tgt_vocab, &cfg.tgt_vocab, err, errlen) ||
        read_config(root, &cfg, num_steps, err, errlen) || check_size(sd, &cfg, err, errlen) ||
        s2s_alloc(m, &cfg, err, errlen) || read_state_dict(sd, m, err, errlen)) {
        s2s_free(m);
        train_strings_free(*src_vocab, cfg.src_vocab);
        train_strings_free(*tgt_vocab, cfg.tgt_vocab);
        *src_vocab = *tgt_vocab = NULL;
        return -1;
    }
    return 0;
}

int s2s_model_load(const char *path, s2s_model *m, char ***src_vocab, char ***tgt_vocab,
                   size_t *num_steps, double dropout, char *err, size_t errlen)
{
    char msg[512];
    cJSON *root = json_read_file(path, MAX_MODEL_BYTES, err, errlen);
    int rc;
    memset(m, 0, sizeof *m);
    *src_vocab = *tgt_vocab = NULL;
    if (!root)
        return -1;
    rc = s2s_model_from_json(root, m, src_vocab, tgt_vocab, num_steps, dropout, msg, sizeof msg);
    cJSON_Delete(root);
    if (rc)
        snprintf(err, errlen, "%s: %s", path, msg);
    return rc;
}
