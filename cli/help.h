/* What `ktune --help`, `ktune COMMAND --help` and `ktune help COMMAND` print,
 * and the SYNOPSIS, COMMANDS and OPTIONS sections of ktune(1), all from the table in
 * options.c. */
#ifndef KTUNE_CLI_HELP_H
#define KTUNE_CLI_HELP_H

#include <stdio.h>

/* Every command's synopsis, and how to ask for a command's options. */
void help_usage(FILE *out);
/* WORD's synopsis, what it does and one entry per option that applies to it
 * (what it does, its default); "cache" without VERB: each verb's. Returns -1
 * when WORD (VERB) is no command. */
int help_command(FILE *out, const char *word, const char *verb);
/* The roff of docs/ktune.1's SYNOPSIS, COMMANDS and OPTIONS sections. */
void help_man_sections(FILE *out);

#endif
