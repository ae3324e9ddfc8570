/* output.h — the output files every command writes, the same way: JSON
 * through a writer callback and PNG figures, each atomically, each
 * followed by a line "wrote PATH: what" on rep (stdout, or stderr when
 * stdout carries the JSON). Errors are printed as "attn CMD: …". */
#ifndef ATTN_OUTPUT_H
#define ATTN_OUTPUT_H

#include <stdio.h>

#include "render.h"
#include "term.h"

/* write(f, ctx) writes the document. Returns EXIT_OK or EXIT_RUNTIME. */
int output_json(const char *path, void (*write)(FILE *f, const void *ctx), const void *ctx,
                FILE *rep, const char *what);

/* Returns EXIT_OK or EXIT_RUNTIME. */
int output_png(const char *path, const attn_image *img, FILE *rep, const char *what);

/* The values of --cmap and --color, the same for every command: 0, or -1
 * after printing the error (the caller exits with EXIT_USAGE). */
int output_parse_cmap(const char *s, const attn_cmap **cmap);
int output_parse_color(const char *s, term_color_mode *mode);

/* Where reports go: stderr when --json writes to stdout, else stdout. */
FILE *output_report_stream(const char *json_path);

#endif
