/* test_json_writer.c — the streaming JSON writer: exact text for each
 * layout, nesting, escapes, numbers, empty containers and misuse, and a
 * tensor read back with cJSON; json_in's reader of the page's base64
 * tensors: bytes worked out by hand, a round trip, every refusal. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json_in.h"
#include "json_writer.h"

/* Run a writer into memory: the text it wrote (the caller frees) and, in
 * *status, what the writer function returned. */
static char *written(int (*write)(json_writer *), int *status)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    json_writer jw;
    if (!f)
        return NULL;
    json_writer_init(&jw, f);
    *status = write(&jw);
    fclose(f);
    return text;
}

#define CHECK_TEXT(write, want_status, want)                                  \
    do {                                                                      \
        int status_ = -2;                                                     \
        char *text_ = written(write, &status_);                               \
        CHECK_INT(status_, want_status);                                      \
        CHECK(text_ != NULL && strcmp(text_, want) == 0);                     \
        if (text_ && strcmp(text_, want) != 0)                                \
            fprintf(stderr, "got:\n%s\nwant:\n%s\n", text_, want);            \
        free(text_);                                                          \
    } while (0)

/* A block object with inline arrays, a nested block object, an inline
 * object and every kind of value. */
static int w_nesting(json_writer *jw)
{
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_string(jw, "command", "posenc");
    json_uint(jw, "dim", 4);
    json_int(jw, "seed", -3);
    json_bool(jw, "rope", 1);
    json_bool(jw, "posenc", 0);
    json_null(jw, "valid_lens");
    json_array_begin(jw, "lens", JSON_INLINE);
    json_array_begin(jw, NULL, JSON_INLINE);
    json_int(jw, NULL, 1);
    json_int(jw, NULL, 2);
    json_end(jw);
    json_array_begin(jw, NULL, JSON_INLINE);
    json_int(jw, NULL, 3);
    json_end(jw);
    json_end(jw);
    json_object_begin(jw, "state", JSON_BLOCK);
    json_object_begin(jw, "cross", JSON_INLINE);
    json_string(jw, "rule", "n > d");
    json_uint(jw, "n", 513);
    json_end(jw);
    json_number(jw, "x", 0.1f);
    json_end(jw);
    json_end(jw);
    return json_writer_finish(jw);
}

static const char want_nesting[] =
    "{\n"
    "  \"command\": \"posenc\",\n"
    "  \"dim\": 4,\n"
    "  \"seed\": -3,\n"
    "  \"rope\": true,\n"
    "  \"posenc\": false,\n"
    "  \"valid_lens\": null,\n"
    "  \"lens\": [[1, 2], [3]],\n"
    "  \"state\": {\n"
    "    \"cross\": {\"rule\": \"n > d\", \"n\": 513},\n"
    "    \"x\": 0.100000001\n"
    "  }\n"
    "}\n";

/* Empty containers in each layout. */
static int w_empty(json_writer *jw)
{
    json_array_begin(jw, NULL, JSON_BLOCK);
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_end(jw);
    json_array_begin(jw, NULL, JSON_INLINE);
    json_end(jw);
    json_object_begin(jw, NULL, JSON_ALIGNED);
    json_end(jw);
    json_end(jw);
    return json_writer_finish(jw);
}

static const char want_empty[] = "[\n  {},\n  [],\n  {}\n]\n";

/* Aligned objects in a block array, each ending its members on one line. */
static int w_aligned(json_writer *jw)
{
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_array_begin(jw, "layers", JSON_BLOCK);
    for (int i = 0; i < 2; i++) {
        json_object_begin(jw, NULL, JSON_ALIGNED);
        json_string(jw, "layer", i ? "rnn" : "conv");
        json_array_begin(jw, "seconds", JSON_INLINE);
        json_number_exact(jw, NULL, 0.25);
        json_number_exact(jw, NULL, 1.5);
        json_end(jw);
        json_number_exact(jw, "slope", 1);
        json_relayout(jw, JSON_INLINE);
        json_number_exact(jw, "theory", 2);
        json_number_exact(jw, "fit", INFINITY);
        json_end(jw);
    }
    json_end(jw);
    json_end(jw);
    return json_writer_finish(jw);
}

