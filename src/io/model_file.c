/* model_file.c — attn train's model as JSON (see model_file.h). */
#include "model_file.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "checked.h"
#include "json_in.h"
#include "model_json.h"
#include "i18n.h"

/* What is added to the embedding: "posenc": true or false (the sinusoid or
 * none, as files have always said), or "pos_embedding": "learned" (its
 * max_len is the shape of state_dict["pos_embedding"]). */
static void write_pos(json_writer *jw, const tmodel_config *cfg)
{
    if (cfg->learned)
        json_string(jw, "pos_embedding", "learned");
    else
        json_bool(jw, "posenc", cfg->posenc);
}

int model_file_write(FILE *f, const tmodel *m, const char *const *vocab,
                     const char *const *classes)
{
    json_writer jw;
    model_json_begin(&jw, f);
    model_json_write_strings(&jw, "vocab", vocab, m->cfg.vocab);
    model_json_write_strings(&jw, "classes", classes, m->cfg.classes);
    json_uint(&jw, "num_hiddens", m->cfg.hiddens);
    json_uint(&jw, "num_heads", m->cfg.heads);
    if (tmodel_is_stack(&m->cfg)) {
        /* d2l's TransformerEncoder: AddNorm in every block, so no "addnorm" */
        json_uint(&jw, "num_layers", m->cfg.layers);
        json_uint(&jw, "ffn_num_hiddens", m->cfg.ffn);
        write_pos(&jw, &m->cfg);
        json_bool(&jw, "causal", m->cfg.causal);
    } else {
        write_pos(&jw, &m->cfg);
        json_bool(&jw, "addnorm", m->cfg.addnorm);
    }
    return model_json_end(&jw, m->param, m->nparams);
}

int model_file_save(const char *path, const tmodel *m, const char *const *vocab,
                    const char *const *classes, char *err, size_t errlen)
{
    atomic_file af;
    if (atomic_open(&af, path, err, errlen))
        return -1;
    return model_json_commit(&af, path, model_file_write(af.f, m, vocab, classes), err, errlen);
}

static int get_bool(const cJSON *root, const char *key, int *out, char *err, size_t errlen)
{
    const cJSON *b = model_json_required(root, key, err, errlen);
    if (!b)
        return -1;
    if (!cJSON_IsBool(b)) {
        snprintf(err, errlen, _("$.%s: expected true or false, got %s"), key, json_type_name(b));
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
                                       "ffn_num_hiddens", "posenc", "pos_embedding",
                                       "addnorm",   "causal",    "state_dict", NULL};
    const cJSON *cmd;
    if (model_json_check_keys(root, keys, "a model of attn train", err, errlen))
        return -1;
    cmd = cJSON_GetObjectItemCaseSensitive(root, "command");
    if (!cJSON_IsString(cmd) || strcmp(cmd->valuestring, "train") != 0) {
        snprintf(err, errlen, "%s", _("$.command: expected \"train\" (a model saved by attn train)"));
        return -1;
    }
    return 0;
}

/* "pos_embedding": "sinusoid", "learned" or "none", and "posenc": true or
 * false (the sinusoid or none): either or both, agreeing, into cfg. */
static int read_pos(const cJSON *root, tmodel_config *cfg, char *err, size_t errlen)
{
    static const char *const kinds[] = {"sinusoid", "learned", "none"};
    const cJSON *pe = cJSON_GetObjectItemCaseSensitive(root, "pos_embedding");
    int kind = -1;
    if (pe) {
        for (int k = 0; k < 3 && cJSON_IsString(pe); k++)
            if (strcmp(pe->valuestring, kinds[k]) == 0)
                kind = k;
        if (kind < 0 && cJSON_IsString(pe)) {
            snprintf(err, errlen, _("$.pos_embedding: expected \"sinusoid\", \"learned\" or "
                     "\"none\", got \"%.40s\""), pe->valuestring);
            return -1;
        }
        if (kind < 0) {
            snprintf(err, errlen, _("$.pos_embedding: expected \"sinusoid\", \"learned\" or "
                     "\"none\", got %s"), json_type_name(pe));
            return -1;
        }
        cfg->posenc = kind == 0;
        cfg->learned = kind == 1;
        if (!cJSON_GetObjectItemCaseSensitive(root, "posenc"))
            return 0;
    }
    if (get_bool(root, "posenc", &cfg->posenc, err, errlen))
        return -1;
    if (kind >= 0 && cfg->posenc != (kind == 0)) {
        snprintf(err, errlen, _("$.posenc: %s, but $.pos_embedding is \"%s\""),
                 cfg->posenc ? "true" : "false", kinds[kind]);
        return -1;
    }
    return 0;
}

/* A learned P's max_len: the shape of state_dict["pos_embedding"], (1,
 * max_len, d) with max_len 1 … TRAIN_MAX_LEN. */
