/* output.c — output files written atomically, with a report (output.h). */
#include "output.h"

#include <string.h>

#include "cli.h"

FILE *output_report_stream(const char *json_path)
{
    return json_path && strcmp(json_path, "-") == 0 ? stderr : stdout;
}

int output_json(const char *path, void (*write)(FILE *f, const void *ctx), const void *ctx,
                FILE *rep, const char *what)
{
    atomic_file af;
    char err[512];
    if (atomic_open(&af, path, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    write(af.f, ctx);
    if (atomic_commit(&af, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    if (strcmp(path, "-") != 0)
        fprintf(rep, "wrote %s: %s\n", path, what);
    return EXIT_OK;
}

int output_png(const char *path, const attn_image *img, FILE *rep, const char *what)
{
    char err[512];
    if (png_write_atomic(path, img, err, sizeof err) != 0) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    fprintf(rep, "wrote %s: %s, %d×%d px\n", path, what, img->w, img->h);
    return EXIT_OK;
}
