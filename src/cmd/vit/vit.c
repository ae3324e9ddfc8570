/* vit.c — `attn vit` (SPEC.md §16): one image through a saved Vision
 * Transformer (`attn train --task vit --save MODEL`): a test image of
 * Fashion-MNIST by its index, or a PNG or JPEG of the learner's own, made
 * grey and resized to the model's side as d2l's Resize does. Prints the
 * ten probabilities, and the <cls> query's attention over the patches:
 * every head of every block as the grid of patches, then the rollout;
 * --png draws them over the image, --json writes them.
 *
 * Shapes: S the image's side, p the patch, P = (S/p)² patches, T = P + 1
 * tokens (<cls> first), NH heads, L blocks, Q = 10 classes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "cli.h"
#include "commands.h"
#include "i18n.h"
#include "idx.h"
#include "json_writer.h"
#include "options.h"
#include "output.h"
#include "picture.h"
#include "vit.h"
#include "vit_model_file.h"
#include "vit_show.h"

#define VIT_MAX_INDEX 100000000L

struct vit_args {
    const char *input;  /* --input MODEL */
    long index;         /* --index I; −1: not given */
    const char *image;  /* --image FILE */
    const char *pixels; /* --pixels LIST */
    int invert;         /* --invert */
    const char *data;   /* --data DIR */
    const char *png, *json, *font;
};

#define OPT_ARGS struct vit_args
const struct opt vit_options[] = {
    OPT_FILE(0, "input", input, "the model, as attn train --task vit --save writes it;\n- for stdin"),
    OPT_INT(0, "index", index, "I", 0, VIT_MAX_INDEX,
            "test image I of Fashion-MNIST (from 0, as d2l's\ndata.val[I])"),
    OPT_FILE(0, "image", image, "a PNG or JPEG of your own, made grey and\nresized to the "
                                "model's side"),
    OPT_TEXT(0, "pixels", pixels, "LIST",
             "the image as numbers, as a page or a script\n"
             "passes it: S·S grey values from 0 to 255,\n"
             "comma-separated, row by row (S the model's side)"),
    OPT_FLAG(0, "invert", invert,
             "--image: dark on light becomes light on black, as\nFashion-MNIST's pictures are"),
    OPT_DIR(0, "data", data, "--index: the folder of Fashion-MNIST's IDX files\n(default "
                             "/usr/share/datasets/fashion-mnist)"),
    OPT_PNG(png, "the image with each head's <cls> attention over\nits patches (the last "
                 "block) and the rollout"),
    OPT_JSON(json, "the probabilities and every block's <cls> attention"),
    OPT_FONT(font),
    OPT_HELP(),
    OPT_END(),
};

const struct opt_rule vit_rules[] = {
    OPT_CONFLICTS("index", "image", "--index and --image name two images; give one"),
    OPT_CONFLICTS("pixels", "index image", "--pixels and --%s name two images; give one"),
    OPT_NEEDS("invert", "image", "--invert is for --image FILE"),
    OPT_NEEDS("data", "index", "--data is the folder --index reads; give --index I"),
    OPT_RULES_END(),
};

void usage_vit(FILE *f)
{
    fputs(_("usage: attn vit --input MODEL --index I [--data DIR] [OPTIONS]\n"
            "       attn vit --input MODEL --image FILE [--invert] [OPTIONS]\n"
            "       attn vit --input MODEL --pixels LIST [OPTIONS]\n"
            "\n"
            "One image through a Vision Transformer that attn train --task vit saved\n"
            "(d2l.ai 11.8): test image I of Fashion-MNIST, or a PNG or JPEG of your\n"
            "own, made grey (the luma, transparency over black) and resized to the\n"
            "model's side as d2l's Resize (bilinear). Prints the ten probabilities\n"
            "(the softmax of the logits) and the <cls> query's attention over the\n"
            "patches, every head of every block as the grid of patches, then the\n"
            "rollout over the blocks (the product of the head-averaged (A + I)/2, rows\n"
            "renormalised). Fashion-MNIST's items are light on black: a photograph of\n"
            "a dark shoe on white paper wants --invert.\n"
            "\n"),
          f);
    fputs(_("--pixels gives the image as numbers, S·S grey values row by row, as the\n"
            "page of attn train --task vit --html passes it; --input - reads the model\n"
            "from standard input.\n"
            "\n"),
          f);
    opt_usage(f, vit_options);
    fputc('\n', f);
    fputs(_("Examples:\n"
            "  attn train --task vit --save vit.json\n"
            "  attn vit --input vit.json --index 0 --png boot.png\n"
            "  attn vit --input vit.json --image my-shoe.jpg --invert --json shoe.json\n"),
          f);
}

