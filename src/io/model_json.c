/* model_json.c — what every model file shares (see model_json.h). */
#include "model_json.h"

#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "encoder_task.h"
#include "json_in.h"
#include "i18n.h"

#define MAX_MODEL_BYTES ((size_t)1 << 30)

void model_json_write_strings(json_writer *jw, const char *key, const char *const *s, size_t n)
{
    json_array_begin(jw, key, JSON_INLINE);
    for (size_t i = 0; i < n; i++)
        json_string(jw, NULL, s[i]);
    json_end(jw);
}

void model_json_begin(json_writer *jw, FILE *f)
{
    json_writer_init(jw, f);
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_string(jw, "command", "train");
}

void model_json_state_dict_write(json_writer *jw, const tparam *params, size_t n)
{
    json_object_begin(jw, "state_dict", JSON_BLOCK);
    for (size_t i = 0; i < n; i++) {
        const tensor *t = params[i].t;
        json_tensor(jw, params[i].name, t->data, t->ndim, t->shape);
    }
    json_end(jw);
}

int model_json_end(json_writer *jw, const tparam *params, size_t n)
{
    model_json_state_dict_write(jw, params, n);
    json_end(jw);
    return json_writer_finish(jw);
}

int model_json_commit(atomic_file *af, const char *path, int write_rc, char *err, size_t errlen)
{
    if (write_rc) {
        atomic_abort(af);
        snprintf(err, errlen, _("%s: internal error: malformed JSON"), path);
        return -1;
    }
    return atomic_commit(af, err, errlen);
}

int model_json_load(const char *path,
                    int (*reader)(const cJSON *root, void *args, char *err, size_t errlen),
                    void *args, char *err, size_t errlen)
{
    char msg[512];
    cJSON *root = json_read_file(path, MAX_MODEL_BYTES, err, errlen);
    int rc;
    if (!root)
        return -1;
    rc = reader(root, args, msg, sizeof msg);
    cJSON_Delete(root);
    if (rc)
        snprintf(err, errlen, "%s: %s", path, msg);
    return rc;
}

const cJSON *model_json_required(const cJSON *root, const char *key, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v)
        snprintf(err, errlen, _("$: missing \"%s\""), key);
    return v;
}

const cJSON *model_json_state_dict(const cJSON *root, char *err, size_t errlen)
{
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(root, "state_dict");
    if (cJSON_IsObject(sd))
        return sd;
    snprintf(err, errlen, _("$.state_dict: expected an object, got %s"), json_type_name(sd));
    return NULL;
}

int model_json_check_keys(const cJSON *root, const char *const *keys, const char *what,
                          char *err, size_t errlen)
{
    const cJSON *a;
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, _("$: expected an object, got %s"), json_type_name(root));
        return -1;
    }
    cJSON_ArrayForEach(a, root)
    {
        const char *const *k;
        char list[512];
        size_t at = 0;
        for (k = keys; *k && strcmp(*k, a->string) != 0; k++)
            ;
        if (*k)
            continue;
        list[0] = '\0';
        for (k = keys; *k && at < sizeof list; k++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", k == keys ? "" : ", ",
                                   *k);
        snprintf(err, errlen, _("$.%s: unknown key (%s has %s)"), a->string, what, list);
        return -1;
    }
    return 0;
}

/* The n strings v copied into *out (allocated here): 0, or -1 with
 * "PATH: out of memory" and *out NULL. */
static int copy_names(const char *path, const char *const *v, size_t n, char ***out, char *err,
                      size_t errlen)
{
    if (!(*out = calloc(n, sizeof **out)))
        goto oom;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(v[i]) + 1;
        if (!((*out)[i] = malloc(len)))
            goto oom;
        memcpy((*out)[i], v[i], len);
    }
    return 0;
oom:
    snprintf(err, errlen, _("%s: out of memory"), path);
    train_strings_free(*out, n);
    *out = NULL;
    return -1;
}

/* The strings v at path, checked: as check says, not empty, each once. */
static int check_names(const char *path, const char *const *v, size_t n,
                       model_json_names_check *check, char *err, size_t errlen)
{
    if (check && check(path, v, n, err, errlen))
        return -1;
    if (n == 0) {
        snprintf(err, errlen, _("%s: empty"), path);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(v[i], v[j]) == 0) {
                snprintf(err, errlen, _("%s[%zu]: \"%s\" appears twice"), path, i, v[i]);
                return -1;
            }
    return 0;
}

