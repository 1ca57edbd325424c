/* netproxy.h — the network of one sandboxed command run by drun-mcp (SPEC
 * §15): a proxy channel (proxy.h) for session_bash when command_domains
 * allows anything, and for session_package_install with its registry hosts;
 * every refusal logged at --log-level info as it happens and returned in the
 * result as network_denied.
 */
#ifndef DRUN_RT_NETPROXY_H
#define DRUN_RT_NETPROXY_H

#include <jansson.h>

#include "drun_policy.h"

/* A channel for one run of session session_id under p, allowing
 * command_domains and extra[0..nextra). NULL with *err (caller frees). */
proxy_chan_t *netproxy_open(const policy_t *p, const char *session_id, const domain_rule_t *extra, size_t nextra,
                            char **err);

/* Adds "network_denied": [{time, session_id, host, port, reason, count}] to
 * out and one line per refusal to text; then closes c. NULL c: nothing. */
void netproxy_finish(proxy_chan_t *c, const char *session_id, json_t *out, buf_t *text);

#endif
