/* seq2seq_task.h — attn train --task translate: a small English → French
 * grammar (SPEC.md §11) whose sentences an encoder–decoder learns to
 * translate, and whose generator knows which English word each French
 * word translates, so that the cross-attention's alignment can be scored.
 *
 * A sentence is   det [adj] [colour] noun  verb  det [adj] [colour] noun  .
 *
 *   the small green apple wants a big blue car .
 *   la petite pomme verte veut une grande voiture bleue .
 *
 * French puts the colour after the noun, and the article, the adjective
 * and the colour agree in gender with the noun: the decoder must look at
 * the noun to write the words before it. Every English word gives exactly
 * one French word, so both sentences have the same length (6 … 10 words
 * with the final "."), and the alignment is a permutation that crosses
 * inside a noun phrase with a colour:
 *
 *   English  det adj colour noun  →  French  det adj noun colour
 *   position  0   1    2     3                0   1    3     2
 *
 * The tables (every French noun starts with a consonant, not an h, so no
 * article elides: no l'):
 *   determiners the → le / la, a (an before a vowel: an apple) → un / une
 *   adjectives  small → petit(e), big → grand(e), pretty → joli(e)
 *               (before the noun)
 *   colours     red → rouge, black → noir(e), white → blanc / blanche,
 *               green → vert(e), blue → bleu(e)   (after the noun)
 *   nouns       14, 7 masculine and 7 feminine (apple → pomme f, car →
 *               voiture f, cat → chat m, dog → chien m, boy → garçon m,
 *               girl → fille f, house → maison f, book → livre m, …)
 *   verbs       7 in the present, 3rd person singular (sees → voit,
 *               wants → veut, likes → aime, …)
 * A noun phrase draws its determiner and noun uniformly, an adjective with
 * probability 1/2 and a colour with probability 1/2 (each uniformly); the
 * verb is uniform: 672 noun phrases, 3,161,088 sentences.
 */
#ifndef ATTN_SEQ2SEQ_TASK_H
#define ATTN_SEQ2SEQ_TASK_H

#include <stddef.h>

#include "seq2seq_data.h"

/* The longest sentence, in words (either language): --num-steps of at
 * least TRANSLATE_MAX_WORDS + 1 holds every sentence with its <eos>. */
#define TRANSLATE_MAX_WORDS 10
/* How many distinct sentences the grammar has. */
#define TRANSLATE_SENTENCES 3161088UL
/* The most pairs translate_task_make draws (training and held-out
 * together): a third of the sentences, so that drawing distinct ones
 * stays quick. */
#define TRANSLATE_MAX_PAIRS 1000000UL

/* The pairs attn train draws for --task translate: 2,000 to train on and
 * 200 held out (attn translate --head-importance draws the same held-out
 * pairs again from the seed a model file names). */
#define TRANSLATE_TRAIN_PAIRS 2000
#define TRANSLATE_HELDOUT_PAIRS 200

/* n_train training pairs and n_heldout held-out pairs drawn from seed, the
 * French with its alignment (c->train.align, c->heldout.align: the
 * English position each French word translates). Every sentence is
 * distinct: no held-out English sentence is a training one, none appears
 * twice in either set. The held-out sentences come from a stream of their
 * own: the same seed gives the same held-out pairs whatever n_train. The
 * same seed and sizes give the same pairs on every machine. 0, or -1 with
 * the reason in err (n_train 0, more than TRANSLATE_MAX_PAIRS in all, out
 * of memory). */
int translate_task_make(s2s_corpus *c, unsigned long long seed, size_t n_train,
                        size_t n_heldout, char *err, size_t errlen);

/* The grammar's translation of an English sentence of n words (the
 * tokens, e.g. "the" "big" "red" "dog" "sees" "a" "cat" "."): its n French
 * words into out (room for TRANSLATE_MAX_WORDS, pointers to static
 * strings) and, when align is not NULL, the English position each
 * translates. n, or -1 when the sentence is not one of the grammar's. Uses
 * no seed: the tables above. */
int translate_english(const char *const *words, size_t n, const char **out, long *align);

/* The two vocabularies' words in the tables' order (English: the
 * determiners, adjectives, colours, nouns, verbs, "."; French likewise,
 * both genders), NULL-terminated; for documentation and checks. */
extern const char *const translate_english_words[];
extern const char *const translate_french_words[];

#endif
