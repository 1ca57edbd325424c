/* main.c — drun-policy entry point: everything else lives in the library. */
#include "cli.h"
#include "proxy.h"

int main(int argc, char **argv)
{
    int relay = sbx_relay_main(argc, argv); /* inside a sandbox: its proxy relay (proxy.h), not the CLI */
    return relay >= 0 ? relay : cli_main(argc, argv);
}
