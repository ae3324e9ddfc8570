/* train_data.c — SPEC §9's --data JSON and the built-in 苹果 corpus (see
 * train_data.h). */
#include "train_data.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_in.h"
#include "i18n.h"

/* data/apple_train.json, embedded at build time by scripts/embed_file.py */
extern const unsigned char attn_apple_train_json[];
extern const unsigned long attn_apple_train_json_len;

const char *const train_apple_cues[] = {
    /* the fruit */
    "吃", "甜", "好吃", "削", "红", "新鲜", "酸", "脆", "熟", "水果", "洗", "皮", "树",
    /* the company */
    "发布", "手机", "产品", "股价", "公司", "电脑", "系统", "财报", "新款", "股票", "科技",
    "市场", "上涨", "加州", "更新", NULL};

#define PAD "<pad>"
#define MAX_FILE_BYTES ((size_t)256 << 20)

/* ---- a string → id table (open addressing, FNV-1a) --------------------- */

typedef struct strtab {
    char **names; /* (n,) owned, in order of first appearance */
    size_t n, cap_names;
    long *slot;   /* (cap,) an index into names, or −1 */
    size_t cap;
    int fixed;    /* names come from a saved model: nothing is added */
} strtab;

static unsigned long long fnv1a(const char *s)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static long tab_find(const strtab *t, const char *s, size_t *where)
{
    size_t i = (size_t)fnv1a(s) & (t->cap - 1);
    while (t->slot[i] >= 0 && strcmp(t->names[t->slot[i]], s) != 0)
        i = (i + 1) & (t->cap - 1);
    if (where)
        *where = i;
    return t->slot[i];
}

static int tab_grow(strtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    long *slot = malloc(cap * sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < cap; i++)
        slot[i] = -1;
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    for (size_t i = 0; i < t->n; i++) {
        size_t w;
        tab_find(t, t->names[i], &w);
        t->slot[w] = (long)i;
    }
    return 0;
}

/* The id of s, added when new (and the table is not fixed): ≥ 0, −1 when
 * unknown to a fixed table, −2 out of memory. */
static long tab_id(strtab *t, const char *s)
{
    size_t w;
    long id;
    if (t->cap == 0 && tab_grow(t))
        return -2;
    if ((id = tab_find(t, s, &w)) >= 0 || t->fixed)
        return id;
    if (2 * (t->n + 1) > t->cap) {
        if (tab_grow(t))
            return -2;
        tab_find(t, s, &w);
    }
    if (t->n == t->cap_names) {
        size_t c = t->cap_names ? 2 * t->cap_names : 64;
        char **nn = realloc(t->names, c * sizeof *nn);
        if (!nn)
            return -2;
        t->names = nn;
        t->cap_names = c;
    }
    size_t len = strlen(s) + 1;
    if (!(t->names[t->n] = malloc(len)))
        return -2;
    memcpy(t->names[t->n], s, len);
    t->slot[w] = (long)t->n;
    return (long)t->n++;
}

