#!/usr/bin/python3
"""Reference values for attn's translation data (src/io/s2s_corpus.c,
src/nn/translation/seq2seq_data.c, src/nn/translation/seq2seq_bleu.c), from d2l's own functions.

Run with Debian's python from the top of the tree:
    /usr/bin/python3 scripts/gen_nmt_ref.py tests/ref/nmt

It writes into that folder:
  fra_small.txt      a fra.txt-style file made for the tests: U+202F and
                     U+00A0, capitals of French (É À Ç Œ …), punctuation
                     with and without a space before it, two spaces in a
                     row, a third field (Tatoeba's attribution), an empty
                     line, a line starting with '.', a CRLF line ending,
                     and more lines than the tests' max_examples;
  fra_small_ref.json what d2l makes of it: the tokens (tokenize_nmt with
                     num_examples = MAX_EXAMPLES, and with 0: every line),
                     the vocabularies (Vocab with min_freq 0 and 2), the
                     arrays (build_array_nmt for num_steps 4 and 9) and the
                     decoder's input under teacher forcing (train_seq2seq's
                     torch.cat([bos, Y[:, :-1]], 1));
  lower_ref.json     Python's str.lower() of every code point U+0000 …
                     U+017F (what s2s_corpus.h says attn lower-cases);
  preprocess_ref.json preprocess_nmt of single lines;
  bleu_ref.json      bleu(pred, label, k) of pairs of sentences, the value
                     written with repr (exact double).

The functions below mirror d2l's (the zh.d2l.ai edition: d2l/torch.py's
preprocess_nmt, tokenize_nmt, count_corpus, Vocab, truncate_pad,
build_array_nmt, bleu), written again here for behaviour, d2l itself not
being installed. Two places follow attn's documented choices instead:
  - tokenize_nmt keeps lines of two fields or more (d2l: exactly two), the
    third field dropped; d2l_tokenize_exact shows that this is the only
    difference on this file;
  - bleu gives 0 where d2l divides by zero (a prediction shorter than n).
build_array_nmt runs on lists; when PyTorch can be imported it also runs
on torch.tensor as d2l writes it, and the two must agree.
"""
import collections
import json
import math
import os
import sys

MAX_EXAMPLES = 12

# The test file, line by line (joined with "\n", ending with one).
FRA_LINES = [
    "Go.\tVa !\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #1158250 (Wittydev)",
    "Hi.\tSalut!",
    "Run!\tCours\u202f!",
    "Who?\tQui ?",
    "Wow!\tÇa alors\u00a0!",
    "",
    "I'm OK.\tÇa va.",
    "Help me,  please.\tAidez-moi, s'il vous plaît.",
    "Stop!\tArrête-toi !",
    "Be calm.\tSois calme\u00a0!",
    ".Hi\tÉcoute, Œuvre À Ÿ.",
    "Go on.\tPoursuis.\r",
    "Go on.\tContinue.",
    "I won!\tJ'ai gagné !",
    "Wait!\tAttends !",
    "Hug me.\tSerre-moi dans tes bras !",
]

# Sentence pairs for BLEU: (prediction, label), scored with k = 2 and 3.
BLEU_PAIRS = [
    ("il court .", "il court ."),                     # perfect
    ("il court vite .", "il court ."),                # longer: a 2-gram missing
    ("il court", "il court ."),                       # shorter: brevity penalty
    ("je suis calme .", "je suis calme ."),
    ("je suis à la maison .", "je suis chez moi ."),  # partial
    ("va !", "va !"),
    ("j'ai perdu .", "il a perdu ."),
    ("<unk> .", "qui ?"),                             # nothing matched
    ("il il il", "il court ."),                       # clipped by the label's count
    ("la la la la", "la la"),
    ("a b a b a b", "a b a c a b"),                   # repeated 2-grams
    ("calme", "calme"),                               # one word: no 2-gram (d2l: 1/0)
    ("calme", "sois calme !"),
    ("", "va !"),                                     # '' is one empty token
    ("va  !", "va !"),                                # two spaces: an empty token
    ("a b c d e f g h", "a b c d e f g h i j k l"),
    ("x y", "x y"),                                   # k = 3: a 3-gram of 2 words
    ("the small green apple wants the big blue boy .",
     "la petite pomme verte veut le grand garçon bleu ."),
    ("la petite pomme verte veut le grand garçon bleu .",
     "la petite pomme verte veut le grand garçon bleu ."),
    ("la petite pomme veut le grand garçon bleu .",
     "la petite pomme verte veut le grand garçon bleu ."),
]

# Lines for preprocess_nmt alone.
PREPROCESS = [
    "Hello, World!",
    "What?!",
    "Déjà vu.",
    "ÉLÈVE ÇA ŒUVRE ÀÂÄ ÎÏ ÔÖ ÙÛÜ Ÿ",
    "a\u202fb\u00a0c ,d",
    "Ünïcödé İstanbul .x",
    "..",
    " .",
    "x\t.y",
    "ĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮĲĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽ",
    "ıĸŉſ ßÿ×÷",
]


# ---- d2l's functions, as the zh edition writes them ----------------------

def preprocess_nmt(text):
    def no_space(char, prev_char):
        return char in set(',.!?') and prev_char != ' '
    text = text.replace('\u202f', ' ').replace('\xa0', ' ').lower()
    out = [' ' + char if i > 0 and no_space(char, text[i - 1]) else char
           for i, char in enumerate(text)]
    return ''.join(out)


