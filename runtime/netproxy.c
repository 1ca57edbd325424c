/* netproxy.c — a proxy channel per command run, its log and its report
 * (netproxy.h). */
#include "netproxy.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tools.h"

static void log_refusal(void *ctx, const char *session, const proxy_refusal_t *r)
{
    (void)ctx;
    log_info("session %s: network: refused %s port %d: %s", session, r->host, r->port, r->reason);
}

proxy_chan_t *netproxy_open(const policy_t *p, const char *session_id, const domain_rule_t *extra, size_t nextra,
                            char **err)
{
    proxy_opts_t o = {session_id, extra, nextra, log_refusal, NULL};
    return proxy_open(p, &o, err);
}

void netproxy_finish(proxy_chan_t *c, const char *session_id, json_t *out, buf_t *text)
{
    if (!c) return;
    proxy_refusal_t *r = NULL;
    size_t n = proxy_refusals(c, &r);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        char when[32];
        tools_iso_time(r[i].time_ms, when);
        json_t *o = json_object();
        json_object_set_new(o, "time", json_string(when));
        json_object_set_new(o, "session_id", json_string(session_id));
        tools_json_bytes(o, "host", r[i].host, strlen(r[i].host));
        json_object_set_new(o, "port", json_integer(r[i].port));
        tools_json_bytes(o, "reason", r[i].reason, strlen(r[i].reason));
        json_object_set_new(o, "count", json_integer(r[i].count));
        json_array_append_new(arr, o);
        if (r[i].port)
            buf_printf(text, "\nNetwork refused %s port %d (%u time%s): %s", r[i].host, r[i].port, r[i].count,
                       r[i].count == 1 ? "" : "s", r[i].reason);
        else
            buf_printf(text, "\nNetwork refused (%u time%s): %s", r[i].count, r[i].count == 1 ? "" : "s",
                       r[i].reason);
    }
    json_object_set_new(out, "network_denied", arr);
    proxy_refusals_free(r, n);
    proxy_close(c);
}
