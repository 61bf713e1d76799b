#!/usr/bin/env python3
"""Checks every #include in src/ and cli/ against the layer rules of docs/DESIGN.md.

    scripts/check-layers.py [REPO_ROOT]

The rules are the block that follows the line `<!-- layers -->` in
docs/DESIGN.md, one line each: `MODULE: what it may include`, where a module is
a folder of src/ (`tuner`), a file at src/'s root without its extension
(`common`), or the command line's folder `cli` (all of cli/ is one module),
and what it may include is modules, or `ktune.h` (the public header). A line
`FILE: HEADER...` lets one file (a path under src/, or cli/NAME for a file of
cli/) include headers (paths under src/) outside its rule. Within a module
any include is allowed.

Fails (exit status 1) naming the file, the include and the rule broken; also
when a module has no rule, or the rules allow a cycle between modules.
Exit status 2: the rules cannot be read.
"""
import os
import re
import sys

RULES_MARK = "<!-- layers -->"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
PUBLIC = "ktune.h"
CLI = "cli"
ROOTS = ("src", CLI)  # the folders whose files the rules hold


def read_rules(design):
    """{name: set of what it may include} from the block after RULES_MARK."""
    try:
        text = open(design, encoding="utf-8").read()
    except OSError as e:
        print("check-layers: cannot read %s: %s" % (design, e.strerror), file=sys.stderr)
        sys.exit(2)
    if RULES_MARK not in text:
        print("check-layers: %s has no line %s before the layer rules" % (design, RULES_MARK), file=sys.stderr)
        sys.exit(2)
    block = re.search(r"```[a-z]*\n(.*?)```", text.split(RULES_MARK, 1)[1], re.S)
    if not block:
        print("check-layers: no ``` block of rules after %s in %s" % (RULES_MARK, design), file=sys.stderr)
        sys.exit(2)
    rules = {}
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, allowed = line.partition(":")
        if not sep:
            print("check-layers: %s: a rule is `NAME: ...`, not `%s`" % (design, line), file=sys.stderr)
            sys.exit(2)
        rules[name.strip()] = set(allowed.split())
    return rules


def module_of(path):
    """src/tuner/tuner.c -> tuner; src/common.h -> common; cli/keys.c -> cli;
    include/ktune.h -> ktune.h."""
    if path.startswith("include/"):
        return PUBLIC
    if path.startswith(CLI + "/"):
        return CLI
    parts = path[len("src/"):].split("/")
    return parts[0] if len(parts) > 1 else os.path.splitext(parts[0])[0]


def rule_name(path):
    """The name a file's own rule line gives it: src/lang/parser.c -> lang/parser.c;
    cli/ktune_tuner.c stays cli/ktune_tuner.c."""
    return path[len("src/"):] if path.startswith("src/") else path


def rule_file(name):
    """The tree path of the file a rule line names (rule_name's inverse)."""
    return name if name.startswith(CLI + "/") else "src/" + name


def resolve(root, src_file, quote, inc):
    """The tree path an include names (quotes: beside the file first; then src/
    and include/, the include path), or None for a system header."""
    here = os.path.dirname(src_file)
    candidates = ([os.path.join(here, inc)] if quote == '"' else []) + [os.path.join("src", inc),
                                                                       os.path.join("include", inc)]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def find_cycle(rules, modules):
    """A cycle of modules the rules allow, as a list, or None."""
    state = {}

    def visit(m, stack):
        state[m] = "open"
        for n in sorted(rules.get(m, ())):
            if n not in modules:
                continue
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n, stack + [n])
                if found:
                    return found
        state[m] = "done"
        return None

    for m in sorted(modules):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, ".."))
    design = os.path.join(root, "docs", "DESIGN.md")
    rules = read_rules(design)
    sources = sorted(os.path.relpath(os.path.join(d, f), root)
                     for top in ROOTS for d, _, files in os.walk(os.path.join(root, top)) for f in files
                     if f.endswith((".c", ".h")))
    modules = {module_of(s) for s in sources}
    errors = []
    for m in sorted(modules - set(rules)):
        folder = m == CLI or any(s.startswith("src/%s/" % m) for s in sources)
        errors.append("%s: module %s has no rule in docs/DESIGN.md (add `%s: ...` to the layer rules)"
                      % (CLI + "/" if m == CLI else "src/" + m + ("/" if folder else ".[ch]"), m, m))
    for name, allowed in sorted(rules.items()):
        is_file = "/" in name
        if is_file and rule_file(name) not in sources:
            errors.append("docs/DESIGN.md: the layer rule `%s: ...` names no file %s" % (name, rule_file(name)))
        elif not is_file and name not in modules:
            errors.append("docs/DESIGN.md: the layer rule `%s: ...` names no module of src/ or cli/" % name)
        for a in sorted(allowed):
            if ("src/" + a not in sources) if is_file else (a not in modules):
                errors.append("docs/DESIGN.md: the layer rule of %s allows %s, which src/ does not have" % (name, a))
    cycle = find_cycle({m: a for m, a in rules.items() if m in modules}, modules)
    if cycle:
        errors.append("docs/DESIGN.md: the layer rules allow a cycle: %s" % " -> ".join(cycle))
    for s in sources:
        mod = module_of(s)
        for lineno, line in enumerate(open(os.path.join(root, s), encoding="utf-8", errors="replace"), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            quote, inc = m.groups()
            target = resolve(root, s, quote, inc)
            if target is None:
                if quote == '"':
                    errors.append('%s:%d: #include "%s" names no file beside it, in src/ or in include/' % (s, lineno, inc))
                continue
            tmod = module_of(target)
            if tmod in (mod, PUBLIC) or tmod in rules.get(mod, ()) or rule_name(target) in rules.get(
                    rule_name(s), ()):
                continue
            allowed = " ".join(sorted(rules.get(mod, ()))) or "nothing outside itself"
            errors.append("%s:%d: #include %s%s%s reaches %s (%s), which %s may not include: the rule is "
                          "`%s: %s` (docs/DESIGN.md, Layers)"
                          % (s, lineno, quote, inc, '"' if quote == '"' else ">", target, tmod, mod, mod, allowed))
    for e in errors:
        print("check-layers: " + e, file=sys.stderr)
    if errors:
        print("check-layers: %d problem(s) in %d files" % (len(errors), len(sources)), file=sys.stderr)
        return 1
    print("check-layers: %d files, every include within the layer rules" % len(sources))
    return 0


if __name__ == "__main__":
    sys.exit(main())
