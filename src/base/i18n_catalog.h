/* i18n_catalog.h — a catalogue compiled into the pages' WebAssembly module
 * (scripts/po2c.py writes it from po/zh_CN.po at build time): WASI has no
 * locale and no gettext, so i18n_wasi.c looks each message up here. */
#ifndef ATTN_I18N_CATALOG_H
#define ATTN_I18N_CATALOG_H

struct i18n_entry {
    const char *msgid;  /* English, as the source writes it */
    const char *msgstr; /* 中文 */
};

/* sorted by msgid's bytes (strcmp), for a binary search */
extern const struct i18n_entry i18n_zh[];
extern const unsigned long i18n_zh_count;

#endif
