/* argcheck.c — the JSON Schema subset of argcheck.h. */
#include "argcheck.h"

#include <math.h>
#include <string.h>

static const char *type_of(const json_t *v)
{
    if (json_is_string(v))
        return "string";
    if (json_is_boolean(v))
        return "boolean";
    if (json_is_null(v))
        return "null";
    if (json_is_array(v))
        return "array";
    if (json_is_object(v))
        return "object";
    if (json_is_number(v)) {
        /* Integral numbers are integers, whichever way they are written
         * (JSON Schema; the arguments are parsed as reals, jsonrpc.h). */
        double d = json_number_value(v);
        return (d == floor(d) && fabs(d) <= 9007199254740992.0) ? "integer" : "number";
    }
    return "unknown";
}

static bool type_matches(const char *want, const json_t *v)
{
    const char *got = type_of(v);
    if (!strcmp(want, got))
        return true;
    return !strcmp(want, "number") && !strcmp(got, "integer");
}

static size_t codepoints(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

/* A number keyword of the schema (minimum, maxLength, ...), or NAN. */
static double num_kw(const json_t *schema, const char *key)
{
    const json_t *k = json_object_get(schema, key);
    return json_is_number(k) ? json_number_value(k) : NAN;
}

static bool check(const json_t *schema, const json_t *v, const char *where, buf_t *why);

static bool check_type(const json_t *schema, const json_t *v, const char *where, buf_t *why)
{
    const json_t *t = json_object_get(schema, "type");
    if (!t)
        return true;
    if (json_is_string(t)) {
        const char *want = json_string_value(t);
        if (type_matches(want, v))
            return true;
        buf_printf(why, "%s must be %s %s, not %s %s", where, strchr("aeiou", want[0]) ? "an" : "a",
                   want, strchr("aeiou", type_of(v)[0]) ? "an" : "a", type_of(v));
        return false;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(t, i, e)
        if (json_is_string(e) && type_matches(json_string_value(e), v))
            return true;
    buf_printf(why, "%s has the wrong type (%s)", where, type_of(v));
    return false;
}

static bool unknown_member(const json_t *props, const char *sub, buf_t *why)
{
    buf_printf(why, "%s is not a known argument", sub);
    if (props) {
        buf_adds(why, " (expected one of:");
        const char *k;
        const json_t *p;
        json_object_foreach((json_t *)props, k, p) buf_printf(why, " %s", k);
        buf_adds(why, ")");
    }
    return false;
}

static bool check_object(const json_t *schema, const json_t *v, const char *where, buf_t *why)
{
    const json_t *props = json_object_get(schema, "properties");
    const json_t *req = json_object_get(schema, "required");
    const json_t *addl = json_object_get(schema, "additionalProperties");
    size_t i;
    const json_t *r;
    json_array_foreach(req, i, r) {
        if (json_is_string(r) && !json_object_get(v, json_string_value(r))) {
            buf_printf(why, "%s.%s is required", where, json_string_value(r));
            return false;
        }
    }
    /* No key can be given twice: the reader refuses duplicates (jsonrpc.c). */
    const char *key;
    const json_t *m;
    json_object_foreach((json_t *)v, key, m) {
        const json_t *ps = json_object_get(props, key);
        buf_t sub = BUF_INIT;
        buf_printf(&sub, "%s.%s", where, key);
        bool ok = true;
        if (ps)
            ok = check(ps, m, buf_cstr(&sub), why);
        else if (json_is_false(addl))
            ok = unknown_member(props, buf_cstr(&sub), why);
        else if (json_is_object(addl))
            ok = check(addl, m, buf_cstr(&sub), why);
        buf_free(&sub);
        if (!ok)
            return false;
    }
    return true;
}

static bool check_enum(const json_t *schema, const json_t *v, const char *where, buf_t *why)
{
    const json_t *en = json_object_get(schema, "enum");
    size_t i;
    const json_t *e;
    if (!en)
        return true;
    json_array_foreach(en, i, e) {
        /* 1 in a schema is an integer, in the arguments a real (jsonrpc.h). */
        if (json_equal(e, v) || (json_is_number(e) && json_is_number(v) &&
                                 json_number_value(e) == json_number_value(v)))
            return true;
    }
    buf_printf(why, "%s must be one of:", where);
    json_array_foreach(en, i, e)
        if (json_is_string(e))
            buf_printf(why, " \"%s\"", json_string_value(e));
    return false;
}

static bool check_string(const json_t *schema, const json_t *v, const char *where, buf_t *why)
{
    double mn = num_kw(schema, "minLength"), mx = num_kw(schema, "maxLength");
    size_t n = codepoints(json_string_value(v));
    if ((double)n < mn) {
        buf_printf(why, "%s must be at least %.0f characters long", where, mn);
        return false;
    }
    if ((double)n > mx) {
        buf_printf(why, "%s must be at most %.0f characters long (got %zu)", where, mx, n);
        return false;
    }
    return true;
}

static bool check_number(const json_t *schema, const json_t *v, const char *where, buf_t *why)
{
    double mn = num_kw(schema, "minimum"), mx = num_kw(schema, "maximum");
    double d = json_number_value(v);
    if (!(d < mn) && !(d > mx))
        return true;
    buf_printf(why, "%s must be", where);
    if (!isnan(mn))
        buf_printf(why, " at least %.0f", mn);
    if (!isnan(mn) && !isnan(mx))
        buf_adds(why, " and");
    if (!isnan(mx))
        buf_printf(why, " at most %.0f", mx);
    return false;
}

static bool check_array(const json_t *schema, const json_t *v, const char *where, buf_t *why)
{
    double mn = num_kw(schema, "minItems"), mx = num_kw(schema, "maxItems");
    size_t n = json_array_size(v);
    if ((double)n < mn) {
        buf_printf(why, "%s needs at least %.0f items", where, mn);
        return false;
    }
    if ((double)n > mx) {
        buf_printf(why, "%s may hold at most %.0f items", where, mx);
        return false;
    }
    const json_t *items = json_object_get(schema, "items");
    if (!json_is_object(items))
        return true;
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e) {
        buf_t sub = BUF_INIT;
        buf_printf(&sub, "%s[%zu]", where, i);
        bool ok = check(items, e, buf_cstr(&sub), why);
        buf_free(&sub);
        if (!ok)
            return false;
    }
    return true;
}

static bool check(const json_t *schema, const json_t *v, const char *where, buf_t *why)
{
    if (!check_type(schema, v, where, why) || !check_enum(schema, v, where, why))
        return false;
    if (json_is_string(v))
        return check_string(schema, v, where, why);
    if (json_is_number(v))
        return check_number(schema, v, where, why);
    if (json_is_array(v))
        return check_array(schema, v, where, why);
    if (json_is_object(v))
        return check_object(schema, v, where, why);
    return true;
}

bool argcheck(const json_t *schema, const json_t *v, buf_t *why)
{
    return check(schema, v, "arguments", why);
}
