/* argcheck.c — the JSON Schema subset of argcheck.h. */
#include "argcheck.h"

#include <math.h>
#include <string.h>

static const char *type_of(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsBool(v))
        return "boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "array";
    if (cJSON_IsObject(v))
        return "object";
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        return (d == floor(d) && fabs(d) <= 9007199254740992.0) ? "integer" : "number";
    }
    return "unknown";
}

static bool type_matches(const char *want, const cJSON *v)
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

static bool check(const cJSON *schema, const cJSON *v, const char *where, buf_t *why);

static bool check_type(const cJSON *schema, const cJSON *v, const char *where, buf_t *why)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(schema, "type");
    if (!t)
        return true;
    if (cJSON_IsString(t)) {
        if (type_matches(t->valuestring, v))
            return true;
        buf_printf(why, "%s must be %s %s, not %s %s", where,
                   strchr("aeiou", t->valuestring[0]) ? "an" : "a", t->valuestring,
                   strchr("aeiou", type_of(v)[0]) ? "an" : "a", type_of(v));
        return false;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, t) if (cJSON_IsString(e) && type_matches(e->valuestring, v)) return true;
    buf_printf(why, "%s has the wrong type (%s)", where, type_of(v));
    return false;
}

static bool check_object(const cJSON *schema, const cJSON *v, const char *where, buf_t *why)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
    const cJSON *addl = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
    const cJSON *r;
    cJSON_ArrayForEach(r, req)
    {
        if (cJSON_IsString(r) && !cJSON_GetObjectItemCaseSensitive(v, r->valuestring)) {
            buf_printf(why, "%s.%s is required", where, r->valuestring);
            return false;
        }
    }
    const cJSON *m;
    cJSON_ArrayForEach(m, v)
    {
        /* Duplicate keys: cJSON keeps both; only the first is ever read, so
         * a second one would be a silent surprise. */
        if (cJSON_GetObjectItemCaseSensitive(v, m->string) != m) {
            buf_printf(why, "%s.%s is given twice", where, m->string);
            return false;
        }
        const cJSON *ps = props ? cJSON_GetObjectItemCaseSensitive(props, m->string) : NULL;
        buf_t sub = BUF_INIT;
        buf_printf(&sub, "%s.%s", where, m->string);
        bool ok = true;
        if (ps)
            ok = check(ps, m, buf_cstr(&sub), why);
        else if (cJSON_IsFalse(addl)) {
            buf_printf(why, "%s is not a known argument", buf_cstr(&sub));
            if (props) {
                buf_adds(why, " (expected one of:");
                const cJSON *p;
                cJSON_ArrayForEach(p, props) buf_printf(why, " %s", p->string);
                buf_adds(why, ")");
            }
            ok = false;
        } else if (cJSON_IsObject(addl))
            ok = check(addl, m, buf_cstr(&sub), why);
        buf_free(&sub);
        if (!ok)
            return false;
    }
    return true;
}

static bool check(const cJSON *schema, const cJSON *v, const char *where, buf_t *why)
{
    if (!check_type(schema, v, where, why))
        return false;
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(schema, "enum");
    if (en) {
        const cJSON *e;
        cJSON_ArrayForEach(e, en) if (cJSON_Compare(e, v, 1)) goto enum_ok;
        buf_printf(why, "%s must be one of:", where);
        cJSON_ArrayForEach(e, en) if (cJSON_IsString(e)) buf_printf(why, " \"%s\"", e->valuestring);
        return false;
    }
enum_ok:
    if (cJSON_IsString(v)) {
        const cJSON *mn = cJSON_GetObjectItemCaseSensitive(schema, "minLength");
        const cJSON *mx = cJSON_GetObjectItemCaseSensitive(schema, "maxLength");
        size_t n = codepoints(v->valuestring);
        if (cJSON_IsNumber(mn) && (double)n < mn->valuedouble) {
            buf_printf(why, "%s must be at least %d characters long", where, mn->valueint);
            return false;
        }
        if (cJSON_IsNumber(mx) && (double)n > mx->valuedouble) {
            buf_printf(why, "%s must be at most %.0f characters long (got %zu)", where,
                       mx->valuedouble, n);
            return false;
        }
    }
    if (cJSON_IsNumber(v)) {
        const cJSON *mn = cJSON_GetObjectItemCaseSensitive(schema, "minimum");
        const cJSON *mx = cJSON_GetObjectItemCaseSensitive(schema, "maximum");
        if ((cJSON_IsNumber(mn) && v->valuedouble < mn->valuedouble) ||
            (cJSON_IsNumber(mx) && v->valuedouble > mx->valuedouble)) {
            buf_printf(why, "%s must be", where);
            if (cJSON_IsNumber(mn))
                buf_printf(why, " at least %.0f", mn->valuedouble);
            if (cJSON_IsNumber(mn) && cJSON_IsNumber(mx))
                buf_adds(why, " and");
            if (cJSON_IsNumber(mx))
                buf_printf(why, " at most %.0f", mx->valuedouble);
            return false;
        }
    }
    if (cJSON_IsArray(v)) {
        const cJSON *mn = cJSON_GetObjectItemCaseSensitive(schema, "minItems");
        const cJSON *mx = cJSON_GetObjectItemCaseSensitive(schema, "maxItems");
        int n = cJSON_GetArraySize(v);
        if (cJSON_IsNumber(mn) && n < mn->valueint) {
            buf_printf(why, "%s needs at least %d items", where, mn->valueint);
            return false;
        }
        if (cJSON_IsNumber(mx) && n > mx->valueint) {
            buf_printf(why, "%s may hold at most %d items", where, mx->valueint);
            return false;
        }
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(schema, "items");
        if (cJSON_IsObject(items)) {
            int i = 0;
            const cJSON *e;
            cJSON_ArrayForEach(e, v)
            {
                buf_t sub = BUF_INIT;
                buf_printf(&sub, "%s[%d]", where, i++);
                bool ok = check(items, e, buf_cstr(&sub), why);
                buf_free(&sub);
                if (!ok)
                    return false;
            }
        }
    }
    if (cJSON_IsObject(v))
        return check_object(schema, v, where, why);
    return true;
}

bool argcheck(const cJSON *schema, const cJSON *v, buf_t *why)
{
    return check(schema, v, "arguments", why);
}
