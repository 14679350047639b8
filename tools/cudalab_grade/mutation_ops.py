"""The catalogue of CUDA mutation operators of tools/mutate, on the token level.

A source file is cut into tokens by `tokenize`: comments, string and
character literals and preprocessor lines are never tokens, so no operator
can touch them, and every token keeps its offsets and its 1-based line. An
operator is a function `(tokens, inside) -> [Site]`: `inside(i)` says whether
token i lies in a student region (only those are mutated). A Site is one
mutant: a list of edits (start, end, new text) on the original text, its line,
and a short description. One mutant changes one place of the file.

Adding an operator: write a function here that returns its sites, and add it
to OPERATORS with its name (a short [a-z_] word: it becomes part of every
mutant id). docs/guides/contributing.md, "Mutation testing", says more.
Standard library only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

# ---------------------------------------------------------------------------
# tokens

_PUNCT = sorted("""
<<<  >>>  <<=  >>=  ...  ->*  ::  ->  ++  --  <<  >>  <=  >=  ==  !=  &&  ||  +=  -=  *=  /=  %=
&=  |=  ^=  .*  ##  (  )  [  ]  {  }  ;  ,  .  ?  :  <  >  =  +  -  *  /  %  &  |  ^  !  ~  #
""".split(), key=len, reverse=True)
_NUMBER = re.compile(r"(?:\d[\d']*\.?[\d']*|\.\d[\d']*)(?:[eEpP][+-]?\d+)?[A-Za-z_0-9.]*"
                     r"|0[xX][0-9A-Fa-f']+[uUlL]*")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_RAW = re.compile(r'(?:u8|[uUL])?R"([^(\s\\]{0,16})\(')


@dataclass(frozen=True)
class Token:
    text: str
    start: int     # offset in the file's text
    end: int
    line: int      # 1-based
    kind: str      # "id", "num" or "punct"


def _block_comment_end(text: str, i: int) -> int:
    """Where the /* comment starting at i ends (past its */; the text's end if unclosed)."""
    j = text.find("*/", i + 2)
    return len(text) if j < 0 else j + 2


def tokenize(text: str) -> list[Token]:
    """The tokens of a C++/CUDA file; comments, literals of text and # lines are skipped."""
    out: list[Token] = []
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\\" and text.startswith("\n", i + 1):   # a line continuation
            i += 2
            line += 1
            continue
        if at_line_start and c == "#":                    # a preprocessor line, continuations too
            while i < n and text[i] != "\n":
                if text.startswith("//", i):
                    while i < n and text[i] != "\n":
                        i += 1
                    break
                if text.startswith("/*", i):
                    j = _block_comment_end(text, i)
                    line += text.count("\n", i, j)
                    i = j
                    continue
                if text[i] == "\\" and text.startswith("\n", i + 1):
                    line += 1
                    i += 2
                    continue
                i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                if text[i] == "\\" and text.startswith("\n", i + 1):
                    line += 1
                    i += 1
                i += 1
            continue
        if text.startswith("/*", i):
            j = _block_comment_end(text, i)
            line += text.count("\n", i, j)
            i = j
            continue
        m = _RAW.match(text, i)
        if m:
            close = ")" + m.group(1) + '"'
            j = text.find(close, m.end())
            j = n if j < 0 else j + len(close)
            line += text.count("\n", i, j)
            i = j
            continue
        if c in "\"'" or (c in "uUL" and _string_prefix(text, i)):
            j = i
            while text[j] != c if c in "\"'" else text[j] not in "\"'":
                j += 1
            quote = text[j]
            j += 1
            while j < n and text[j] != quote:
                if text[j] == "\\":
                    j += 1
                if j < n and text[j] == "\n":
                    line += 1
                j += 1
            i = min(n, j + 1)
            continue
        m = _IDENT.match(text, i)
        if m:
            out.append(Token(m.group(), i, m.end(), line, "id"))
            i = m.end()
            continue
        m = _NUMBER.match(text, i)
        if m and m.end() > i:
            out.append(Token(m.group(), i, m.end(), line, "num"))
            i = m.end()
            continue
        for p in _PUNCT:
            if text.startswith(p, i):
                out.append(Token(p, i, i + len(p), line, "punct"))
                i += len(p)
                break
        else:
            out.append(Token(c, i, i + 1, line, "punct"))
            i += 1
    return out


