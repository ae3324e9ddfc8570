/* train_page.c — `attn train --html FILE` (see train_page.h).
 *
 * Each run keeps, for every logged step, the attention of its probes:
 * (steps kept, probes, layers, heads, T, T) float32, T the probes' length
 * (probes of another length than the first are not kept). A run that would
 * keep more than TP_MAX_FLOATS numbers keeps every stride-th logged step
 * (and the last); its history (--json's) keeps every step. */
#include "train_page.h"

#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "json_writer.h"
#include "page_out.h"
#include "i18n.h"

#define TP_MAX_RUNS 3
#define TP_MAX_PROBES 4
/* TP_MAX_FLOATS (train_page.h): per run, 8 MiB of float32 */

/* The layers whose attention trainer_attention gives: (L, NH, T, T), one
 * grid row each on the page (the one-layer model: one). */
#define TP_LAYERS(tr) ((tr)->model.cfg.layers ? (tr)->model.cfg.layers : (size_t)1)

struct tp_probe {
    int tokens[TRAIN_MAX_LEN];
    char **labels; /* (len,) copies */
    size_t len, at;
    char *name;    /* NULL: the whole matrix is shown */
};

struct tp_run {
    char *label;
    size_t layers, heads, T;
    int causal;
    long steps, every, stride;
    size_t logged;          /* logged steps seen so far */
    struct tp_probe probes[TP_MAX_PROBES];
    size_t nprobes;
    long *kept;             /* (cap,) the steps kept */
    float *att;             /* (cap, nprobes, layers, heads, T, T) */
    size_t nkept, cap;
};

static struct {
    int open;
    const char *path;
    int argc;
    char **argv;
    struct tp_run runs[TP_MAX_RUNS];
    size_t nruns;
} pg;

int train_page_open(const char *path, int argc, char **argv)
{
    int status;
    memset(&pg, 0, sizeof pg);
    if (!path)
        return EXIT_OK;
    if ((status = output_page_check(path)) != EXIT_OK)
        return status;
    pg.open = 1;
    pg.path = path;
    pg.argc = argc;
    pg.argv = argv;
    return EXIT_OK;
}

void train_page_close(void)
{
    for (size_t r = 0; r < pg.nruns; r++) {
        struct tp_run *run = &pg.runs[r];
        for (size_t p = 0; p < run->nprobes; p++) {
            for (size_t k = 0; k < run->probes[p].len; k++)
                free(run->probes[p].labels[k]);
            free(run->probes[p].labels);
            free(run->probes[p].name);
        }
        free(run->label);
        free(run->kept);
        free(run->att);
    }
    memset(&pg, 0, sizeof pg);
    page_stream_close();
}

int train_page_logged(long s, long steps, long every)
{
    return s == 0 || s == 1 || s == steps || s % every == 0;
}

long train_page_stride(size_t per, long steps, long every, size_t max_floats)
{
    size_t nlogged = 0, all;
    for (long s = 0; s <= steps; s++)
        nlogged += (size_t)train_page_logged(s, steps, every);
    if (per == 0)
        return 1;
    if (size_mul(nlogged, per, &all))
        return (long)nlogged; /* too many to count: the first and the last */
    return all > max_floats ? (long)((all + max_floats - 1) / max_floats) : 1;
}

int train_page_run(const trainer *tr, const char *label, long steps, long every)
{
    struct tp_run *run;
    if (!pg.open)
        return EXIT_OK;
    if (pg.nruns == TP_MAX_RUNS) {
        cli_error("--html: internal error: more than %d runs", TP_MAX_RUNS);
        return EXIT_RUNTIME;
    }
    run = &pg.runs[pg.nruns++];
    memset(run, 0, sizeof *run);
    if (label && !(run->label = strdup(label))) {
        cli_error("--html: out of memory");
        return EXIT_RUNTIME;
    }
    run->layers = TP_LAYERS(tr);
    run->heads = tr->model.cfg.heads;
    run->causal = tr->model.cfg.causal;
    run->steps = steps;
    run->every = every;
    run->stride = 1;
    return EXIT_OK;
}

int train_page_probe(const int *tokens, size_t len, size_t at, const char *const *labels,
                     const char *name)
{
    struct tp_run *run;
    struct tp_probe *p;
    if (!pg.open || pg.nruns == 0)
        return EXIT_OK;
    run = &pg.runs[pg.nruns - 1];
    if (run->nprobes == TP_MAX_PROBES || (run->nprobes && len != run->T) || len > TRAIN_MAX_LEN)
        return EXIT_OK; /* one length for the grid's panels */
    p = &run->probes[run->nprobes];
    memset(p, 0, sizeof *p);
    p->len = len;
    p->at = at;
    memcpy(p->tokens, tokens, len * sizeof *tokens);
    if (!(p->labels = calloc(len ? len : 1, sizeof *p->labels)) ||
        (name && !(p->name = strdup(name)))) {
        cli_error("--html: out of memory");
        return EXIT_RUNTIME;
    }
    run->nprobes++; /* counted now: close frees what was copied */
    for (size_t k = 0; k < len; k++)
        if (!(p->labels[k] = strdup(labels[k]))) {
            cli_error("--html: out of memory");
            return EXIT_RUNTIME;
        }
    run->T = len;
    return EXIT_OK;
}

