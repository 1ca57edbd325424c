/* textenc.c — UTF-8 validation/repair and base64 (see textenc.h). */
#include "textenc.h"

#include <stdint.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when the bytes
 * at s do not start one. Follows the table of Unicode §3.9 (D92). */
static size_t seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c < 0xC2 || c > 0xF4)
        return 0;
    if (c < 0xE0) {
        if (n < 2 || (s[1] & 0xC0) != 0x80)
            return 0;
        return 2;
    }
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F; /* no UTF-16 surrogates */
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F; /* nothing past U+10FFFF */
    if (n < 2 || s[1] < lo || s[1] > hi)
        return 0;
    if (c < 0xF0) {
        if (n < 3 || (s[2] & 0xC0) != 0x80)
            return 0;
        return 3;
    }
    if (n < 3 || (s[2] & 0xC0) != 0x80 || n < 4 || (s[3] & 0xC0) != 0x80)
        return 0;
    return 4;
}

/* How many bytes of an invalid sequence at s to replace with one U+FFFD:
 * the maximal prefix of a valid sequence (Unicode's "substitution of maximal
 * subparts"), at least one byte. */
static size_t bad_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0xC2 || c > 0xF4)
        return 1;
    size_t want = c < 0xE0 ? 2 : (c < 0xF0 ? 3 : 4);
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    size_t i = 1;
    if (i < n && i < want && s[i] >= lo && s[i] <= hi) {
        i++;
        while (i < n && i < want && (s[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

bool textenc_utf8_valid(const char *s, size_t n, bool allow_nul)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
            if (p[i] == 0 && !allow_nul)
                return false;
            i++;
            continue;
        }
        size_t k = seq_len(p + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

bool textenc_utf8_sanitize(const char *s, size_t n, buf_t *out)
{
    const unsigned char *p = (const unsigned char *)s;
    bool exact = true;
    size_t i = 0, run = 0; /* run: start of the pending valid stretch */
    buf_reserve(out, n);
    buf_add(out, "", 0);   /* terminated even when s is empty */
    while (i < n) {
        size_t k = p[i] == 0 ? 0 : seq_len(p + i, n - i);
        if (k) {
            i += k;
            continue;
        }
        buf_add(out, s + run, i - run);
        buf_add(out, "\xEF\xBF\xBD", 3); /* U+FFFD */
        exact = false;
        i += p[i] == 0 ? 1 : bad_len(p + i, n - i);
        run = i;
    }
    buf_add(out, s + run, n - run);
    return exact;
}

size_t textenc_utf8_clean_cut(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    /* Look back at most 3 bytes for the lead byte of the last sequence. */
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = p[n - back];
        if ((c & 0xC0) == 0x80)
            continue; /* continuation: keep looking */
        size_t want = c >= 0xF0 ? 4 : (c >= 0xE0 ? 3 : (c >= 0xC0 ? 2 : 1));
        return want > back ? n - back : n;
    }
    return n;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void textenc_base64_encode(const void *p, size_t n, buf_t *out)
{
    const unsigned char *s = p;
    buf_reserve(out, (n + 2) / 3 * 4);
    buf_add(out, "", 0);
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], b64[(v >> 6) & 63], b64[v & 63]};
        buf_add(out, q, 4);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], '=', '='};
        buf_add(out, q, 4);
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], b64[(v >> 6) & 63], '='};
        buf_add(out, q, 4);
    }
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

bool textenc_base64_decode(const char *s, size_t n, buf_t *out)
{
    /* Padding: none, or exactly what completes the last 4-char group. */
    if (n % 4 == 0 && n >= 1 && s[n - 1] == '=') {
        n--;
        if (s[n - 1] == '=')
            n--;
    }
    if (n % 4 == 1)
        return false;
    buf_reserve(out, n / 4 * 3 + 3);
    buf_add(out, "", 0); /* terminated even when nothing is decoded */
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0)
            return false;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf_addc(out, (char)((acc >> bits) & 0xFF));
        }
    }
    /* Leftover bits must be zero (canonical encoding). */
    if (bits && (acc & ((1u << bits) - 1)))
        return false;
    return true;
}