def _string_prefix(text: str, i: int) -> bool:
    """u"..", U"..", L"..", u8".." (the prefix of a string literal, not an identifier)."""
    m = re.match(r"(?:u8|[uUL])[\"']", text[i:i + 3])
    return bool(m) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))


# ---------------------------------------------------------------------------
# sites

Edit = tuple[int, int, str]   # (start offset, end offset, replacement)


@dataclass
class Site:
    line: int
    edits: list[Edit]
    what: str
    variant: str = ""        # set by the catalogue: the operator's name
    occurrence: int = 0      # 1-based among the operator's sites on this line
    start: int = field(default=0)


def apply(text: str, edits: list[Edit]) -> str:
    """The text with the edits made; a replacement keeps the line breaks it replaced, so every
    later line keeps its number."""
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        lost = text.count("\n", start, end) - new.count("\n")
        text = text[:start] + new + "\n" * max(0, lost) + text[end:]
    return text


Inside = Callable[[int], bool]

OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {v: k for k, v in OPEN.items()}
KEYWORDS = {"return", "if", "while", "for", "do", "else", "switch", "case", "sizeof", "new",
            "delete", "throw", "co_return", "const", "constexpr", "auto", "volatile", "static"}
TEMPLATE_NAMES = {"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "template",
                  "numeric_limits", "atomic_ref", "atomic", "array", "vector", "pair", "tuple",
                  "is_same", "is_same_v", "enable_if_t", "conditional_t", "make_unsigned_t"}
_SIMPLE_IN_TEMPLATE = {"::", ",", "*", "&", "const", "unsigned", "long", "int", "short", "char",
                       "signed", "volatile", "<", ">", ">>", "(", ")"}


def matching(tokens: list[Token], i: int) -> int:
    """Index of the bracket that closes (or opens) tokens[i]; -1 when none."""
    t = tokens[i].text
    step, want, mine = (1, OPEN[t], t) if t in OPEN else (-1, CLOSE[t], t)
    depth = 0
    j = i
    while 0 <= j < len(tokens):
        if tokens[j].text == mine:
            depth += 1
        elif tokens[j].text == want:
            depth -= 1
            if depth == 0:
                return j
        j += step
    return -1


def template_angles(tokens: list[Token]) -> set[int]:
    """Indices of the < and > (or >>) tokens that are template brackets, not comparisons."""
    angles: set[int] = set()
    for i, t in enumerate(tokens):
        if t.text != "<" or i == 0:
            continue
        prev = tokens[i - 1]
        if prev.kind != "id" or prev.text in KEYWORDS:
            continue
        depth, j = 1, i + 1
        ok = prev.text in TEMPLATE_NAMES
        while j < len(tokens) and depth:
            u = tokens[j].text
            if u == "<":
                depth += 1
            elif u == ">":
                depth -= 1
            elif u == ">>":
                depth -= 2
            elif u in OPEN:
                k = matching(tokens, j)
                if k < 0:
                    break
                j = k
            elif u in (";", "{", "}", "&&", "||", "?", "=", ")", "]") or (
                    tokens[j].kind == "punct" and u not in _SIMPLE_IN_TEMPLATE):
                break
            j += 1
        if depth > 0:
            continue
        after = tokens[j].text if j < len(tokens) else ""
        if ok or after in ("(", "{", "::", ">", ">>", ",", ")", "*", "&", ";", "<<<") \
                or (j < len(tokens) and tokens[j].kind == "id"):
            angles.add(i)
            angles.add(j - 1)
    return angles


