/* s2s_corpus.h — sentence pairs for translation read from a --data file
 * (SPEC.md §11), in one of two forms, into nn's s2s_corpus
 * (src/nn/translation/seq2seq_data.h: pairs of token lists, training and held-out).
 *
 * 1. d2l's fra.txt: a line is  English<TAB>French[<TAB>…]  (the Tatoeba
 *    file d2l downloads). Read as d2l's read_data_nmt, preprocess_nmt and
 *    tokenize_nmt read it:
 *    - the text is UTF-8 (invalid bytes in a line read are an error);
 *    - preprocess_nmt: U+202F (narrow no-break space) and U+00A0 (no-break
 *      space) become a space; the text is lower-cased (below); a space is
 *      put before each ',' '.' '!' '?' whose previous character is not a
 *      space (the first character of the file has none; for the first
 *      character of a line the previous one is the '\n', so a line that
 *      starts with '.' gets a space first, as in d2l);
 *    - tokenize_nmt: the lines are split on '\n' and numbered from 0; lines
 *      0 … max_examples are read (max_examples + 1 lines, as d2l's loop
 *      breaks only when i > num_examples; empty lines count), and
 *      max_examples 0 reads every line (d2l's `if num_examples and …`);
 *      each side is split on single spaces as Python's split(' '): two
 *      spaces in a row give an empty token "" between them, and a space at
 *      either end an empty token there (d2l keeps these; so does attn);
 *      nothing else is stripped: a '\r' of a CRLF file stays in the last
 *      token of the line, as in d2l.
 *    Where attn differs from d2l, and why:
 *    - a third field (and any after it: Tatoeba's attribution) is dropped;
 *      d2l keeps only lines of exactly two fields (its own copy of the file
 *      has two), so such a line would be skipped there;
 *    - a line that is empty or holds only spaces, tabs and '\r' is skipped
 *      (d2l skips the empty ones); a line with other text but no tab is an
 *      error ("FILE: line 7: no tab
 *      between the source and the target"), where d2l skips it silently;
 *    - a side with no token but empty ones (nothing but spaces) is an error
 *      ("FILE: line 7: the target (after the tab) is empty"), where d2l
 *      would keep a sentence of one empty token;
 *    - a NUL byte in a line read is an error (Python would keep it);
 *    - no pair at all is an error ("FILE: no sentence pairs (expected lines
 *      of English<TAB>French)").
 *    Lower case, as Python's str.lower() gives it for these characters:
 *    A–Z; U+00C0 … U+00DE but U+00D7 (À → à … Ç → ç, É → é, Ñ → ñ, Ø → ø,
 *    Þ → þ); U+0100 … U+017F, Latin Extended-A, with Python's pairs (Ā →
 *    ā, Œ → œ, Š → š, Ÿ → ÿ U+00FF, Ž → ž, …) and İ U+0130 → "i̇" (i and
 *    U+0307); every other character is kept as it is (Python would also
 *    lower-case Greek, Cyrillic and the rest of Unicode: d2l's file is
 *    English and French).
 *
 * 2. JSON:  {"pairs": [["the red car", "la voiture rouge"], …],
 *            "heldout": {"pairs": […]}}          ("heldout" optional)
 *    Each sentence is a string of tokens as written (no lower-casing, no
 *    punctuation spacing), split on runs of spaces: "a  b" is a, b.
 *    Errors name the JSON path: "FILE: $.pairs[3][1]: expected a string,
 *    got a number", "$.pairs[2]: expected a pair [source, target], got 3
 *    entries", "$.pairs[0][0]: an empty sentence", "$.pairs: empty:
 *    expected at least one pair", "$.colour: unknown key (known: pairs,
 *    heldout)".
 *
 * A token written as "<unk>", "<pad>", "<bos>" or "<eos>" is read as that
 * reserved entry of the vocabulary, as in d2l. Functions return 0, or -1
 * with one line in err[errlen] that starts with the file's name; on
 * failure the corpus is empty (zeroed). Every size is checked; bad input
 * never crashes.
 */