def d2l_tokenize_exact(text, num_examples=None):
    source, target = [], []
    for i, line in enumerate(text.split('\n')):
        if num_examples and i > num_examples:
            break
        parts = line.split('\t')
        if len(parts) == 2:
            source.append(parts[0].split(' '))
            target.append(parts[1].split(' '))
    return source, target


def tokenize_nmt(text, num_examples=None):
    """d2l's, but a line of three fields or more keeps its first two."""
    source, target = [], []
    for i, line in enumerate(text.split('\n')):
        if num_examples and i > num_examples:
            break
        parts = line.split('\t')
        if len(parts) >= 2:
            source.append(parts[0].split(' '))
            target.append(parts[1].split(' '))
    return source, target


def count_corpus(tokens):
    if len(tokens) == 0 or isinstance(tokens[0], list):
        tokens = [token for line in tokens for token in line]
    return collections.Counter(tokens)


class Vocab:
    def __init__(self, tokens=None, min_freq=0, reserved_tokens=None):
        tokens = tokens or []
        reserved_tokens = reserved_tokens or []
        counter = count_corpus(tokens)
        self._token_freqs = sorted(counter.items(), key=lambda x: x[1], reverse=True)
        self.idx_to_token = ['<unk>'] + reserved_tokens
        self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}
        for token, freq in self._token_freqs:
            if freq < min_freq:
                break
            if token not in self.token_to_idx:
                self.idx_to_token.append(token)
                self.token_to_idx[token] = len(self.idx_to_token) - 1

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, 0)
        return [self.__getitem__(token) for token in tokens]


def truncate_pad(line, num_steps, padding_token):
    if len(line) > num_steps:
        return line[:num_steps]
    return line + [padding_token] * (num_steps - len(line))


def build_array_nmt(lines, vocab, num_steps):
    lines = [vocab[l] for l in lines]
    lines = [l + [vocab['<eos>']] for l in lines]
    array = [truncate_pad(l, num_steps, vocab['<pad>']) for l in lines]
    valid_len = [sum(1 for x in row if x != vocab['<pad>']) for row in array]
    try:
        import torch
    except ImportError:
        return array, valid_len
    t = torch.tensor([truncate_pad(l, num_steps, vocab['<pad>']) for l in lines])
    v = (t != vocab['<pad>']).type(torch.int32).sum(1)
    assert t.tolist() == array and v.tolist() == valid_len
    return array, valid_len


def bleu(pred_seq, label_seq, k):
    pred_tokens, label_tokens = pred_seq.split(' '), label_seq.split(' ')
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    score = math.exp(min(0, 1 - len_label / len_pred))
    for n in range(1, k + 1):
        if len_pred - n + 1 <= 0:
            return 0.0  # attn's choice where d2l divides by zero
        num_matches, label_subs = 0, collections.defaultdict(int)
        for i in range(len_label - n + 1):
            label_subs[' '.join(label_tokens[i: i + n])] += 1
        for i in range(len_pred - n + 1):
            if label_subs[' '.join(pred_tokens[i: i + n])] > 0:
                num_matches += 1
                label_subs[' '.join(pred_tokens[i: i + n])] -= 1
        score *= math.pow(num_matches / (len_pred - n + 1), math.pow(0.5, n))
    return score


# ---- the references --------------------------------------------------------

def arrays(lines, vocab, num_steps):
    array, valid = build_array_nmt(lines, vocab, num_steps)
    bos = vocab['<bos>']
    dec_in = [[bos] + row[:-1] for row in array]
    return {"array": array, "valid_len": valid, "dec_in": dec_in}


def fra_reference(text):
    pre = preprocess_nmt(text)
    src, tgt = tokenize_nmt(pre, MAX_EXAMPLES)
    exact = d2l_tokenize_exact(pre, MAX_EXAMPLES)
    # the only difference from d2l: the line with a third field
    assert len(src) == len(exact[0]) + 1 and src[1:] == exact[0] and tgt[1:] == exact[1]
    all_src, all_tgt = tokenize_nmt(pre)
    ref = {"max_examples": MAX_EXAMPLES, "source": src, "target": tgt,
           "all_source": all_src, "all_target": all_tgt, "vocabs": []}
    for min_freq in (0, 2):
        sv = Vocab(src, min_freq, ['<pad>', '<bos>', '<eos>'])
        tv = Vocab(tgt, min_freq, ['<pad>', '<bos>', '<eos>'])
        entry = {"min_freq": min_freq, "src_vocab": sv.idx_to_token,
                 "tgt_vocab": tv.idx_to_token, "arrays": []}
        for num_steps in (4, 9):
            entry["arrays"].append({"num_steps": num_steps,
                                    "src": arrays(src, sv, num_steps),
                                    "tgt": arrays(tgt, tv, num_steps)})
        ref["vocabs"].append(entry)
    return ref


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_nmt_ref.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    text = "\n".join(FRA_LINES) + "\n"
    with open(os.path.join(out, "fra_small.txt"), "w", encoding="utf-8", newline="") as f:
        f.write(text)

    def dump(name, obj):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=False, indent=1)
            f.write("\n")

    dump("fra_small_ref.json", fra_reference(text))
    dump("lower_ref.json", {"lower": [chr(c).lower() for c in range(0x180)]})
    dump("preprocess_ref.json",
         {"cases": [{"line": s, "out": preprocess_nmt(s)} for s in PREPROCESS]})
    dump("bleu_ref.json",
         {"cases": [{"pred": p, "label": l, "k": k, "bleu": bleu(p, l, k)}
                    for p, l in BLEU_PAIRS for k in (1, 2, 3)]})


if __name__ == "__main__":
    main()