def enclosing_open(tokens: list[Token], i: int) -> int:
    """Index of the unmatched ( [ { around token i; -1 at the top."""
    depth = 0
    for j in range(i - 1, -1, -1):
        u = tokens[j].text
        if u in CLOSE:
            depth += 1
        elif u in OPEN:
            if depth == 0:
                return j
            depth -= 1
    return -1


_LEFT_STOP = {"(", "[", "{", ",", ";", "}", "=", "+=", "-=", "*=", "/=", "&&", "||", "?", ":",
              "return", "!", "<<=", ">>=", "|=", "&=", "^=", "%=", "<<<"}
_RIGHT_STOP = {")", "]", "}", ",", ";", "&&", "||", "?", ":", "=", ">>>"}


def comparison_extent(tokens: list[Token], k: int, angles: set[int]) -> tuple[int, int]:
    """(first, last) token indices of the comparison whose operator is tokens[k]."""
    lo = k - 1
    while lo >= 0:
        u = tokens[lo].text
        if u in CLOSE:
            m = matching(tokens, lo)
            if m < 0:
                break
            lo = m - 1
            continue
        if u in _LEFT_STOP or u in OPEN or (u in ("<", ">", "<=", ">=", "==", "!=")
                                               and lo not in angles):
            break
        lo -= 1
    hi = k + 1
    while hi < len(tokens):
        u = tokens[hi].text
        if u in OPEN:
            m = matching(tokens, hi)
            if m < 0:
                break
            hi = m + 1
            continue
        if u in _RIGHT_STOP or (u in ("<", ">", "<=", ">=", "==", "!=") and hi not in angles):
            break
        hi += 1
    return lo + 1, hi - 1


def _span(tokens: list[Token], a: int, b: int) -> tuple[int, int]:
    return tokens[a].start, tokens[b].end


def _text(src: str, tokens: list[Token], a: int, b: int) -> str:
    s, e = _span(tokens, a, b)
    return src[s:e]


def _stmt_start(tokens: list[Token], i: int) -> bool:
    """Token i begins a statement of its own (not the body of an if/for/while/else/do)."""
    return i == 0 or tokens[i - 1].text in (";", "{", "}")


# ---------------------------------------------------------------------------
# operators. Each returns the sites of the tokens for which inside() holds.

SYNC_CALLS = {"__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block",
              "__threadfence_system"}