#ifndef ATTN_S2S_CORPUS_H
#define ATTN_S2S_CORPUS_H

#include <stddef.h>

#include "seq2seq_data.h"

struct cJSON;

/* d2l's default number of examples (load_data_nmt's num_examples). */
#define S2S_MAX_EXAMPLES 600
/* The largest --data file of pairs read. */
#define S2S_MAX_FILE_BYTES ((size_t)256 << 20)

/* The two forms of a file of pairs. */
typedef enum s2s_corpus_kind { S2S_CORPUS_TEXT, S2S_CORPUS_JSON } s2s_corpus_kind;

/* Which form bytes are: JSON when the first byte that is not white space
 * (space, tab, CR, LF) is '{', otherwise fra.txt's text. */
s2s_corpus_kind s2s_corpus_format(const char *bytes, size_t len);

/* Whether parsed --data JSON is a file of pairs (an object with "pairs"),
 * not SPEC §9's sequences: the command's choice between the two. */
int s2s_corpus_is_pairs(const struct cJSON *root);

/* Read the file at path ("-": standard input) in either form. max_examples
 * as above (fra.txt only). */
int s2s_corpus_load(s2s_corpus *c, const char *path, size_t max_examples, char *err,
                  size_t errlen);

/* fra.txt's text[0 … len) (not NUL-terminated); name stands for the file
 * in messages. Training pairs only (c->heldout is empty). */
int s2s_corpus_read_fra(s2s_corpus *c, const char *text, size_t len, const char *name,
                      size_t max_examples, char *err, size_t errlen);

/* The JSON form, parsed; name stands for the file in messages. */
int s2s_corpus_from_json(s2s_corpus *c, const struct cJSON *root, const char *name,
                       char *err, size_t errlen);

/* d2l's preprocess_nmt on one line (no '\n' in it) of len bytes, into out
 * (room for 2·len + 1 bytes; NUL-terminated); *out_len its length. first:
 * whether the line starts the file (its first character has no previous
 * one; otherwise the previous is the '\n' before it). 0, or the offset + 1
 * of the first byte that is not UTF-8 or is a NUL (the caller says where). */
size_t s2s_preprocess_line(const char *line, size_t len, int first, char *out,
                           size_t *out_len);

/* A sentence typed by the user (attn translate) as tokens. d2l's
 * predict_seq2seq reads it as src_sentence.lower().split(' '); here each
 * step is a flag:
 *   S2S_SENTENCE_LOWER  lower case as above (d2l: yes)
 *   S2S_SENTENCE_PUNCT  preprocess_nmt's spacing: U+202F and U+00A0 to a
 *                       space, a space before , . ! ? (d2l: no; its
 *                       examples are written "go ." already)
 *   S2S_SENTENCE_WORDS  split on runs of spaces, no empty token (as the
 *                       JSON form; d2l: no, split(' '))
 * d2l's reading is S2S_SENTENCE_LOWER; a model trained on fra.txt reads
 * best with LOWER | PUNCT, one trained on JSON or the built-in task with
 * WORDS alone. *n tokens (0 when the sentence is empty with WORDS, else
 * at least 1) in one block: free() the returned array once. NULL with
 * "byte 3: not valid UTF-8" (a NUL cannot occur: the sentence is a C
 * string) or "out of memory …" in err. */
#define S2S_SENTENCE_LOWER 1
#define S2S_SENTENCE_PUNCT 2
#define S2S_SENTENCE_WORDS 4
char **s2s_sentence_tokens(const char *sentence, int flags, size_t *n, char *err,
                           size_t errlen);

/* Python's str.lower() of code point c for the characters listed above
 * (c itself for every other): the lower-case code point, and *second the
 * code point after it for İ (U+0307), 0 otherwise. */
unsigned long s2s_lower(unsigned long c, unsigned long *second);

#endif
