/* png.c — PNG files written atomically.
 *
 * The image is encoded by stb_image_write into an atomic_file (cli.h): a
 * new file next to the target, written, flushed, synced and closed with
 * every step checked (a full disk shows up in one of them), then renamed
 * over the target. Readers see the old file or the new one, never a
 * partial one; on failure the temporary file is removed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <stb_image_write.h>

#include "canvas.h"
#include "atomic_file.h"

/* Where stb_image_write's output goes: a stream and the first error. */
typedef struct png_sink {
    FILE *f;
    int errnum;     /* errno of the first failed write, or -1 without one */
    int failed;
} png_sink;

/* stb_image_write's callback: write the encoded bytes, remember failure. */
static void sink_write(void *context, void *data, int size)
{
    png_sink *s = context;
    if (s->failed || size <= 0)
        return;
    errno = 0;
    if (fwrite(data, 1, (size_t)size, s->f) != (size_t)size) {
        s->failed = 1;
        s->errnum = errno ? errno : -1;
    }
}

int png_write_atomic(const char *path, const attn_image *img, char *err, size_t errlen)
{
    atomic_file af;
    png_sink sink;

    if (path == NULL || *path == '\0')
        return render_error(err, errlen, "cannot write a PNG file: empty file name");
    if (img == NULL || img->rgb == NULL || img->w <= 0 || img->h <= 0 ||
        img->w > CANVAS_MAX_SIDE || img->h > CANVAS_MAX_SIDE)
        return render_error(err, errlen, "%s: cannot write: invalid image", path);
    if (strcmp(path, "-") == 0)
        return render_error(err, errlen, "-: a PNG is not written to standard output");

    /* a temporary file beside the target, renamed over it at the end */
    if (atomic_open(&af, path, err, errlen) != 0)
        return -1;
    sink.f = af.f;
    sink.errnum = 0;
    sink.failed = 0;
    /* One filter, Up, for every row: by default stb tries all 5 on each
     * row, which took more time than compressing; files come out 1-8%
     * larger (measured on attn's figures). */
    stbi_write_force_png_filter = 2;
    if (!stbi_write_png_to_func(sink_write, &sink, img->w, img->h, 3, img->rgb, img->w * 3)) {
        atomic_abort(&af);
        return render_error(err, errlen, "%s: cannot encode PNG", path);
    }
    if (sink.failed) {
        int e = sink.errnum;
        atomic_abort(&af);
        return render_error(err, errlen, "%s: cannot write: %s", path,
                            e > 0 ? strerror(e) : "write error");
    }
    return atomic_commit(&af, err, errlen);
}
