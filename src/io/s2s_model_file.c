/* s2s_model_file.c — a translation model as JSON (see s2s_model_file.h). */
#include "s2s_model_file.h"

#include <string.h>

#include "checked.h"
#include "json_in.h"
#include "model_json.h"
#include "encoder_task.h"
#include "i18n.h"

/* d2l's Vocab(…, reserved_tokens=['<pad>', '<bos>', '<eos>']): <unk> first. */
static const char *const reserved[4] = {"<unk>", "<pad>", "<bos>", "<eos>"};

int s2s_model_write(FILE *f, const s2s_model *m, const char *const *src_vocab,
                    const char *const *tgt_vocab, size_t num_steps)
{
    json_writer jw;
    model_json_begin(&jw, f);
    json_string(&jw, "task", "translate");
    json_string(&jw, "arch", m->cfg.arch->name);
    model_json_write_strings(&jw, "src_vocab", src_vocab, m->cfg.src_vocab);
    model_json_write_strings(&jw, "tgt_vocab", tgt_vocab, m->cfg.tgt_vocab);
    json_uint(&jw, "num_hiddens", m->cfg.hiddens);
    json_uint(&jw, "num_heads", m->cfg.heads);
    json_uint(&jw, "num_layers", m->cfg.layers);
    if (m->cfg.arch->has_ffn) /* Bahdanau's model has none */
        json_uint(&jw, "ffn_num_hiddens", m->cfg.ffn);
    json_uint(&jw, "num_steps", num_steps);
    if (m->has_seed) /* the built-in task's pairs: their seed */
        json_uint(&jw, "seed", m->seed);
    /* SPEC §15's --rnn and --score, written when not the default (a GRU
     * model's file stays as it was; the Transformer's default score is
     * the dot product, SPEC §16's "score": "additive" said) */
    if (m->cfg.rnn != S2S_RNN_GRU)
        json_string(&jw, "rnn", s2s_rnn_names[m->cfg.rnn]);
    if (m->cfg.score != m->cfg.arch->default_score)
        json_string(&jw, "score", s2s_score_names[m->cfg.score]);
    return model_json_end(&jw, m->param, m->nparams);
}

int s2s_model_save(const char *path, const s2s_model *m, const char *const *src_vocab,
                   const char *const *tgt_vocab, size_t num_steps, char *err, size_t errlen)
{
    atomic_file af;
    if (atomic_open(&af, path, err, errlen))
        return -1;
    return model_json_commit(&af, path, s2s_model_write(af.f, m, src_vocab, tgt_vocab, num_steps),
                             err, errlen);
}

/* ---- reading ------------------------------------------------------------ */

/* A vocabulary (model_json_names_check): d2l's four reserved tokens
 * first. */
static int check_reserved(const char *path, const char *const *v, size_t n, char *err,
                          size_t errlen)
{
    for (size_t i = 0; i < 4; i++)
        if (i >= n || strcmp(v[i], reserved[i]) != 0) {
            snprintf(err, errlen,
                     _("%s[%zu]: expected \"%s\" (d2l's Vocab begins <unk> <pad> "
                     "<bos> <eos>), got %s%s%s"),
                     path, i, reserved[i], i < n ? "\"" : "", i < n ? v[i] : "nothing",
                     i < n ? "\"" : "");
            return -1;
        }
    return 0;
}

