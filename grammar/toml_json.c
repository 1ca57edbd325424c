/* toml_json.c — toml_to_tagged_json(): the document as toml-test's tagged
 * JSON. Written by hand so that every byte of a TOML string survives: valid
 * UTF-8 passes through, '"', '\' and every control character (U+0000
 * included) are escaped. The reader of this format is toml-test's runner.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml_internal.h"

static void put_string(buf_t *out, const char *s, size_t n)
{
    buf_reserve(out, n + 2);
    buf_addc(out, '"');
    size_t run = 0; /* bytes of s[run..i) still to copy verbatim */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7F) continue;
        buf_add(out, s + run, i - run);
        run = i + 1;
        if (c == '"' || c == '\\') {
            buf_addc(out, '\\');
            buf_addc(out, (char)c);
        } else {
            buf_printf(out, "\\u%04x", c);
        }
    }
    buf_add(out, s + run, n - run);
    buf_addc(out, '"');
}

void toml_json_float(buf_t *out, double f)
{
    if (isnan(f)) {
        buf_adds(out, "nan");
        return;
    }
    if (isinf(f)) {
        buf_adds(out, f < 0 ? "-inf" : "inf");
        return;
    }
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, f);
        if (strtod(tmp, NULL) == f) break;
    }
    buf_adds(out, tmp);
}

void toml_json_datetime(buf_t *out, toml_type t, const toml_datetime *dt)
{
    if (t != TOML_TIME_LOCAL) buf_printf(out, "%04d-%02d-%02d", dt->year, dt->month, dt->day);
    if (t == TOML_DATE_LOCAL) return;
    if (t != TOML_TIME_LOCAL) buf_addc(out, 'T');
    buf_printf(out, "%02d:%02d:%02d", dt->hour, dt->minute, dt->second);
    if (dt->frac_digits > 0) {
        int frac = dt->nanosecond;
        for (int i = dt->frac_digits; i < 9; i++) frac /= 10;
        buf_printf(out, ".%0*d", dt->frac_digits, frac);
    }
    if (t != TOML_DATETIME) return;
    if (dt->offset_z) {
        buf_addc(out, 'Z');
    } else {
        int m = dt->offset_minutes < 0 ? -dt->offset_minutes : dt->offset_minutes;
        buf_printf(out, "%c%02d:%02d", dt->offset_minutes < 0 ? '-' : '+', m / 60, m % 60);
    }
}

/* The opening of a tagged scalar, {"type":"...","value":" , by type. */
static const char *open_tag(toml_type t)
{
    switch (t) {
    case TOML_STRING: return "{\"type\":\"string\",\"value\":";
    case TOML_INTEGER: return "{\"type\":\"integer\",\"value\":\"";
    case TOML_FLOAT: return "{\"type\":\"float\",\"value\":\"";
    case TOML_BOOL: return "{\"type\":\"bool\",\"value\":\"";
    case TOML_DATETIME: return "{\"type\":\"datetime\",\"value\":\"";
    case TOML_DATETIME_LOCAL: return "{\"type\":\"datetime-local\",\"value\":\"";
    case TOML_DATE_LOCAL: return "{\"type\":\"date-local\",\"value\":\"";
    default: return "{\"type\":\"time-local\",\"value\":\"";
    }
}

/* Decimal without printf: a tree holds many integers and printf is slow. */
static void put_int(buf_t *out, int64_t i)
{
    char tmp[24], *p = tmp + sizeof tmp;
    uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    do *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (i < 0) *--p = '-';
    buf_add(out, p, (size_t)(tmp + sizeof tmp - p));
}

static void put_scalar(buf_t *out, const toml_value *v)
{
    toml_type t = (toml_type)v->type;
    buf_adds(out, open_tag(t));
    switch (t) {
    case TOML_STRING:
        put_string(out, v->u.s, v->n); /* brings its own quotes */
        buf_addc(out, '}');
        return;
    case TOML_INTEGER: put_int(out, v->u.i); break;
    case TOML_FLOAT: toml_json_float(out, v->u.f); break;
    case TOML_BOOL: buf_adds(out, v->u.b ? "true" : "false"); break;
    default: toml_json_datetime(out, t, v->u.dt); break;
    }
    buf_adds(out, "\"}");
}

/* Recursion depth is bounded by TOML_MAX_DEPTH: the parser refuses deeper
 * trees. */
static void put_value(buf_t *out, const toml_value *v)
{
    if (v->type == TOML_TABLE) {
        buf_addc(out, '{');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) buf_addc(out, ',');
            put_string(out, v->u.e[i].key, v->u.e[i].klen);
            buf_addc(out, ':');
            put_value(out, v->u.e[i].val);
        }
        buf_addc(out, '}');
    } else if (v->type == TOML_ARRAY) {
        buf_addc(out, '[');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i) buf_addc(out, ',');
            put_value(out, v->u.a[i]);
        }
        buf_addc(out, ']');
    } else {
        put_scalar(out, v);
    }
}

void toml_to_tagged_json(const toml_doc *doc, buf_t *out)
{
    put_value(out, doc->root);
}