static void tab_free(strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ---- reading ------------------------------------------------------------ */

typedef struct reader {
    const char *name;
    char *err;
    size_t errlen;
    strtab vocab, classes;
    int labels; /* sequence labels (else token targets) */
} reader;

/* fmt in English, translated here (xgettext takes fail's fmt: po/meson.build) */
static int fail(reader *rd, const char *fmt, const char *path, const char *detail)
{
    char msg[512];
    snprintf(msg, sizeof msg, _(fmt), path, detail);
    snprintf(rd->err, rd->errlen, "%s: %s", rd->name, msg);
    return -1;
}

static int oom(reader *rd)
{
    snprintf(rd->err, rd->errlen, _("%s: out of memory"), rd->name);
    return -1;
}

/* tok (at path): a token, a non-empty string other than "<pad>"; else
 * -1 after the message expected (its %s: the path, then tok's type). */
static int check_token(reader *rd, const cJSON *tok, const char *path, const char *expected)
{
    if (!cJSON_IsString(tok))
        return fail(rd, expected, path, json_type_name(tok));
    if (tok->valuestring[0] == '\0')
        return fail(rd, "%s: an empty token%s", path, "");
    if (strcmp(tok->valuestring, PAD) == 0)
        return fail(rd, "%s: \"<pad>\" is reserved for padding%s", path, "");
    return 0;
}

/* node (at path): an array of one entry per sequence, n of them: "expected
 * an array of WHAT" (what, e.g. "labels (strings)") and "expected N NAMED
 * (one per sequence)" (named, e.g. "labels") when not. 0 or -1. */
static int check_per_sequence(reader *rd, const cJSON *node, const char *path, size_t n,
                              const char *what, const char *named)
{
    char d[128];
    if (!cJSON_IsArray(node)) {
        snprintf(d, sizeof d, _("expected an array of %s, got %s"), _(what), json_type_name(node));
        return fail(rd, "%s: %s", path, d);
    }
    if ((size_t)cJSON_GetArraySize(node) != n) {
        snprintf(d, sizeof d, _("expected %zu %s (one per sequence), got %d"), n, _(named),
                 cJSON_GetArraySize(node));
        return fail(rd, "%s: %s", path, d);
    }
    return 0;
}

/* $.sequences (at path): a non-empty array of non-empty arrays of strings. */
static int check_sequences(reader *rd, const cJSON *seqs, const char *path, size_t *n,
                           size_t *T)
{
    const cJSON *s, *tok;
    size_t i = 0;
    char p[128];
    *T = 0;
    if (!seqs)
        return fail(rd, "%s: missing (an array of token sequences)%s", path, "");
    if (!cJSON_IsArray(seqs))
        return fail(rd, "%s: expected an array of token sequences, got %s", path,
                    json_type_name(seqs));
    if (cJSON_GetArraySize(seqs) == 0)
        return fail(rd, "%s: empty: expected at least one sequence%s", path, "");
    cJSON_ArrayForEach(s, seqs)
    {
        size_t len = 0, j = 0;
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        if (!cJSON_IsArray(s))
            return fail(rd, "%s: expected an array of tokens, got %s", p, json_type_name(s));
        cJSON_ArrayForEach(tok, s)
        {
            char pt[160];
            snprintf(pt, sizeof pt, "%s[%zu]", p, j++);
            if (check_token(rd, tok, pt, N_("%s: expected a token (a string), got %s")))
                return -1;
            len++;
        }
        if (len == 0)
            return fail(rd, "%s: empty: expected at least one token%s", p, "");
        if (len > TRAIN_MAX_LEN) {
            char d[64];
            snprintf(d, sizeof d, _("%zu tokens, more than %d"), len, TRAIN_MAX_LEN);
            return fail(rd, "%s: %s", p, d);
        }
        if (len > *T)
            *T = len;
        i++;
    }
    *n = i;
    return 0;
}

/* Token ids of every sequence into s. */
static int read_tokens(reader *rd, const cJSON *seqs, const char *path, train_set *s)
{
    const cJSON *seq, *tok;
    size_t i = 0;
    cJSON_ArrayForEach(seq, seqs)
    {
        size_t j = 0;
        cJSON_ArrayForEach(tok, seq)
        {
            long id = tab_id(&rd->vocab, tok->valuestring);
            if (id == -2)
                return oom(rd);
            if (id < 0) {
                char p[160];
                snprintf(p, sizeof p, "%s[%zu][%zu]", path, i, j);
                return fail(rd, "%s: \"%s\" is not in the model's vocabulary", p,
                            tok->valuestring);
            }
            s->tokens[i * s->T + j++] = (int)id;
        }
        s->lens[i++] = (long)j;
    }
    return 0;
}

/* Token targets: one array per sequence of its length, strings or null. */
static int read_targets(reader *rd, const cJSON *tg, const char *path, const cJSON *seqs,
                        train_set *s)
{
    const cJSON *row, *t;
    size_t i = 0;
    char p[160];
    if (check_per_sequence(rd, tg, path, s->n, N_("target sequences"), N_("target sequences")))
        return -1;
    (void)seqs;
    cJSON_ArrayForEach(row, tg)
    {
        size_t j = 0;
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        if (!cJSON_IsArray(row))
            return fail(rd, "%s: expected an array of targets, got %s", p, json_type_name(row));
        if ((size_t)cJSON_GetArraySize(row) != (size_t)s->lens[i]) {
            char d[96];
            snprintf(d, sizeof d, _("expected %ld tokens, got %d"), s->lens[i],
                     cJSON_GetArraySize(row));
            return fail(rd, "%s: %s", p, d);
        }
        cJSON_ArrayForEach(t, row)
        {
            char pt[200];
            long id;
            snprintf(pt, sizeof pt, "%s[%zu]", p, j);
            if (cJSON_IsNull(t)) {
                j++;
                continue;
            }
            if (check_token(rd, t, pt, N_("%s: expected a token (a string) or null, got %s")))
                return -1;
            id = tab_id(&rd->vocab, t->valuestring);
            if (id == -2)
                return oom(rd);
            if (id < 0)
                return fail(rd, "%s: \"%s\" is not in the model's vocabulary", pt,
                            t->valuestring);
            s->targets[i * s->T + j++] = (int)id;
        }
        i++;
    }
    return 0;
}

/* Sequence labels: one string per sequence, the target at the first
 * label_at token. */
static int read_labels(reader *rd, const cJSON *lb, const char *path, const char *seq_path,
                       const char *label_at, train_set *s)
{
    const cJSON *l;
    size_t i = 0, j;
    long at = tab_find(&rd->vocab, label_at, NULL);
    if (check_per_sequence(rd, lb, path, s->n, N_("labels (strings)"), N_("labels")))
        return -1;
    cJSON_ArrayForEach(l, lb)
    {
        char p[160];
        long id;
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        if (!cJSON_IsString(l))
            return fail(rd, "%s: expected a label (a string), got %s", p, json_type_name(l));
        if ((id = tab_id(&rd->classes, l->valuestring)) == -2)
            return oom(rd);
        if (id < 0)
            return fail(rd, "%s: \"%s\" is not one of the model's classes", p, l->valuestring);
        for (j = 0; j < (size_t)s->lens[i]; j++)
            if (s->tokens[i * s->T + j] == at)
                break;
        if (at < 0 || j == (size_t)s->lens[i]) {
            snprintf(p, sizeof p, "%s[%zu]", seq_path, i);
            return fail(rd, "%s: no \"%s\" (label_at) in the sentence", p, label_at);
        }
        s->targets[i * s->T + j] = (int)id;
        i++;
    }
    return 0;
}

static int check_keys(reader *rd, const cJSON *obj, const char *path, const char *const *known)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, obj)
    {
        const char *const *k;
        char p[160];
        for (k = known; *k; k++)
            if (strcmp(a->string, *k) == 0)
                break;
        if (!*k) {
            snprintf(p, sizeof p, "%s.%s", path, a->string);
            return fail(rd, "%s: unknown key (known: %s)", p,
                        path[1] ? "sequences, targets, labels" 
                                : "sequences, targets, labels, label_at, heldout");
        }
    }
    return 0;
}

