/* toml_access.c — the read-only accessors of toml.h over the tree that
 * toml_build.c made: types, spans, typed values, source-ordered iteration
 * and hashed lookup.
 */
#include <assert.h>
#include <string.h>

#include "toml_internal.h"

const toml_value *toml_root(const toml_doc *doc) { return doc->root; }

source_t *toml_source(const toml_doc *doc) { return doc->src; }

toml_type toml_type_of(const toml_value *v) { return (toml_type)v->type; }

const char *toml_type_name(toml_type t)
{
    switch (t) {
    case TOML_TABLE: return "table";
    case TOML_ARRAY: return "array";
    case TOML_STRING: return "string";
    case TOML_INTEGER: return "integer";
    case TOML_FLOAT: return "float";
    case TOML_BOOL: return "boolean";
    case TOML_DATETIME: return "datetime";
    case TOML_DATETIME_LOCAL: return "datetime-local";
    case TOML_DATE_LOCAL: return "date-local";
    case TOML_TIME_LOCAL: return "time-local";
    }
    return "unknown";
}

span_t toml_span(const toml_value *v) { return v->span; }

const char *toml_str(const toml_value *v, size_t *len)
{
    assert(v->type == TOML_STRING);
    if (len) *len = v->n;
    return v->u.s;
}

int64_t toml_int(const toml_value *v)
{
    assert(v->type == TOML_INTEGER);
    return v->u.i;
}

double toml_float(const toml_value *v)
{
    assert(v->type == TOML_FLOAT);
    return v->u.f;
}

bool toml_bool(const toml_value *v)
{
    assert(v->type == TOML_BOOL);
    return v->u.b;
}

const toml_datetime *toml_dt(const toml_value *v)
{
    assert(v->type >= TOML_DATETIME && v->type <= TOML_TIME_LOCAL);
    return v->u.dt;
}

size_t toml_len(const toml_value *v)
{
    return v->type == TOML_TABLE || v->type == TOML_ARRAY ? v->n : 0;
}

const toml_value *toml_at(const toml_value *arr, size_t i)
{
    if (arr->type != TOML_ARRAY || i >= arr->n) return NULL;
    return arr->u.a[i];
}

/* Entry i of a table, or NULL when tab is no table or i is out of range. */
static const toml_entry *entry(const toml_value *tab, size_t i)
{
    if (tab->type != TOML_TABLE || i >= tab->n) return NULL;
    return &tab->u.e[i];
}

const char *toml_key_at(const toml_value *tab, size_t i, size_t *klen)
{
    const toml_entry *e = entry(tab, i);
    if (klen) *klen = e ? e->klen : 0;
    return e ? e->key : NULL;
}

span_t toml_key_span_at(const toml_value *tab, size_t i)
{
    const toml_entry *e = entry(tab, i);
    return e ? e->kspan : (span_t){0, 0};
}

const toml_value *toml_value_at(const toml_value *tab, size_t i)
{
    const toml_entry *e = entry(tab, i);
    return e ? e->val : NULL;
}

const toml_value *toml_getn(const toml_value *tab, const char *key, size_t klen)
{
    if (!tab || tab->type != TOML_TABLE) return NULL;
    long i = toml_tab_find(tab, key, klen);
    return i < 0 ? NULL : tab->u.e[i].val;
}

const toml_value *toml_get(const toml_value *tab, const char *key)
{
    return toml_getn(tab, key, strlen(key));
}

long toml_index(const toml_value *tab, const char *key)
{
    if (!tab || tab->type != TOML_TABLE) return -1;
    return toml_tab_find(tab, key, strlen(key));
}
