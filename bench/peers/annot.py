"""ktune's kernel annotations, read in Python for the peer benchmark.

The peers (Kernel Tuner, the common re-measurement) must tune and time exactly
what ktune tunes: the same source, the same names and choices, the same
@where filter, grid and block. Rather than copy the spaces by hand, this module
reads the annotation block above a kernel (the grammar is in the brief,
section 1) and evaluates its integer expressions.

Expressions are C: they are translated token by token into Python, with `/`
as `//` (every expression here is over non-negative integers, where C's
truncation and Python's floor agree), `&&` `||` `!` as `and` `or` `not`, and
the brief's functions cdiv, min, max, log2 and is_pow2 supplied.
"""

import itertools
import math
import re

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>()!,]))")


def _tokens(expr):
    pos, out = 0, []
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read expression at {expr[pos:]!r}")
        pos = m.end()
        out.append(m.group(1) or m.group(2) or m.group(3))
    return out


def to_python(expr, bind=None):
    """C expression -> Python expression text; names in `bind` become their values."""
    bind = bind or {}
    out = []
    for t in _tokens(expr):
        if t == "&&":
            out.append("and")
        elif t == "||":
            out.append("or")
        elif t == "!":
            out.append("not")
        elif t == "/":
            out.append("//")
        elif t in bind:
            out.append(str(bind[t]))
        else:
            out.append(t)
    return " ".join(out)


def _log2(x):
    return int(x).bit_length() - 1 if x > 0 else 0


