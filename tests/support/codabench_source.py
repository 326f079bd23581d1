"""The keys Codabench's v2 unpacker reads, taken from its source, not from our reading of it.

codabench-c7dbc756.txt (beside this file) is a verbatim extract of codalab/codabench at COMMIT:
every line of the code that reads a v2 competition.yaml, as `path:line:text`. CI has no
network, so the tests read the committed extract; where a clone of codalab/codabench is at
hand (CODABENCH_GIT_DIR, else the session mirror), a test re-extracts it from that commit and
wants the same bytes, so the extract cannot drift from the source it names.

To move to a newer commit: point COMMIT at it, check the line ranges in SOURCES against it,
then `python3 tests/support/codabench_source.py GIT_DIR > tests/support/codabench-<short>.txt`.
"""
import os
import re
import subprocess
import sys

COMMIT = "c7dbc756b07b133f8e552ae626fab54817ed93f3"
EXTRACT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "codabench-{}.txt".format(COMMIT[:8]))
MIRROR = "/work/.mirror/codalab+codabench/repo"

# (path, first line, last line): the code that reads the yaml, whole functions.
SOURCES = [
    ("src/apps/competitions/tasks.py", 379, 392),                    # version
    ("src/apps/competitions/unpackers/v2.py", 8, 249),               # the competition, pages,
    # tasks, solutions, terms, phases, leaderboards (handed whole to LeaderboardSerializer)
    ("src/apps/competitions/unpackers/base_unpacker.py", 200, 229),  # image, queue
    ("src/apps/competitions/unpackers/base_unpacker.py", 315, 319),  # the leaderboards' serializer
    ("src/apps/api/serializers/leaderboards.py", 14, 29),            # ColumnSerializer fields
    ("src/apps/api/serializers/leaderboards.py", 47, 60),            # LeaderboardSerializer fields
    ("src/apps/leaderboards/models.py", 5, 28),                      # the submission rules
    ("src/apps/api/serializers/competitions.py", 287, 303),          # a fact sheet's questions
    # What happens to what the unpacker read (issue 32): the last phase marked final, and the
    # serializer that drops the mark (a read-only method field); the fact sheet stored as JSON
    # (PostgreSQL jsonb: its keys reordered), its questions on the leaderboard in that order,
    # and its answers checked only when some are sent.
    ("src/apps/competitions/unpackers/base_unpacker.py", 90, 91),
    ("src/apps/api/serializers/competitions.py", 23, 60),            # PhaseSerializer
    ("src/apps/competitions/models.py", 65, 65),                     # Competition.fact_sheet
    ("src/apps/competitions/models.py", 290, 290),                   # Phase.is_final_phase
    ("src/apps/api/serializers/submissions.py", 135, 149),           # the answers' validation
    ("src/apps/api/views/competitions.py", 776, 778),                # the leaderboard's questions
]

# In each reading function, the variable that holds one item of a kind ("" the top level,
# read through competition_yaml).
ITEM_VARS = {"_unpack_pages": ("pages", ("page",)),
             "_unpack_tasks": ("tasks", ("task",)),
             "_unpack_solutions": ("solutions", ("solution",)),
             "_unpack_phases": ("phases", ("phase_data", "p"))}
SERIALIZERS = {"ColumnSerializer": "columns", "LeaderboardSerializer": "leaderboards"}


def extract(git_dir, commit=COMMIT):
    """The extract's text, from a clone of codalab/codabench."""
    out = ["# codalab/codabench at {}: the code that reads a v2 competition.yaml, verbatim "
           "(tests/support/codabench_source.py)\n".format(commit)]
    for path, first, last in SOURCES:
        text = subprocess.run(["git", "--git-dir", git_dir, "show",
                               "{}:{}".format(commit, path)], check=True,
                              capture_output=True, text=True).stdout
        lines = text.split("\n")
        for number in range(first, last + 1):
            out.append("{}:{}:{}\n".format(path, number, lines[number - 1]))
    return "".join(out)


def source_lines(text):
    """[(path, line number, code)] of an extract."""
    rows = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        path, number, code = line.split(":", 2)
        rows.append((path, int(number), code))
    return rows


def _literals(code):
    return re.findall(r"""['"]([A-Za-z_]+)['"]""", code)