static int read_max_len(const cJSON *sd, tmodel_config *cfg, char *err, size_t errlen)
{
    const char *path = "$.state_dict[\"pos_embedding\"]";
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(sd, "pos_embedding");
    char got[64];
    tensor t;
    if (!p) {
        snprintf(err, errlen, "%s", _("$.state_dict: missing \"pos_embedding\" (the model's learned P)"));
        return -1;
    }
    if (json_get_tensor(p, path, 1, 3, &t, err, errlen))
        return -1;
    tensor_shape_str(got, sizeof got, t.ndim, t.shape);
    if (t.ndim != 3 || t.shape[0] != 1 || t.shape[2] != cfg->hiddens || t.shape[1] < 1 ||
        t.shape[1] > TRAIN_MAX_LEN) {
        snprintf(err, errlen, _("%s: expected shape (1, max_len, %zu) with max_len 1 … %d, got %s"),
                 path, cfg->hiddens, TRAIN_MAX_LEN, got);
        tensor_free(&t);
        return -1;
    }
    cfg->max_len = t.shape[1];
    tensor_free(&t);
    return 0;
}

/* The configuration: vocab and classes (copied into *vocab, *classes),
 * num_hiddens, num_heads, posenc, and addnorm (a one-layer model) or
 * num_layers and ffn_num_hiddens (a stack, AddNorm implied); causal as
 * the file says, else as given. */
static int read_config(const cJSON *root, tmodel_config *cfg, char ***vocab, size_t *V,
                       char ***classes, size_t *C, char *err, size_t errlen)
{
    if (model_json_get_names(root, "vocab", NULL, vocab, V, err, errlen) ||
        model_json_get_names(root, "classes", NULL, classes, C, err, errlen))
        return -1;
    if (strcmp((*vocab)[0], "<pad>") != 0) {
        snprintf(err, errlen, _("$.vocab[0]: expected \"<pad>\", got \"%s\""), (*vocab)[0]);
        return -1;
    }
    if (!cJSON_GetObjectItemCaseSensitive(root, "num_hiddens") ||
        !cJSON_GetObjectItemCaseSensitive(root, "num_heads")) {
        snprintf(err, errlen, "%s", _("$: missing \"num_hiddens\" or \"num_heads\""));
        return -1;
    }
    cfg->vocab = *V;
    cfg->classes = *C;
    cfg->layers = 1;
    /* num_hiddens and num_heads there (above), num_layers and
     * ffn_num_hiddens optional */
    if (model_json_get_count(root, "num_hiddens", 1, 100000, 0, &cfg->hiddens, err, errlen) ||
        model_json_get_count(root, "num_heads", 1, 100000, 0, &cfg->heads, err, errlen) ||
        model_json_get_count(root, "num_layers", 1, TMODEL_MAX_LAYERS, 0, &cfg->layers, err,
                             errlen) ||
        model_json_get_count(root, "ffn_num_hiddens", 0, 100000, 0, &cfg->ffn, err, errlen))
        return -1;
    if (read_pos(root, cfg, err, errlen))
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
    size_t need = 0, a = 0, b = 0;
    size_t L = cfg->layers ? cfg->layers : 1;
    int over = size_mul(4, cfg->hiddens, &a) || size_mul(2, cfg->ffn, &b) ||
               size_add(a, b, &a) || size_mul(a, L, &a) || size_add(a, cfg->vocab, &a) ||
               size_add(a, cfg->classes, &a) || size_mul(a, cfg->hiddens, &need);
    char model[128];
    snprintf(model, sizeof model, "num_hiddens %zu with %zu words and %zu classes", cfg->hiddens,
             cfg->vocab, cfg->classes);
    return model_json_check_size(sd, need, over, model, err, errlen);
}

/* What follows "not a parameter of this model" for the key k. */
static const char *param_hint(const char *k)
{
    return strstr(k, "bias") ? " (W_q.bias gives the biases)" : "";
}

/* model_file_load's arguments, for load_root. */
typedef struct load_args {
    tmodel *m;
    char ***vocab, ***classes;
    size_t *V, *C;
    int causal;
    double dropout;
} load_args;

static int load_root(const cJSON *root, void *args, char *err, size_t errlen)
{
    const load_args *a = args;
    tmodel *m = a->m;
    const cJSON *sd;
    tmodel_config cfg = {0};
    cfg.causal = a->causal;
    if (check_root(root, err, errlen) ||
        read_config(root, &cfg, a->vocab, a->V, a->classes, a->C, err, errlen))
        return -1;
    cfg.dropout = a->dropout;
    if (!(sd = model_json_state_dict(root, err, errlen)))
        return -1;
    if (cfg.learned && read_max_len(sd, &cfg, err, errlen))
        return -1;
    cfg.bias = cJSON_GetObjectItemCaseSensitive(
                   sd, tmodel_is_stack(&cfg) ? "blks.block0.attention.W_q.bias" : "W_q.bias") !=
               NULL;
    if (check_size(sd, &cfg, err, errlen) || tmodel_alloc(m, &cfg, err, errlen))
        return -1;
    return model_json_read_params(sd, m->param, m->nparams, param_hint, err, errlen);
}

int model_file_load(const char *path, tmodel *m, char ***vocab, size_t *V, char ***classes,
                    size_t *C, int causal, double dropout, char *err, size_t errlen)
{
    load_args a = {m, vocab, classes, V, C, causal, dropout};
    int rc;
    memset(m, 0, sizeof *m);
    *vocab = *classes = NULL;
    *V = *C = 0;
    rc = model_json_load(path, load_root, &a, err, errlen);
    if (rc) {
        tmodel_free(m);
        train_strings_free(*vocab, *V);
        train_strings_free(*classes, *C);
        *vocab = *classes = NULL;
        *V = *C = 0;
    }
    return rc;
}
