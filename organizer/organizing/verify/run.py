"""verify.py's checks, in order: the package and its layout, results/ scored by the platform's
engine with every submission check, the score against the team's leaderboard row, results/
against the submission the platform scored (image by image), the parameter count, the
reproduction (per-image agreement, the score difference and its paired bootstrap interval), the
report. Each check's outcome is a Check (checks.py); the verdict is "invalid" when one fails.

verify(args, stdout) does it all and returns the exit status (0 valid, 1 invalid); the
organizer's broken inputs raise BrokenReference or InputProblem (exit 3), a bad command line
UsageError (exit 2).
"""
import os
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from scoring import __version__, confidence, engine, reference_setup, zips
from ..compare import paired
from scoring.metrics import bootstrap
from scoring.problems import BrokenReference, ProblemLog, Refusal, UsageError, shown
from scoring.registry import options_of
from scoring.report.scores_file import DECIMALS
from . import images, leaderboard, outputs, split_parts
from ..split import selection as split_selection
from final_package import layout as layout_check, param_check, params, pdf
from final_package.params import isolated
from final_package import rules as rules_mod
from final_package.checks import FAIL, NOT_CHECKED, PASS, WARN, Check
from final_package.package import PackageRefused, open_input

EXIT_VALID, EXIT_INVALID = 0, 1
LISTED = 20      # images listed by name in a check's evidence


class InputProblem(Refusal):
    """An organizer's input (leaderboard file, team name, reproduction, downloaded submission)
    is unusable: exit 3, str() says which and why (the command frame prints message())."""

    exit_code = 3

    def message(self) -> str:
        return ("ERROR: an organizer's input is unusable (not the participant's package): {}\n"
                "Nothing was written.\n".format(self))


def check_args(args) -> None:
    if args.leaderboard and args.claimed is not None:
        raise UsageError("give either --leaderboard CSV --team NAME or --claimed VALUE, not both")
    if bool(args.leaderboard) != bool(args.team):
        raise UsageError("--leaderboard and --team go together")
    if args.claimed is not None:
        try:
            leaderboard.claimed_value(args.claimed)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if args.max_params is not None and args.max_params < 1:
        raise UsageError("--max-params must be a positive integer")
    if args.tolerance is not None and not args.tolerance >= 0:
        raise UsageError("--tolerance must be a non-negative number")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.table is not None and (args.table < 1 or not args.leaderboard):
        raise UsageError("--table N (a positive integer) picks one table of a CodaLab export "
                         "given with --leaderboard")
    if os.path.lexists(args.out) and not os.path.isdir(args.out):
        raise UsageError("the output {} exists and is not a folder".format(shown(args.out)))
    # Every path given, checked before any work: a folder or a zip file.
    for path in (args.final, args.ref, args.leaderboard_submission, args.reproduced):
        if path is not None:
            zips.check_given(path)


