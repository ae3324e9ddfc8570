/* i18n_wasi.c — i18n.h in the pages' WebAssembly module. WASI has no
 * locale and no gettext: the page passes the language in (--lang zh, as
 * on the command line), and the messages come from the catalogue compiled
 * into the module (i18n_catalog.h, written from po/zh_CN.po). */
#include "i18n.h"

#include <stdlib.h>
#include <string.h>

#include "i18n_catalog.h"

static int zh; /* --lang zh was given */

static int by_msgid(const void *key, const void *entry)
{
    return strcmp((const char *)key, ((const struct i18n_entry *)entry)->msgid);
}

const char *i18n_text(const char *msgid)
{
    if (!zh)
        return msgid;
    const struct i18n_entry *e = bsearch(msgid, i18n_zh, i18n_zh_count, sizeof i18n_zh[0],
                                         by_msgid);
    return e ? e->msgstr : msgid;
}

const char *i18n_plural(const char *one, const char *many, unsigned long n)
{
    if (zh) { /* one form, filed under the English singular */
        const char *t = i18n_text(one);
        if (t != one)
            return t;
    }
    return n == 1 ? one : many;
}

const char *i18n_language(void) { return zh ? "zh" : "en"; }

int i18n_setup(const char *lang)
{
    if (lang && strcmp(lang, "zh") != 0 && strcmp(lang, "zh_CN") != 0 &&
        strcmp(lang, "en") != 0)
        return -1;
    zh = lang && lang[0] == 'z';
    return 0;
}
