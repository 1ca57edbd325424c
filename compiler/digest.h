/* digest.h — the one digest the tools use: sha256 in lower-case hex, as the
 * manifest (policy.json) records every artifact and the embedded source. */
#ifndef DRUN_DIGEST_H
#define DRUN_DIGEST_H

#include <stddef.h>

/* The sha256 of len bytes at data, as 64 lower-case hex digits and a NUL. */
void digest_sha256_hex(const void *data, size_t len, char out[65]);

#endif
