"""Submitted strings made harmless in the outputs: Markdown, CSV and the terminal.

A student chooses their submission's name (hence the student id), the names
of the members of an archive, and the output of their program; all of these
reach report.md, summary.md and gradebook.csv. In Markdown they are shown as
text, never as markup: no link, image, HTML, table cell or code fence of the
student's making. In CSV, a cell that a spreadsheet would read as a formula
(`=`, `+`, `-`, `@`, tab or carriage return first, the OWASP list) gets a
leading apostrophe, so it is shown as text. A cell holding a carriage return is
quoted (Python's csv module quotes only the characters of its line terminator,
and a spreadsheet reads a bare CR as the end of a row: a new row whose first
cell would be a formula of the student's making). Everywhere, the
bidirectional overrides, embeddings and isolates become '?', so that no name
shows in another order than it reads; on the terminal, newlines and tabs too.
A name that is not UTF-8 (a file or folder name of bytes, which Python reads as
lone surrogates) shows its bytes as `\\xNN`: such a string cannot be written as
UTF-8 at all, and one of them in a student id used to stop the whole class run.
"""
from __future__ import annotations

import csv
import io
import re

# control characters, and the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
# U+2066-U+2069: "Trojan Source"), which make a name or a line of code display in another order
# than it reads (an id "\u202eecila" shows as "alice")
_BIDI_CHARS = "\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI_CHARS}]")
_BIDI = re.compile(rf"[{_BIDI_CHARS}]")
# Markup of any consequence (links, images, HTML, code, tables, headings) and emphasis by '*'; an
# underscore stays as it is, for the names of identifiers (emphasis by '_' is cosmetic at worst).
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~#!{}])")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# lone surrogates: the bytes of a name that is not UTF-8 (os.fsdecode's surrogateescape, U+DC80-
# U+DCFF) and any other half of a pair, none of which UTF-8 can encode
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _surrogate(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF else "?"


def utf8_safe(text: str) -> str:
    """text that UTF-8 can encode: each byte of a non-UTF-8 name (a surrogate escape) becomes
    the four characters \\xNN, any other lone surrogate '?'."""
    return _SURROGATE.sub(_surrogate, text)


def printable(text: str) -> str:
    """text without control characters (a terminal's escape sequences, NULs): each becomes '?';
    UTF-8-safe (utf8_safe)."""
    return _CONTROL.sub("?", utf8_safe(text))


def one_line(text: str) -> str:
    """text for one line of the terminal: printable, with newlines and tabs as '?' too (a
    student id holding a newline must not print a line of its own, such as a forged score)."""
    return printable(str(text)).replace("\n", "?").replace("\t", "?")


def md_text(text: str) -> str:
    """text as Markdown that shows it as it is, on one line: markup characters escaped,
    newlines and control characters replaced."""
    one_line = printable(str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    return _MD_SPECIAL.sub(r"\\\1", one_line)


def md_code(text: str) -> str:
    """text as an inline code span, whatever backticks it holds (CommonMark: a longer fence)."""
    one_line = printable(str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    longest = max((len(m) for m in re.findall(r"`+", one_line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") or not one_line.strip() else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


def md_block(text: str) -> list[str]:
    """Lines of a fenced code block holding text, with a fence no line of text can close."""
    body = printable(str(text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
                     .replace("\x0c", "").replace("\x0b", ""))
    longest = max((len(m) for m in re.findall(r"`{3,}|~{3,}", body)), default=2)
    fence = "`" * max(3, longest + 1)
    return [fence, *body.split("\n"), fence]


def csv_cell(value) -> str:
    """A CSV cell that no spreadsheet runs as a formula (OWASP CSV injection)."""
    text = _BIDI.sub("?", utf8_safe(str(value)))
    if text.startswith(_FORMULA_START):
        return "'" + text
    return text


def csv_text(rows) -> str:
    """CSV text of rows (sequences of cells), every cell through csv_cell; a row with a
    carriage return in a cell has every cell quoted, so that the CR stays inside its cell."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    quoted = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in rows:
        cells = [csv_cell(c) for c in row]
        (quoted if any("\r" in c for c in cells) else w).writerow(cells)
    return buf.getvalue()
