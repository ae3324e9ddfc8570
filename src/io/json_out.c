/* json_out.c — streaming JSON output (see json_out.h). */
#include "json_out.h"

#include <math.h>
#include <stdlib.h>

void json_write_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    for (; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f); /* UTF-8 passes through unchanged */
        }
    }
    fputc('"', f);
}

void json_write_float(FILE *f, float v)
{
    fprintf(f, "%.9g", (double)v);
}

void json_write_double(FILE *f, double v)
{
    char buf[40];
    int prec;
    if (v == floor(v) && fabs(v) < 1e15) { /* whole numbers as integers: 10000 */
        fprintf(f, "%.0f", v);
        return;
    }
    /* the fewest digits that read back as the same double */
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
}

/* One level of the nested arrays: `data` holds shape[0] × … elements. */
static void write_level(FILE *f, const float *data, size_t ndim, const size_t *shape,
                        size_t stride, int indent)
{
    size_t i;
    fputc('[', f);
    if (ndim == 1) {
        for (i = 0; i < shape[0]; i++) {
            if (i)
                fputs(", ", f);
            json_write_float(f, data[i]);
        }
    } else {
        size_t inner = stride / (shape[0] ? shape[0] : 1); /* elements per sub-array */
        for (i = 0; i < shape[0]; i++) {
            if (ferror(f))
                return; /* a failed stream: stop early, the caller reports it */
            fprintf(f, "%s\n%*s", i ? "," : "", indent + 2, "");
            write_level(f, data + i * inner, ndim - 1, shape + 1, inner, indent + 2);
        }
        fprintf(f, "\n%*s", indent, "");
    }
    fputc(']', f);
}

void json_write_tensor(FILE *f, const float *data, size_t ndim, const size_t *shape,
                       int indent0)
{
    size_t total = 1, i;
    if (ndim == 0) {
        json_write_float(f, data[0]);
        return;
    }
    for (i = 0; i < ndim; i++)
        total *= shape[i]; /* the caller allocated data, so this cannot overflow */
    write_level(f, data, ndim, shape, total, indent0);
}
