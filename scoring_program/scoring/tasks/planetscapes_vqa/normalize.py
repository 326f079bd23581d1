"""Answer normalization of the official VQA evaluation, result for result, but fast.

The official rules (docs: tests/support/vqa_oracle.py applies them literally):
1. clean: newlines and tabs become spaces, then strip. Always, for every answer.
2. Only when the ten human answers are not all identical after cleaning, every human answer and
   the result answer go through punctuation() then digits_articles().

Why the fast forms below give the same strings as the literal rules:
- punctuation(): the delete-or-space decision for each mark is taken on the ORIGINAL text, and
  no replacement creates or removes another mark, so the 21 sequential replaces are one
  str.translate with a per-mark choice. A text with no mark and no period is unchanged.
- the period pattern of the official code, `(?!<=\\d)(\\.)(?!\\d)`, starts with a lookahead that
  can never fail (it looks for "<=" where a "." is), so it is `\\.(?![0-9])`; re.UNICODE (= 32)
  is passed where the count goes, so only the first 32 periods go. The official code ran on
  Python 2 with a byte-string pattern: `\\d` meant ASCII 0-9 only, hence [0-9] here.
- digits_articles(): number words, articles and contractions cannot produce one another (a
  number word becomes digits, which are neither articles nor contraction keys), so the three
  tables are one word map applied in a single pass.
- Answers repeat a lot ("yes", "2"...): Memo caches each distinct string's result.
"""
import re
from typing import Callable, Dict, Optional

from .tables import ARTICLES, CONTRACTIONS, NUMBER_WORDS, PUNCTUATION

PERIOD_LIMIT = 32  # re.UNICODE's value, passed as the count by the official code

_COMMA_BETWEEN_DIGITS = re.compile(r"[0-9],[0-9]")
_PERIOD = re.compile(r"\.(?![0-9])")
_MARK_OR_PERIOD = re.compile("[" + re.escape("".join(PUNCTUATION) + ".") + "]")
_DELETE_ALL = {ord(p): None for p in PUNCTUATION}
_MARKS = frozenset(PUNCTUATION)

# word -> replacement (None: dropped). Equivalent to the official three passes, see above.
_WORDS: Dict[str, Optional[str]] = {}
_WORDS.update(CONTRACTIONS)
_WORDS.update(NUMBER_WORDS)
_WORDS.update((a, None) for a in ARTICLES)
assert len(_WORDS) == len(CONTRACTIONS) + len(NUMBER_WORDS) + len(ARTICLES)


def clean(text: str) -> str:
    """Step 1, applied to every answer: newlines and tabs to spaces, then strip."""
    return text.replace("\n", " ").replace("\t", " ").strip()


def punctuation(text: str) -> str:
    """The official processPunctuation."""
    if _MARK_OR_PERIOD.search(text) is None:
        return text
    if _COMMA_BETWEEN_DIGITS.search(text) is not None:
        out = text.translate(_DELETE_ALL)  # a digit,digit anywhere: every mark is deleted
    else:
        table = {}
        for mark in _MARKS.intersection(text):
            deleted = (mark + " ") in text or (" " + mark) in text
            table[ord(mark)] = None if deleted else " "
        out = text.translate(table) if table else text
    if "." in out:
        out = _PERIOD.sub("", out, PERIOD_LIMIT)
    return out


def digits_articles(text: str) -> str:
    """The official processDigitArticle: lower-case, split, map number words, drop articles,
    replace contractions, join with single spaces."""
    words = text.lower().split()
    if _WORDS.keys().isdisjoint(words):
        return " ".join(words)
    out = []
    for w in words:
        mapped = _WORDS.get(w, w)
        if mapped is not None:
            out.append(mapped)
    return " ".join(out)


def normalize(cleaned: str) -> str:
    """Steps 3-4 on an already cleaned answer (used only when the humans disagree)."""
    return digits_articles(punctuation(cleaned))


class Memo(dict):
    """dict of string -> function(string), computed on first use. memo[s] is a C-level lookup
    on a hit; map(memo.__getitem__, strings) normalizes a whole list without a Python loop."""

    def __init__(self, function: Callable[[str], str]) -> None:
        super().__init__()
        self.function = function

    def __missing__(self, key: str) -> str:
        value = self[key] = self.function(key)
        return value


class Normalizer:
    """The caches one run shares between the reference and the results."""

    def __init__(self) -> None:
        self.clean = Memo(clean)                  # raw -> cleaned
        self.normalize = Memo(normalize)          # cleaned -> normalized
        self.full = Memo(self._full)              # raw -> cleaned, then normalized

    def _full(self, raw: str) -> str:
        return self.normalize[self.clean[raw]]
