/* i18n_gnu.c — i18n.h with GNU gettext (the C library's libintl).
 *
 * setlocale for LC_CTYPE and LC_MESSAGES only: LC_NUMERIC stays "C", so a
 * number prints with a point in every language (SPEC.md §17). The
 * catalogue is found beside the binary when it runs from its build tree
 * (build/po/zh_CN/LC_MESSAGES/attn.mo, which Meson's i18n module writes),
 * else in the installed locale folder.
 */
#include "i18n.h"

#include <libintl.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ATTN_LOCALEDIR: the installed catalogues, given by src/base/meson.build */

#define DOMAIN "attn"
#define ZH_LOCALE "zh_CN.UTF-8"

static int active; /* bound: gettext may be asked */

const char *i18n_text(const char *msgid)
{
    return active ? dgettext(DOMAIN, msgid) : msgid;
}

const char *i18n_plural(const char *one, const char *many, unsigned long n)
{
    return active ? dngettext(DOMAIN, one, many, n) : n == 1 ? one : many;
}

const char *i18n_language(void)
{
    /* TRANSLATORS: the language code of this catalogue ("zh"), as --lang
       and the pages name it. */
    return strcmp(i18n_text(N_("en")), "zh") == 0 ? "zh" : "en";
}

/* The value GNU's setlocale reads for LC_MESSAGES: LC_ALL, LC_MESSAGES,
 * then LANG, the first set and not empty. */
static const char *messages_env(void)
{
    const char *names[] = {"LC_ALL", "LC_MESSAGES", "LANG"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return v;
    }
    return NULL;
}

/* The folder of catalogues: <the binary's folder>/po when the binary runs
 * from its build tree, else the installed one. */
static const char *locale_dir(char *buf, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            int w = snprintf(buf, size, "%s/po", exe);
            if (w > 0 && (size_t)w < size) {
                char mo[PATH_MAX];
                w = snprintf(mo, sizeof mo, "%s/zh_CN/LC_MESSAGES/" DOMAIN ".mo", buf);
                if (w > 0 && (size_t)w < sizeof mo && access(mo, R_OK) == 0)
                    return buf;
            }
        }
    }
    return ATTN_LOCALEDIR;
}

int i18n_setup(const char *lang)
{
    const char *got;
    int want_zh;

    if (lang && strcmp(lang, "zh") != 0 && strcmp(lang, "zh_CN") != 0 &&
        strcmp(lang, "en") != 0)
        return -1;
    setlocale(LC_CTYPE, "");
    if (!lang) {
        const char *env = messages_env();
        want_zh = env && strncmp(env, "zh", 2) == 0;
        got = setlocale(LC_MESSAGES, "");
    } else if (lang[0] == 'z') {
        want_zh = 1;
        got = setlocale(LC_MESSAGES, ZH_LOCALE);
        /* LANGUAGE outranks the locale in GNU gettext: this run's choice
           wins over the environment's */
        if (got)
            setenv("LANGUAGE", "zh_CN", 1);
    } else {
        want_zh = 0;
        got = setlocale(LC_MESSAGES, "C");
    }
    if (want_zh && !got) {
        fputs("attn: the locale " ZH_LOCALE " is missing on this machine (scripts/setup.sh "
              "makes it: localedef -i zh_CN -f UTF-8 " ZH_LOCALE "); writing English\n",
              stderr);
        setlocale(LC_MESSAGES, "C");
    }
    char buf[PATH_MAX];
    if (bindtextdomain(DOMAIN, locale_dir(buf, sizeof buf)) &&
        bind_textdomain_codeset(DOMAIN, "UTF-8"))
        active = 1;
    return 0;
}