/* One part (the training part at "$", or "$.heldout"): its sequences and
 * their targets or labels into s. */
static int read_part(reader *rd, const cJSON *obj, const char *path, const char *label_at,
                     train_set *s)
{
    static const char *const part_keys[] = {"sequences", "targets", "labels", NULL};
    const cJSON *seqs = cJSON_GetObjectItemCaseSensitive(obj, "sequences");
    const cJSON *tg = cJSON_GetObjectItemCaseSensitive(obj, "targets");
    const cJSON *lb = cJSON_GetObjectItemCaseSensitive(obj, "labels");
    char sp[64], tp[64], lp[64];
    size_t n, T;
    snprintf(sp, sizeof sp, "%s.sequences", path);
    snprintf(tp, sizeof tp, "%s.targets", path);
    snprintf(lp, sizeof lp, "%s.labels", path);
    if (path[1] && check_keys(rd, obj, path, part_keys))
        return -1;
    if (check_sequences(rd, seqs, sp, &n, &T))
        return -1;
    if (rd->labels ? !lb : !tg)
        return fail(rd, "%s: missing \"%s\"", path, rd->labels ? "labels" : "targets");
    if (rd->labels ? tg != NULL : lb != NULL)
        return fail(rd, "%s: %s", path,
                    rd->labels ? _("has \"targets\", but the data has sequence labels")
                               : _("has \"labels\", but the data has token targets"));
    if (train_set_alloc(s, n, T, rd->err, rd->errlen))
        return -1;
    if (read_tokens(rd, seqs, sp, s))
        return -1;
    return rd->labels ? read_labels(rd, lb, lp, sp, label_at, s) : read_targets(rd, tg, tp, seqs, s);
}

