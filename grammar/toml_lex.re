/* toml_lex.re — the TOML tokenizer: a pure function over bytes (re2c).
 *
 * One call scans one token in one of two modes (keys or values; see
 * toml_internal.h) and returns its kind and length. Every rule accepts only
 * valid UTF-8, so bad bytes end the token early and become an error token
 * whose end points at them; toml_scalar.c turns that into a sentence.
 */
#include "toml_internal.h"

/*!rules:re2c:toml
    re2c:api:style = free-form;
    re2c:define:YYCTYPE = "unsigned char";
    re2c:define:YYCURSOR = cur;
    re2c:define:YYMARKER = mar;
    re2c:define:YYLIMIT = lim;
    re2c:yyfill:enable = 0;
    re2c:eof = 0;

    // Code points U+0080..U+10FFFF minus the surrogates, as UTF-8: anything
    // else (overlong forms, encoded surrogates, stray continuation bytes,
    // > U+10FFFF) matches no rule.
    nonascii = [\x80-\uD7FF\uE000-\U0010FFFF];

    nl      = "\n" | "\r\n";
    ws      = [ \t]+;
    comment = "#" ([\t\x20-\x7E] | nonascii)*;

    // Strings. Escapes are taken loosely here (a backslash and any printable
    // ASCII character) and checked by the decoder, which can then name the bad
    // escape and the TOML version that allows it.
    bchar   = [\t\x20\x21\x23-\x5B\x5D-\x7E] | nonascii;
    esc     = "\\" [\x20-\x7E];
    basic   = ["] (bchar | esc)* ["];
    mlbc    = bchar | nl | "\\" ([\t\x20-\x7E] | nl);
    mlbody  = mlbc* (["] ["]? mlbc+)* (["] ["]?)?;
    mlbasic = ["]{3} mlbody ["]{3};

    lchar   = [\t\x20-\x26\x28-\x7E] | nonascii;
    literal = ['] lchar* ['];
    mllc    = lchar | nl;
    mllbody = mllc* (['] [']? mllc+)* ([']? [']?);
    mlliteral = [']{3} mllbody [']{3};

    // The same strings cut short by a bad byte, a newline or the end of input.
    bad_string = ["] (bchar | esc)* | ["]{3} mlbody | ['] lchar* | [']{3} mllbody;

    bare    = [A-Za-z0-9_-]+;

    // Numbers and dates (values only).
    digit   = [0-9];
    digits  = digit ("_"? digit)*;
    decint  = [+-]? ("0" | [1-9] ("_"? digit)*);
    hexint  = "0x" [0-9A-Fa-f] ("_"? [0-9A-Fa-f])*;
    octint  = "0o" [0-7] ("_"? [0-7])*;
    binint  = "0b" [01] ("_"? [01])*;
    frac    = "." digits;
    exp     = [eE] [+-]? digits;
    float   = decint (frac exp? | exp) | [+-]? ("inf" | "nan");
    date    = digit{4} "-" digit{2} "-" digit{2};
    time    = digit{2} ":" digit{2} (":" digit{2} ("." digit+)?)?;
    offset  = [Zz] | [+-] digit{2} ":" digit{2};
    datetime = date ([Tt ] time offset?)? | time;
    // A run of characters that can only be a (broken) number, date or bare
    // word: shorter than any valid value above it is never chosen, so it only
    // wins on input like 0123, 1__0, 1., 2020-01-01x or an unquoted word.
    blob    = [0-9A-Za-z_.:+-]+;

    $           { *len = 0; return 0; }
    ws          { TOKEN(TK_WS); }
    comment     { TOKEN(TK_COMMENT); }
    nl          { TOKEN(TK_NEWLINE); }
    "="         { TOKEN(TK_EQUALS); }
    ","         { TOKEN(TK_COMMA); }
    "["         { TOKEN(TK_LBRACKET); }
    "]"         { TOKEN(TK_RBRACKET); }
    "{"         { TOKEN(TK_LBRACE); }
    "}"         { TOKEN(TK_RBRACE); }
    basic       { TOKEN(TK_BASIC); }
    literal     { TOKEN(TK_LITERAL); }
    mlbasic     { TOKEN(TK_ML_BASIC); }
    mlliteral   { TOKEN(TK_ML_LITERAL); }
    bad_string  { TOKEN(TK_BAD_STRING); }
    *           { TOKEN(TK_ILLEGAL); }
*/

/* Every rule ends the same way: the length is how far the cursor went. */
#define TOKEN(kind) do { *len = (size_t)(cur - start); return (kind); } while (0)

/* Key mode: bare keys, dots and the [[ ]] of array-of-tables headers. */
static int lex_key(const unsigned char *start, const unsigned char *lim, size_t *len)
{
    const unsigned char *cur = start, *mar = start;
    (void)mar;
/*!use:re2c:toml
    "."   { TOKEN(TK_DOT); }
    "[["  { TOKEN(TK_LLBRACKET); }
    "]]"  { TOKEN(TK_RRBRACKET); }
    bare  { TOKEN(TK_BARE); }
*/
}

/* Value mode: booleans, numbers, dates and times; [ is always one array. */
static int lex_value(const unsigned char *start, const unsigned char *lim, size_t *len)
{
    const unsigned char *cur = start, *mar = start;
    (void)mar;
/*!use:re2c:toml
    "true" | "false"                  { TOKEN(TK_BOOL); }
    decint | hexint | octint | binint { TOKEN(TK_INTEGER); }
    float                             { TOKEN(TK_FLOAT); }
    datetime                          { TOKEN(TK_DATETIME); }
    blob                              { TOKEN(TK_BAD_VALUE); }
*/
}

int toml_lex(const char *p, const char *end, toml_lex_mode mode, size_t *len)
{
    const unsigned char *s = (const unsigned char *)p, *lim = (const unsigned char *)end;
    return mode == LEX_VALUE ? lex_value(s, lim, len) : lex_key(s, lim, len);
}