/* The string at key, which must be want. */
static int expect_string(const cJSON *root, const char *key, const char *want, char *err,
                         size_t errlen)
{
    const cJSON *v = model_json_required(root, key, err, errlen);
    if (!v)
        return -1;
    if (!cJSON_IsString(v) || strcmp(v->valuestring, want) != 0) {
        snprintf(err, errlen, _("$.%s: expected \"%s\", got %s%s%s"), key, want,
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
                                       "ffn_num_hiddens", "num_steps",   "seed",       "rnn",
                                       "score",           "state_dict",  NULL};
    /* attn train's self-attention models (SPEC §9) have "vocab" and no
     * "task": named as such, before their keys are found unknown here (a
     * root that is no object has neither) */
    if (!cJSON_GetObjectItemCaseSensitive(root, "task") &&
        cJSON_GetObjectItemCaseSensitive(root, "vocab")) {
        snprintf(err, errlen, "%s",
                 _("$: a self-attention model of attn train (it has \"vocab\", no \"task\": "
                 "\"translate\"), not a translation model; attn selfattn --input reads it"));
        return -1;
    }
    return model_json_check_keys(root, keys, "a translation model", err, errlen) ||
           expect_string(root, "command", "train", err, errlen) ||
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
    const cJSON *v = model_json_required(root, "arch", err, errlen);
    char names[256];
    if (!v)
        return -1;
    if (cJSON_IsString(v) && (*arch = s2s_arch_find(v->valuestring)))
        return 0;
    arch_names(names, sizeof names);
    snprintf(err, errlen, _("$.arch: expected %s, got %s%s%s"), names,
             cJSON_IsString(v) ? "\"" : "", cJSON_IsString(v) ? v->valuestring : json_type_name(v),
             cJSON_IsString(v) ? "\"" : "");
    return -1;
}

/* The optional choice at key ("rnn" or "score"): one of names (NULL-
 * ended), its index into *out; absent: 0, the default. Only a recurrent
 * architecture (Bahdanau's) has either. */
static int get_choice(const cJSON *root, const char *key, const char *const *names,
                      const s2s_arch *arch, int *out, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    const int score = strcmp(key, "score") == 0;
    *out = score ? arch->default_score : 0;
    if (!v)
        return 0;
    if (!arch->recurrent && !score) {
        snprintf(err, errlen, _("$.%s: %s (\"arch\": \"%s\") has %s"), key, arch->label,
                 arch->name,
                 strcmp(key, "rnn") == 0 ? _("no recurrent layers")
                                         : _("one score, the scaled dot product"));
        return -1;
    }
    for (int i = 0; cJSON_IsString(v) && names[i]; i++)
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = i;
            return 0;
        }
    snprintf(err, errlen, _("$.%s: expected \"%s\" or \"%s\", got %s%s%s"), key, names[0],
             names[1], cJSON_IsString(v) ? "\"" : "",
             cJSON_IsString(v) ? v->valuestring : json_type_name(v),
             cJSON_IsString(v) ? "\"" : "");
    return -1;
}

/* A configuration that needs far more parameters than the state_dict sd
 * holds numbers is refused before anything is allocated (a file of 100
 * bytes saying num_hiddens 100000 would ask for gigabytes). The count is
 * a lower bound: the embeddings, dense and every block's weight matrices,
 * (Vs + 2·Vt + L·(12·d + 4·H))·d. */
static int check_size(const cJSON *sd, const s2s_config *cfg, char *err, size_t errlen)
{
    size_t need = 0, a = 0, b = 0, v = 0;
    int over = size_mul(12, cfg->hiddens, &a) || size_mul(4, cfg->ffn, &b) || size_add(a, b, &a) ||
               size_mul(a, cfg->layers, &a) || size_mul(2, cfg->tgt_vocab, &v) ||
               size_add(v, cfg->src_vocab, &v) || size_add(a, v, &a) ||
               size_mul(a, cfg->hiddens, &need);
    char model[128];
    snprintf(model, sizeof model, _("num_hiddens %zu, %zu layers and vocabularies of %zu and %zu"),
             cfg->hiddens, cfg->layers, cfg->src_vocab, cfg->tgt_vocab);
    return model_json_check_size(sd, need, over, model, err, errlen);
}

/* The configuration from root (vocabularies already read); biases when
 * the state_dict has the first attention's. */
