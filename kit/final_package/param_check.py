"""The parameters check, shared by verify.py and the starting kit's check_final.py: the total
under the counting rule (params.RULE) against the limit, each file's figures as evidence.

fail: a file is refused (it would run code when loaded, or its header lies), the total is above
the limit (an incomplete count can only grow), or there is no model file at all; warn: within
the limit but what the rule sets apart (buffers, optimizer state, EMA copies), counted too,
would exceed it (the largest of those tensors named: the jury decides), the files hold no
parameter at all (only buffers, optimizer state: the jury decides), or some file could not be
counted; pass: within the limit, every file counted.
"""
from . import params
from .checks import FAIL, PASS, WARN, Check
from .params import set_apart


def check(census: params.Census, limit: int) -> Check:
    name = "parameters"
    counted = census.counted
    refused = census.with_status(params.REFUSED)
    missing = census.with_status(params.NOT_COUNTED)
    files = [f for f in census.files if f.status == params.COUNTED]
    evidence = [params.RULE]
    for f in census.files:
        if f.status == params.COUNTED:
            evidence.append("{}: {} - {:,} parameters; {:,} buffers, {:,} optimizer state, "
                            "{:,} EMA not counted{}{}{}".format(
                                f.path, f.format, f.figures["parameters"], f.figures["buffers"],
                                f.figures["optimizer_state"], f.figures["ema"],
                                "; {} tensors share storage".format(f.shared) if f.shared
                                else "", "; the same file as {}, counted once".format(
                                    f.duplicate_of) if f.duplicate_of else "",
                                "; " + f.reason if f.reason else ""))
        else:
            evidence.append("{}: {} - {}".format(f.path, f.status, f.reason))
    figures = {"counted": counted, "limit": limit, "complete": census.complete}
    largest = max((f.figures["parameters"] for f in files if not f.duplicate_of), default=0)
    if refused:
        return Check(name, FAIL, "{} refused: {}".format(
            refused[0].path, refused[0].reason), evidence, figures)
    if counted > limit:
        note = "" if largest > limit or len(files) < 2 else \
            " (no single file exceeds it: if the files hold one model at several stages, the " \
            "jury decides)"
        return Check(name, FAIL, "{:,} parameters counted, above the limit of {:,}{}".format(
            counted, limit, note), evidence, figures)
    if not files and not missing:
        return Check(name, FAIL, "no model file found: models/ must hold the final model",
                     evidence, figures)
    apart = sum(census.totals[c] for c in (params.BUFFERS, params.OPTIMIZER, params.EMA))
    if counted + apart > limit:
        named = ", ".join("{}: {} ({}, {:,})".format(path, r.name or "an unnamed tensor",
                                                     r.category.replace("_", " "), r.numel)
                          for path, r in set_apart.largest(census.files))
        return Check(name, WARN, "{:,} parameters counted, within the limit of {:,}, but what "
                     "the rule sets apart ({:,} buffers, {:,} optimizer state, {:,} EMA) would "
                     "exceed it if counted: the jury decides (largest: {})".format(
                         counted, limit, census.totals[params.BUFFERS],
                         census.totals[params.OPTIMIZER], census.totals[params.EMA], named),
                     evidence, figures)
    if files and counted == 0 and not missing:
        # Files were read, but nothing in them counts: a model has parameters. Integer
        # (quantized) weights are buffers under the rule: the jury decides.
        return Check(name, WARN, "0 parameters counted: the model files hold no floating-point "
                     "weights the rule counts ({:,} buffers, {:,} optimizer state, {:,} EMA); "
                     "the jury decides whether models/ holds the final model".format(
                         census.totals[params.BUFFERS], census.totals[params.OPTIMIZER],
                         census.totals[params.EMA]), evidence, figures)
    if missing:
        return Check(name, WARN, "{:,} parameters counted (limit {:,}), but the count is "
                     "incomplete: {} file{} not counted ({})".format(
                         counted, limit, len(missing), "" if len(missing) == 1 else "s",
                         missing[0].path), evidence, figures)
    return Check(name, PASS, "{:,} parameters counted, within the limit of {:,}".format(
        counted, limit), evidence, figures)
