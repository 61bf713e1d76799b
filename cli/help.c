/* The help texts and the man page's COMMANDS and OPTIONS, printed from the
 * table in options.c: the registry's backends and the strategies are asked
 * of the library, so that no list is written twice. */
#include "help.h"

#include <string.h>

#include "ktune.h"
#include "options.h"

enum { WIDTH = 100, OPTION_COLUMN = 30 };

/* The values an option takes that the library lists: the backends, the
 * strategies. Empty for the others. */
static void listed_values(const option_spec *o, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  if (o->id == OPT_BACKEND)
    for (int k = KT_BACKEND_AUTO + 1; kt_backend_name(k) && used < len; k++)
      used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "One of: ", kt_backend_name(k));
  if (o->id == OPT_STRATEGY)
    for (const char *const *n = kt_strategy_names(); *n && used < len; n++)
      used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "One of: ", *n);
}

/* What an option's entry says: its help, the values listed, its default. */
static void option_text(const option_spec *o, char *buf, size_t len) {
  char values[512];
  listed_values(o, values, sizeof values);
  int n = snprintf(buf, len, "%s", o->help);
  if (*values && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, " %s.", values);
  if (o->repeated && n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, " May be repeated.");
  if (o->fallback && n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " Default: %s.", o->fallback);
}

/* TEXT from column COL on, words wrapped at WIDTH, continued at INDENT. */
static void wrap(FILE *out, const char *text, int col, int indent) {
  const char *p = text;
  while (*p) {
    size_t word = strcspn(p, " ");
    if (col > indent && col + 1 + (int)word > WIDTH) {
      fprintf(out, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', out);
      col++;
    }
    fwrite(p, 1, word, out);
    col += (int)word;
    p += word;
    while (*p == ' ') p++;
  }
  fputc('\n', out);
}

static void option_entry(FILE *out, const option_spec *o) {
  char head[128], text[2048];
  snprintf(head, sizeof head, "  %s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
           o->value ? " " : "", o->value ? o->value : "");
  option_text(o, text, sizeof text);
  fputs(head, out);
  int col = (int)strlen(head);
  if (col >= OPTION_COLUMN) fprintf(out, "\n%*s", OPTION_COLUMN, "");
  else fprintf(out, "%*s", OPTION_COLUMN - col, "");
  wrap(out, text, OPTION_COLUMN, OPTION_COLUMN);
}

static void synopsis(FILE *out, const command_spec *c) {
  fprintf(out, "ktune %s%s%s [options]", c->name, *c->operands ? " " : "", c->operands);
}

void help_usage(FILE *out) {
  fputs("usage:\n", out);
  for (size_t i = 0; i < ncommands; i++) {
    fputs("  ", out);
    synopsis(out, &commands[i]);
    fputc('\n', out);
  }
  fputs("  ktune --version\n"
        "\n"
        "`ktune help COMMAND` or `ktune COMMAND --help` (-h) prints what a command does and each of its options\n"
        "(`ktune help cache` every cache verb's). Exit status: 0 done, 1 no valid configuration or nothing found,\n"
        "2 bad input or a results database error, 130 interrupted.\n",
        out);
}

static void command_help(FILE *out, const command_spec *c) {
  fputs("usage: ", out);
  synopsis(out, c);
  fputs("\n\n", out);
  wrap(out, c->summary, 0, 0);
  fputs("\noptions:\n", out);
  for (size_t i = 0; i < noptions; i++)
    if (options[i].commands & c->bit) option_entry(out, &options[i]);
}

int help_command(FILE *out, const char *word, const char *verb) {
  const command_spec *c = command_find(word, verb);
  if (c) {
    command_help(out, c);
    return 0;
  }
  if (strcmp(word, "cache") != 0 || verb) return -1;
  for (size_t i = 0, first = 1; i < ncommands; i++)
    if (commands[i].bit & CMD_CACHE) {
      if (!first) fputc('\n', out);
      command_help(out, &commands[i]);
      first = 0;
    }
  return 0;
}

/* TEXT as roff text: backslashes and minus signs escaped. */
static void roff(FILE *out, const char *text) {
  for (const char *p = text; *p; p++) {
    if (*p == '\\') fputs("\\e", out);
    else if (*p == '-') fputs("\\-", out);
    else fputc(*p, out);
  }
}

static void man_command(FILE *out, const command_spec *c) {
  fputs(".TP\n\\fB", out);
  roff(out, c->name);
  fputs("\\fR", out);
  if (*c->operands) {
    fputs(" \\fI", out);
    roff(out, c->operands);
    fputs("\\fR", out);
  }
  fputs("\n\\&", out);
  roff(out, c->summary);
  fputc('\n', out);
}

static void man_option(FILE *out, const option_spec *o) {
  char text[2048], cmds[512];
  option_text(o, text, sizeof text);
  command_list(o->commands, cmds, sizeof cmds);
  fputs(".TP\n\\fB", out);
  roff(out, o->name);
  fputs("\\fR", out);
  if (o->alias) {
    fputs(", \\fB", out);
    roff(out, o->alias);
    fputs("\\fR", out);
  }
  if (o->value) {
    fputs(" \\fI", out);
    roff(out, o->value);
    fputs("\\fR", out);
  }
  fputs("\n(", out);
  roff(out, cmds);
  fputs(") ", out);
  roff(out, text);
  fputc('\n', out);
}

static void man_synopsis(FILE *out, const command_spec *c) {
  fputs("\\fBktune ", out);
  roff(out, c->name);
  fputs("\\fR ", out);
  if (*c->operands) {
    fputs("\\fI", out);
    roff(out, c->operands);
    fputs("\\fR ", out);
  }
  fputs("[\\fIoptions\\fR]\n.br\n", out);
}

void help_man_sections(FILE *out) {
  fputs(".SH SYNOPSIS\n", out);
  for (size_t i = 0; i < ncommands; i++) man_synopsis(out, &commands[i]);
  fputs("\\fBktune help\\fR [\\fICOMMAND\\fR]\n.br\n\\fBktune \\-\\-version\\fR\n", out);
  fputs(".SH COMMANDS\n", out);
  for (size_t i = 0; i < ncommands; i++) man_command(out, &commands[i]);
  fputs(".TP\n\\fBhelp\\fR \\fICOMMAND\\fR\n\\&Prints what COMMAND does and each of its options, as \\fBktune "
        "\\fICOMMAND\\fB \\-\\-help\\fR does.\n"
        ".TP\n\\fB\\-\\-version\\fR\n\\&Prints the version.\n",
        out);
  fputs(".SH OPTIONS\n", out);
  for (size_t i = 0; i < noptions; i++) man_option(out, &options[i]);
}
