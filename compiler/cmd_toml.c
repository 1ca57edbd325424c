/* cmd_toml.c — `drun-policy toml-decode`: TOML on stdin, toml-test JSON out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "toml.h"

int cmd_toml_decode(const cli_args_t *a)
{
    toml_version ver = a->toml && strcmp(a->toml, "1.0") == 0 ? TOML_1_0 : TOML_1_1;
    char *err = NULL;
    source_t *src = source_read("-", &err);
    if (!src) {
        fprintf(stderr, "drun-policy toml-decode: %s\n", err);
        free(err);
        return EXIT_USAGE;
    }
    toml_error te;
    toml_doc *doc = toml_parse(src, ver, &te);
    if (!doc) {
        diag_t d = {SEV_ERROR, NULL, src, te.span, te.msg};
        buf_t out = BUF_INIT;
        diag_render(&out, &d, diag_want_color(stderr));
        fwrite(out.p, 1, out.len, stderr);
        buf_free(&out);
        source_free(src);
        return EXIT_REJECTED;
    }
    buf_t out = BUF_INIT;
    toml_to_tagged_json(doc, &out);
    buf_addc(&out, '\n');
    int rc = fwrite(out.p, 1, out.len, stdout) == out.len && fflush(stdout) == 0 ? EXIT_OK : EXIT_USAGE;
    buf_free(&out);
    toml_doc_free(doc);
    source_free(src);
    return rc;
}