static const char want_aligned[] =
    "{\n"
    "  \"layers\": [\n"
    "    {\"layer\": \"conv\",\n"
    "     \"seconds\": [0.25, 1.5],\n"
    "     \"slope\": 1, \"theory\": 2, \"fit\": null},\n"
    "    {\"layer\": \"rnn\",\n"
    "     \"seconds\": [0.25, 1.5],\n"
    "     \"slope\": 1, \"theory\": 2, \"fit\": null}\n"
    "  ]\n"
    "}\n";

/* Escapes in values and keys; numbers in both formats. */
static int w_escapes(json_writer *jw)
{
    json_array_begin(jw, NULL, JSON_INLINE);
    json_string(jw, NULL, "quote \" backslash \\ newline \n tab \t bell \a 苹果");
    json_number_exact(jw, NULL, 10000.0);
    json_number_exact(jw, NULL, 0.1);
    json_number_exact(jw, NULL, 1.0 / 3.0);
    json_number(jw, NULL, 1.0 / 3.0);
    json_number(jw, NULL, -2.5f);
    json_number(jw, NULL, NAN);
    json_object_begin(jw, NULL, JSON_INLINE);
    json_string(jw, "a\"b\r", "\b\f\x1f");
    json_end(jw);
    json_end(jw);
    return json_writer_finish(jw);
}

static const char want_escapes[] =
    "[\"quote \\\" backslash \\\\ newline \\n tab \\t bell \\u0007 苹果\", 10000, 0.1, "
    "0.3333333333333333, 0.333333333, -2.5, null, {\"a\\\"b\\r\": \"\\b\\f\\u001f\"}]\n";

/* A (2, 3) tensor as a member, a (2,) one and a scalar in an array. */
static int w_tensors(json_writer *jw)
{
    static const float m[6] = {1, 2, 3, 4, 5, 0.5f};
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_tensor(jw, "m", m, 2, (size_t[]){2, 3});
    json_array_begin(jw, "v", JSON_INLINE);
    json_tensor(jw, NULL, m, 1, (size_t[]){2});
    json_tensor(jw, NULL, m + 5, 0, NULL);
    json_end(jw);
    json_end(jw);
    return json_writer_finish(jw);
}

static const char want_tensors[] =
    "{\n"
    "  \"m\": [\n"
    "    [1, 2, 3],\n"
    "    [4, 5, 0.5]\n"
    "  ],\n"
    "  \"v\": [[1, 2], 0.5]\n"
    "}\n";

/* Misuse: each refused call writes nothing, and nothing after it either. */
static int w_no_key_in_object(json_writer *jw)
{
    json_object_begin(jw, NULL, JSON_INLINE);
    json_uint(jw, "n", 1);
    if (json_uint(jw, NULL, 2) != -1) /* no key inside an object */
        return -2;
    json_uint(jw, "m", 3); /* refused too: the writer has failed */
    json_end(jw);
    return json_writer_finish(jw);
}

static int w_key_in_array(json_writer *jw)
{
    json_array_begin(jw, NULL, JSON_INLINE);
    json_uint(jw, NULL, 1);
    if (json_string(jw, "k", "v") != -1)
        return -2;
    json_end(jw);
    return json_writer_finish(jw);
}

static int w_extra_end(json_writer *jw)
{
    json_array_begin(jw, NULL, JSON_INLINE);
    json_end(jw);
    if (json_end(jw) != -1 || json_null(jw, NULL) != -1) /* nothing open; a second document */
        return -2;
    return json_writer_finish(jw);
}

static int w_unclosed(json_writer *jw)
{
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_uint(jw, "n", 1);
    return json_writer_finish(jw);
}

static int w_key_at_top(json_writer *jw)
{
    json_uint(jw, "n", 1);
    return json_writer_finish(jw);
}

static int w_too_deep(json_writer *jw)
{
    for (int i = 0; i < JSON_MAX_DEPTH; i++)
        json_array_begin(jw, NULL, JSON_INLINE);
    if (json_array_begin(jw, NULL, JSON_INLINE) != -1)
        return -2;
    return json_writer_finish(jw);
}

/* The (2, 3, 4) tensor of the old test, read back with cJSON. */
static const float t3[2 * 3 * 4] = {
    0.1f, -2.5f, 3e-8f, 1e30f, 4, 5, 6, 7, 8, 9, 10, 11,
    12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 0.333333343f,
};

static int w_3d(json_writer *jw)
{
    json_tensor(jw, NULL, t3, 3, (size_t[]){2, 3, 4}); /* a non-square (2, 3, 4) */
    return json_writer_finish(jw);
}

