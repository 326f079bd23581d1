"""The confidence interval as every task shows it: a phrase next to the headline score, one line
of explanation on the page, the console lines. Only the interval's two ends are shown."""
from typing import Callable, List, Optional

from . import html

DASH = "\u2013"


def _ends(conf, key: str, fmt: Callable[[float], str]) -> Optional[str]:
    ends = conf.interval(key) if conf is not None else None
    return None if ends is None else "{}{}{}".format(fmt(ends[0]), DASH, fmt(ends[1]))


def phrase(conf, key: str, fmt: Callable[[float], str] = html.format_score) -> Optional[str]:
    """'95% CI 0.5980-0.6270 over 40 images' (over '10 fields of 40 images' when clusters are
    resampled), or None (no interval)."""
    ends = _ends(conf, key, fmt)
    if ends is None:
        return None
    return "{} CI {} over {}".format(conf.level, ends, _units(conf))


def headline_parts(conf, key: str, fmt: Callable[[float], str] = html.format_score) -> List[str]:
    """The phrase as a list for run_info.subline's first parts (empty without an interval)."""
    p = phrase(conf, key, fmt)
    return [p] if p else []


def explanation_html(conf) -> str:
    """One line under the headline saying what the interval means (empty without one)."""
    if conf is None or not any(ends for _, ends in conf.intervals):
        return ""
    if getattr(conf, "studentized", True):
        how = ('studentized bootstrap over whole {}: how far each resampled score lies from '
               'this one in units of its own standard error, the middle {} of those distances '
               'times this score\'s standard error'.format(html.escape(conf.noun),
                                                           html.escape(conf.level)))
    else:
        how = ('basic bootstrap over whole {}, each test set scored again: the middle {} of '
               'the resampled scores, reflected about this one'.format(
                   html.escape(conf.noun), html.escape(conf.level)))
    return ('<p class="lead">{} confidence interval: where the score of this submission on '
            'the whole population of {} lies, from {:,} test sets each drawn with replacement '
            'from these {} ({}).</p>'.format(
                html.escape(conf.level), html.escape(conf.member_noun or conf.noun),
                conf.resamples, html.escape(_units(conf)), how))


def _units(conf) -> str:
    """'40 images', or '12 fields of 40 images' when clusters of units are resampled."""
    text = "{:,} {}".format(conf.units, conf.noun)
    if getattr(conf, "members", 0):
        text += " of {:,} {}".format(conf.members, conf.member_noun)
    return text


def console_lines(conf, title: str) -> List[str]:
    """What score.py prints under its table when intervals are on."""
    if conf is None:
        return ["No confidence interval: {} gives no per-unit statistics to resample.".format(
            title)]
    out = []
    for key, ends in conf.intervals:
        if ends is None:
            out.append("{}: no {} confidence interval (undefined in some resamples)".format(
                key, conf.level))
        else:
            out.append("{}: {} confidence interval {:.4f} to {:.4f} (bootstrap, {:,} resamples "
                       "of the {})".format(key, conf.level, ends[0], ends[1], conf.resamples,
                                           _units(conf)))
    return out
