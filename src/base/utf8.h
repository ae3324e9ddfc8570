/* utf8.h — the one UTF-8 decoder of attn, for figures (render/text.c),
 * the terminal (render/term.c) and the texts of attn train --task lm
 * (io/lm_text.c), and its encoder. */
#ifndef ATTN_UTF8_H
#define ATTN_UTF8_H

#include <stdint.h>

/* What utf8_next gives for a malformed byte: above U+10FFFF, so never a
 * code point (a U+FFFD in the input stays a valid character). */
#define UTF8_INVALID 0x110000u

/* The next code point of the NUL-terminated UTF-8 string at *s, advancing
 * *s past it; 0 at the end (the NUL is not consumed). A byte that does not
 * start a well-formed sequence gives UTF8_INVALID and consumes that one
 * byte only, whatever follows: a stray continuation byte, a lead byte
 * 0xF8…0xFF, a truncated sequence, an overlong form, a surrogate
 * (U+D800…U+DFFF) or a value above U+10FFFF. Never reads past the
 * terminating NUL (a NUL is not a continuation byte). */
uint32_t utf8_next(const char **s);

/* 1 for a character of Chinese or Japanese text, written without spaces
 * between words: Han ideographs (and their extensions and compatibility
 * forms), hiragana, katakana, CJK punctuation (not U+3000, the
 * ideographic space) and fullwidth forms; else 0. Hangul is not one:
 * Korean puts spaces between its words. */
int utf8_is_cjk(uint32_t cp);

/* Write code point cp (≤ U+10FFFF, not a surrogate) as UTF-8 into out
 * (room for 5: up to 4 bytes and a NUL) and return its byte count; 0
 * (out "") for a value that is not a code point. */
int utf8_write(uint32_t cp, char out[5]);

#endif
