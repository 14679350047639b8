"""The masks of the warp collectives of a student's file (the warp-mask rule of source.py).

A `_sync` warp intrinsic (`__shfl_sync`, `__ballot_sync`, `__syncwarp`, ...) takes
as its first argument the mask of the lanes that take part. The CUDA C++
Programming Guide ("Warp Shuffle Functions", "Warp Vote Functions"): each calling
lane must have its own bit set in the mask, and every lane named must call the
same intrinsic with the same mask; otherwise the behaviour is undefined. Today's
GPUs run such a call anyway, so no test of results fails it: the mask is read
here, in the tokens of the student's file (tokencheck.py, after the preprocessor,
so a macro's value counts and the course's and CUDA's headers do not).

Two mistakes are found:

- **a constant partial mask**: the mask is a constant (a literal, a macro, a
  `const`/`constexpr` variable of the file initialised with a constant, casts and
  integer operators on those) whose value is not 0xffffffff. In the course's
  exercises every warp collective with a constant mask is called by the whole
  warp, so lanes are missing from it;
- **`__activemask()` as the mask**, in an exercise whose manifest says
  `warp_mask = "full"`: it names the lanes that happen to be converged at that
  moment, not the lanes the algorithm needs (NVIDIA, "Using CUDA Warp-Level
  Primitives", 2018: do not use it to pick the participants of a collective).

Anything else (a variable, `kFullMask`, a ballot's result, a mask computed from
the block size) is not judged: a mask whose value the code computes is the
student's to get right, and the tests and synccheck see more of it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FULL = 0xFFFFFFFF
# Tokens of a mask or a constant's initialiser that are read at most: a mask is a few tokens,
# and a bound keeps the rule linear in the file whatever the file holds.
MAX_TOKENS = 128
# Tokens of a declaration's specifiers read back from its name (`static constexpr std::uint32_t`).
MAX_SPECIFIERS = 16

# The warp intrinsics whose first argument is the mask of the lanes that take part.
COLLECTIVES = frozenset({
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync",
    "__match_any_sync", "__match_all_sync", "__syncwarp",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
})

# Integer types a cast may name, as (bits, signed).
_TYPES = {
    ("bool",): (1, False),
    ("char",): (8, True), ("signed", "char"): (8, True), ("unsigned", "char"): (8, False),
    ("short",): (16, True), ("short", "int"): (16, True), ("signed", "short"): (16, True),
    ("unsigned", "short"): (16, False), ("unsigned", "short", "int"): (16, False),
    ("int",): (32, True), ("signed",): (32, True), ("signed", "int"): (32, True),
    ("unsigned",): (32, False), ("unsigned", "int"): (32, False),
    ("long",): (64, True), ("long", "int"): (64, True), ("long", "long"): (64, True),
    ("long", "long", "int"): (64, True), ("unsigned", "long"): (64, False),
    ("unsigned", "long", "int"): (64, False), ("unsigned", "long", "long"): (64, False),
    ("unsigned", "long", "long", "int"): (64, False),
    ("int8_t",): (8, True), ("uint8_t",): (8, False), ("int16_t",): (16, True),
    ("uint16_t",): (16, False), ("int32_t",): (32, True), ("uint32_t",): (32, False),
    ("int64_t",): (64, True), ("uint64_t",): (64, False), ("size_t",): (64, False),
    ("ptrdiff_t",): (64, True),
}
_TYPE_WORDS = frozenset(w for t in _TYPES for w in t) | {"const", "std", "::"}


@dataclass(frozen=True)
class Value:
    """An integer constant with its C type (bits, signedness), the value wrapped to it."""
    v: int
    bits: int
    signed: bool

    @staticmethod
    def of(v: int, bits: int, signed: bool) -> "Value":
        v &= (1 << bits) - 1
        if signed and bits > 1 and v >> (bits - 1):
            v -= 1 << bits
        return Value(v, bits, signed)


def literal(text: str) -> Value | None:
    """An integer literal's value and type (C++: int, then long or, for hex and octal, the
    unsigned type of each size, as the value needs); None for anything else."""
    t = text.replace("'", "")
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uU]?(?:ll|LL|l|L|z|Z)?[uU]?)", t)
    if not m:
        return None
    digits, suffix = m.group(1), m.group(2).lower()
    if suffix.count("u") > 1:
        return None
    if digits[:2].lower() == "0x":
        v = int(digits[2:], 16)
    elif digits[:2].lower() == "0b":
        v = int(digits[2:], 2)
    elif digits.startswith("0"):
        v = int(digits, 8)
    else:
        v = int(digits)
    unsigned = "u" in suffix
    decimal = digits[0] in "123456789"
    sizes = [32, 64] if not ("l" in suffix or "z" in suffix) else [64]
    for bits in sizes:
        if not unsigned and v < (1 << (bits - 1)):
            return Value(v, bits, True)
        if (unsigned or not decimal) and v < (1 << bits):
            return Value(v, bits, False)
    return None


def _common(a: Value, b: Value) -> tuple[int, bool]:
    """The usual arithmetic conversions (integer promotion to int first)."""
    pa = (32, True) if a.bits < 32 else (a.bits, a.signed)
    pb = (32, True) if b.bits < 32 else (b.bits, b.signed)
    if pa[0] != pb[0]:
        return max(pa, pb, key=lambda p: p[0])
    return pa[0], pa[1] and pb[1]


class _Parser:
    """A constant integer expression of tokens: literals, true/false, the named constants,
    parentheses, casts (C, functional, static_cast) to an integer type, unary + - ~ !,
    and * / % + - << >> & ^ |. Anything else: not a constant (None)."""

    def __init__(self, toks: list[str], names: dict[str, Value]):
        self.t, self.i, self.names = toks, 0, names

    def peek(self, k: int = 0) -> str:
        return self.t[self.i + k] if self.i + k < len(self.t) else ""

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if want is not None and tok != want:
            raise ValueError(want)
        self.i += 1
        return tok

    def type_at(self, end: str) -> tuple[int, bool] | None:
        """The integer type of the words before `end` from here, or None (position kept)."""
        j, words = self.i, []
        while j < len(self.t) and self.t[j] in _TYPE_WORDS:
            words.append(self.t[j])
            j += 1
        if j >= len(self.t) or self.t[j] != end:
            return None
        words = [w for w in words if w not in ("const",)]
        if words[:2] == ["std", "::"]:
            words = words[2:]
        if words[:1] == ["::"]:
            words = words[1:]
        got = _TYPES.get(tuple(words))
        if got is not None:
            self.i = j
        return got

    def expr(self, level: int = 0) -> Value:
        ops = [("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "/", "%")]
        if level == len(ops):
            return self.unary()
        left = self.expr(level + 1)
        while self.peek() in ops[level]:
            op = self.take()
            right = self.expr(level + 1)
            left = self.binary(op, left, right)
        return left

    @staticmethod
    def binary(op: str, a: Value, b: Value) -> Value:
        if op in ("<<", ">>"):
            bits, signed = (32, True) if a.bits < 32 else (a.bits, a.signed)
            if b.v < 0 or b.v >= bits:
                raise ValueError("shift")
            return Value.of(a.v << b.v if op == "<<" else a.v >> b.v, bits, signed)
        bits, signed = _common(a, b)
        x, y = Value.of(a.v, bits, signed).v, Value.of(b.v, bits, signed).v
        if op in ("/", "%"):
            if y == 0:
                raise ValueError("division by zero")
            q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
            return Value.of(q if op == "/" else x - q * y, bits, signed)
        r = {"*": x * y, "+": x + y, "-": x - y, "&": x & y, "^": x ^ y, "|": x | y}[op]
        return Value.of(r, bits, signed)

    def unary(self) -> Value:
        tok = self.peek()
        if tok in ("+", "-", "~", "!"):
            self.take()
            a = self.unary()
            bits, signed = (32, True) if a.bits < 32 else (a.bits, a.signed)
            if tok == "!":
                return Value(int(a.v == 0), 1, False)
            return Value.of({"+": a.v, "-": -a.v, "~": ~a.v}[tok], bits, signed)
        if tok == "(":
            self.take()
            ty = self.type_at(")")
            if ty is not None:            # a C cast: (unsigned) x
                self.take(")")
                return Value.of(self.unary().v, *ty)
            v = self.expr()
            self.take(")")
            return v
        if tok == "static_cast" and self.peek(1) == "<":
            self.i += 2
            ty = self.type_at(">")
            if ty is None:
                raise ValueError("cast")
            self.take(">")
            self.take("(")
            v = self.expr()
            self.take(")")
            return Value.of(v.v, *ty)
        ty = self.type_at("(") or self.type_at("{")
        if ty is not None:                # a functional cast: unsigned(x), uint32_t{x}
            close = ")" if self.take() == "(" else "}"
            v = self.expr()
            self.take(close)
            return Value.of(v.v, *ty)
        if tok in ("true", "false"):
            self.take()
            return Value(int(tok == "true"), 1, False)
        if tok in self.names:
            self.take()
            return self.names[tok]
        got = literal(tok)
        if got is None:
            raise ValueError(tok)
        self.take()
        return got


def constant(toks: list[str], names: dict[str, Value] | None = None) -> Value | None:
    """The value of a constant integer expression (its tokens' texts), or None."""
    if not toks:
        return None
    if len(toks) > MAX_TOKENS:
        return None
    p = _Parser(toks, names or {})
    try:
        v = p.expr()
    except (ValueError, IndexError, RecursionError):
        return None
    return v if p.i == len(toks) else None


def _close(texts: list[str], i: int) -> int:
    """The index of the bracket closing the one at i, or -1."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[texts[i]]]
    for j in range(i + 1, len(texts)):
        t = texts[j]
        if t in pairs:
            stack.append(pairs[t])
        elif t in (")", "]", "}"):
            if not stack or t != stack.pop():
                return -1
            if not stack:
                return j
    return -1


def _until(texts: list[str], i: int, stops: tuple[str, ...]) -> int:
    """The index of the first of `stops`, or of an unmatched closing bracket, at depth 0 from i;
    -1 when there is none within MAX_TOKENS tokens."""
    depth = 0
    for j in range(i, min(len(texts), i + MAX_TOKENS + 1)):
        t = texts[j]
        if depth == 0 and t in stops:
            return j
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            if depth == 0:
                return j
            depth -= 1
    return -1


_DECL_START = {";", "{", "}", ")", ":", ""}   # what precedes a declaration's first word


def named_constants(tokens) -> dict[str, Value]:
    """The file's `const` and `constexpr` variables initialised with a constant
    (`constexpr unsigned kHalf = 0xffffu;`, `const int m{-1};`), by name. A name that the
    file declares anywhere else (a parameter, another variable, a function) is left out:
    which declaration a use means is then a question of scope, not answered here."""
    texts = [t.text for t in tokens]
    n = len(texts)
    found: dict[str, list[Value | None]] = {}
    other: set[str] = set()
    for i in range(1, n - 1):
        t = tokens[i]
        if t.kind != "id":
            continue
        nxt, prev = texts[i + 1], texts[i - 1]
        declares = nxt in ("=", "{", ";", ",", ")", "[", "(", ":") and (
            (tokens[i - 1].kind == "id" and prev not in ("return", "case", "goto", "new", "delete",
                                                         "throw", "sizeof", "co_return", "co_yield"))
            or prev in ("*", "&", "&&", ">"))
        if not declares:
            continue
        # the declaration's specifiers: back to the start of the statement
        k = i - 1
        while k >= 0 and i - k <= MAX_SPECIFIERS and texts[k] not in _DECL_START \
                and texts[k] not in (",", "(", "="):
            k -= 1
        words = texts[k + 1:i] if i - k <= MAX_SPECIFIERS else ["..."]
        simple = all(w in _TYPE_WORDS or w in ("constexpr", "static", "inline", "__device__",
                                               "__constant__", "__host__", "const") for w in words)
        if nxt in ("=", "{") and simple and ("const" in words or "constexpr" in words) \
                and (k < 0 or texts[k] in _DECL_START):
            if nxt == "=":
                end = _until(texts, i + 2, (";", ","))
                val = constant(texts[i + 2:end]) if end > 0 and texts[end] in (";", ",") else None
            else:
                close = _until(texts, i + 2, ())
                val = constant(texts[i + 2:close]) if close > 0 and texts[close] == "}" and \
                    texts[close + 1:close + 2] in ([";"], [","]) else None
            found.setdefault(t.text, []).append(val)
        else:
            other.add(t.text)
    out: dict[str, Value] = {}
    for name, vals in found.items():
        if name in other or any(v is None for v in vals) or len({v.v for v in vals}) != 1:
            continue
        out[name] = vals[0]
    return out


@dataclass
class MaskUse:
    """A warp collective whose mask the rule judges."""
    intrinsic: str
    line: int
    mask: str            # the mask argument as written after preprocessing: "0x7fffffffu"
    kind: str            # "constant" (value below) or "activemask"
    value: int = FULL    # the mask's 32 bits (kind "constant")
    name: str = ""       # the file's constant it was read from, if any


def _strip_casts(args: list[str]) -> list[str]:
    """The argument without surrounding parentheses and casts to an integer type."""
    while True:
        if len(args) >= 2 and args[0] == "(" and _close(args, 0) == len(args) - 1:
            inner = args[1:-1]
            p = _Parser(inner, {})
            if p.type_at(")") is not None:       # (unsigned)(x)... is not a parenthesised whole
                return args
            args = inner
            continue
        if len(args) >= 5 and args[0] == "static_cast" and args[1] == "<":
            p = _Parser(args, {})
            p.i = 2
            if p.type_at(">") is not None and p.peek(1) == "(" and _close(args, p.i + 1) == len(args) - 1:
                args = args[p.i + 2:-1]
                continue
        if len(args) >= 3 and args[0] == "(":
            p = _Parser(args, {})
            p.i = 1
            if p.type_at(")") is not None:
                args = args[p.i + 1:]
                continue
        return args


def find(tokens, activemask: bool) -> list[MaskUse]:
    """The warp collectives of the tokens whose mask is a constant other than the full mask,
    and (activemask) those whose mask is `__activemask()` itself, in order."""
    texts = [t.text for t in tokens]
    names = named_constants(tokens)
    out: list[MaskUse] = []
    for i, t in enumerate(tokens):
        if t.kind != "id" or t.text not in COLLECTIVES or i + 1 >= len(tokens) or texts[i + 1] != "(":
            continue
        prev = texts[i - 1] if i else ""
        if prev in (".", "->") or (prev == "::" and i >= 2 and tokens[i - 2].kind == "id"):
            continue                      # a member, or another namespace's function of that name
        end = _until(texts, i + 2, (",",))
        if end < 0 or texts[end] not in (",", ")"):
            continue                      # no mask of a few tokens: not judged
        arg = texts[i + 2:end]
        if not arg:
            continue                      # __syncwarp(): the full mask
        spelled = spell(arg)
        core = _strip_casts(arg)
        if core in (["__activemask", "(", ")"], ["::", "__activemask", "(", ")"]):
            if activemask:
                out.append(MaskUse(t.text, t.line, "__activemask()", "activemask"))
            continue
        used = [w for w in core if w in names]
        if used and core != used[:1]:
            continue
        v = constant(arg, names)
        if v is None:
            continue
        bits = v.v & FULL
        if bits != FULL:
            name = used[0] if used else ""
            out.append(MaskUse(t.text, t.line, spelled, "constant", bits, name))
    return out


def spell(texts: list[str]) -> str:
    """Tokens as one would write them: a space only between two words."""
    out = ""
    for t in texts:
        if out and re.match(r"[\w$]", t) and re.search(r"[\w$]$", out):
            out += " "
        out += t
    return out


def lanes(bits: int) -> str:
    """The lanes of a mask in words: "lanes 0-30", "lanes 0-15 and 20", "no lane"."""
    runs: list[str] = []
    lane = 0
    while lane < 32:
        if bits >> lane & 1:
            start = lane
            while lane + 1 < 32 and bits >> (lane + 1) & 1:
                lane += 1
            runs.append(str(start) if start == lane else f"{start}-{lane}")
        lane += 1
    if not runs:
        return "no lane"
    count = bin(bits).count("1")
    word = "lane" if count == 1 else "lanes"
    text = runs[0] if len(runs) == 1 else ", ".join(runs[:-1]) + " and " + runs[-1]
    return f"{word} {text}"


def missing(bits: int) -> str:
    """The lanes a mask leaves out, in words: "lane 31", "lanes 16-31"."""
    return lanes(~bits & FULL)


_OBJECT_MACRO = re.compile(r"^\s*(?:#|%:)\s*define\s+([A-Za-z_]\w*)(?![\w(])\s*(.*)$")


def raw_tokens(text: str) -> list:
    """The tokens of a source file without the preprocessor (the check's fallback where there
    is no nvcc): comments and literals out, directives out, the file's object-like macros
    (`#define MY_MASK 0xffff`) expanded; line splices and function-like macros are not."""
    from .source import strip_code
    from .tokencheck import Token, lex_line
    macros: dict[str, list[str]] = {}
    out: list[Token] = []
    for number, line in enumerate(strip_code(text).split("\n"), 1):
        m = _OBJECT_MACRO.match(line)
        if m:
            body: list[Token] = []
            lex_line(m.group(2), number, None, body)
            macros[m.group(1)] = body
            continue
        if re.match(r"^\s*(?:#|%:)", line):
            continue
        toks: list[Token] = []
        lex_line(line, number, None, toks)
        for t in toks:
            out += _expand(t, macros, number, 0)
    return out


def _expand(t, macros: dict, line: int, depth: int) -> list:
    from .tokencheck import Token
    if t.kind != "id" or t.text not in macros or depth > 8:
        return [t]
    got = []
    for b in macros[t.text]:
        if b.text == t.text:
            got.append(Token(b.text, b.kind, line))
        else:
            got += _expand(Token(b.text, b.kind, line), macros, line, depth + 1)
    return got