def read_keys(text):
    """{kind: set of keys} the extracted code reads: kind "" the top level, then pages,
    tasks, solutions, phases, leaderboards, columns."""
    keys = {k: set() for k in ("", "pages", "tasks", "solutions", "phases", "leaderboards",
                               "columns")}
    function, serializer, in_fields = "", "", False
    for _, _, code in source_lines(text):
        found = re.match(r"\s*def (\w+)", code)
        if found:
            function = found.group(1)
        found = re.match(r"class (\w+)", code)
        if found:
            serializer, in_fields = found.group(1), False
        for key in re.findall(r"""competition_yaml(?:\.get\(|\[)\s*['"](\w+)['"]""", code):
            keys[""].add(key)
        kind, names = ITEM_VARS.get(function, ("", ()))
        for var in names:
            pattern = (r"""\b{v}(?:\.get\(|\[)\s*['"](\w+)['"]|['"](\w+)['"] in {v}\b"""
                       .format(v=var))
            for a, b in re.findall(pattern, code):
                keys[kind].add(a or b)
        if function == "_unpack_tasks" and "for file_type in [" in code:
            keys["tasks"].update(_literals(code))  # each then read as `file_type in task`
        if serializer in SERIALIZERS and re.match(r"\s*fields = \(", code):
            in_fields = True
        elif in_fields:
            if code.strip() == ")":
                in_fields = False
            else:
                keys[SERIALIZERS[serializer]].update(_literals(code))
    return keys


def _leaderboard_models(text):
    """The code lines of leaderboards/models.py in the extract."""
    return [code for path, _, code in source_lines(text)
            if path.endswith("leaderboards/models.py")]


def _rule_names(lines):
    """Leaderboard's rule constants: {FORCE_BEST: "force_best", ...}."""
    names = {}
    for code in lines:
        found = re.match(r"""\s*([A-Z_]+) = ["'](\w+)["']$""", code)
        if found:
            names[found.group(1)] = found.group(2)
    return names


def submission_rules(text):
    """The values of Leaderboard.SUBMISSION_RULES (the serializer refuses any other)."""
    lines = _leaderboard_models(text)
    names, rules, inside = _rule_names(lines), [], False
    for code in lines:
        if "SUBMISSION_RULES = (" in code:
            inside = True
        elif inside and code.strip() == ")":
            inside = False
        elif inside:
            rules.append(names[re.match(r"\s*\((\w+),", code).group(1)])
    return rules


def auto_rules(text):
    """Leaderboard.AUTO_SUBMISSION_RULES: the rules under which the platform, not the
    participant, puts a submission on the leaderboard."""
    lines = _leaderboard_models(text)
    names = _rule_names(lines)
    for code in lines:
        found = re.match(r"\s*AUTO_SUBMISSION_RULES = \[(.*)\]", code)
        if found:
            return [names[n.strip()] for n in found.group(1).split(",")]
    return []


def fact_sheet_rules(text):
    """(a question's keys, the question types) validate_fact_sheet accepts."""
    sets = {}
    for path, _, code in source_lines(text):
        found = re.match(r"\s*(expected_keys|valid_question_types) = \{(.*)\}", code)
        if path.endswith("serializers/competitions.py") and found:
            sets[found.group(1)] = set(_literals(found.group(2)))
    return sets["expected_keys"], sets["valid_question_types"]


def _code(text, path_end):
    return [code for path, _, code in source_lines(text) if path.endswith(path_end)]


def final_phase_is_read_only(text):
    """True when PhaseSerializer declares is_final_phase a SerializerMethodField (read-only:
    what the unpacker sets is dropped) and the unpacker sets it on the last phase."""
    serializer = _code(text, "serializers/competitions.py")
    marks = _code(text, "unpackers/base_unpacker.py")
    return (any(re.match(r"\s*is_final_phase = serializers\.SerializerMethodField\(\)", c)
                for c in serializer) and
            any("['phases'][-1]['is_final_phase'] = True" in c for c in marks))


def fact_sheet_is_json(text):
    """True when Competition.fact_sheet is a JSONField (on PostgreSQL: jsonb)."""
    return any(re.match(r"\s*fact_sheet = models\.JSONField\(", c)
               for c in _code(text, "competitions/models.py"))


def answers_checked_only_when_sent(text):
    """True when the submission serializer checks the fact-sheet answers (required ones among
    them) only inside `if attrs.get('fact_sheet_answers'):`."""
    lines = _code(text, "serializers/submissions.py")
    guard = [i for i, c in enumerate(lines) if c.strip() == "if attrs.get('fact_sheet_answers'):"]
    required = [i for i, c in enumerate(lines) if "requires an answer" in c]
    if not guard or not required:
        return False
    indent = len(lines[guard[0]]) - len(lines[guard[0]].lstrip())
    return all(i > guard[0] and len(lines[i]) - len(lines[i].lstrip()) > indent
               for i in required) and all(
        len(c) - len(c.lstrip()) > indent for c in lines[guard[0] + 1:required[-1] + 1]
        if c.strip())


def committed():
    with open(EXTRACT, encoding="utf-8") as f:
        return f.read()


def git_dir():
    """A clone of codalab/codabench holding COMMIT, or None."""
    for candidate in (os.environ.get("CODABENCH_GIT_DIR"), MIRROR):
        if candidate and os.path.isdir(candidate) and subprocess.run(
                ["git", "--git-dir", candidate, "cat-file", "-e", COMMIT + "^{commit}"],
                capture_output=True).returncode == 0:
            return candidate
    return None


if __name__ == "__main__":
    sys.stdout.write(extract(sys.argv[1]))
