/* i18n.h — the language attn speaks: 中文 or English (SPEC.md §17).
 *
 * Every sentence a person reads is written in English in the source and
 * marked: _("…") where it is printed, N_("…") where it only sits in a
 * table (translated when printed, with _()). The catalogue po/zh_CN.po
 * holds the zh edition's words for each. What a program reads is never
 * translated: --json, saved files, numbers (LC_NUMERIC stays "C": a point
 * in every language), option names, PyTorch's own printouts.
 *
 * Two implementations: i18n_gnu.c, GNU gettext as every C program on the
 * machine uses it (the language from LANGUAGE, LC_ALL, LC_MESSAGES, LANG,
 * or --lang); i18n_wasi.c in the pages' WebAssembly module, where WASI
 * has no locale and the page passes the language in.
 */
#ifndef ATTN_I18N_H
#define ATTN_I18N_H

/* msgid in the language in force; msgid itself when it has no translation */
const char *i18n_text(const char *msgid);

/* one (n = 1) or many (other n) in English, as the language in force
 * says the count n (Chinese has one form) */
const char *i18n_plural(const char *one, const char *many, unsigned long n);

#define _(msgid) i18n_text(msgid)
#define N_(msgid) msgid

/* Choose the language: lang "zh" or "en" for this run (--lang), or NULL
 * for the environment's choice. Returns 0, or -1 when lang names neither
 * (nothing is printed: the caller says so). A language whose locale the
 * machine lacks: one line on standard error, then English. */
int i18n_setup(const char *lang);

/* "zh" or "en": the language the messages are written in now */
const char *i18n_language(void);

#endif