def _rel(root: str, path: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def _problems(log: ProblemLog, words: Dict[str, str]) -> List[str]:
    return [line for para in log.describe(log.kinds(fatal=True), **words)
            for line in para.splitlines()]


class _Setup(NamedTuple):
    """What the reference, its rules and the command line set before the package is read."""
    opened: Any                     # scoring.reference_setup.Setup: the task, its settings...
    task: Any
    settings: Any
    reference: Any
    fmt: Any                        # the task's submission format
    rules: rules_mod.Rules
    limit: int                      # the parameter limit applied
    tolerance: float                # the reproduction's
    key: str                        # the ranking score's key
    claim: Optional[leaderboard.Claim]


def _prepare_out(out: str) -> None:
    try:
        os.makedirs(out, exist_ok=True)
        outputs.clear(out)
    except OSError as exc:
        raise UsageError("cannot write into the output folder {} ({})".format(
            shown(out), exc.strerror or type(exc).__name__)) from None


def _claim(args, rules: rules_mod.Rules, key: str) -> Optional[leaderboard.Claim]:
    if args.leaderboard:
        columns = [c for c in (args.score_column, rules.leaderboard_column) if c] or \
            ["mIoU", key]
        try:
            return leaderboard.read_claim(args.leaderboard, args.team, columns, args.table)
        except leaderboard.LeaderboardProblem as exc:
            raise InputProblem(str(exc)) from None
    if args.claimed is not None:
        return leaderboard.claimed_value(args.claimed)
    return None


def _setup(args, io, cleanups: List[Callable[[], None]]) -> _Setup:
    """The reference, the task, the rules and the claim: the organizer's inputs, each refused
    with its own exit status (2 or 3) before the package is read."""
    opened = reference_setup.unpack(args.ref, cleanups, io.show_as, args.task, options_of(args))
    task, settings = opened.task, opened.settings
    rules = rules_mod.read(opened.ref_config)
    key = task.keys(settings)[0]
    claim = _claim(args, rules, key)
    fmt = task.submission_format(settings)
    if fmt.words.get("units") != "images":
        raise UsageError("verify.py verifies final submissions of image tasks (one "
                         "prediction per image in results/); {} is scored from {}".format(
                             task.name, fmt.words.get("files", "other files")))
    reference = opened.open()
    if getattr(args, "split", None):   # a split of another reference: refused before any work
        split_selection.select(args.split, "public", reference)
    return _Setup(opened, task, settings, reference, fmt, rules,
                  args.max_params or rules.max_params,
                  rules.tolerance if args.tolerance is None else args.tolerance, key, claim)


def _start(args, say: Callable[[str], None], setup: _Setup) -> Dict[str, Any]:
    """The first line on the console, and the verdict document's head."""
    package = os.path.basename(os.path.normpath(args.final))
    say("Verifying the final submission {} ({}, {:,} reference {}); rules: at most {:,} "
        "parameters, reproduction tolerance {}".format(
            shown(package), setup.task.title, len(setup.reference.ids),
            setup.fmt.words.get("units", "units"), setup.limit, setup.tolerance))
    return {"package": shown(package), "task": setup.task.name, "key": setup.key,
            "scorer_version": __version__, "reference_units": len(setup.reference.ids),
            "rules": dict(setup.rules._asdict(), max_params=setup.limit,
                          tolerance=setup.tolerance)}


def _refused_package(exc: PackageRefused) -> Check:
    return Check("package", FAIL, str(exc), [str(exc), "nothing was unpacked: every other "
                                             "check is not made"])


def _jury_checks(report: str) -> List[Check]:
    return [Check("datasets declared", NOT_CHECKED, "the public datasets used for training or "
                  "pre-training must be named in {}: the jury's to read".format(report),
                  ["not checked by the program"]),
            Check("training reproducible", NOT_CHECKED, "retraining gives a model that "
                  "performs similarly, and the test set was not used in training: the jury's",
                  ["not checked by the program"])]


def _checks(args, io, setup: _Setup, folder: str,
            cleanups: List[Callable[[], None]]) -> Tuple[List[Check], params.Census, "_Scored",
                                                         Optional[float]]:
    """Every check of the unpacked package, in order (docs/verify.md)."""
    lay = layout_check.find(folder, setup.rules)
    states = _Scored(setup, args, lay, cleanups, io.stdout)
    result_check, score = states.results()
    census = isolated.count_package(lay.root, _rel(lay.root, lay.models) if lay.models
                                    else None)
    split = []
    if getattr(args, "split", None) and states.results_files:
        # the leaderboard showed the public part's score: the match compares that one
        parts = split_parts.score_parts(setup, args.split, states.results_files, states.workers)
        score = parts["public"][0]
        split = [split_parts.check(parts, setup.key)]
    checks = [lay.check, result_check, _match(score, setup.claim, setup.key)] + split + [
              states.leaderboard_submission(), param_check.check(census, setup.limit),
              states.reproduction(setup.tolerance), pdf.check(lay.report, setup.rules.report)]
    return checks + _jury_checks(setup.rules.report), census, states, score


def verify(args, io) -> int:
    """The whole verification (io: the command frame's streams, commands/frame.py)."""
    check_args(args)
    say = io.sayer(args.quiet)
    _prepare_out(args.out)
    cleanups: List[Callable[[], None]] = []
    try:
        setup = _setup(args, io, cleanups)
        doc = _start(args, say, setup)
        try:
            folder, cleanup = open_input(args.final, args.out, "the final package")
        except PackageRefused as exc:
            return _finish(args, io.stdout, say, doc, [_refused_package(exc)], None, None,
                           setup.limit)
        cleanups.append(cleanup)
        checks, census, states, score = _checks(args, io, setup, folder, cleanups)
        claim = setup.claim
        doc["score"] = {"key": setup.key, "results": _r(score),
                        "claimed": claim.text if claim else None,
                        "claimed_from": claim.source if claim else None,
                        "match": next(c.figures.get("match") for c in checks
                                      if c.name == "leaderboard match")}
        return _finish(args, io.stdout, say, doc, checks, census, states.reproduced,
                       setup.limit)
    finally:
        for cleanup in reversed(cleanups):
            cleanup()


class _Scored:
    """results/ (and the reproduction) scored in one pass of the engine; the other predictions
    compared with results/ image by image."""

    def __init__(self, setup: _Setup, args, lay, cleanups, stdout) -> None:
        self.task, self.reference, self.fmt = setup.task, setup.reference, setup.fmt
        self.setup, self.settings, self.key = setup, setup.settings, setup.key
        self.args, self.lay, self.cleanups, self.stdout = args, lay, cleanups, stdout
        task, reference = self.task, self.reference
        self.results_files: Dict[str, str] = {}
        self.states: List[Any] = []
        self.reproduced: Optional[Dict[str, Any]] = None
        self.repro_files: Dict[str, str] = {}
        self.repro_problems: List[str] = []
        self.workers = args.workers or engine.default_workers(len(reference.ids),
                                                              task.unit_seconds)

    def _open(self, path: str, what: str) -> str:
        try:
            folder, cleanup = open_input(path, self.args.out, what)
        except PackageRefused as exc:
            raise InputProblem(str(exc)) from None
        self.cleanups.append(cleanup)
        return folder

    def results(self) -> Tuple[Check, Optional[float]]:
        words = self.fmt.words
        if self.lay.results is None:
            return Check("results", FAIL, "no results/ folder: nothing to score"), None
        found = self.fmt.discover(self.lay.results, self.reference.ids)
        log = ProblemLog()
        log.merge(found.log)
        files = [found.files] if not found.log.fatal else []
        if self.args.reproduced:
            rep = self.fmt.discover(self._open(self.args.reproduced, "the reproduction"),
                                    self.reference.ids)
            if rep.log.fatal:
                self.repro_problems = _problems(rep.log, words)
            else:
                self.repro_files = rep.files
                if files:
                    files.append(rep.files)
        shown_root = self.lay.shown_root if self.lay.shown_root != "./" else ""
        names = [{u: shown_root + "results/" + _rel(self.lay.results, p)
                  for u, p in files[0].items()}] if files else []
        if len(files) == 2:
            names.append({u: "reproduced/" + os.path.basename(p) for u, p in files[1].items()})
        progress = None if self.args.quiet or not files else engine.Progress(
            len(self.reference.ids), self.stdout, noun=words.get("units", "units"))
        scored = engine.evaluate_many(
            self.task, self.reference, self.fmt, self.settings,
            [{u: (p, shown_names[u]) for u, p in f.items()} for f, shown_names in zip(files, names)],
            self.workers, progress) if files else None
        if scored is not None and scored.reference_log.fatal:
            raise BrokenReference(scored.reference_log)
        if scored is not None:
            log.merge(scored.submission_logs[0])
        if log.fatal:
            lines = _problems(log, words)
            return Check("results", FAIL, "results/ would be refused by the scoring program: "
                         "{}".format(lines[0].rstrip(":")), lines), None
        assert scored is not None
        self.results_files = files[0]
        self.states = scored.states
        if len(files) == 2 and scored.submission_logs[1].fatal:
            self.repro_problems = _problems(scored.submission_logs[1], words)
            self.states = scored.states[:1]
        summary = self.task.summarize(self.states[0], self.reference, self.settings)
        score = dict(summary.scores).get(self.key)
        warnings = log.summary_lines(**words)
        evidence = ["{:,} predictions for the {:,} reference {}".format(
            len(files[0]), len(self.reference.ids), words.get("units", "units"))]
        evidence += ["{}: {}".format(k, "n/a" if v is None else repr(round(v, 10)))
                     for k, v in summary.scores]
        evidence += ["warning: " + w for w in warnings]
        return Check("results", PASS, "results/ passes every check of the scoring program; "
                     "{} {}".format(self.key, "n/a" if score is None else
                                    "{:.4f}".format(score)), evidence,
                     {"scores": {k: (None if v is None else round(v, 10))
                                 for k, v in summary.scores}}), score

    def leaderboard_submission(self) -> Check:
        name = "leaderboard submission"
        if not self.args.leaderboard_submission:
            return Check(name, NOT_CHECKED, "no --leaderboard-submission given (the zip the "
                         "platform scored, downloaded by the organizer)")
        if not self.results_files:
            return Check(name, NOT_CHECKED, "results/ cannot be scored: nothing to compare")
        folder = self._open(self.args.leaderboard_submission, "the leaderboard submission")
        found = self.fmt.discover(folder, self.reference.ids)
        agreement = images.compare(self.fmt, self.results_files, found.files,
                                   ("results/", "the leaderboard submission"), self.workers)
        figures = _agreement_figures(agreement)
        if not agreement.differences:
            return Check(name, PASS, "results/ and the leaderboard submission are identical, "
                         "image by image ({:,} images)".format(agreement.compared), [],
                         figures)
        return Check(name, FAIL, "{:,} of {:,} images differ from the submission the platform "
                     "scored".format(len(agreement.differences), len(self.reference.ids)),
                     _difference_lines(agreement), figures)

    def reproduction(self, tolerance: float) -> Check:
        name = "reproduction"
        if not self.args.reproduced:
            return Check(name, NOT_CHECKED, "no --reproduced given: run code/ with models/ on "
                         "the test images and give the predictions' folder")
        if self.repro_problems:
            return Check(name, FAIL, "the reproduced predictions would be refused by the "
                         "scoring program: {}".format(self.repro_problems[0].rstrip(":")),
                         self.repro_problems)
        if len(self.states) < 2:
            return Check(name, NOT_CHECKED, "results/ cannot be scored: nothing to compare")
        summaries = [self.task.summarize(s, self.reference, self.settings) for s in self.states]
        points = [dict(s.scores).get(self.key) for s in summaries]
        resamplings = [confidence.resampling_of(self.task, s, m, self.reference, self.settings,
                                                self.setup.opened.intervals.by)
                       for s, m in zip(self.states, summaries)]
        values = None
        if confidence.interval_keys(self.task)[:1] == [self.key] and None not in resamplings:
            values = paired.resample_values(resamplings)
        pair = [p for p in paired.analyse(["results", "reproduced"], points, values)["pairs"]
                if p["a"] == "reproduced"][0]
        agreement = images.compare(self.fmt, self.results_files, self.repro_files,
                                   ("results/", "the reproduction"), self.workers)
        diff = pair["diff"]
        self.reproduced = {
            "score": _r(points[1]), "results_score": _r(points[0]), "difference": _r(diff),
            "difference_ci": [_r(v) for v in pair["diff_ci"]] if pair["diff_ci"] else None,
            "level": bootstrap.LEVEL_PERMILLE / 1000,
            "resamples": bootstrap.RESAMPLES if values else 0, "tolerance": tolerance,
            "reproduced": diff is not None and abs(diff) <= tolerance,
            "images": _agreement_figures(agreement)}
        ci = pair["diff_ci"]
        evidence = ["reproduced {} {}, results/ {}; difference {}{}".format(
            self.key, _num(points[1]), _num(points[0]), _num(diff, signed=True),
            ", 95% paired bootstrap interval [{}, {}] ({:,} resamples of the images)".format(
                _num(ci[0], signed=True), _num(ci[1], signed=True), bootstrap.RESAMPLES)
            if ci else "")]
        evidence += _difference_lines(agreement)
        figures = dict(self.reproduced)
        if self.reproduced["reproduced"]:
            return Check(name, PASS, "reproduced: the score differs by {} (tolerance {}); {} "
                         "of {:,} images identical".format(_num(diff, signed=True), tolerance,
                                                            "{:,}".format(agreement.identical),
                                                            agreement.compared),
                         evidence, figures)
        return Check(name, FAIL, "not reproduced: the score differs by {}, beyond the "
                     "tolerance {}".format(_num(diff, signed=True), tolerance), evidence,
                     figures)


def _r(value: Optional[float]) -> Optional[float]:
    """Scores as score.py writes them (scores_file.DECIMALS), what the platform shows."""
    return None if value is None else round(value, DECIMALS)


def _num(value: Optional[float], signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return "{:+.6f}".format(value) if signed else "{:.6f}".format(value)


def _agreement_figures(a: images.Agreement) -> Dict[str, Any]:
    return {"compared": a.compared, "identical": a.identical, "pixels": a.pixels,
            "differing_pixels": a.differing,
            "pixel_agreement": None if a.agreement is None else round(a.agreement, 10),
            "differing_images": [{"image": d.unit, "pixels": d.pixels, "of": d.total,
                                  "note": d.note} for d in a.differences]}


def _difference_lines(a: images.Agreement) -> List[str]:
    lines = ["{:,} of {:,} images compared are identical; {:,} of {:,} pixels differ".format(
        a.identical, a.compared, a.differing, a.pixels)]
    for d in a.differences[:LISTED]:
        lines.append("{}: {}".format(shown(d.unit), d.note or "{:,} of {:,} pixels differ"
                                     .format(d.pixels, d.total)))
    if len(a.differences) > LISTED:
        lines.append("... and {:,} more images (all in verdict.json)".format(
            len(a.differences) - LISTED))
    return lines


def _match(score: Optional[float], claim, key: str) -> Check:
    name = "leaderboard match"
    if claim is None:
        return Check(name, NOT_CHECKED, "no leaderboard row given (--leaderboard CSV --team "
                     "NAME, or --claimed VALUE)", figures={"match": None})
    if score is None:
        return Check(name, NOT_CHECKED, "results/ has no {} to compare with the claimed "
                     "{}".format(key, claim.text), figures={"match": None})
    m = leaderboard.compare(score, claim)
    figures = {"match": m.match, "claimed": claim.text, "rescored": round(score, 10),
               "rescored_at_claimed_precision": m.rescored_shown, "source": claim.source}
    evidence = ["claimed: {} ({})".format(claim.text, claim.source), "rule: " + m.rule]
    if m.match:
        return Check(name, PASS, "the rescored {} {} matches the claimed {}".format(
            key, m.rescored_shown, claim.text), evidence, figures)
    return Check(name, FAIL, "the rescored {} {} does not match the claimed {}".format(
        key, m.rescored_shown, claim.text), evidence, figures)


def _finish(args, stdout, say, doc, checks, census, reproduced, limit) -> int:
    invalid = any(c.status == FAIL for c in checks)
    doc["verdict"] = "invalid" if invalid else "valid"
    doc["checks"] = [c.as_json() for c in checks]
    doc["not_checked"] = [c.name for c in checks if c.status == NOT_CHECKED]
    doc["warnings"] = [c.name for c in checks if c.status == WARN]
    if census is not None:
        doc["parameters"] = dict(
            {"counted": census.counted, "limit": limit, "complete": census.complete,
             "rule": params.RULE, "files": [f.as_json() for f in census.files]},
            **{k: v for k, v in census.totals.items() if k != params.PARAMETERS})
    else:
        doc["parameters"] = {"counted": None, "limit": limit, "complete": False,
                             "rule": params.RULE, "files": []}
    doc.setdefault("score", {"key": doc["key"], "results": None, "claimed": None,
                             "claimed_from": None, "match": None})
    doc["reproduction"] = reproduced
    doc = outputs.escaped(doc)
    outputs.write(args.out, doc)
    if not args.quiet:
        stdout.write(outputs.summary(doc))
    say("Wrote {} to {}".format(" and ".join(outputs.FILES), shown(args.out)))
    return EXIT_INVALID if invalid else EXIT_VALID
