/* fuzz_json.c — libFuzzer harness for attn's JSON input loader.
 *
 * The bytes are parsed with cJSON and loaded by problem_from_json as
 * multihead (dot and additive scoring) and as selfattn input, and once
 * through problem_load from a file (json_read_file's own checks: trailing
 * text, empty files). Whatever loads and is small is run through the
 * reference loops (with the --explain trace), the fast loops with and
 * without stored weights (dot scoring), and written back as JSON, so the
 * sanitizers see every step a real run takes.
 *
 * tests/test_fuzz_regressions.c replays its corpus and regressions
 * (tests/fuzz/regressions/json-*) through it in every meson test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attention.h"
#include "attention_fast.h"
#include "fuzz.h"
#include "problem.h"

/* Small enough to run quickly: 1e6 weights and 1e6 (B, N, H) entries. */
#define FUZZ_MAX_MEM ((size_t)64 << 20)
#define FUZZ_MAX_ELEMS 1000000.0

static FILE *fuzz_sink(void)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    return sink;
}

/* Run a loaded problem the ways selfattn.c does, if it is small. */
static void fuzz_run(const problem *pr, int causal)
{
    const size_t H = pr->params.num_hiddens, NH = pr->params.num_heads;
    const size_t N = pr->Nq > pr->Nk ? pr->Nq : pr->Nk;
    size_t bytes;
    double nw = (double)pr->B * NH * pr->Nq * pr->Nk, nh = (double)pr->B * N * H;
    float *out, *weights, *tr[7];
    mha_trace trace;
    mha_masks mask;
    mha_dropout drop = {0.0, 0};
    char err[512];
    size_t i, wsize = pr->B * NH * pr->Nq * pr->Nk, hsize = pr->B * N * H;
    FILE *sink = fuzz_sink();

    if (problem_run_bytes(pr, 1, 1, &bytes) || bytes > FUZZ_MAX_MEM || nw > FUZZ_MAX_ELEMS ||
        nh > FUZZ_MAX_ELEMS || nh * (double)pr->Nk > 2e7)
        return;
    mask.valid_lens = pr->valid_lens;
    mask.per_query = pr->vl_ndim == 2;
    mask.causal = causal;

    out = malloc(pr->B * pr->Nq * H * sizeof *out + 1);
    weights = malloc(wsize * sizeof *weights + 1);
    for (i = 0; i < 7; i++)
        tr[i] = malloc((i >= 3 && i <= 5 ? wsize : hsize) * sizeof(float) + 1);
    if (!out || !weights || !tr[0] || !tr[1] || !tr[2] || !tr[3] || !tr[4] || !tr[5] ||
        !tr[6])
        goto done;
    trace.Q = tr[0];
    trace.K = tr[1];
    trace.V = tr[2];
    trace.scores = tr[3];
    trace.scaled = tr[4];
    trace.masked = tr[5];
    trace.concat = tr[6];

    if (mha_forward(out, weights, &trace, pr->queries.data, problem_keys(pr),
                    problem_values(pr), pr->B, pr->Nq, pr->Nk, &pr->params, &mask, &drop, err,
                    sizeof err) == 0 && sink)
        problem_write_json(sink, pr, pr->self ? "selfattn" : "multihead", out, weights);
    if (pr->params.score == SCORE_DOT) {
        if (mha_forward_fast(out, weights, pr->queries.data, problem_keys(pr),
                             problem_values(pr), pr->B, pr->Nq, pr->Nk, &pr->params, &mask,
                             &drop, err, sizeof err) == 0 && sink)
            problem_write_json(sink, pr, pr->self ? "selfattn" : "multihead", out, weights);
        if (mha_forward_fast(out, NULL, pr->queries.data, problem_keys(pr), problem_values(pr),
                             pr->B, pr->Nq, pr->Nk, &pr->params, &mask, &drop, err,
                             sizeof err) == 0 && sink)
            problem_write_json(sink, pr, pr->self ? "selfattn" : "multihead", out, NULL);
    }
done:
    free(out);
    free(weights);
    for (i = 0; i < 7; i++)
        free(tr[i]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    cores_set_threads(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* self, score given, score */
    static const struct { int self, score_given; score_kind score; } modes[] = {
        {0, 0, SCORE_DOT}, {0, 1, SCORE_ADDITIVE}, {1, 0, SCORE_DOT}, {1, 1, SCORE_ADDITIVE},
    };
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    const char *path;
    char err[1024];
    size_t m;
    int usage;
    problem pr;

    if (root) {
        for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            problem_opts o;
            memset(&o, 0, sizeof o);
            o.self = modes[m].self;
            o.score_given = modes[m].score_given;
            o.score = modes[m].score;
            o.max_mem = FUZZ_MAX_MEM;
            if (problem_from_json(&pr, root, "fuzz.json", &o, err, sizeof err, &usage) == 0) {
                fuzz_run(&pr, (int)(size & 1));
                problem_free(&pr);
            }
        }
        cJSON_Delete(root);
    }

    /* the same bytes from a file: json_read_file's checks */
    path = fuzz_file(0, data, size);
    if (path) {
        problem_opts o;
        memset(&o, 0, sizeof o);
        o.max_mem = FUZZ_MAX_MEM;
        if (problem_load(&pr, path, &o, err, sizeof err, &usage) == 0)
            problem_free(&pr);
    }
    return 0;
}
