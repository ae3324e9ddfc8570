/* vit_model_file.c — vit_model_file.h, over model_json.h's shared parts. */
#include "vit_model_file.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "model_json.h"
#include "i18n.h"

/* The members after "command": the sizes, the labels. */
static void vit_model_sizes(json_writer *jw, const vit_model *m, const char *const *labels)
{
    json_string(jw, "task", "vit");
    json_uint(jw, "img_size", m->cfg.img);
    json_uint(jw, "patch_size", m->cfg.patch);
    json_uint(jw, "num_hiddens", m->cfg.hiddens);
    json_uint(jw, "mlp_num_hiddens", m->cfg.ffn);
    json_uint(jw, "num_heads", m->cfg.heads);
    json_uint(jw, "num_blks", m->cfg.layers);
    json_uint(jw, "channels", m->cfg.channels);
    json_uint(jw, "num_classes", m->cfg.classes);
    model_json_write_strings(jw, "labels", labels, m->cfg.classes);
}

static int vit_model_write(FILE *f, const vit_model *m, const char *const *labels)
{
    json_writer jw;
    model_json_begin(&jw, f);
    vit_model_sizes(&jw, m, labels);
    return model_json_end(&jw, m->params, m->nparams);
}

int vit_model_json(json_writer *jw, const char *key, const vit_model *m,
                   const char *const *labels)
{
    json_object_begin(jw, key, JSON_BLOCK);
    json_string(jw, "command", "train");
    vit_model_sizes(jw, m, labels);
    model_json_state_dict_write(jw, m->params, m->nparams);
    return json_end(jw);
}

int vit_model_save(const char *path, const vit_model *m, const char *const *labels, char *err,
                   size_t errlen)
{
    atomic_file af;
    if (atomic_open(&af, path, err, errlen))
        return -1;
    return model_json_commit(&af, path, vit_model_write(af.f, m, labels), err, errlen);
}

static const char *const vit_keys[] = {"command",   "task",        "img_size", "patch_size",
                                       "num_hiddens", "mlp_num_hiddens", "num_heads",
                                       "num_blks",  "channels",    "num_classes", "labels",
                                       "state_dict", NULL};

/* What follows "not a parameter of this model". */
static const char *vit_hint(const char *key)
{
    (void)key;
    return " (d2l's ViT: cls_token, pos_embedding, patch_embedding.conv.*, blks.N.*, head.*)";
}

static int vit_load_root(const cJSON *root, void *args, char *err, size_t errlen)
{
    vit_model *m = args;
    vit_config c;
    char why[160];
    memset(&c, 0, sizeof c);
    if (model_json_check_keys(root, vit_keys, "a ViT model file", err, errlen) != 0)
        return -1;
    const cJSON *task = model_json_required(root, "task", err, errlen);
    if (task == NULL)
        return -1;
    if (!cJSON_IsString(task) || strcmp(task->valuestring, "vit") != 0) {
        snprintf(err, errlen, "%s", _("$.task: expected \"vit\" (a Vision Transformer's file)"));
        return -1;
    }
    if (model_json_get_count(root, "img_size", 1, 4096, 1, &c.img, err, errlen) ||
        model_json_get_count(root, "patch_size", 1, 4096, 1, &c.patch, err, errlen) ||
        model_json_get_count(root, "num_hiddens", 1, 4096, 1, &c.hiddens, err, errlen) ||
        model_json_get_count(root, "mlp_num_hiddens", 1, 16384, 1, &c.ffn, err, errlen) ||
        model_json_get_count(root, "num_heads", 1, 4096, 1, &c.heads, err, errlen) ||
        model_json_get_count(root, "num_blks", 1, VIT_MAX_LAYERS, 1, &c.layers, err, errlen) ||
        model_json_get_count(root, "channels", 1, 1, 1, &c.channels, err, errlen) ||
        model_json_get_count(root, "num_classes", 10, 10, 1, &c.classes, err, errlen))
        return -1;
    if (vit_config_check(&c, why, sizeof why)) {
        snprintf(err, errlen, "$: %s", why);
        return -1;
    }
    const cJSON *sd = model_json_state_dict(root, err, errlen);
    if (sd == NULL)
        return -1;
    /* a lower bound on the parameters before anything is allocated:
     * the blocks' four d × d projections */
    size_t need = 0;
    int over = size_mul(c.hiddens, c.hiddens, &need) || size_mul(need, 4 * c.layers, &need);
    if (model_json_check_size(sd, need, over, "these sizes", err, errlen))
        return -1;
    if (vit_init(m, &c, 1, err, errlen) != 0)
        return -1;
    if (model_json_read_params(sd, m->params, m->nparams, vit_hint, err, errlen) != 0) {
        vit_free(m);
        return -1;
    }
    return 0;
}

int vit_model_load(const char *path, vit_model *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    return model_json_load(path, vit_load_root, m, err, errlen);
}
