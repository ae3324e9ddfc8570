/* pool_input.c — attn pool's --input JSON (pool_input.h). */
#include "pool_input.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "json_in.h"
#include "i18n.h"

/* The list $.key of root: its length in *n (want: the length it must have,
 * 0 for any; other: the key that fixes it). 0, or -1 with the message. */
static int list_length(const cJSON *root, const char *key, size_t want, const char *other,
                       size_t *n, const char *name, char *err, size_t errlen)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!a) {
        snprintf(err, errlen, _("%s: $.%s: missing"), name, key);
        return -1;
    }
    if (!cJSON_IsArray(a)) {
        snprintf(err, errlen, _("%s: $.%s: expected an array of numbers, got %s"), name, key,
                 json_type_name(a));
        return -1;
    }
    *n = (size_t)cJSON_GetArraySize(a);
    if (*n == 0) {
        snprintf(err, errlen, _("%s: $.%s: expected at least one number, got an empty list"),
                 name, key);
        return -1;
    }
    if (want && *n != want) {
        snprintf(err, errlen, _("%s: $.%s: expected %zu numbers (as many as $.%s), got %zu"),
                 name, key, want, other, *n);
        return -1;
    }
    return 0;
}

/* The numbers of $.key into out (its length checked by list_length). */
static int list_numbers(const cJSON *root, const char *key, double *out, const char *name,
                        char *err, size_t errlen)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key), *v;
    size_t i = 0;
    cJSON_ArrayForEach(v, a)
    {
        if (!cJSON_IsNumber(v)) {
            snprintf(err, errlen, _("%s: $.%s[%zu]: expected a number, got %s"), name, key, i,
                     json_type_name(v));
            return -1;
        }
        if (!isfinite(v->valuedouble)) {
            snprintf(err, errlen, _("%s: $.%s[%zu]: expected a finite number"), name, key, i);
            return -1;
        }
        out[i++] = v->valuedouble;
    }
    return 0;
}

int pool_input_from_json(pool_data *d, const cJSON *root, const char *name, char *err,
                         size_t errlen)
{
    size_t n, ny, m, mt = 0;
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, _("%s: $: expected an object with x_train, y_train and x_test, "
                 "got %s"), name, json_type_name(root));
        return -1;
    }
    int truth = cJSON_GetObjectItemCaseSensitive(root, "y_truth") != NULL;
    if (list_length(root, "x_train", 0, NULL, &n, name, err, errlen) ||
        list_length(root, "y_train", n, "x_train", &ny, name, err, errlen) ||
        list_length(root, "x_test", 0, NULL, &m, name, err, errlen) ||
        (truth && list_length(root, "y_truth", m, "x_test", &mt, name, err, errlen)))
        return -1;
    if (pool_data_alloc(d, n, m, truth) < 0) {
        snprintf(err, errlen, _("%s: out of memory for %zu and %zu points"), name, n, m);
        return -1;
    }
    if (list_numbers(root, "x_train", d->x_train, name, err, errlen) ||
        list_numbers(root, "y_train", d->y_train, name, err, errlen) ||
        list_numbers(root, "x_test", d->x_test, name, err, errlen) ||
        (truth && list_numbers(root, "y_truth", d->y_truth, name, err, errlen))) {
        pool_data_free(d);
        return -1;
    }
    return 0;
}

int pool_input_load(pool_data *d, const char *path, size_t max_bytes, char *err,
                    size_t errlen)
{
    char why[384];
    cJSON *root = json_read_file(path, max_bytes, why, sizeof why);
    if (!root) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    int rc = pool_input_from_json(d, root, path, err, errlen);
    cJSON_Delete(root);
    return rc;
}
