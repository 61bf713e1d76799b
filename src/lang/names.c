/* Names a tuned name must not take. Each tuned name reaches the kernel as
 * -DNAME=VALUE, so a name the kernel's language or ktune's generated code
 * already gives a meaning to turns into a number everywhere it occurs, and
 * the compiler answers with a page of errors about something else. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static const char *const c_keywords[] = {
    "auto",       "break",     "case",           "char",          "const",    "continue", "default",  "do",
    "double",     "else",      "enum",           "extern",        "float",    "for",      "goto",     "if",
    "inline",     "int",       "long",           "register",      "restrict", "return",   "short",    "signed",
    "sizeof",     "static",    "struct",         "switch",        "typedef",  "union",    "unsigned", "void",
    "volatile",   "while",     "_Alignas",       "_Alignof",      "_Atomic",  "_Bool",    "_Complex", "_Generic",
    "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local", "bool",     "true",     "false",    NULL};

/* OpenCL C's address spaces, access qualifiers and built-in scalar types. */
static const char *const opencl_words[] = {
    "kernel",     "__kernel",     "global",    "__global",  "local",       "__local",    "constant",
    "__constant", "private",      "__private", "read_only", "__read_only", "write_only", "__write_only",
    "read_write", "__read_write", "uniform",   "pipe",      "half",        "uchar",      "ushort",
    "uint",       "ulong",        "size_t",    "ptrdiff_t", NULL};

/* C++'s keywords (CUDA C is C++) and CUDA's qualifiers and built-in variables. */
static const char *const cuda_words[] = {"alignas",
                                         "alignof",
                                         "and",
                                         "and_eq",
                                         "asm",
                                         "bitand",
                                         "bitor",
                                         "catch",
                                         "char16_t",
                                         "char32_t",
                                         "char8_t",
                                         "class",
                                         "compl",
                                         "concept",
                                         "consteval",
                                         "constexpr",
                                         "constinit",
                                         "const_cast",
                                         "co_await",
                                         "co_return",
                                         "co_yield",
                                         "decltype",
                                         "delete",
                                         "dynamic_cast",
                                         "explicit",
                                         "export",
                                         "friend",
                                         "mutable",
                                         "namespace",
                                         "new",
                                         "noexcept",
                                         "not",
                                         "not_eq",
                                         "nullptr",
                                         "operator",
                                         "or",
                                         "or_eq",
                                         "private",
                                         "protected",
                                         "public",
                                         "reinterpret_cast",
                                         "requires",
                                         "static_assert",
                                         "static_cast",
                                         "template",
                                         "this",
                                         "thread_local",
                                         "throw",
                                         "try",
                                         "typeid",
                                         "typename",
                                         "using",
                                         "virtual",
                                         "wchar_t",
                                         "xor",
                                         "xor_eq",
                                         "__global__",
                                         "__device__",
                                         "__host__",
                                         "__shared__",
                                         "__constant__",
                                         "__managed__",
                                         "__restrict__",
                                         "__launch_bounds__",
                                         "threadIdx",
                                         "blockIdx",
                                         "blockDim",
                                         "gridDim",
                                         "warpSize",
                                         NULL};

/* What ktune writes around a kernel: the CPU backend's entry wrapper and
 * the <stdint.h> types it reads scalars through. */
static const char *const generated_words[] = {"kt__entry", "kt__args", "int8_t",  "uint8_t",  "int16_t", "uint16_t",
                                              "int32_t",   "uint32_t", "int64_t", "uint64_t", NULL};

static bool listed(const char *const *list, const char *name) {
  for (; *list; list++)
    if (strcmp(*list, name) == 0) return true;
  return false;
}

static const char *lang_name(kt__lang lang) {
  return lang == KT__LANG_CUDA ? "CUDA C++" : lang == KT__LANG_OPENCL ? "OpenCL C" : "C";
}

const char *kt__name_taken(const char *name, kt__lang lang, char why[160]) {
  if (listed(c_keywords, name) || (lang == KT__LANG_OPENCL && listed(opencl_words, name)) ||
      (lang == KT__LANG_CUDA && listed(cuda_words, name)))
    snprintf(why, 160, "a keyword or built-in name of %s", lang_name(lang));
  else if (listed(generated_words, name) || strncmp(name, "kt__", 4) == 0)
    snprintf(why, 160, "a name ktune's generated code uses");
  else if ((name[0] == '_' && name[1] == '_') || (name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z'))
    snprintf(why, 160, "reserved for the compiler and its headers (names that begin with __ or _ and a capital)");
  else return NULL;
  return why;
}
