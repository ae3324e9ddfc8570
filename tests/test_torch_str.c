/* test_torch_str.c — render/torch_str.h against PyTorch's own str().
 *
 * tests/ref/cells/format.json (scripts/gen_cells_ref.py) holds tensors of
 * many kinds — negative, whole, needing scientific notation, NaN and inf,
 * 0-D to 4-D, rows that wrap, summarised, with grad_fn suffixes — as
 * float32 bit patterns, and the bytes str() printed for each. Every case
 * is printed by attn's printer and compared byte for byte. Usage:
 * test_torch_str FORMAT_JSON
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json_in.h"
#include "term.h"
#include "torch_str.h"

/* f, printed by torch_str (or term_tensor3 when via_term) into new memory. */
static char *print(const float *t, const size_t *shape, size_t ndim, const torch_str_opts *o,
                   int via_term)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    if (via_term)
        term_tensor3(f, t, shape, 4, o->suffix);
    else if (torch_str(f, t, shape, ndim, o) != 0)
        fputs("(refused)", f);
    fclose(f);
    return text;
}

/* One case of the file: 1 when it could be read. */
static int run_case(const cJSON *c)
{
    const cJSON *name = cJSON_GetObjectItem(c, "name"), *shape = cJSON_GetObjectItem(c, "shape");
    const cJSON *bits = cJSON_GetObjectItem(c, "bits"), *want = cJSON_GetObjectItem(c, "str");
    const cJSON *suffix = cJSON_GetObjectItem(c, "suffix");
    size_t dims[TORCH_STR_MAX_DIMS], ndim = 0, n = 0;
    float *t;
    if (!cJSON_IsString(name) || !cJSON_IsArray(shape) || !cJSON_IsArray(bits) ||
        !cJSON_IsString(want))
        return 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, shape) dims[ndim++] = (size_t)it->valuedouble;
    t = malloc(((size_t)cJSON_GetArraySize(bits) + 1) * sizeof *t);
    if (!t)
        return 0;
    cJSON_ArrayForEach(it, bits)
    {
        uint32_t b = (uint32_t)it->valuedouble;
        memcpy(&t[n++], &b, sizeof b);
    }
    torch_str_opts o = {cJSON_IsTrue(cJSON_GetObjectItem(c, "integer")),
                        cJSON_IsString(suffix) ? suffix->valuestring : NULL, 0, 0};
    char *got = print(t, dims, ndim, &o, 0);
    CHECK(got && strcmp(got, want->valuestring) == 0);
    if (got && strcmp(got, want->valuestring) != 0)
        fprintf(stderr, "%s: got\n%s\nwant\n%s\n", name->valuestring, got, want->valuestring);
    free(got);
    /* term_tensor3 is the same printer, and a newline */
    if (ndim == 3 && !o.integer) {
        got = print(t, dims, ndim, &o, 1);
        size_t wl = strlen(want->valuestring);
        CHECK(got && strncmp(got, want->valuestring, wl) == 0 && strcmp(got + wl, "\n") == 0);
        free(got);
    }
    free(t);
    return 1;
}

int main(int argc, char **argv)
{
    char err[256];
    if (argc < 2) {
        fprintf(stderr, "usage: test_torch_str FORMAT_JSON\n");
        return 2;
    }
    cJSON *root = json_read_file(argv[1], (size_t)1 << 24, err, sizeof err);
    CHECK(root != NULL);
    if (!root) {
        fprintf(stderr, "%s\n", err);
        return check_summary("torch_str");
    }
    const cJSON *cases = cJSON_GetObjectItem(root, "cases"), *c;
    size_t n = 0;
    cJSON_ArrayForEach(c, cases)
    {
        CHECK(run_case(c));
        n++;
    }
    CHECK(n >= 25); /* the file holds every kind */
    /* torch.Size */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    torch_size_str(f, (size_t[]){2, 4, 100}, 3);
    torch_size_str(f, NULL, 0);
    fclose(f);
    CHECK(strcmp(text, "torch.Size([2, 4, 100])torch.Size([])") == 0);
    free(text);
    /* decimals: whole numbers as PyTorch prints the same an ulp away */
    const cJSON *nw;
    int found = 0;
    cJSON_ArrayForEach(nw, cases)
    {
        const cJSON *name = cJSON_GetObjectItem(nw, "name"), *want = cJSON_GetObjectItem(nw, "str");
        if (!cJSON_IsString(name) || strcmp(name->valuestring, "near_whole") != 0)
            continue;
        float whole[2] = {2, 12};
        char *got = print(whole, (size_t[]){2}, 1, &(torch_str_opts){0, NULL, 0, 1}, 0);
        CHECK(got && cJSON_IsString(want) && strcmp(got, want->valuestring) == 0);
        free(got);
        got = print(whole, (size_t[]){2}, 1, &(torch_str_opts){0, NULL, 0, 0}, 0);
        CHECK(got && strcmp(got, "tensor([ 2., 12.])") == 0);
        free(got);
        found = 1;
    }
    CHECK(found); /* the case is in the file */
    /* too many dimensions: refused, nothing printed */
    size_t big[TORCH_STR_MAX_DIMS + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    float one = 1;
    CHECK(torch_str(stdout, &one, big, TORCH_STR_MAX_DIMS + 1, NULL) == -1);
    cJSON_Delete(root);
    return check_summary("torch_str");
}
