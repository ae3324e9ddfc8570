/* i18n_wasi.c — i18n.h in the pages' WebAssembly module: WASI has no
 * locale, so the module writes English. */
#include "i18n.h"

#include <string.h>

const char *i18n_text(const char *msgid) { return msgid; }

const char *i18n_plural(const char *one, const char *many, unsigned long n)
{
    return n == 1 ? one : many;
}

const char *i18n_language(void) { return "en"; }

int i18n_setup(const char *lang)
{
    if (lang && strcmp(lang, "zh") != 0 && strcmp(lang, "zh_CN") != 0 &&
        strcmp(lang, "en") != 0)
        return -1;
    return 0;
}
