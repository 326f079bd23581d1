"""A mechanical, in-memory Python 2 -> 3 fixer for running an official Python 2 evaluation file
(GT-Vision-Lab/VQA's vqaEval.py and vqa.py) unchanged in every other respect.

Two fixes, nothing else:
- leading whitespace: tabs are expanded as Python 2 reads indentation (a tab moves to the next
  multiple of 8 columns, a space one column, a form feed back to column 0), so that lines mixing
  tabs and spaces keep the block structure Python 2 gives them (Python 3 rejects the mix).
  Lines that continue a multi-line string literal keep their text: it is data, not indentation;
- print statements become print() calls: `print a, b` -> `print(a, b)`, a trailing comma ->
  `end=" "`, `print >>f, a` -> `print(a, file=f)`, a bare `print` -> `print()`. A parenthesized
  argument stays an expression, as in Python 2: `print (a, b)` prints the tuple.

Not emulated (no difference for the files it is meant for): Python 2's `softspace` subtleties
(no space after an item ending in a newline) and str() of floats, which has 12 significant
digits in Python 2. Written for these benches (our own code, the same on every Python 3: the
stdlib's lib2to3 is gone from 3.13 on).
"""
import io
import re
import tokenize
from typing import List, Tuple

TABSIZE = 8  # Python 2's tokenizer: indentation tabs stop at multiples of 8


class ConversionError(Exception):
    pass


def _lines(source: str) -> List[str]:
    """Physical lines as the tokenizer sees them (split on \\n only, ends kept)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", source)


def _tokens(source: str) -> List[tokenize.TokenInfo]:
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError) as exc:  # IndentationError is a SyntaxError
        raise ConversionError("cannot tokenize the file: {}".format(exc)) from None
    for tok in toks:  # Python < 3.12 yields what it cannot read (e.g. an open quote) as this
        if tok.type == tokenize.ERRORTOKEN and tok.string.strip():
            raise ConversionError("cannot tokenize line {}: {!r}".format(tok.start[0], tok.line))
    return toks


def _expand(line: str) -> str:
    col = 0
    for i, ch in enumerate(line):
        if ch == " ":
            col += 1
        elif ch == "\t":
            col = (col // TABSIZE + 1) * TABSIZE
        elif ch == "\f":
            col = 0
        else:
            return " " * col + line[i:]
    return line  # whitespace only: no indentation to read


def expand_indentation(source: str) -> Tuple[str, int]:
    """(source with leading tabs expanded, number of lines changed)."""
    lines = _lines(source)
    expanded = [_expand(line) for line in lines]
    # Lines 2.. of a multi-line string literal are the string's content: keep them as they are.
    keep = set()
    for tok in _tokens("".join(expanded)):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            keep.update(range(tok.start[0], tok.end[0]))  # 0-based indices of rows 2..end
    out = [lines[i] if i in keep else expanded[i] for i in range(len(lines))]
    return "".join(out), sum(a != b for a, b in zip(out, lines))


def _offsets(source: str) -> List[int]:
    starts, total = [0], 0
    for line in _lines(source):
        total += len(line)
        starts.append(total)
    return starts


def _print_items(toks: list, i: int) -> Tuple[int, List[list], bool]:
    """The statement `print ...` whose `print` is toks[i]: (index of the token that ends it,
    its comma-separated items as token lists, whether it ends with a comma)."""
    j, level, items, item = i + 1, 0, [], []  # type: int, int, List[list], list
    while j < len(toks):
        t = toks[j]
        if level == 0 and (t.type in (tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.COMMENT)
                           or (t.type == tokenize.OP and t.string == ";")):
            break
        if t.type == tokenize.OP and t.string in "([{":
            level += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            level -= 1
        if level == 0 and t.type == tokenize.OP and t.string == ",":
            items.append(item)
            item = []
        else:
            item.append(t)
        j += 1
    trailing_comma = not item and bool(items)
    if item:
        items.append(item)
    return j, items, trailing_comma


def _print_call(source: str, at, toks: list, i: int) -> Tuple[int, Tuple[int, int, str]]:
    """The print statement starting at toks[i] as a call: (index of the token that ends it,
    (start offset, end offset, the call's text))."""
    tok = toks[i]
    j, items, trailing_comma = _print_items(toks, i)
    target = None
    if items and items[0] and items[0][0].type == tokenize.OP and items[0][0].string == ">>":
        target = items.pop(0)[1:]
        if not target:
            raise ConversionError("line {}: `print >>` without a file".format(tok.start[0]))
    if any(not it for it in items):
        raise ConversionError("line {}: empty item in a print statement".format(tok.start[0]))
    # The items' own text, separators and line continuations included, is kept as
    # it is: only `print` becomes `print(`, `>>f,` moves to a `file=` keyword at the
    # end, and the keywords and `)` are added after the last token.
    keywords = []
    if target is not None:
        keywords.append("file=" + source[at(target[0].start):at(target[-1].end)])
    if trailing_comma:
        keywords.append('end=" "')
    last = toks[j - 1] if j - 1 > i else tok
    end = at(last.end)
    if items:
        begin = at(items[0][0].start)
        gap = source[at(tok.end):begin] if target is None else ""
        body = ("" if not gap.strip(" \t") else gap) + source[begin:end]
        if keywords:  # after the trailing comma, if there is one
            body += (" " if trailing_comma else ", ") + ", ".join(keywords)
    else:
        body = ", ".join(keywords)
    return j, (at(tok.start), end, "print(" + body + ")")


def _after(tok, depth: int, statement_start: bool) -> Tuple[int, bool]:
    """(bracket depth, whether a statement starts) after tok."""
    if tok.type == tokenize.OP and tok.string in "([{":
        depth += 1
    elif tok.type == tokenize.OP and tok.string in ")]}":
        depth -= 1
    if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
        return depth, True
    if tok.type in (tokenize.NL, tokenize.COMMENT):
        return depth, statement_start  # blank or comment-only lines change nothing
    # `a; print x` and `if c: print x` (at depth 0 a colon ends a compound statement's
    # header: Python 2 has no annotations, and a lambda's body cannot be a statement)
    return depth, depth == 0 and tok.type == tokenize.OP and tok.string in (";", ":")


def fix_prints(source: str) -> Tuple[str, int]:
    """(source with print statements made print() calls, number of statements changed)."""
    toks = _tokens(source)
    if re.search(r"^\s*from\s+__future__\s+import\s+[^#\n]*\bprint_function\b", source, re.M):
        return source, 0
    starts = _offsets(source)

    def at(pos: Tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1]

    edits = []  # (start offset, end offset, new text)
    depth, statement_start, i = 0, True, 0
    while i < len(toks):
        tok = toks[i]
        if statement_start and tok.type == tokenize.NAME and tok.string == "print":
            i, edit = _print_call(source, at, toks, i)
            edits.append(edit)
            statement_start = False
            continue
        depth, statement_start = _after(tok, depth, statement_start)
        i += 1
    out = source
    for begin, end, text in reversed(edits):
        out = out[:begin] + text + out[end:]
    return out, len(edits)


def convert(source: str) -> Tuple[str, dict]:
    """Both fixes, indentation first (Python 3's tokenizer may refuse mixed tabs): the converted
    source and what was changed ({"reindented_lines": n, "print_statements": m})."""
    source, reindented = expand_indentation(source)
    source, prints = fix_prints(source)
    return source, {"reindented_lines": reindented, "print_statements": prints}