static int tab_preset(strtab *t, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        long id = tab_id(t, names[i]);
        if (id == -2)
            return -1;
    }
    t->fixed = 1;
    return 0;
}

/* Whether the data has labels ("labels" or "label_at"), into rd->labels;
 * with labels, the token a label is read at into *label_at. */
static int read_label_at(reader *rd, const cJSON *root, const char **label_at)
{
    const cJSON *la;
    rd->labels = cJSON_GetObjectItemCaseSensitive(root, "labels") != NULL ||
                 cJSON_GetObjectItemCaseSensitive(root, "label_at") != NULL;
    la = cJSON_GetObjectItemCaseSensitive(root, "label_at");
    if (!rd->labels)
        return 0;
    if (!la)
        return fail(rd, "%s: has \"labels\" but no \"label_at\" (the token a label is read at)%s",
                    "$", "");
    if (!cJSON_IsString(la) || la->valuestring[0] == '\0')
        return fail(rd, "%s: expected a token (a non-empty string), got %s", "$.label_at",
                    cJSON_IsString(la) ? "an empty string" : json_type_name(la));
    *label_at = la->valuestring;
    return 0;
}

/* The vocabulary: <pad> first, or the saved model's (and its classes). */
static int preset_tables(reader *rd, const char *const *vocab, size_t V, const char *const *classes,
                         size_t C)
{
    if (vocab) {
        if (V == 0 || strcmp(vocab[0], PAD) != 0 || tab_preset(&rd->vocab, vocab, V)) {
            snprintf(rd->err, rd->errlen,
                     _("%s: the model's vocabulary does not start with \"<pad>\""), rd->name);
            return -1;
        }
        if (classes && tab_preset(&rd->classes, classes, C)) {
            oom(rd);
            return -1;
        }
    } else if (tab_id(&rd->vocab, PAD) != 0) {
        oom(rd);
        return -1;
    }
    return 0;
}

/* The training part at "$" and, when there, the part at "$.heldout". */
static int read_parts(reader *rd, const cJSON *root, const char *label_at, train_task *task)
{
    const cJSON *ho;
    if (read_part(rd, root, "$", label_at, &task->train))
        return -1;
    ho = cJSON_GetObjectItemCaseSensitive(root, "heldout");
    if (ho && !cJSON_IsNull(ho)) {
        if (!cJSON_IsObject(ho))
            return fail(rd, "%s: expected an object with sequences, got %s", "$.heldout",
                        json_type_name(ho));
        if (read_part(rd, ho, "$.heldout", label_at, &task->heldout))
            return -1;
    }
    return 0;
}

/* The tables of rd handed over to task: its vocabulary, and its classes
 * (the vocabulary itself for token targets). */
static void hand_over_tables(reader *rd, train_task *task, const char *label_at)
{
    task->V = rd->vocab.n;
    task->vocab = rd->vocab.names;
    rd->vocab.names = NULL;
    rd->vocab.n = 0;
    if (rd->labels) {
        task->C = rd->classes.n;
        task->classes = rd->classes.names;
        rd->classes.names = NULL;
        rd->classes.n = 0;
        task->label_at = train_task_token(task, label_at);
    } else {
        task->C = task->V;
        task->classes = task->vocab;
    }
}