def del_sync(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """Delete a __syncthreads(); __syncwarp(...); __threadfence*(); statement."""
    sites = []
    for i, t in enumerate(tokens):
        if not inside(i) or t.text not in SYNC_CALLS or i + 1 >= len(tokens) \
                or tokens[i + 1].text != "(":
            continue
        close = matching(tokens, i + 1)
        if close < 0 or close + 1 >= len(tokens) or tokens[close + 1].text != ";":
            continue
        start, end = t.start, tokens[close + 1].end
        if _stmt_start(tokens, i):
            # the whole statement goes; a line left empty keeps its place (line numbers stay)
            ls = src.rfind("\n", 0, start) + 1
            le = src.find("\n", end)
            le = len(src) if le < 0 else le
            if not src[ls:start].strip() and not src[end:le].strip():
                start, end = ls, le
            sites.append(Site(t.line, [(start, end, "")], f"delete {t.text}()"))
        else:   # the body of an if/else/for: keep a statement there
            sites.append(Site(t.line, [(start, end, "(void)0;")], f"delete {t.text}()"))
    return sites


_ATOMIC = re.compile(r"^atomic(Add|Sub|Min|Max|Exch|Inc|Dec|And|Or|Xor|CAS)(_block|_system)?$")
_COMPOUND = {"Add": "+=", "Sub": "-=", "And": "&=", "Or": "|=", "Xor": "^="}
_FETCH = {"fetch_add": "+", "fetch_sub": "-", "fetch_and": "&", "fetch_or": "|", "fetch_xor": "^",
          "fetch_min": "min", "fetch_max": "max", "exchange": "="}


def _args(tokens: list[Token], open_: int, close: int) -> list[tuple[int, int]]:
    """(first, last) token indices of each argument between the brackets open_ and close."""
    args, a, j = [], open_ + 1, open_ + 1
    while j < close:
        u = tokens[j].text
        if u in OPEN:
            j = matching(tokens, j)
        elif u == ",":
            args.append((a, j - 1))
            a = j + 1
        j += 1
    if a <= close - 1:
        args.append((a, close - 1))
    return args


def _new_value(op: str, old: str, v: str, extra: str = "") -> str:
    return {"Add": f"{old} + {v}", "Sub": f"{old} - {v}", "And": f"{old} & {v}",
            "Or": f"{old} | {v}", "Xor": f"{old} ^ {v}", "Exch": v,
            "Min": f"({v} < {old} ? {v} : {old})", "Max": f"({old} < {v} ? {v} : {old})",
            "Inc": f"({old} >= {v} ? 0 : {old} + 1)",
            "Dec": f"(({old} == 0) | ({old} > {v}) ? {v} : {old} - 1)",
            "CAS": f"({old} == {v} ? {extra} : {old})"}[op]


def plain_rmw(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """An atomic read-modify-write becomes a plain read, then a plain write (a lost update)."""
    sites = []
    for i, t in enumerate(tokens):
        if not inside(i) or i + 1 >= len(tokens) or tokens[i + 1].text != "(":
            continue
        close = matching(tokens, i + 1)
        if close < 0:
            continue
        args = [_text(src, tokens, a, b) for a, b in _args(tokens, i + 1, close)]
        m = _ATOMIC.match(t.text)
        first = i
        while first >= 2 and tokens[first - 1].text == "::" and tokens[first - 2].kind == "id":
            first -= 2   # cudalab::atomic_add
        prev = tokens[first - 1].text if first > 0 else ";"
        opener = matching(tokens, first - 1) if prev == ")" else -1
        statement = (_stmt_start(tokens, first) or prev == "else" or (
            opener > 0 and tokens[opener - 1].text in ("if", "for", "while"))) \
            and close + 1 < len(tokens) and tokens[close + 1].text == ";"
        if (m or t.text == "atomic_add") and len(args) >= 2 and tokens[first - 1].text not in (".", "->", "::"):
            op = m.group(1) if m else "Add"
            if op == "CAS" and len(args) != 3:
                continue
            p, v = args[0], args[1]
            if statement and op in _COMPOUND:
                new = f"*({p}) {_COMPOUND[op]} {v}"
            else:
                body = _new_value(op, "old_", "v_", "(" + args[2] + ")" if op == "CAS" else "")
                new = (f"([&] {{ auto* p_ = ({p}); const auto old_ = *p_; const auto v_ = {v}; "
                       f"*p_ = {body}; return old_; }}())")
            sites.append(Site(t.line, [(tokens[first].start, tokens[close].end, new)],
                              f"{t.text} as a plain read-modify-write"))
        elif t.text in _FETCH and i >= 2 and tokens[i - 1].text in (".", "->") and len(args) >= 1:
            obj = _text(src, tokens, _object_start(tokens, i - 2), i - 2)
            acc = tokens[i - 1].text
            order = ", " + args[-1] if len(args) >= 2 else ""
            f = _FETCH[t.text]
            v = args[0]
            new_v = {"=": "v_", "min": "(v_ < old_ ? v_ : old_)",
                     "max": "(old_ < v_ ? v_ : old_)"}.get(f, f"old_ {f} v_")
            new = (f"([&] {{ const auto old_ = {obj}{acc}load({order[2:]}); const auto v_ = {v}; "
                   f"{obj}{acc}store({new_v}{order}); return old_; }}())")
            sites.append(Site(t.line, [(tokens[_object_start(tokens, i - 2)].start,
                                        tokens[close].end, new)],
                              f"{t.text} as a plain load and store"))
    return sites


def _object_start(tokens: list[Token], j: int) -> int:
    """First token of the postfix expression ending at token j (a name, member, index, call)."""
    while j >= 0:
        u = tokens[j].text
        if u in (")", "]"):
            m = matching(tokens, j)
            if m < 0:
                return j
            j = m - 1
            if j >= 0 and tokens[j].kind == "id":
                continue
            return m if u == ")" and (j < 0 or tokens[j].kind != "id") else j + 1
        if tokens[j].kind in ("id", "num"):
            if j >= 1 and tokens[j - 1].text in (".", "->", "::"):
                j -= 2
                continue
            return j
        return j + 1
    return 0


_MASKED = re.compile(r"^__(shfl(_up|_down|_xor)?|ballot|any|all|match_any|match_all|"
                     r"reduce_\w+)_sync$")
_FULL = re.compile(r"^(0[xX][fF]{8}[uU]?|kFullMask|~0u?|0xffffffff)$")


def mask_narrow(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """A warp primitive's mask loses lane 31 (0x7fffffff): undefined behaviour, not an error."""
    return _masks(src, tokens, inside, "0x7fffffffu")


def mask_active(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """A warp primitive's mask becomes __activemask(): the lanes that happen to be converged."""
    return _masks(src, tokens, inside, "__activemask()")


def _masks(src: str, tokens: list[Token], inside: Inside, new: str) -> list[Site]:
    sites = []
    for i, t in enumerate(tokens):
        if not inside(i) or not _MASKED.match(t.text) or i + 1 >= len(tokens) \
                or tokens[i + 1].text != "(":
            continue
        close = matching(tokens, i + 1)
        args = _args(tokens, i + 1, close) if close > 0 else []
        if not args:
            continue
        a, b = args[0]
        old = _text(src, tokens, a, b)
        if old.replace(" ", "") == new:
            continue
        if new.startswith("0x") and not _FULL.match(old.replace(" ", "")):
            new_text = f"({old}) & 0x7fffffffu"
        else:
            new_text = new
        s, e = _span(tokens, a, b)
        sites.append(Site(t.line, [(s, e, new_text)], f"{t.text} mask {old} -> {new_text}"))
    return sites


def shfl_dir(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """__shfl_down_sync <-> __shfl_up_sync (a xor shuffle is kept)."""
    swap = {"__shfl_down_sync": "__shfl_up_sync", "__shfl_up_sync": "__shfl_down_sync",
            "__shfl_down": "__shfl_up", "__shfl_up": "__shfl_down"}
    return [Site(t.line, [(t.start, t.end, swap[t.text])], f"{t.text} -> {swap[t.text]}")
            for i, t in enumerate(tokens) if inside(i) and t.text in swap]


def _relational(tokens: list[Token], inside: Inside) -> list[int]:
    angles = template_angles(tokens)
    out = []
    for i, t in enumerate(tokens):
        if inside(i) and t.text in ("<", "<=", ">", ">=") and i not in angles and i > 0:
            prev = tokens[i - 1]
            if prev.kind in ("id", "num") and prev.text not in KEYWORDS or prev.text in (")", "]"):
                out.append(i)
    return out


def cmp_flip(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """< <-> <= and > <-> >= in a comparison or a loop bound."""
    swap = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
    return [Site(tokens[i].line, [(tokens[i].start, tokens[i].end, swap[tokens[i].text])],
                 f"{tokens[i].text} -> {swap[tokens[i].text]}")
            for i in _relational(tokens, inside)]


def _bound_sites(src: str, tokens: list[Token], inside: Inside, delta: int) -> list[Site]:
    angles = template_angles(tokens)
    sites = []
    ops = _relational(tokens, inside) + [
        i for i, t in enumerate(tokens) if inside(i) and t.text in ("==", "!=")
        and i + 1 < len(tokens) and tokens[i + 1].kind == "num"]
    for k in sorted(ops):
        _, hi = comparison_extent(tokens, k, angles)
        if hi <= k:
            continue
        a = k + 1
        rhs = _text(src, tokens, a, hi)
        if a == hi and tokens[a].kind == "num" and re.fullmatch(r"\d+[uUlL]*", tokens[a].text):
            digits = re.match(r"\d+", tokens[a].text).group()
            value = int(digits) + delta
            if value < 0:
                continue
            new = str(value) + tokens[a].text[len(digits):]
        elif tokens[k].text in ("==", "!="):
            continue
        else:
            wrap = any(tokens[j].text in ("<<", ">>", "&", "|", "^", "?", "==", "!=")
                       for j in range(a, hi + 1))
            new = (f"({rhs})" if wrap else rhs) + (" + 1" if delta > 0 else " - 1")
        s, e = _span(tokens, a, hi)
        sites.append(Site(tokens[k].line, [(s, e, new)],
                          f"bound {rhs} -> {new} after {tokens[k].text}"))
    return sites


def bound_plus(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """The bound of a comparison (an integer literal or an index expression) plus one."""
    return _bound_sites(src, tokens, inside, +1)


def bound_minus(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """The bound of a comparison minus one (a literal 0 is left alone)."""
    return _bound_sites(src, tokens, inside, -1)


def drop_guard(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """A comparison of an if's condition (or a ?: guard), alone or one side of &&, becomes true."""
    angles = template_angles(tokens)
    sites = []
    for k in _relational(tokens, inside):
        lo, hi = comparison_extent(tokens, k, angles)
        before = tokens[lo - 1].text if lo > 0 else ""
        after = tokens[hi + 1].text if hi + 1 < len(tokens) else ""
        opener = enclosing_open(tokens, k)
        in_if = opener > 0 and tokens[opener].text == "(" and tokens[opener - 1].text == "if"
        conjunct = before in ("(", "&&") and after in (")", "&&")
        ternary = after == "?" and before in ("(", "=", ",", "return")
        if (in_if and conjunct) or ternary:
            s, e = _span(tokens, lo, hi)
            sites.append(Site(tokens[k].line, [(s, e, "true")],
                              f"guard {src[s:e]} -> true"))
    return sites


_IDENTITY = re.compile(r"^(0|0[uU]|0[uU]?[lL]{1,2}|0[lL]{1,2}[uU]|0\.0*[fF]?|0\.?[fF]|1|1[uU]|"
                       r"1[uU]?[lL]{1,2}|1\.0*[fF]?|1\.?[fF])$")
_EXTREME = re.compile(r"^(-\s*)?(INT_MAX|INT_MIN|UINT_MAX|LLONG_MAX|LLONG_MIN|ULLONG_MAX|FLT_MAX|"
                      r"DBL_MAX|INFINITY|HUGE_VALF?|CUDART_INF_F|CUDART_INF|"
                      r"(?:std|cuda::std)::numeric_limits<[^;]*>::(?:max|min|lowest|infinity)\(\)|"
                      r"k[A-Z]\w*(?:Infinity|Inf|Max|Min|Lowest|None))$")


# What `name()` value-initializes rather than calls: a fundamental type, a name that starts
# with a capital (Acc, T, Pair) or one ending in _t (dist64_t).
_TYPE_NAME = re.compile(r"^(?:[A-Z]\w*|\w+_t|bool|char|short|int|long|unsigned|signed|float|double)$")


def init_value(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """An initial or identity value: 0 <-> 1, an extreme (INT_MAX, FLT_MAX, infinity...) -> 0."""
    sites = []
    for i, t in enumerate(tokens):
        if not inside(i) or t.text != "=" or i + 1 >= len(tokens):
            continue
        j = i + 1
        while j < len(tokens) and tokens[j].text not in (";", ",", ")", "}"):
            if tokens[j].text in OPEN:
                m = matching(tokens, j)
                if m < 0:
                    break
                j = m
            j += 1
        if j >= len(tokens) or j == i + 1:
            continue
        if _geometric_loop(tokens, i):
            continue   # for (d = 1; ...; d *= 2) from 0 never ends: a timeout, not a lesson
        value = _text(src, tokens, i + 1, j - 1)
        compact = re.sub(r"\s+", "", value)
        inner = re.fullmatch(r"(\w+)[{(](.*)[})]", compact)
        if _EXTREME.match(compact):
            new = "0"
        elif _IDENTITY.match(compact):
            new = _flip01(compact)
        elif inner and (inner.group(2) == "" or _IDENTITY.match(inner.group(2))):
            if compact.endswith("()") and not _TYPE_NAME.match(inner.group(1)):
                continue   # lane_id(), nodes(): a call with no arguments, no value-initialization
            new = f"{inner.group(1)}{{{_flip01(inner.group(2) or '0')}}}"
        else:
            continue
        s, e = _span(tokens, i + 1, j - 1)
        sites.append(Site(t.line, [(s, e, new)], f"initial value {value} -> {new}"))
    return sites


def _geometric_loop(tokens: list[Token], i: int) -> bool:
    """tokens[i] is the = of a for loop's init whose step multiplies or shifts."""
    o = enclosing_open(tokens, i)
    if o <= 0 or tokens[o].text != "(" or tokens[o - 1].text != "for":
        return False
    close = matching(tokens, o)
    semis = [k for k in range(o, close) if tokens[k].text == ";"]
    return bool(semis) and any(tokens[k].text in ("*=", "<<=", ">>=", "/=")
                               for k in range(semis[-1], close))


def _flip01(literal: str) -> str:
    """0 -> 1 and 1 -> 0, keeping a literal's kind (0u -> 1u, 0.0f -> 1.0f)."""
    if "." in literal or (literal[-1] in "fF" and not literal.lower().startswith("0x")):
        return ("1.0" if literal.startswith("0") else "0.0") + ("f" if literal[-1] in "fF" else "")
    return ("1" if literal.startswith("0") else "0") + literal[1:]


_NO_LEFT = {"*", "/", "%", "-", "+", "~", "!", "&", ".", "->", "::", "<<", ">>", "++", "--", ">"}
_NO_RIGHT = {"*", "/", "%", "[", "(", ".", "->", "++", "--", "::", "<"}


def swap_operands(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """a - b -> b - a, and combine(a, b, ...) -> combine(b, a, ...) (a non-commutative combine)."""
    sites = []
    for k, t in enumerate(tokens):
        if not inside(k) or k == 0:
            continue
        if t.text == "-" and (tokens[k - 1].kind in ("id", "num") and tokens[k - 1].text
                              not in KEYWORDS or tokens[k - 1].text in (")", "]")):
            a = _object_start(tokens, k - 1)
            if a <= 0 or a > k - 1 or tokens[a - 1].text in _NO_LEFT:
                continue
            b = k + 1
            if b >= len(tokens) or tokens[b].kind not in ("id", "num"):
                continue
            e = b
            while e + 1 < len(tokens):
                u = tokens[e + 1].text
                if u in (".", "->", "::") and e + 2 < len(tokens) and tokens[e + 2].kind == "id":
                    e += 2
                elif u in ("(", "["):
                    m = matching(tokens, e + 1)
                    if m < 0:
                        break
                    e = m
                else:
                    break
            if e + 1 < len(tokens) and tokens[e + 1].text in _NO_RIGHT:
                continue
            left, right = _text(src, tokens, a, k - 1), _text(src, tokens, b, e)
            if left == right:
                continue
            s, _ = _span(tokens, a, a)
            _, f = _span(tokens, e, e)
            sites.append(Site(t.line, [(s, f, f"{right} - {left}")],
                              f"{left} - {right} -> {right} - {left}"))
        elif t.text == "combine" and k + 1 < len(tokens) and tokens[k + 1].text == "(" \
                and tokens[k - 1].text not in ("Pair", "auto") and tokens[k - 1].kind != "id":
            close = matching(tokens, k + 1)
            args = _args(tokens, k + 1, close) if close > 0 else []
            if len(args) < 2:
                continue
            x, y = (_text(src, tokens, *args[0]), _text(src, tokens, *args[1]))
            if x == y:
                continue
            s, _ = _span(tokens, args[0][0], args[0][0])
            _, f = _span(tokens, args[1][1], args[1][1])
            sites.append(Site(t.line, [(s, f, f"{y}, {x}")], f"combine({x}, {y}) -> ({y}, {x})"))
    return sites


_TILE = re.compile(r"tile|ticket|counter|next_block|block_id", re.I)


def static_tile(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """x = atomicAdd(tile_counter, 1) -> x = blockIdx.x: a static tile id for a dynamic one."""
    sites = []
    for i, t in enumerate(tokens):
        if not inside(i) or t.text not in ("atomicAdd", "atomicInc", "fetch_add") \
                or tokens[i - 1].text not in ("=",) or tokens[i + 1].text != "(":
            continue
        close = matching(tokens, i + 1)
        args = _args(tokens, i + 1, close) if close > 0 else []
        if not args:
            continue
        if not (_TILE.search(_text(src, tokens, *args[0])) or _TILE.search(tokens[i - 2].text)):
            continue
        sites.append(Site(t.line, [(t.start, tokens[close].end, "blockIdx.x")],
                          f"{_text(src, tokens, i, close)} -> blockIdx.x"))
    return sites


def size_t_int(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """std::size_t -> int (an index that overflows past 2^31 elements)."""
    sites = []
    for i, t in enumerate(tokens):
        if not inside(i) or t.text != "size_t":
            continue
        if i >= 2 and tokens[i - 1].text == "::" and tokens[i - 2].text == "std":
            s = tokens[i - 2].start
        elif i >= 1 and tokens[i - 1].text in ("::", ".", "->"):
            continue
        else:
            s = t.start
        sites.append(Site(t.line, [(s, t.end, "int")], f"{src[s:t.end]} -> int"))
    return sites


def default_stream(src: str, tokens: list[Token], inside: Inside) -> list[Site]:
    """kernel<<<g, b, shared, stream>>> -> kernel<<<g, b, shared>>>: a launch on the default stream."""
    sites = []
    for i, t in enumerate(tokens):
        if t.text != "<<<" or not inside(i):
            continue
        close = i + 1
        while close < len(tokens) and tokens[close].text not in (">>>", ";"):
            close = matching(tokens, close) + 1 if tokens[close].text in OPEN else close + 1
        if close >= len(tokens) or tokens[close].text != ">>>":
            continue
        args = _args(tokens, i, close)
        if len(args) != 4 or not inside(args[3][1]):
            continue
        stream = _text(src, tokens, *args[3])
        sites.append(Site(t.line, [(tokens[args[2][1]].end, tokens[args[3][1]].end, "")],
                          f"launch without its stream ({stream}): the default stream"))
    return sites


OPERATORS: dict[str, Callable[[str, list[Token], Inside], list[Site]]] = {
    "del_sync": del_sync,
    "plain_rmw": plain_rmw,
    "mask_narrow": mask_narrow,
    "mask_active": mask_active,
    "shfl_dir": shfl_dir,
    "cmp_flip": cmp_flip,
    "bound_plus": bound_plus,
    "bound_minus": bound_minus,
    "drop_guard": drop_guard,
    "init_value": init_value,
    "swap_operands": swap_operands,
    "static_tile": static_tile,
    "size_t_int": size_t_int,
    "default_stream": default_stream,
}
