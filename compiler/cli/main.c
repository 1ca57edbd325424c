/* main.c — drun-policy entry point: everything else lives in the library. */
#include <unistd.h>
#include "cli.h"
#include "proxy.h"
#include "sandbox.h"

int main(int argc, char **argv)
{
    sandbox_helper_main(argc, argv);    /* the access-time layer's daemon: never returns */
    int relay = relay_main(argc, argv); /* inside a sandbox: its proxy relay (proxy.h), not the CLI */
    /* _exit: the relay has nothing to flush, and a sanitizer build's leak
     * check at exit would put its own status in place of the command's */
    if (relay >= 0) _exit(relay);
    return cli_main(argc, argv);
}