int train_data_from_json(train_task *task, const cJSON *root, const char *name,
                         const char *const *vocab, size_t V, const char *const *classes,
                         size_t C, char *err, size_t errlen)
{
    static const char *const top_keys[] = {"sequences", "targets", "labels", "label_at",
                                           "heldout", NULL};
    reader rd;
    const char *label_at = NULL;
    memset(&rd, 0, sizeof rd);
    memset(task, 0, sizeof *task);
    rd.name = name;
    rd.err = err;
    rd.errlen = errlen;
    task->kind = TASK_DATA;
    task->label_at = -1;

    if (!cJSON_IsObject(root)) {
        fail(&rd, "%s: expected an object, got %s", "$", json_type_name(root));
        goto bad;
    }
    if (check_keys(&rd, root, "$", top_keys) || read_label_at(&rd, root, &label_at) ||
        preset_tables(&rd, vocab, V, classes, C) || read_parts(&rd, root, label_at, task))
        goto bad;
    if (!rd.labels && vocab && classes && C != V) {
        snprintf(err, errlen, _("%s: token targets need a model whose classes are its vocabulary"),
                 name);
        goto bad;
    }
    hand_over_tables(&rd, task, label_at);
    tab_free(&rd.vocab);
    tab_free(&rd.classes);
    return 0;
bad:
    tab_free(&rd.vocab);
    tab_free(&rd.classes);
    train_task_free(task);
    return -1;
}

int train_data_load(train_task *task, const char *path, const char *const *vocab, size_t V,
                    const char *const *classes, size_t C, char *err, size_t errlen)
{
    cJSON *root = json_read_file(path, MAX_FILE_BYTES, err, errlen);
    int rc;
    if (!root) {
        memset(task, 0, sizeof *task);
        return -1;
    }
    rc = train_data_from_json(task, root, path, vocab, V, classes, C, err, errlen);
    cJSON_Delete(root);
    return rc;
}

int train_data_apple(train_task *task, const char *const *vocab, size_t V,
                     const char *const *classes, size_t C, char *err, size_t errlen)
{
    cJSON *root = cJSON_ParseWithLength((const char *)attn_apple_train_json,
                                        (size_t)attn_apple_train_json_len);
    int rc;
    if (!root) {
        memset(task, 0, sizeof *task);
        snprintf(err, errlen, "%s", _("the built-in apple corpus: out of memory"));
        return -1;
    }
    rc = train_data_from_json(task, root, "apple_train.json", vocab, V, classes, C, err, errlen);
    cJSON_Delete(root);
    if (rc == 0)
        task->kind = TASK_APPLE;
    return rc;
}

void train_data_cue_ids(const train_task *task, long *ids, size_t *n)
{
    *n = 0;
    for (const char *const *c = train_apple_cues; *c; c++) {
        long id = train_task_token(task, *c);
        if (id >= 0)
            ids[(*n)++] = id;
    }
}

int train_task_by_name(train_task *task, const char *name, size_t length, size_t digits,
                       unsigned long long seed, const char *const *vocab, size_t V,
                       const char *const *classes, size_t C, char *err, size_t errlen)
{
    train_kind kind;
    memset(task, 0, sizeof *task);
    if (strcmp(name, "apple") == 0)
        return train_data_apple(task, vocab, V, classes, C, err, errlen);
    if (strcmp(name, "reverse") == 0)
        kind = TASK_REVERSE;
    else if (strcmp(name, "previous") == 0)
        kind = TASK_PREVIOUS;
    else if (strcmp(name, "induction") == 0)
        kind = TASK_INDUCTION;
    else {
        snprintf(err, errlen, _("unknown task \"%s\" (known: reverse, previous, apple, induction)"),
                 name);
        return -1;
    }
    if (train_task_builtin(task, kind, length, digits, TRAIN_BUILTIN_HELDOUT, TRAIN_BUILTIN_EVAL,
                           seed, err, errlen))
        return -1;
    /* a saved model must have been trained on this very vocabulary */
    if (vocab) {
        int same = V == task->V && C == task->C;
        for (size_t i = 0; same && i < V; i++)
            same = strcmp(vocab[i], task->vocab[i]) == 0;
        for (size_t i = 0; same && i < C; i++)
            same = strcmp(classes[i], task->classes[i]) == 0;
        if (!same) {
            snprintf(err, errlen, _("the model's vocabulary (%zu tokens) is not the one of task %s "
                     "with %zu digits (%zu tokens)"), V, name, digits, task->V);
            train_task_free(task);
            return -1;
        }
    }
    return 0;
}