static void check_3d(void)
{
    int status = -2;
    char *text = written(w_3d, &status);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    CHECK_INT(status, 0);
    CHECK(doc != NULL);
    if (doc) {
        CHECK_INT(cJSON_GetArraySize(doc), 2);
        for (int a = 0; a < 2; a++) {
            cJSON *m = cJSON_GetArrayItem(doc, a);
            CHECK_INT(cJSON_GetArraySize(m), 3);
            for (int b = 0; b < 3; b++) {
                cJSON *row = cJSON_GetArrayItem(m, b);
                CHECK_INT(cJSON_GetArraySize(row), 4);
                for (int c = 0; c < 4; c++) {
                    /* %.9g round-trips every float32 exactly */
                    float got = (float)cJSON_GetArrayItem(row, c)->valuedouble;
                    CHECK(got == t3[(a * 3 + b) * 4 + c]);
                }
            }
        }
        /* innermost arrays stay on one line */
        CHECK(strstr(text, "\n    [0.100000001, -2.5, 2.99999989e-08, 1.00000002e+30],\n") !=
              NULL);
        cJSON_Delete(doc);
    }
    free(text);
}

/* The page's tensors: base64 float32 from base64_from numbers on, the
 * shape alone above omit_above, and json_tensor_base64 whatever they say. */
static int w_page_tensors(json_writer *jw)
{
    static const float three[3] = {1.0f, -2.0f, 0.5f}, two[2] = {1.0f, 0.25f}, one[1] = {3.0f};
    jw->base64_from = 2;
    jw->omit_above = 2;
    json_object_begin(jw, NULL, JSON_BLOCK);
    json_tensor(jw, "small", one, 1, (size_t[]){1});  /* under base64_from: numbers */
    json_tensor(jw, "two", two, 1, (size_t[]){2});    /* base64, with '=' padding */
    json_tensor(jw, "big", three, 2, (size_t[]){1, 3}); /* above omit_above: shape only */
    json_tensor_base64(jw, "drawn", three, 1, (size_t[]){3});
    json_base64(jw, "bytes1", (const unsigned char *)"M", 1); /* RFC 4648's examples */
    json_base64(jw, "bytes2", (const unsigned char *)"Ma", 2);
    json_base64(jw, "bytes3", (const unsigned char *)"Man\xff", 4);
    json_base64(jw, "none", NULL, 0);
    json_array_begin(jw, "raw", JSON_INLINE);
    json_raw(jw, NULL, "{\"a\": [1, 2]}", 13);
    json_raw(jw, NULL, "null", 4);
    json_end(jw);
    json_end(jw);
    return json_writer_finish(jw);
}

static const char want_page_tensors[] =
    "{\n"
    "  \"small\": [3],\n"
    "  \"two\": {\"dtype\": \"float32\", \"shape\": [2], \"base64\": \"AACAPwAAgD4=\"},\n"
    "  \"big\": {\"dtype\": \"float32\", \"shape\": [1, 3], \"omitted\": \"3 numbers, more than the "
    "page keeps (2); --json writes them\"},\n"
    "  \"drawn\": {\"dtype\": \"float32\", \"shape\": [3], \"base64\": \"AACAPwAAAMAAAAA/\"},\n"
    "  \"bytes1\": \"TQ==\",\n"
    "  \"bytes2\": \"TWE=\",\n"
    "  \"bytes3\": \"TWFu/w==\",\n"
    "  \"none\": \"\",\n"
    "  \"raw\": [{\"a\": [1, 2]}, null]\n"
    "}\n";


/* json_get_tensor_base64 on the JSON text: 0 and the tensor, or -1 and
 * the message in err. */
static int read_b64(const char *text, tensor *t, char *err, size_t errlen)
{
    cJSON *node = cJSON_Parse(text);
    int rc = node ? json_get_tensor_base64(node, "$.w", 1, 3, t, err, errlen) : -2;
    cJSON_Delete(node);
    return rc;
}

#define CHECK_B64_ERR(text, want)                                              \
    do {                                                                       \
        tensor t_;                                                             \
        char e_[256] = "";                                                     \
        CHECK_INT(read_b64(text, &t_, e_, sizeof e_), -1);                     \
        CHECK(strcmp(e_, want) == 0);                                          \
        if (strcmp(e_, want) != 0)                                             \
            fprintf(stderr, "got: %s\nwant: %s\n", e_, want);                  \
    } while (0)

