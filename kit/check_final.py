#!/usr/bin/env python3
"""Check a final submission (for the prize) before you send it, without the test labels.

    python3 check_final.py final_submission.zip        (or the folder holding submission/)

Makes every check of the organizers' verification that needs no hidden labels, with the
organizers' own code (organizer/organizing/verify/): the layout (submission/ holding results/, code/,
models/ and challenge_report.pdf); results/ against the test image list (manifest.json: names,
sizes, single channel, class ids), as check_submission.py does; the model size, counted from
every file of the package, read by its content, without loading or running any of them,
under the counting rule it prints; the report (a PDF). What it cannot check: that results/ gives
your leaderboard mIoU, that code/ and models/ reproduce results/, the datasets your report
declares; the organizers do.

The rules are the challenge's (at most 150M parameters...), or those of the kit's
reference_config.yaml (`final_submission:`), as verify.py reads them.

Exit status: 0 every check passes (warnings may be printed), 1 the package breaks a rule (each
one listed), 2 bad command line or a package missing, 3 the kit's reference_config.yaml states
unusable rules (the organizers'). Needs Python 3.7+, numpy and Pillow.
"""
import argparse
import os
import shutil
import sys
import tempfile

from find_scoring import HERE, add_scoring_to_path

add_scoring_to_path()

from scoring import deps  # noqa: E402  (standard library only)

try:
    from scoring.commands import frame  # noqa: E402
    from scoring.manifests import load_manifest  # noqa: E402
    from scoring.problems import UsageError, shown  # noqa: E402
    from scoring.validate import manifest_words, validate_submission  # noqa: E402
    from final_package import layout, param_check, pdf, rules  # noqa: E402
    from final_package.params import isolated  # noqa: E402
    from final_package.checks import FAIL, NOT_CHECKED, PASS, Check  # noqa: E402
    from final_package.package import PackageRefused, open_input  # noqa: E402
except ModuleNotFoundError as exc:   # numpy or Pillow missing: one line, the install command
    deps.exit_if_missing(exc)

DEFAULT_MANIFEST = os.path.join(HERE, "manifest.json")
# The test labels' settings the bundle puts in the kit (no labels): its `final_submission:`
# block, if any, states the rules verify.py applies.
KIT_CONFIG = os.path.join(HERE, "reference_config.yaml")
MARKS = {"pass": "ok  ", "fail": "FAIL", "warn": "warn", "not-checked": " -  "}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="check_final.py",
        description="Check a final submission (zip or folder) for the prize: layout, results/ "
                    "against the test image list, the parameter count, the report. No test "
                    "labels needed; nothing in the package is run.")
    p.add_argument("package", help="the final submission zip (or the folder holding "
                                   "submission/)")
    p.add_argument("--manifest", default=DEFAULT_MANIFEST,
                   help="test image names and sizes (default: manifest.json beside this script)")
    p.add_argument("--max-params", type=int, default=None, metavar="N",
                   help="the parameter limit (default: the challenge's, {:,}, or "
                        "reference_config.yaml's)".format(rules.Rules().max_params))
    p.add_argument("--workers", type=int, default=None, help="processes for results/")
    return p


def _results(folder, manifest, workers) -> Check:
    if folder is None:
        return Check("results", FAIL, "no results/ folder")
    log, checked = validate_submission(folder, manifest, workers)
    words = manifest_words(manifest)
    if log.fatal:
        lines = [line for para in log.describe(log.kinds(fatal=True), **words)
                 for line in para.splitlines()]
        return Check("results", FAIL, "results/ would be refused: " + lines[0].rstrip(":"),
                     lines)
    return Check("results", PASS, "results/ passes every check of the scoring program: "
                 "{:,} predictions for the {:,} test images".format(
                     checked, len(manifest["images"])),
                 ["warning: " + w for w in log.summary_lines(**words)])


def kit_rules(stdout) -> "rules.Rules":
    """The rules of the kit's reference_config.yaml, else the challenge's defaults."""
    if not os.path.isfile(KIT_CONFIG):
        return rules.Rules()
    try:
        from scoring import safe_yaml
        config = safe_yaml.load_text(safe_yaml.decode(safe_yaml.read_file(KIT_CONFIG)))
    except ModuleNotFoundError as exc:
        if exc.name != "yaml":
            raise
        stdout.write("note: PyYAML is not installed, so the rules of reference_config.yaml "
                     "were not read; the challenge's defaults apply\n")
        return rules.Rules()
    except safe_yaml.YamlError as exc:
        raise rules.broken("reference_config.yaml cannot be read: {}".format(exc)) from None
    return rules.read(config if isinstance(config, dict) else {})


def check(path: str, manifest_path: str, limit, workers, stdout) -> int:
    manifest = load_manifest(manifest_path)
    the_rules = kit_rules(stdout)
    limit = limit or the_rules.max_params
    tmp = tempfile.mkdtemp(prefix="check-final-")
    try:
        try:
            folder, cleanup = open_input(path, tmp, "the final package")
        except PackageRefused as exc:
            checks = [Check("package", FAIL, str(exc))]
        else:
            try:
                found = layout.find(folder, the_rules)
                census = isolated.count_package(found.root, os.path.relpath(
                    found.models, found.root).replace(os.sep, "/") if found.models else None)
                checks = [found.check, _results(found.results, manifest, workers),
                          param_check.check(census, limit), pdf.check(found.report,
                                                                      the_rules.report),
                          Check("leaderboard match", NOT_CHECKED, "the organizers rescore "
                                "results/ with the test labels: it must give your leaderboard "
                                "mIoU"),
                          Check("reproduction", NOT_CHECKED, "the organizers run code/ with "
                                "models/: it must give results/ again")]
            finally:
                cleanup()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    width = max(len(c.name) for c in checks)
    failed = [c for c in checks if c.status == FAIL]
    for c in checks:     # every line escaped: a file's name cannot forge one (problems.shown)
        stdout.write("{}  {:<{}}  {}\n".format(MARKS[c.status], c.name, width, shown(c.summary)))
        if c.status == FAIL or c.name == "parameters":
            for line in c.evidence:
                stdout.write("      {}\n".format(shown(line)))
    stdout.write("\n{}: {}\n".format(
        "NOT READY" if failed else "READY", "{} check{} failed ({}); fix {} and run this "
        "again".format(len(failed), "s" if len(failed) > 1 else "", ", ".join(
            c.name for c in failed), "them" if len(failed) > 1 else "it") if failed else
        "{} passes every check that needs no test labels".format(shown(path))))
    return 1 if failed else 0


def body(args: argparse.Namespace, io: "frame.Io") -> int:
    """The checks; a broken reference_config.yaml is a refusal the frame prints (exit 3)."""
    if not os.path.isfile(args.manifest):
        raise UsageError("no manifest at {}: give --manifest".format(args.manifest))
    if args.max_params is not None and args.max_params < 1:
        raise UsageError("--max-params must be a positive integer")
    return check(args.package, args.manifest, args.max_params, args.workers, io.stdout)


COMMAND = frame.Command("check_final.py", build_parser, body, not_blamed="the package")


def main(argv=None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)


if __name__ == "__main__":
    sys.exit(main())
