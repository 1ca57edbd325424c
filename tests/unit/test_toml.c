/* test_toml.c — the TOML front end through its public API (toml.h): lookups,
 * source order, spans as line:col (multibyte lines included), typed values,
 * 1.0 versus 1.1, the tagged JSON, and the exact text and place of errors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "toml.h"

/* ---- helpers ------------------------------------------------------------------ */

typedef struct {
    source_t *src;
    toml_doc *doc;
    toml_error err;
} parsed_t;

static parsed_t parse_n(const char *text, size_t len, toml_version ver)
{
    parsed_t p;
    memset(&p, 0, sizeof p);
    p.src = source_new("t.toml", text, len);
    p.doc = toml_parse(p.src, ver, &p.err);
    return p;
}

static parsed_t parse(const char *text) { return parse_n(text, strlen(text), TOML_1_1); }

static void done(parsed_t *p)
{
    toml_doc_free(p->doc);
    source_free(p->src);
}

/* "line:col" of an offset, for comparing spans as strings. */
static const char *at(source_t *src, uint32_t off)
{
    static char buf[4][32];
    static int k;
    srcpos_t pos = source_pos(src, off);
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%u:%u", pos.line, pos.col);
    return buf[k];
}

/* The text a span covers, for checking its end too. */
static const char *spanned(source_t *src, span_t sp)
{
    static char buf[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%.*s", (int)(sp.end - sp.start), src->text + sp.start);
    return buf[k];
}

static const toml_value *path(const toml_value *t, const char *a, const char *b)
{
    const toml_value *v = toml_get(t, a);
    return b && v ? toml_get(v, b) : v;
}

/* ---- lookups, order, types ------------------------------------------------------ */

static void test_lookup_and_order(void)
{
    parsed_t p = parse("title = \"x\"\n"
                       "zeta = 1\n"
                       "alpha = 2.5\n"
                       "mid = true\n"
                       "[server]\n"
                       "port = 8080\n"
                       "hosts = [\"a\", \"b\"]\n");
    CHECK(p.doc != NULL, "sample parses");
    const toml_value *root = toml_root(p.doc);
    CHECK(toml_source(p.doc) == p.src, "document points at its source");
    CHECK_INT(toml_type_of(root), TOML_TABLE, "root is a table");
    CHECK_INT(toml_len(root), 5, "root has 5 entries");
    const char *want[] = {"title", "zeta", "alpha", "mid", "server"};
    int in_order = 1;
    for (size_t i = 0; i < 5; i++) {
        size_t kl;
        const char *k = toml_key_at(root, i, &kl);
        in_order &= k && strcmp(k, want[i]) == 0 && kl == strlen(want[i]);
    }
    CHECK(in_order, "entries come in source order, not sorted");
    CHECK(toml_key_at(root, 5, NULL) == NULL && toml_value_at(root, 5) == NULL, "past the end is NULL");
    CHECK_INT(toml_index(root, "alpha"), 2, "toml_index finds the position");
    CHECK_INT(toml_index(root, "nope"), -1, "toml_index of a missing key is -1");
    CHECK(toml_get(root, "nope") == NULL, "missing key gives NULL");
    CHECK(toml_getn(root, "zetaXX", 4) == toml_get(root, "zeta"), "toml_getn uses only klen bytes");
    CHECK(toml_get(toml_get(root, "title"), "x") == NULL, "toml_get on a string gives NULL");
    CHECK(toml_get(NULL, "x") == NULL, "toml_get on NULL gives NULL");

    size_t n;
    CHECK_STR(toml_str(toml_get(root, "title"), &n), "x", "string value");
    CHECK_INT(n, 1, "string length");
    CHECK_INT(toml_int(path(root, "server", "port")), 8080, "integer in a table");
    CHECK(toml_float(toml_get(root, "alpha")) == 2.5, "float value");
    CHECK(toml_bool(toml_get(root, "mid")), "boolean value");
    const toml_value *hosts = path(root, "server", "hosts");
    CHECK_INT(toml_type_of(hosts), TOML_ARRAY, "array type");
    CHECK_INT(toml_len(hosts), 2, "array length");
    CHECK_STR(toml_str(toml_at(hosts, 1), NULL), "b", "array element");
    CHECK(toml_at(hosts, 2) == NULL, "array index out of range gives NULL");
    CHECK(toml_at(root, 0) == NULL, "toml_at on a table gives NULL");
    CHECK_INT(toml_len(toml_get(root, "zeta")), 0, "toml_len of a scalar is 0");
    CHECK_STR(toml_type_name(TOML_DATETIME_LOCAL), "datetime-local", "type names");
    CHECK_STR(toml_type_name(TOML_BOOL), "boolean", "type name of bool");
    done(&p);
}

static void test_big_table(void)
{
    buf_t b = BUF_INIT;
    for (int i = 0; i < 100000; i++) buf_printf(&b, "key%d = %d\n", i, i);
    buf_adds(&b, "[t]\n");
    parsed_t p = parse_n(b.p, b.len, TOML_1_1);
    CHECK(p.doc != NULL, "100k keys parse");
    const toml_value *root = toml_root(p.doc);
    int ok = toml_len(root) == 100001;
    for (int i = 0; i < 100000 && ok; i += 7) {
        char k[32];
        snprintf(k, sizeof k, "key%d", i);
        const toml_value *v = toml_get(root, k);
        ok = v && toml_int(v) == i && toml_index(root, k) == i;
    }
    CHECK(ok, "every key of a 100k table is found at its index");
    CHECK(toml_get(root, "key100000") == NULL, "absent key in a big table");
    done(&p);
    buf_free(&b);
}

/* ---- spans ------------------------------------------------------------------------ */

static void test_spans(void)
{
    parsed_t p = parse("# comment\n"
                       "name = \"drun\"\n"
                       "  ключ = \"значение\" # multibyte line\n"
                       "héllo.wörld = 1\n"
                       "\n"
                       "[server.http]\n"
                       "ports = [ 80, 443 ]\n"
                       "inline = { a = 1, b.c = 2 }\n"
                       "[[jobs]]\n"
                       "x = 1979-05-27T07:32:00Z\n");
    CHECK(p.doc == NULL, "unquoted non-ASCII key is rejected");
    done(&p);

    p = parse("# comment\n"
              "name = \"drun\"\n"
              "  \"ключ\" = \"значение\" # multibyte line\n"
              "a.\"wörld\".c = 1\n"
              "\n"
              "[server.http]\n"
              "ports = [ 80, 443 ]\n"
              "inline = { a = 1, b.c = 2 }\n"
              "[[jobs]]\n"
              "x = 1979-05-27T07:32:00Z\n");
    CHECK(p.doc != NULL, "span sample parses");
    const toml_value *root = toml_root(p.doc);
    source_t *s = p.src;
    CHECK_STR(at(s, toml_key_span_at(root, 0).start), "2:1", "key 'name' at 2:1");
    CHECK_STR(at(s, toml_span(toml_get(root, "name")).start), "2:8", "value of name at 2:8");
    CHECK_STR(spanned(s, toml_span(toml_get(root, "name"))), "\"drun\"", "string span covers the quotes");
    long i = toml_index(root, "ключ");
    CHECK(i == 1, "quoted Cyrillic key found");
    CHECK_STR(at(s, toml_key_span_at(root, (size_t)i).start), "3:3", "Cyrillic key at 3:3 (columns in characters)");
    CHECK_STR(at(s, toml_span(toml_get(root, "ключ")).start), "3:12", "its value at 3:12 after 4 two-byte letters");
    const toml_value *a = toml_get(root, "a");
    CHECK_STR(at(s, toml_span(a).start), "4:1", "table made by a dotted key: span of the first part");
    const toml_value *w = toml_get(a, "wörld");
    CHECK_STR(at(s, toml_span(w).start), "4:3", "middle part of the dotted key");
    CHECK_STR(at(s, toml_key_span_at(w, 0).start), "4:11", "key span is the last part, after a multibyte part");
    const toml_value *http = path(root, "server", "http");
    CHECK_STR(spanned(s, toml_span(http)), "[server.http]", "header table span is the header");
    CHECK_STR(at(s, toml_span(http).start), "6:1", "header at 6:1");
    CHECK_STR(spanned(s, toml_span(toml_get(http, "ports"))), "[ 80, 443 ]", "array span covers the brackets");
    CHECK_STR(at(s, toml_span(toml_at(toml_get(http, "ports"), 1)).start), "7:15", "array element at 7:15");
    const toml_value *in = toml_get(http, "inline");
    CHECK_STR(spanned(s, toml_span(in)), "{ a = 1, b.c = 2 }", "inline table span covers the braces");
    CHECK_STR(at(s, toml_key_span_at(toml_get(in, "b"), 0).start), "8:21", "dotted key inside an inline table");
    const toml_value *jobs = toml_get(root, "jobs");
    CHECK_STR(spanned(s, toml_span(toml_at(jobs, 0))), "[[jobs]]", "array-of-tables element span is its header");
    CHECK_STR(spanned(s, toml_span(path(toml_at(jobs, 0), "x", NULL))), "1979-05-27T07:32:00Z", "date-time span");
    done(&p);
}

static void test_implicit_then_defined_span(void)
{
    parsed_t p = parse("[a.b.c]\nx = 1\n[a]\ny = 2\n");
    CHECK(p.doc != NULL, "implicit table defined later parses");
    CHECK_STR(spanned(p.src, toml_span(toml_get(toml_root(p.doc), "a"))), "[a]",
              "an implicit table takes the span of its own header once defined");
    done(&p);
}

/* ---- values ----------------------------------------------------------------------- */

static void test_values(void)
{
    parsed_t p = parse("i1 = +99\ni2 = -17\ni3 = 0xDEAD_beef\ni4 = 0o755\ni5 = 0b1101\n"
                       "max = 9_223_372_036_854_775_807\nmin = -9223372036854775808\n"
                       "f1 = 6.626e-34\nf2 = -0.0\nf3 = inf\nf4 = -inf\nf5 = nan\nf6 = 1_000.5\n"
                       "s1 = \"tab\\there \\u00e9 \\U0001F600 \\u0000 end\"\n"
                       "s2 = 'C:\\path\\no\\escape'\n"
                       "s3 = \"\"\"\nfirst \\\n    second\"\"\"\n"
                       "s4 = '''\n  keep ''indent''\n'''\n"
                       "s5 = \"\\e\\x41\"\n"
                       "s6 = \"\"\"one\r\ntwo\"\"\"\n");
    CHECK(p.doc != NULL, "value sample parses");
    const toml_value *r = toml_root(p.doc);
    CHECK_INT(toml_int(toml_get(r, "i1")), 99, "+99");
    CHECK_INT(toml_int(toml_get(r, "i2")), -17, "-17");
    CHECK_INT(toml_int(toml_get(r, "i3")), 0xDEADBEEF, "hex with underscore");
    CHECK_INT(toml_int(toml_get(r, "i4")), 0755, "octal");
    CHECK_INT(toml_int(toml_get(r, "i5")), 13, "binary");
    CHECK(toml_int(toml_get(r, "max")) == INT64_MAX, "INT64_MAX");
    CHECK(toml_int(toml_get(r, "min")) == INT64_MIN, "INT64_MIN");
    CHECK(toml_float(toml_get(r, "f1")) == 6.626e-34, "exponent float");
    CHECK(toml_float(toml_get(r, "f2")) == 0 && signbit(toml_float(toml_get(r, "f2"))), "-0.0 keeps its sign");
    CHECK(isinf(toml_float(toml_get(r, "f3"))) && toml_float(toml_get(r, "f3")) > 0, "inf");
    CHECK(isinf(toml_float(toml_get(r, "f4"))) && toml_float(toml_get(r, "f4")) < 0, "-inf");
    CHECK(isnan(toml_float(toml_get(r, "f5"))), "nan");
    CHECK(toml_float(toml_get(r, "f6")) == 1000.5, "float with underscore");
    size_t n;
    const char *s1 = toml_str(toml_get(r, "s1"), &n);
    CHECK(n == 22 && memcmp(s1, "tab\there \xc3\xa9 \xf0\x9f\x98\x80 \0 end", 22) == 0,
          "escapes decode to UTF-8, \\u0000 kept inside the length");
    CHECK_STR(toml_str(toml_get(r, "s2"), NULL), "C:\\path\\no\\escape", "literal string keeps backslashes");
    CHECK_STR(toml_str(toml_get(r, "s3"), NULL), "first second",
              "multi-line: first newline dropped, line-ending backslash trims");
    CHECK_STR(toml_str(toml_get(r, "s4"), NULL), "  keep ''indent''\n", "multi-line literal");
    /* a literal split to end a hex escape stays on its line */
    /* clang-format off */
    CHECK_STR(toml_str(toml_get(r, "s5"), NULL), "\x1b" "A", "TOML 1.1 \\e and \\xHH");
    /* clang-format on */
    CHECK_STR(toml_str(toml_get(r, "s6"), NULL), "one\ntwo", "CRLF inside a multi-line string reads as LF");
    done(&p);
}

static void test_datetimes(void)
{
    parsed_t p = parse("odt = 1979-05-27T00:32:00.999999-07:00\n"
                       "odt2 = 1979-05-27 07:32:00z\n"
                       "ldt = 1979-05-27T07:32:00.1234567891\n"
                       "ld = 2024-02-29\n"
                       "lt = 07:32\n");
    CHECK(p.doc != NULL, "date-time sample parses");
    const toml_value *r = toml_root(p.doc);
    const toml_datetime *d = toml_dt(toml_get(r, "odt"));
    CHECK_INT(toml_type_of(toml_get(r, "odt")), TOML_DATETIME, "offset date-time type");
    CHECK(d->year == 1979 && d->month == 5 && d->day == 27 && d->hour == 0 && d->minute == 32, "fields");
    CHECK(d->nanosecond == 999999000 && d->frac_digits == 6, "fraction and its digits");
    CHECK(d->has_offset && d->offset_minutes == -420 && !d->offset_z, "offset -07:00");
    d = toml_dt(toml_get(r, "odt2"));
    CHECK(d->offset_z && d->offset_minutes == 0 && d->hour == 7, "space separator and lowercase z");
    d = toml_dt(toml_get(r, "ldt"));
    CHECK_INT(toml_type_of(toml_get(r, "ldt")), TOML_DATETIME_LOCAL, "local date-time type");
    CHECK(d->nanosecond == 123456789 && d->frac_digits == 9, "fraction past 9 digits is truncated");
    CHECK_INT(toml_type_of(toml_get(r, "ld")), TOML_DATE_LOCAL, "local date type (leap day)");
    d = toml_dt(toml_get(r, "lt"));
    CHECK(toml_type_of(toml_get(r, "lt")) == TOML_TIME_LOCAL && d->hour == 7 && d->second == 0,
          "TOML 1.1 time without seconds");
    done(&p);
}

static void test_json(void)
{
    parsed_t p = parse("s = \"q\\\"b\\\\n\\u0000\\u001f\\u007f é\"\n"
                       "f = [1.5, 3e14, 0.1, -0.0, nan, -inf]\n"
                       "d = [1979-05-27T07:32:00.5+01:30, 07:32, 2000-01-01, 1979-05-27t07:32:00.120]\n"
                       "t.u = { v = true }\n");
    CHECK(p.doc != NULL, "JSON sample parses");
    buf_t out = BUF_INIT;
    toml_to_tagged_json(p.doc, &out);
    CHECK_STR(buf_cstr(&out),
              "{\"s\":{\"type\":\"string\",\"value\":\"q\\\"b\\\\n\\u0000\\u001f\\u007f é\"},"
              "\"f\":[{\"type\":\"float\",\"value\":\"1.5\"},{\"type\":\"float\",\"value\":\"300000000000000\"},"
              "{\"type\":\"float\",\"value\":\"0.1\"},{\"type\":\"float\",\"value\":\"-0\"},"
              "{\"type\":\"float\",\"value\":\"nan\"},{\"type\":\"float\",\"value\":\"-inf\"}],"
              "\"d\":[{\"type\":\"datetime\",\"value\":\"1979-05-27T07:32:00.5+01:30\"},"
              "{\"type\":\"time-local\",\"value\":\"07:32:00\"},{\"type\":\"date-local\",\"value\":\"2000-01-01\"},"
              "{\"type\":\"datetime-local\",\"value\":\"1979-05-27T07:32:00.120\"}],"
              "\"t\":{\"u\":{\"v\":{\"type\":\"bool\",\"value\":\"true\"}}}}",
              "tagged JSON: escapes, shortest floats, RFC 3339 with the written fraction");
    buf_free(&out);
    done(&p);
}

static void test_versions(void)
{
    const char *t11[] = {"s = \"\\e\"\n", "s = \"\\x41\"\n", "t = 07:32\n", "t = { a = 1, }\n",
                         "t = {\n a = 1,\n b = 2\n}\n"};
    for (size_t i = 0; i < sizeof t11 / sizeof *t11; i++) {
        parsed_t a = parse_n(t11[i], strlen(t11[i]), TOML_1_1);
        parsed_t b = parse_n(t11[i], strlen(t11[i]), TOML_1_0);
        char name[96];
        snprintf(name, sizeof name, "1.1 accepts and 1.0 rejects: %.40s", t11[i]);
        for (char *c = name; *c; c++)
            if (*c == '\n') *c = ' ';
        CHECK(a.doc != NULL && b.doc == NULL, name);
        done(&a);
        done(&b);
    }
}

static void test_bom_and_empty(void)
{
    parsed_t p = parse("\xEF\xBB\xBFk = 1\n");
    CHECK(p.doc && toml_int(toml_get(toml_root(p.doc), "k")) == 1, "a BOM at the start is skipped");
    done(&p);
    p = parse("");
    CHECK(p.doc && toml_len(toml_root(p.doc)) == 0, "empty input is an empty table");
    done(&p);
}

/* ---- errors: exact text and place ---------------------------------------------------- */

typedef struct {
    const char *toml;
    toml_version ver;
    const char *msg;
    const char *where; /* line:col */
} bad_case;

static const bad_case bad[] = {
    {"name = 1\nx = 2\nname = 3\n", TOML_1_1, "duplicate key 'name' (first defined at 1:1)", "3:1"},
    {"s = \"a\\qb\"\n", TOML_1_1, "invalid escape '\\q' in string", "1:7"},
    {"n = 9223372036854775808\n", TOML_1_1, "integer 9223372036854775808 does not fit in 64 bits", "1:5"},
    {"n = -9223372036854775809\n", TOML_1_1, "integer -9223372036854775809 does not fit in 64 bits", "1:5"},
    {"n = 0x8000000000000000\n", TOML_1_1, "integer 0x8000000000000000 does not fit in 64 bits", "1:5"},
    {"[a]\n[a.b]\n[a.b]\n", TOML_1_1, "table [a.b] is defined twice (first at 2:1)", "3:4"},
    {"k = \"\xC0\xAF\"\n", TOML_1_1, "invalid UTF-8 byte 0xC0 in a string", "1:6"},
    {"k = 1 # \xED\xA0\x80 surrogate\n", TOML_1_1, "invalid UTF-8 byte 0xED in a comment", "1:9"},
    {"k = \"\xF4\x90\x80\x80\"\n", TOML_1_1, "invalid UTF-8 byte 0xF4 in a string", "1:6"},
    {"d = 2023-02-29\n", TOML_1_1, "invalid date '2023-02-29': February 2023 has 28 days", "1:5"},
    {"d = 2023-13-01\n", TOML_1_1, "invalid date '2023-13-01': month must be 01 to 12", "1:5"},
    {"t = 24:00:00\n", TOML_1_1, "invalid time '24:00:00': hour must be 00 to 23", "1:5"},
    {"t = 1979-05-27T07:32:00+24:00\n", TOML_1_1, "invalid time offset '+24:00': hours must be 00 to 23",
     "1:24"},
    {"n = 0123\n", TOML_1_1, "invalid number '0123': leading zeros are not allowed", "1:5"},
    {"n = 1__0\n", TOML_1_1, "invalid number '1__0': an underscore must sit between two digits", "1:5"},
    {"n = 1.\n", TOML_1_1, "invalid float '1.': a '.' needs digits on both sides", "1:5"},
    {"v = hello\n", TOML_1_1, "invalid value 'hello' (strings must be quoted)", "1:5"},
    {"k =\n", TOML_1_1, "expected a value after '=', found end of line", "1:4"},
    {"a = [1, 2\n", TOML_1_1, "unterminated array (opened at 1:5): found end of file", "2:1"},
    {"a = [1 2]\n", TOML_1_1, "expected ',' or ']' after an array element, found integer 2", "1:8"},
    {"a = 1 b = 2\n", TOML_1_1, "expected a new line after the value, found key 'b'", "1:7"},
    {"key value\n", TOML_1_1, "expected '=' after key 'key', found key 'value'", "1:5"},
    {"= 1\n", TOML_1_1, "missing key before '='", "1:1"},
    {"]\n", TOML_1_1, "expected a key or a [table] header, found ']'", "1:1"},
    {"[a]]\n", TOML_1_1, "expected '.' or the closing bracket of the table header, found ']]'", "1:3"},
    {"[a] x = 1\n", TOML_1_1, "expected a new line after the table header, found key 'x'", "1:5"},
    {"a = \"open\n", TOML_1_1,
     "unterminated string: no closing \" on this line (use \"\"\" for a multi-line string)", "1:5"},
    {"a = '''open", TOML_1_1, "unterminated multi-line string: no closing ''' before the end of the file",
     "1:5"},
    {"a = \"x\ty\x01\"\n", TOML_1_1,
     "control character U+0001 is not allowed in a string (write it as an escape such as \\n or \\u0001)", "1:9"},
    {"a = 1\r\n b = 2\rc = 3\n", TOML_1_1, "carriage return not followed by a line feed", "2:7"},
    {"a.b = 1\n[a.b]\n", TOML_1_1, "cannot use key 'a.b' as a table: it is already an integer (defined at 1:3)",
     "2:4"},
    {"[a.b.c]\n[a]\nb.c.d = 1\n", TOML_1_1,
     "cannot add to table 'b.c' with a dotted key: it was defined by its header [a.b.c] at 1:1", "3:3"},
    {"[fruit]\napple.color = 'red'\n[fruit.apple]\n", TOML_1_1,
     "table [fruit.apple] is already defined by a dotted key at 2:1", "3:8"},
    {"[a.b.c]\n[a]\nb.x = 1\n[a.b]\n", TOML_1_1, "table [a.b] is already defined by a dotted key at 3:1",
     "4:4"},
    {"a = {b = 1}\na.c = 2\n", TOML_1_1,
     "cannot add to inline table 'a' (defined at 1:5): an inline table is complete as written", "2:1"},
    {"a = [1]\n[[a]]\n", TOML_1_1, "cannot append to array 'a' with [[a]]: it is a static array (defined at 1:1)",
     "2:3"},
    {"[[a]]\n[a]\n", TOML_1_1, "table [a] is already defined as an array of tables at 1:1", "2:2"},
    {"s = \"\\uD800\"\n", TOML_1_1, "invalid escape '\\uD800' in string: U+D800 is not a Unicode scalar value",
     "1:6"},
    {"s = \"\\e\"\n", TOML_1_0, "invalid escape '\\e' in string (allowed from TOML 1.1)", "1:6"},
    {"t = 07:32\n", TOML_1_0, "time '07:32' has no seconds (required in TOML 1.0: write 07:32:00)", "1:5"},
    {"t = {a = 1,\n b = 2}\n", TOML_1_0, "newline inside an inline table (allowed from TOML 1.1)", "1:12"},
    {"t = {a = 1,}\n", TOML_1_0, "trailing comma in an inline table (allowed from TOML 1.1)", "1:11"},
    {"\"\"\"k\"\"\" = 1\n", TOML_1_1, "a multi-line string cannot be a key", "1:1"},
    {"k = 1e400\n", TOML_1_1, "float 1e400 is out of range (larger than 1.8e308)", "1:5"},
    {"  ключ = 1\n", TOML_1_1,
     "unexpected character 'к' in a key (bare keys may contain only A-Z a-z 0-9 _ -; quote other keys)", "1:3"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        parsed_t p = parse_n(bad[i].toml, strlen(bad[i].toml), bad[i].ver);
        char name[160];
        snprintf(name, sizeof name, "error text: %.60s", bad[i].msg);
        if (p.doc) {
            CHECK(0, name);
            done(&p);
            continue;
        }
        CHECK_STR(p.err.msg, bad[i].msg, name);
        snprintf(name, sizeof name, "error place %s: %.50s", bad[i].where, bad[i].msg);
        CHECK_STR(at(p.src, p.err.span.start), bad[i].where, name);
        done(&p);
    }
}

static void test_nul_and_depth(void)
{
    parsed_t p = parse_n("a = 1\n\0b = 2\n", 13, TOML_1_1);
    CHECK(p.doc == NULL, "NUL byte rejected");
    CHECK_STR(p.err.msg, "control character U+0000 is not allowed here", "NUL byte message");
    CHECK_STR(at(p.src, p.err.span.start), "2:1", "NUL byte place");
    done(&p);

    buf_t b = BUF_INIT;
    buf_adds(&b, "a = ");
    for (int i = 0; i < 10000; i++) buf_addc(&b, '[');
    p = parse_n(b.p, b.len, TOML_1_1);
    CHECK_STR(p.err.msg, "nesting deeper than 1000 levels", "10,000 nested arrays: depth error");
    CHECK_STR(at(p.src, p.err.span.start), "1:1005", "depth error at the 1001st bracket");
    done(&p);
    buf_truncate(&b, 4);
    for (int i = 0; i < 1000; i++) buf_addc(&b, '[');
    for (int i = 0; i < 1000; i++) buf_addc(&b, ']');
    p = parse_n(b.p, b.len, TOML_1_1);
    CHECK(p.doc != NULL, "exactly 1000 nested arrays are accepted");
    done(&p);
    buf_free(&b);
}

int main(void)
{
    test_lookup_and_order();
    test_big_table();
    test_spans();
    test_implicit_then_defined_span();
    test_values();
    test_datetimes();
    test_json();
    test_versions();
    test_bom_and_empty();
    test_errors();
    test_nul_and_depth();
    return tap_done();
}