static void check_base64_read(void)
{
    tensor t;
    char err[256];
    /* 1.0f is 0x3F800000, -2.5f 0xC0200000: little-endian 00 00 80 3F and
     * 00 00 20 C0, in base64 "AACAPwAAIMA=" */
    CHECK_INT(read_b64("{\"dtype\": \"float32\", \"shape\": [2], \"base64\": \"AACAPwAAIMA=\"}", &t,
                       err, sizeof err), 0);
    CHECK_INT(t.ndim, 1);
    CHECK_INT(t.shape[0], 2);
    CHECK(t.data[0] == 1.0f && t.data[1] == -2.5f);
    tensor_free(&t);
    CHECK_INT(read_b64("{\"dtype\": \"float32\", \"shape\": [1, 1], \"base64\": \"AAAgwA==\"}", &t,
                       err, sizeof err), 0);
    CHECK(t.ndim == 2 && t.data[0] == -2.5f);
    tensor_free(&t);
    /* what json_tensor_base64 writes reads back bit for bit: (2, 3, 4) */
    {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        json_writer jw;
        CHECK(f != NULL);
        if (f) {
            json_writer_init(&jw, f);
            json_tensor_base64(&jw, NULL, t3, 3, (const size_t[]){2, 3, 4});
            CHECK_INT(json_writer_finish(&jw), 0);
            fclose(f);
            CHECK_INT(read_b64(text, &t, err, sizeof err), 0);
            CHECK(t.ndim == 3 && t.shape[0] == 2 && t.shape[1] == 3 && t.shape[2] == 4);
            CHECK(t.data && memcmp(t.data, t3, sizeof t3) == 0);
            tensor_free(&t);
        }
        free(text);
    }
    /* the refusals, each naming the place */
    CHECK_B64_ERR("{\"dtype\": \"float64\", \"shape\": [1], \"base64\": \"AACAPw==\"}",
                  "$.w.dtype: expected \"float32\", got float64");
    CHECK_B64_ERR("{\"shape\": [1], \"base64\": \"AACAPw==\"}",
                  "$.w.dtype: expected \"float32\", got nothing");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"shape\": [1], \"base64\": 3}",
                  "$.w.base64: expected a string, got a number");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"base64\": \"AACAPw==\"}",
                  "$.w.shape: expected an array of sizes, got nothing");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"shape\": [], \"base64\": \"\"}",
                  "$.w.shape: expected 1 to 3 sizes, got 0");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"shape\": [1, 0], \"base64\": \"\"}",
                  "$.w.shape[1]: expected an integer from 1 to 1073741824, got 0");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"shape\": [2], \"base64\": \"AACAPw==\"}",
                  "$.w.base64: 8 characters, the shape's 2 float32 want 12");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"shape\": [1], \"base64\": \"AAC*Pw==\"}",
                  "$.w.base64: character 4 is not a base64 digit");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"shape\": [1], \"base64\": \"AAC=Pw==\"}",
                  "$.w.base64: character 4 is not a base64 digit");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"shape\": [1], \"base64\": \"AACAPwAA\"}",
                  "$.w.base64: 6 bytes, the shape wants 4 (4 per float32)");
    CHECK_B64_ERR("{\"dtype\": \"float32\", \"shape\": [1], \"base64\": \"AADAfw==\"}",
                  "$.w: number 0 is not finite");
}

int main(void)
{
    CHECK_TEXT(w_page_tensors, 0, want_page_tensors);
    CHECK_TEXT(w_nesting, 0, want_nesting);
    CHECK_TEXT(w_empty, 0, want_empty);
    CHECK_TEXT(w_aligned, 0, want_aligned);
    CHECK_TEXT(w_escapes, 0, want_escapes);
    CHECK_TEXT(w_tensors, 0, want_tensors);
    CHECK_TEXT(w_no_key_in_object, -1, "{\"n\": 1");
    CHECK_TEXT(w_key_in_array, -1, "[1");
    CHECK_TEXT(w_extra_end, -1, "[]\n");
    CHECK_TEXT(w_unclosed, -1, "{\n  \"n\": 1");
    CHECK_TEXT(w_key_at_top, -1, "");
    CHECK_TEXT(w_too_deep, -1, "[[[[[[[[[[[[[[[[");
    check_3d();
    check_base64_read();
    return check_summary("test_json_writer");
}
