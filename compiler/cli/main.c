/* main.c — drun-policy entry point: everything else lives in the library. */
#include "cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