/* The numbers of one kept step of run: nprobes × layers × heads × T × T. */
static size_t step_floats(const struct tp_run *run)
{
    return run->nprobes * run->layers * run->heads * run->T * run->T;
}

/* Before the first record: the stride that keeps the run within
 * TP_MAX_FLOATS, and room for the steps it keeps. */
static int plan(struct tp_run *run)
{
    size_t nlogged = 0, per = step_floats(run), room;
    for (long s = 0; s <= run->steps; s++)
        nlogged += (size_t)train_page_logged(s, run->steps, run->every);
    run->stride = train_page_stride(per, run->steps, run->every, TP_MAX_FLOATS);
    run->cap = (nlogged + (size_t)run->stride - 1) / (size_t)run->stride + 1; /* + the last */
    if (size_mul(run->cap, per ? per : 1, &room) || size_mul(room, sizeof(float), &room) ||
        !(run->kept = malloc(run->cap * sizeof *run->kept)) || !(run->att = malloc(room))) {
        cli_error("--html: out of memory for the attention of %zu steps", run->cap);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* The run's members the page draws with, before its steps; the probes
 * one a line (JSON_BLOCK) or all on one (JSON_INLINE). */
static void run_members(json_writer *jw, const struct tp_run *run, json_layout probes)
{
    json_string(jw, "label", run->label); /* NULL: null */
    json_uint(jw, "layers", run->layers);
    json_uint(jw, "heads", run->heads);
    json_uint(jw, "length", run->T);
    json_bool(jw, "causal", run->causal);
    json_int(jw, "stride", run->stride);
    json_array_begin(jw, "probes", probes);
    for (size_t p = 0; p < run->nprobes; p++) {
        const struct tp_probe *pr = &run->probes[p];
        json_object_begin(jw, NULL, JSON_INLINE);
        json_string(jw, "name", pr->name); /* NULL: null */
        page_tokens(jw, "tokens", (const char *const *)pr->labels, pr->len);
        json_uint(jw, "at", pr->at);
        json_end(jw);
    }
    json_end(jw);
}

/* The stream's line for logged step s of the current run (train_page.h):
 * the run's line first when s is its first; att: the step's attention,
 * NULL when it is not kept. EXIT_OK, or EXIT_RUNTIME after its message. */
static int stream_step(const struct tp_run *run, long s, const train_page_stats *st,
                       const float *att)
{
    FILE *f = page_stream();
    json_writer jw;
    if (!f)
        return EXIT_OK;
    if (run->logged == 1) { /* the run's first logged step */
        json_writer_init(&jw, f);
        json_object_begin(&jw, NULL, JSON_INLINE);
        json_uint(&jw, "run", pg.nruns - 1);
        page_head(&jw, "train", "attn train", pg.argc, pg.argv, cmap_find("Reds"));
        run_members(&jw, run, JSON_INLINE);
        json_int(&jw, "steps", run->steps);
        json_int(&jw, "every", run->every);
        json_end(&jw);
        if (page_stream_line(&jw))
            return EXIT_RUNTIME;
    }
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_INLINE);
    json_uint(&jw, "run", pg.nruns - 1);
    json_int(&jw, "step", s);
    if (st) { /* as --json's history has it */
        json_object_begin(&jw, "history", JSON_INLINE);
        json_int(&jw, "step", st->step);
        json_number_exact(&jw, "loss", st->loss);
        json_number_exact(&jw, "train_accuracy", st->train_accuracy);
        json_number_exact(&jw, "heldout_accuracy", st->heldout_accuracy); /* NaN: null */
        json_end(&jw);
    } else {
        json_null(&jw, "history");
    }
    if (att)
        json_tensor_base64(&jw, "attention", att, 5,
                           (size_t[]){run->nprobes, run->layers, run->heads, run->T, run->T});
    json_end(&jw);
    return page_stream_line(&jw) ? EXIT_RUNTIME : EXIT_OK;
}

int train_page_record(trainer *tr, long s, const train_page_stats *st)
{
    struct tp_run *run;
    char err[512];
    if (!pg.open || pg.nruns == 0)
        return EXIT_OK;
    run = &pg.runs[pg.nruns - 1];
    if (run->nprobes == 0 || !train_page_logged(s, run->steps, run->every))
        return EXIT_OK;
    if (!run->att && plan(run) != EXIT_OK)
        return EXIT_RUNTIME;
    /* every stride-th logged step, and the last */
    if (run->logged++ % (size_t)run->stride != 0 && s != run->steps)
        return stream_step(run, s, st, NULL);
    if (run->nkept == run->cap)
        return EXIT_OK; /* cannot happen: plan counted them */
    float *slot = run->att + run->nkept * step_floats(run);
    for (size_t p = 0; p < run->nprobes; p++) {
        const struct tp_probe *pr = &run->probes[p];
        float *w = slot + p * run->layers * run->heads * run->T * run->T; /* (L, NH, T, T) */
        if (trainer_attention(tr, pr->tokens, pr->len, w, err, sizeof err)) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
    }
    run->kept[run->nkept++] = s;
    return stream_step(run, s, st, slot);
}

/* The "page" object: the runs' probes, steps and attention. */
static int write_page_object(FILE *f)
{
    json_writer jw;
    json_writer_init(&jw, f);
    jw.base64_from = PAGE_BASE64_FROM;
    json_object_begin(&jw, NULL, JSON_BLOCK);
    page_head(&jw, "train", "attn train", pg.argc, pg.argv, cmap_find("Reds"));
    json_array_begin(&jw, "runs", JSON_BLOCK);
    for (size_t r = 0; r < pg.nruns; r++) {
        const struct tp_run *run = &pg.runs[r];
        json_object_begin(&jw, NULL, JSON_BLOCK);
        run_members(&jw, run, JSON_BLOCK);
        json_array_begin(&jw, "steps", JSON_INLINE);
        for (size_t i = 0; i < run->nkept; i++)
            json_int(&jw, NULL, run->kept[i]);
        json_end(&jw);
        json_tensor_base64(&jw, "attention", run->att ? run->att : (const float[]){0}, 6,
                           (size_t[]){run->att ? run->nkept : 0, run->nprobes, run->layers,
                                      run->heads, run->T, run->T});
        json_end(&jw);
    }
    json_end(&jw);
    json_end(&jw);
    return json_writer_finish(&jw);
}

static int page_object(FILE *f, const void *ctx)
{
    (void)ctx;
    return write_page_object(f);
}

/* text without its trailing white space, as a length */
static size_t trimmed(const char *text, size_t len)
{
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    return len;
}

int train_page_write(int (*write_json)(FILE *f, const void *ctx), const void *const *ctxs,
                     size_t nruns, const char *compare, FILE *rep)
{
    char *docs[TP_MAX_RUNS] = {NULL, NULL, NULL}, *page = NULL, *data = NULL;
    size_t dlen[TP_MAX_RUNS] = {0, 0, 0}, plen = 0, len = 0;
    FILE *f = NULL;
    int status = EXIT_RUNTIME;
    char what[160];
    if (!pg.open)
        return EXIT_OK;
    if (nruns > TP_MAX_RUNS)
        nruns = TP_MAX_RUNS;
    for (size_t i = 0; i < nruns; i++)
        if (page_doc_text(write_json, ctxs[i], &docs[i], &dlen[i]))
            goto fail;
    if (page_doc_text(page_object, NULL, &page, &plen))
        goto fail;
    if (nruns == 1) {
        /* --json's object with "page" as its last member */
        if (page_data_join(docs[0], dlen[0], page, plen, &data, &len))
            goto fail;
    } else {
        json_writer jw;
        if (!(f = open_memstream(&data, &len)))
            goto fail;
        json_writer_init(&jw, f);
        json_object_begin(&jw, NULL, JSON_BLOCK);
        json_string(&jw, "command", "train");
        json_bool(&jw, compare ? compare : "compare_posenc", 1);
        json_array_begin(&jw, "runs", JSON_BLOCK);
        for (size_t i = 0; i < nruns; i++)
            json_raw(&jw, NULL, docs[i], trimmed(docs[i], dlen[i]));
        json_end(&jw);
        json_raw(&jw, "page", page, trimmed(page, plen));
        json_end(&jw);
        if (json_writer_finish(&jw))
            goto fail;
        if (ferror(f) | fclose(f)) {
            f = NULL;
            goto fail;
        }
        f = NULL;
    }
    snprintf(what, sizeof what, i18n_plural("a page of the attention at %zu step",
                                            "a page of the attention at %zu steps", pg.runs[0].nkept),
             pg.runs[0].nkept);
    /* ", A and B", ", A, B and C": the runs' labels, English in the page's
     * data, in the reader's language here */
    for (size_t i = 0; i < nruns && nruns > 1; i++)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s",
                 i == 0 || i + 1 < nruns ? _(", ") : _(" and "),
                 pg.runs[i].label ? _(pg.runs[i].label) : "");
    status = output_page_text(pg.path, "attn train", data, len, rep, what);
    data = NULL; /* taken */
    goto done;
fail:
    cli_error("--html %s: out of memory", pg.path);
done:
    if (f)
        fclose(f);
    free(data);
    for (size_t i = 0; i < TP_MAX_RUNS; i++)
        free(docs[i]);
    free(page);
    return status;
}