FUNCTIONS = {
    "cdiv": lambda a, b: -(-int(a) // int(b)),
    "min": min,
    "max": max,
    "log2": _log2,
    "is_pow2": lambda x: int(x > 0 and (int(x) & (int(x) - 1)) == 0),
}


def evaluate(expr, env):
    """Evaluates a C integer expression with the names in env; booleans become 0/1."""
    v = eval(to_python(expr), {"__builtins__": {}}, {**FUNCTIONS, **env})  # noqa: S307 (our own annotations)
    return int(v)


def names_in(expr):
    return {t for t in _tokens(expr) if re.match(r"[A-Za-z_]", t) and t not in FUNCTIONS}


def split_top(text, sep=","):
    """Splits on sep outside (), [] and <>-free nesting."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def choices(values):
    """The brief's choice rule: two values 0 < a < b double from a, then b."""
    if len(values) == 2 and 0 < values[0] < values[1]:
        a, b = values
        out = []
        while a < b:
            out.append(a)
            a *= 2
        out.append(b)
        return out
    return list(values)


class Kernel:
    """One annotated kernel: its space, filter, launch shape and parameters."""

    def __init__(self, name, attrs, source, path):
        self.name, self.source, self.path = name, source, path
        self.params = {}       # NAME -> list of choices, in declaration order
        self.cluster = {}      # the @cluster stage's names; the peers tune @autotune only, at these defaults
        self.where = []        # C expressions
        self.grid, self.block = ["1"], ["1"]
        self.dims = {}         # runtime sizes: NAME -> int (from @dims, overridable)
        self.args = []         # (name, kind, dtype, dims|expr, mode, init)
        self.shared = None
        for attr, arg in attrs:
            getattr(self, "_at_" + attr, lambda a: None)(arg)

    def _at_autotune(self, arg, into=None):
        into = self.params if into is None else into
        for part in split_top(arg):
            m = re.match(r"(\w+)\s+in\s+(?:\[(.*)\]|\{(.*)\})$", part, re.S)
            if not m:
                raise ValueError(f"{self.path}: @autotune: cannot read {part!r}")
            if m.group(2) is not None:  # [a, b] doubles from a to b; three or more as written
                into[m.group(1)] = choices([int(v, 0) for v in split_top(m.group(2))])
            else:  # {a, b, ...}: exactly as written
                into[m.group(1)] = [int(v, 0) for v in split_top(m.group(3))]

    def _at_cluster(self, arg):
        self._at_autotune(arg, self.cluster)

    def _at_where(self, arg):
        self.where.append(arg)

    def _at_grid(self, arg):
        self.grid = split_top(arg)

    def _at_block(self, arg):
        self.block = split_top(arg)

    def _at_shared(self, arg):
        self.shared = arg

    def _at_dims(self, arg):
        for part in split_top(arg):
            k, v = part.split("=", 1)
            self.dims[k.strip()] = evaluate(v, self.dims)

    def _at_kernel(self, arg):
        for part in split_top(arg):
            name, rest = [s.strip() for s in part.split(":", 1)]
            if rest.startswith("tensormap("):  # a TMA tensor map: ktune builds it; the peers have none
                self.args.append((name, "tensormap", None, rest, None, None))
                continue
            init = None
            if "=" in rest:
                rest, init = [s.strip() for s in rest.split("=", 1)]
            m = re.match(r"(?:(in|out|inout)\s+)?tensor<(\w+)>\[(.*)\]$", rest)
            if m:
                self.args.append((name, "tensor", m.group(2), split_top(m.group(3)), m.group(1) or "inout", init or "random"))
            else:
                self.args.append((name, "scalar", rest, init, None, None))

    # -- the space ------------------------------------------------------------

    def _env(self, config):
        """The names an expression may use: sizes, the @cluster defaults (ktune checks
        the @autotune stage with those bound), then the configuration."""
        return {**self.dims, **{n: v[0] for n, v in self.cluster.items()}, **config}

    def valid(self, config):
        env = self._env(config)
        return all(evaluate(w, env) for w in self.where)

    def space(self):
        """Every valid configuration, as dicts, in the cartesian order of the names."""
        names = list(self.params)
        for values in itertools.product(*(self.params[n] for n in names)):
            c = dict(zip(names, values))
            if self.valid(c):
                yield c

    def default(self):
        return {n: v[0] for n, v in self.params.items()}

    def launch(self, config):
        """(grid, block) as 3-tuples of ints for one configuration."""
        env = self._env(config)
        g = [evaluate(e, env) for e in self.grid] + [1, 1]
        b = [evaluate(e, env) for e in self.block] + [1, 1]
        return tuple(g[:3]), tuple(b[:3])

    def shared_bytes(self, config):
        return evaluate(self.shared, self._env(config)) if self.shared else 0

    def where_python(self):
        """@where as Python expression strings over the tuned names, sizes bound."""
        return [to_python(w, self._env({})) for w in self.where]

    def sizes(self):
        return " ".join(f"{k}={v}" for k, v in self.dims.items())


_ATTR = re.compile(r"^\s*//\s*@(\w+)\s*(.*?)\s*$")


def _attr_arg(attr, text):
    if attr == "kernel":
        m = re.match(r"(\w+)\s*\((.*)\)$", text, re.S)
        return m.group(1), m.group(2)
    if text.startswith("(") and text.endswith(")"):
        return None, text[1:-1]
    return None, text


def load(path, kernel=None, dims=None):
    """The annotated kernels of a file (the one named `kernel`, else the first)."""
    source = open(path).read()
    found, block = [], []
    for line in source.splitlines():
        m = _ATTR.match(line)
        if m:
            block.append((m.group(1), m.group(2)))
            continue
        stripped = line.strip()
        if stripped.startswith("//") or not stripped:
            if not stripped:
                block = block if any(a == "kernel" for a, _ in block) else []
            continue
        if any(a == "kernel" for a, _ in block):
            attrs, name = [], None
            for a, text in block:
                kname, arg = _attr_arg(a, text)
                if a == "kernel":
                    name = kname
                attrs.append((a, arg))
            # @dims first, so that other attributes can read the sizes.
            attrs.sort(key=lambda x: x[0] != "dims")
            found.append(Kernel(name, attrs, source, path))
        block = []
    if not found:
        raise ValueError(f"{path}: no annotated kernel")
    k = next((k for k in found if k.name == kernel), None) if kernel else found[0]
    if k is None:
        raise ValueError(f"{path}: no kernel {kernel}; found {[k.name for k in found]}")
    for name, value in (dims or {}).items():
        k.dims[name] = int(value)
    return k


def parse_dims(items):
    """['N=1024', ...] -> {'N': 1024}"""
    out = {}
    for it in items or []:
        k, v = it.split("=", 1)
        out[k.strip()] = evaluate(v, {})
    return out


def config_key(config):
    return " ".join(f"{k}={v}" for k, v in config.items())


# numpy/cupy dtype names; bf16 travels as its 16-bit pattern.
NUMPY_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "u8": "uint8",
                "i32": "int32", "u32": "uint32", "i64": "int64", "u64": "uint64", "bf16": "uint16"}


def dtype_size(t):
    return {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i32": 4, "u32": 4, "i64": 8, "u64": 8}[t]


def tensor_elems(kern, dims_exprs):
    return math.prod(evaluate(d, kern.dims) for d in dims_exprs)