/* What one image gave. */
typedef struct vit_look {
    const struct vit_args *a;
    vit_model m;
    float *pixels;          /* (S, S) in [0, 1] */
    int label;              /* the test image's, or −1 */
    size_t width, height;   /* --image: as read */
    double prob[IDX_CLASSES];
    size_t best;
    float *cls;             /* (L, NH, T) the <cls> query's weights */
    double *roll;           /* (T,) */
} vit_look;

static void look_free(vit_look *v)
{
    vit_free(&v->m);
    free(v->pixels);
    free(v->cls);
    free(v->roll);
}

/* --pixels LIST: S·S numbers from 0 to 255, comma-separated (spaces
 * around them allowed), row by row, into pixels (S·S,) as a model reads
 * them (/ 255, as idx_pixels). EXIT_OK, or EXIT_USAGE after a message
 * naming the number at fault. */
static int parse_pixels(const char *list, size_t S, float *pixels)
{
    const size_t want = S * S;
    size_t n = 0;
    const char *p = list;
    for (;;) {
        char *end;
        while (*p == ' ')
            p++;
        const char *start = p;
        const int len = (int)strcspn(start, ",");
        double v = strtod(start, &end);
        for (p = end; *p == ' ';)
            p++;
        n++;
        if (end == start || (*p != ',' && *p != '\0') || !isfinite(v)) {
            cli_error("--pixels: number %zu: \"%.*s\" is not a number", n, len > 40 ? 40 : len,
                      start);
            return EXIT_USAGE;
        }
        if (v < 0 || v > 255) {
            cli_error("--pixels: number %zu: %g is not a grey value from 0 to 255", n, v);
            return EXIT_USAGE;
        }
        if (n <= want)
            pixels[n - 1] = (float)v / 255.0f; /* d2l's ToTensor, as idx_pixels */
        if (*p == '\0')
            break;
        p++; /* the comma */
    }
    if (n != want) {
        cli_error("--pixels: %zu numbers, but the model's images are %zu × %zu: %zu wanted", n,
                  S, S, want);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* The image of --index, --image or --pixels, at the model's side. */
static int look_image(vit_look *v)
{
    const struct vit_args *a = v->a;
    const size_t S = v->m.cfg.img;
    char err[1400];
    v->label = -1;
    if (a->image) {
        if (picture_load_grey(a->image, S, a->invert, &v->pixels, &v->width, &v->height, err,
                              sizeof err) != 0) {
            cli_error("%s", err);
            return EXIT_RUNTIME;
        }
        return EXIT_OK;
    }
    if (a->pixels) {
        if ((v->pixels = float_alloc(S * S)) == NULL) {
            cli_error("out of memory for the image");
            return EXIT_RUNTIME;
        }
        return parse_pixels(a->pixels, S, v->pixels);
    }
    idx_set test = {0};
    if (idx_load_fashion(NULL, &test, a->data ? a->data : IDX_FASHION_DIR, a->data != NULL, 0,
                         (size_t)a->index + 1, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if ((size_t)a->index >= test.n) {
        cli_error("--index: %ld, but the test set holds %zu images (0 to %zu)", a->index,
                  test.n, test.n - 1);
        idx_set_free(&test);
        return EXIT_USAGE;
    }
    /* resized as the model's data were when it was trained */
    if (idx_resize(&test, S, err, sizeof err) != 0 ||
        (v->pixels = float_alloc(S * S)) == NULL) {
        cli_error("out of memory for test image %ld", a->index);
        idx_set_free(&test);
        return EXIT_RUNTIME;
    }
    idx_pixels(v->pixels, &test, (size_t)a->index);
    v->label = test.labels[a->index];
    idx_set_free(&test);
    return EXIT_OK;
}

/* The forward pass, the softmax and the attention. */
static int look_run(vit_look *v)
{
    const vit_model *m = &v->m;
    const size_t L = m->cfg.layers, NH = m->cfg.heads, T = m->T, Q = m->cfg.classes;
    float logits[IDX_CLASSES];
    char err[256];
    vit_work *w = vit_work_alloc(m);
    v->cls = float_alloc(L * NH * T);
    v->roll = malloc(T * sizeof *v->roll);
    if (!w || !v->cls || !v->roll) {
        vit_work_free(w);
        cli_error("out of memory for the forward pass");
        return EXIT_RUNTIME;
    }
    if (vit_forward(w, logits, m, v->pixels, NULL, err, sizeof err) != 0) {
        vit_work_free(w);
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    for (size_t l = 0; l < L; l++)
        vit_cls_attention(v->cls + l * NH * T, w, m, l);
    vit_rollout(v->roll, w, m);
    vit_work_free(w);
    /* softmax(logits), the largest subtracted first */
    double top = logits[0], sum = 0;
    for (size_t q = 1; q < Q; q++)
        top = logits[q] > top ? logits[q] : top;
    for (size_t q = 0; q < Q; q++)
        sum += v->prob[q] = exp((double)logits[q] - top);
    v->best = 0;
    for (size_t q = 0; q < Q; q++) {
        v->prob[q] /= sum;
        if (v->prob[q] > v->prob[v->best])
            v->best = q;
    }
    return EXIT_OK;
}

/* The grid of patches (side × side) of weights a (over the patches). */
static void print_grid(FILE *f, const char *title, const float *a, const double *ad, size_t side)
{
    fprintf(f, "  %s\n", title);
    for (size_t y = 0; y < side; y++) {
        fputs("   ", f);
        for (size_t x = 0; x < side; x++)
            fprintf(f, " %.3f", a ? (double)a[y * side + x] : ad[y * side + x]);
        fputc('\n', f);
    }
}

static void look_print(const vit_look *v, FILE *f)
{
    const vit_model *m = &v->m;
    const struct vit_args *a = v->a;
    const size_t L = m->cfg.layers, NH = m->cfg.heads, T = m->T, S = m->cfg.img;
    const size_t side = S / m->cfg.patch;
    char title[128];
    fprintf(f, _("model %s: %zu × %zu images in %zu patches of %zu × %zu, d %zu, %zu heads, "
                 "%zu blocks\n"),
            a->input, S, S, m->P, m->cfg.patch, m->cfg.patch, m->cfg.hiddens, NH, L);
    if (a->image)
        fprintf(f, _("image %s: %zu × %zu, grey%s, resized to %zu × %zu\n"), a->image, v->width,
                v->height, a->invert ? _(", inverted") : "", S, S);
    else if (a->pixels)
        fprintf(f, _("the image of --pixels: %zu × %zu\n"), S, S);
    else
        fprintf(f, _("test image %ld: %s\n"), a->index, idx_fashion_labels[v->label]);
    fprintf(f, _("prediction: %s (%.4f)\n"), idx_fashion_labels[v->best], v->prob[v->best]);
    for (size_t q = 0; q < m->cfg.classes; q++) {
        int bar = (int)(v->prob[q] * 40 + 0.5);
        fprintf(f, "  %-10s %.4f %.*s\n", idx_fashion_labels[q], v->prob[q], bar,
                "########################################");
    }
    fprintf(f, _("the <cls> query's attention over the %zu × %zu patches (its weight on "
                 "itself after each title):\n"),
            side, side);
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < NH; h++) {
            const float *row = v->cls + (l * NH + h) * T;
            snprintf(title, sizeof title, _("block %zu, head %zu (<cls> %.3f)"), l + 1, h + 1,
                     (double)row[0]);
            print_grid(f, title, row + 1, NULL, side);
        }
    snprintf(title, sizeof title, _("rollout over the %zu blocks (<cls> %.3f)"), L, v->roll[0]);
    print_grid(f, title, NULL, v->roll + 1, side);
}

static int look_json(FILE *f, const void *ctx)
{
    const vit_look *v = ctx;
    const vit_model *m = &v->m;
    const size_t L = m->cfg.layers, NH = m->cfg.heads, T = m->T;
    json_writer jw;
    json_writer_init(&jw, f);
    json_object_begin(&jw, NULL, JSON_BLOCK);
    json_string(&jw, "command", "vit");
    json_string(&jw, "model", v->a->input);
    if (v->a->image) {
        json_string(&jw, "image", v->a->image);
        json_uint(&jw, "width", v->width);
        json_uint(&jw, "height", v->height);
        json_bool(&jw, "inverted", v->a->invert);
        json_null(&jw, "label");
    } else if (v->a->pixels) {
        json_string(&jw, "image", "--pixels");
        json_null(&jw, "label");
    } else {
        json_int(&jw, "index", v->a->index);
        json_string(&jw, "label", idx_fashion_labels[v->label]);
    }
    json_uint(&jw, "img_size", m->cfg.img);
    json_string(&jw, "prediction", idx_fashion_labels[v->best]);
    json_array_begin(&jw, "labels", JSON_INLINE);
    for (size_t q = 0; q < m->cfg.classes; q++)
        json_string(&jw, NULL, idx_fashion_labels[q]);
    json_end(&jw);
    json_array_begin(&jw, "probabilities", JSON_INLINE);
    for (size_t q = 0; q < m->cfg.classes; q++)
        json_number(&jw, NULL, v->prob[q]);
    json_end(&jw);
    /* (L, NH, T): token 0 is <cls>, then the patches row by row */
    json_tensor(&jw, "cls_attention", v->cls, 3, (const size_t[]){L, NH, T});
    json_array_begin(&jw, "rollout", JSON_INLINE);
    for (size_t t = 0; t < T; t++)
        json_number(&jw, NULL, v->roll[t]);
    json_end(&jw);
    json_end(&jw);
    return json_writer_finish(&jw);
}

static int look_outputs(const vit_look *v)
{
    const struct vit_args *a = v->a;
    FILE *rep = a->json && strcmp(a->json, "-") == 0 ? stderr : stdout;
    int status = EXIT_OK;
    look_print(v, rep);
    if (a->png) {
        vit_picture pic = {v->pixels, v->label};
        status = vit_png(a->png, a->font, &v->m, &pic, 1, rep);
    }
    if (status == EXIT_OK && a->json)
        status = output_json(a->json, look_json, v, rep,
                             "the probabilities and the <cls> attention");
    return status;
}

int cmd_vit(int argc, char **argv)
{
    struct vit_args a = {NULL, -1, NULL, NULL, 0, NULL, NULL, NULL, NULL};
    vit_look v;
    char err[1400];
    memset(&v, 0, sizeof v);
    int status = opt_parse(vit_options, vit_rules, argc, argv, &a, NULL);
    if (status == OPT_HELP_ASKED) {
        usage_vit(stdout);
        return EXIT_OK;
    }
    if (status != EXIT_OK)
        return status;
    if (!a.input) {
        cli_error("--input MODEL is required (attn train --task vit --save MODEL writes one)");
        return EXIT_USAGE;
    }
    if (a.index < 0 && !a.image && !a.pixels) {
        cli_error("give --index I (a test image), --image FILE or --pixels LIST");
        return EXIT_USAGE;
    }
    {
        const char *const files[] = {a.json, a.png};
        const char *const names[] = {"--json", "--png"};
        if ((status = output_check_files(files, names, 2)) != EXIT_OK)
            return status;
    }
    v.a = &a;
    if (vit_model_load(a.input, &v.m, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if ((status = look_image(&v)) == EXIT_OK && (status = look_run(&v)) == EXIT_OK)
        status = look_outputs(&v);
    look_free(&v);
    return status;
}
