/* test_json_out.c — the streaming JSON writer, read back with cJSON. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json_out.h"

/* Run a writer into memory and parse the result. */
static cJSON *written(void (*write)(FILE *), char **text)
{
    size_t len = 0;
    FILE *f = open_memstream(text, &len);
    cJSON *doc;
    if (!f)
        return NULL;
    write(f);
    fclose(f);
    doc = cJSON_Parse(*text);
    return doc;
}

static const float t3[2 * 3 * 4] = {
    0.1f, -2.5f, 3e-8f, 1e30f, 4, 5, 6, 7, 8, 9, 10, 11,
    12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 0.333333343f,
};

static void write_3d(FILE *f)
{
    size_t shape[3] = {2, 3, 4}; /* a non-square (2, 3, 4) */
    json_write_tensor(f, t3, 3, shape, 0);
}

static void write_strings(FILE *f)
{
    fputs("[", f);
    json_write_string(f, "quote \" backslash \\ newline \n tab \t bell \a 苹果");
    fputs(", ", f);
    json_write_double(f, 10000.0);
    fputs(", ", f);
    json_write_double(f, 0.1);
    fputs(", ", f);
    json_write_double(f, 1.0 / 3.0);
    fputs("]", f);
}

int main(void)
{
    char *text = NULL;
    cJSON *doc = written(write_3d, &text);
    int a, b, c;

    CHECK(doc != NULL);
    if (doc) {
        CHECK_INT(cJSON_GetArraySize(doc), 2);
        for (a = 0; a < 2; a++) {
            cJSON *m = cJSON_GetArrayItem(doc, a);
            CHECK_INT(cJSON_GetArraySize(m), 3);
            for (b = 0; b < 3; b++) {
                cJSON *row = cJSON_GetArrayItem(m, b);
                CHECK_INT(cJSON_GetArraySize(row), 4);
                for (c = 0; c < 4; c++) {
                    /* %.9g round-trips every float32 exactly */
                    float got = (float)cJSON_GetArrayItem(row, c)->valuedouble;
                    CHECK(got == t3[(a * 3 + b) * 4 + c]);
                }
            }
        }
        /* innermost arrays stay on one line */
        CHECK(strstr(text, "[0.100000001, -2.5, 2.99999989e-08, 1.00000002e+30]") != NULL);
        cJSON_Delete(doc);
    }
    free(text);

    text = NULL;
    doc = written(write_strings, &text);
    CHECK(doc != NULL);
    if (doc) {
        CHECK(strcmp(cJSON_GetArrayItem(doc, 0)->valuestring,
                     "quote \" backslash \\ newline \n tab \t bell \a 苹果") == 0);
        CHECK(cJSON_GetArrayItem(doc, 1)->valuedouble == 10000.0);
        CHECK(cJSON_GetArrayItem(doc, 2)->valuedouble == 0.1);
        CHECK(cJSON_GetArrayItem(doc, 3)->valuedouble == 1.0 / 3.0);
        /* the shortest exact text: "10000" and "0.1", not 17 digits */
        CHECK(strstr(text, ", 10000, 0.1, ") != NULL);
        CHECK(strstr(text, "\\u0007") != NULL);
        cJSON_Delete(doc);
    }
    free(text);
    return check_summary("test_json_out");
}
