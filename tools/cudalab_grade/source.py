"""Finding forbidden APIs in a student's source, ignoring comments and literals."""
from __future__ import annotations

import re

_CHAR_PREFIXES = ("L", "u", "U", "u8")
_RAW = re.compile(r'R"([^()\\\s]{0,16})\(')


def strip_code(text: str) -> str:
    """text with comments and string/char literals blanked out.

    Every newline is kept, so line numbers do not change. Digit separators
    (1'000'000) are not taken for char literals.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
        elif c == "/" and nxt == "*":
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, end))
            i = end
        elif c == "R" and _RAW.match(text, i) and not _ident_char_before(text, i):
            m = _RAW.match(text, i)
            close = ")" + m.group(1) + '"'
            j = text.find(close, m.end())
            end = n if j < 0 else j + len(close)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"' or (c == "'" and _opens_char_literal(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = min(j + 1, n) if j < n and text[j] == c else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_char_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def _opens_char_literal(text: str, i: int) -> bool:
    """False for a digit separator; true otherwise (including L'x', u8'x')."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        j -= 1
    word = text[j:i]
    return word == "" or word in _CHAR_PREFIXES


def find_forbidden(text: str, forbid: list[str] | tuple[str, ...]) -> tuple[str, int] | None:
    """(substring, 1-based line) of the first forbidden use in the code, or None."""
    code = strip_code(text)
    best: tuple[int, str] | None = None
    for bad in forbid:
        pos = code.find(bad)
        if pos >= 0 and (best is None or pos < best[0]):
            best = (pos, bad)
    if best is None:
        return None
    return best[1], code.count("\n", 0, best[0]) + 1