static int read_config(const cJSON *root, s2s_config *cfg, size_t *num_steps, char *err,
                       size_t errlen)
{
    const cJSON *sd;
    const s2s_arch *arch = cfg->arch;
    if (model_json_get_count(root, "num_hiddens", 1, 100000, 1, &cfg->hiddens, err, errlen) ||
        model_json_get_count(root, "num_heads", 1, 100000, 1, &cfg->heads, err, errlen) ||
        model_json_get_count(root, "num_layers", 1, TMODEL_MAX_LAYERS, 1, &cfg->layers, err,
                             errlen) ||
        (arch->has_ffn &&
         model_json_get_count(root, "ffn_num_hiddens", 1, 100000, 1, &cfg->ffn, err, errlen)) ||
        model_json_get_count(root, "num_steps", 1, 100000, 1, num_steps, err, errlen) ||
        get_choice(root, "rnn", s2s_rnn_names, arch, &cfg->rnn, err, errlen) ||
        get_choice(root, "score", s2s_score_names, arch, &cfg->score, err, errlen))
        return -1;
    if (!arch->has_self && cfg->heads != 1) {
        snprintf(err, errlen, _("$.num_heads: %zu, but %s (\"arch\": \"%s\") has one attention"),
                 cfg->heads, arch->label, arch->name);
        return -1;
    }
    if (!arch->has_ffn && cJSON_GetObjectItemCaseSensitive(root, "ffn_num_hiddens")) {
        snprintf(err, errlen, _("$.ffn_num_hiddens: %s (\"arch\": \"%s\") has no FFN"),
                 arch->label, arch->name);
        return -1;
    }
    if (cfg->hiddens % cfg->heads != 0) {
        snprintf(err, errlen, _("$.num_heads: %zu does not divide num_hiddens %zu"), cfg->heads,
                 cfg->hiddens);
        return -1;
    }
    if (!(sd = model_json_state_dict(root, err, errlen)))
        return -1;
    cfg->bias =
        cJSON_GetObjectItemCaseSensitive(sd, "encoder.blks.block0.attention.W_q.bias") != NULL;
    return 0;
}

/* "seed" (optional): the built-in task's seed, 0 … 2^31 − 1 as --seed. */
static int read_seed(const cJSON *root, s2s_model *m, char *err, size_t errlen)
{
    size_t seed = 0;
    if (!cJSON_GetObjectItemCaseSensitive(root, "seed"))
        return 0;
    if (model_json_get_count(root, "seed", 0, 2147483647L, 1, &seed, err, errlen))
        return -1;
    m->has_seed = 1;
    m->seed = (unsigned long)seed;
    return 0;
}

/* What follows "not a parameter of this model" for the key k. */
static const char *param_hint(const char *k)
{
    return strstr(k, ".bias") && strstr(k, ".W_")
               ? " (an attention's bias: the file has no encoder.blks.block0."
                 "attention.W_q.bias, so the model has none)"
               : "";
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
        model_json_get_names(root, "src_vocab", check_reserved, src_vocab, &cfg.src_vocab, err,
                             errlen) ||
        model_json_get_names(root, "tgt_vocab", check_reserved, tgt_vocab, &cfg.tgt_vocab, err,
                             errlen) ||
        read_config(root, &cfg, num_steps, err, errlen) || check_size(sd, &cfg, err, errlen) ||
        s2s_alloc(m, &cfg, err, errlen) ||
        model_json_read_params(sd, m->param, m->nparams, param_hint, err, errlen) ||
        read_seed(root, m, err, errlen)) {
        s2s_free(m);
        train_strings_free(*src_vocab, cfg.src_vocab);
        train_strings_free(*tgt_vocab, cfg.tgt_vocab);
        *src_vocab = *tgt_vocab = NULL;
        return -1;
    }
    return 0;
}

/* s2s_model_load's arguments, for from_json. */
typedef struct load_args {
    s2s_model *m;
    char ***src_vocab, ***tgt_vocab;
    size_t *num_steps;
    double dropout;
} load_args;

static int from_json(const cJSON *root, void *args, char *err, size_t errlen)
{
    const load_args *a = args;
    return s2s_model_from_json(root, a->m, a->src_vocab, a->tgt_vocab, a->num_steps, a->dropout,
                               err, errlen);
}

int s2s_model_load(const char *path, s2s_model *m, char ***src_vocab, char ***tgt_vocab,
                   size_t *num_steps, double dropout, char *err, size_t errlen)
{
    load_args a = {m, src_vocab, tgt_vocab, num_steps, dropout};
    memset(m, 0, sizeof *m);
    *src_vocab = *tgt_vocab = NULL;
    return model_json_load(path, from_json, &a, err, errlen);
}