int model_json_get_names(const cJSON *root, const char *key, model_json_names_check *check,
                         char ***out, size_t *n, char *err, size_t errlen)
{
    const char **v = NULL;
    const cJSON *node = model_json_required(root, key, err, errlen);
    char path[32];
    int rc;
    snprintf(path, sizeof path, "$.%s", key);
    *out = NULL;
    *n = 0;
    if (!node)
        return -1;
    if (json_get_strings(node, path, &v, n, err, errlen))
        return -1;
    rc = check_names(path, v, *n, check, err, errlen) ||
         copy_names(path, v, *n, out, err, errlen);
    free(v);
    if (rc)
        *n = 0;
    return rc ? -1 : 0;
}

int model_json_get_count(const cJSON *root, const char *key, long lo, long hi, int required,
                         size_t *out, char *err, size_t errlen)
{
    const cJSON *v = required ? model_json_required(root, key, err, errlen)
                              : cJSON_GetObjectItemCaseSensitive(root, key);
    char path[48];
    long n;
    if (!v)
        return required ? -1 : 0;
    snprintf(path, sizeof path, "$.%s", key);
    if (json_get_count(v, path, lo, hi, &n, err, errlen))
        return -1;
    *out = (size_t)n;
    return 0;
}

/* The numbers in the JSON tree at node. */
static size_t count_numbers(const cJSON *node)
{
    size_t n = cJSON_IsNumber(node) ? 1 : 0;
    for (const cJSON *c = node->child; c; c = c->next)
        n += count_numbers(c);
    return n;
}

int model_json_check_size(const cJSON *sd, size_t need, int over, const char *model, char *err,
                          size_t errlen)
{
    size_t have = count_numbers(sd);
    char count[64] = "more than this machine can address";
    if (!over && (need <= ((size_t)1 << 20) || need / 2 <= have))
        return 0;
    if (!over)
        snprintf(count, sizeof count, "at least %zu", need);
    snprintf(err, errlen,
             _("$.state_dict: %zu numbers, far fewer than a model of %s has parameters (%s)"), have,
             model, count);
    return -1;
}

/* Parameter p from the state_dict sd, of its shape. */
static int read_param(const cJSON *sd, const tparam *p, char *err, size_t errlen)
{
    tensor *t = p->t, got = {0};
    char path[96], want[64], gs[64];
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(sd, p->name);
    snprintf(path, sizeof path, "$.state_dict[\"%s\"]", p->name);
    if (!node) {
        snprintf(err, errlen, _("$.state_dict: missing \"%s\""), p->name);
        return -1;
    }
    /* matrices and vectors; a learned pos_embedding (1, max_len, d) is 3-D;
     * nested arrays, or a page's base64 object (json_writer.h) */
    if (cJSON_IsObject(node)
            ? json_get_tensor_base64(node, path, 1, t->ndim > 2 ? t->ndim : 2, &got, err, errlen)
            : json_get_tensor(node, path, 1, t->ndim > 2 ? t->ndim : 2, &got, err, errlen))
        return -1;
    if (got.ndim != t->ndim || got.shape[0] != t->shape[0] ||
        (t->ndim >= 2 && got.shape[1] != t->shape[1]) ||
        (t->ndim >= 3 && got.shape[2] != t->shape[2])) {
        tensor_shape_str(want, sizeof want, t->ndim, t->shape);
        tensor_shape_str(gs, sizeof gs, got.ndim, got.shape);
        snprintf(err, errlen, _("%s: expected shape %s, got %s"), path, want, gs);
        tensor_free(&got);
        return -1;
    }
    memcpy(t->data, got.data, t->size * sizeof(float));
    tensor_free(&got);
    return 0;
}

int model_json_read_params(const cJSON *sd, const tparam *params, size_t n,
                           const char *(*hint)(const char *key), char *err, size_t errlen)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, sd)
    {
        size_t i;
        for (i = 0; i < n && strcmp(params[i].name, a->string) != 0; i++)
            ;
        if (i == n) {
            snprintf(err, errlen, _("$.state_dict[\"%s\"]: not a parameter of this model%s"),
                     a->string, hint(a->string));
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (read_param(sd, &params[i], err, errlen))
            return -1;
    return 0;
}
