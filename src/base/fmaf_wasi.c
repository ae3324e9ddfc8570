/* fmaf_wasi.c — C's fmaf in the WebAssembly module of the pages (SPEC.md
 * §14), in place of wasi-libc's. WebAssembly has no fused multiply-add
 * instruction, and the C library's fmaf, exact but asking the
 * floating-point environment at every call, made the module's training
 * loops several times slower than their arithmetic. fm_fmaf_odd
 * (fmath.c) is exact too, and test_fmath checks it against the machine's
 * fused multiply-add. The module's link takes this definition before the
 * C library's (meson.build lists it for the module only). */
#include <math.h>

#include "fmath.h"

float fmaf(float a, float b, float c)
{
    return fm_fmaf_odd(a, b, c);
}
