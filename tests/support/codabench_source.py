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
    # After the deadline (organizer/organizing/platform_files/, docs/standings.md):
    ("src/settings/base.py", 124, 127),                              # TIME_ZONE = 'UTC'
    ("src/apps/competitions/models.py", 326, 345),                   # the limits, per account
    ("src/apps/api/views/submissions.py", 449, 458),                 # bulk download's names
    ("src/static/riot/competitions/detail/submission_manager.tag", 657, 657),  # browser's rename
    ("src/static/riot/competitions/detail/submission_manager.tag", 688, 699),  # failed.txt, zip
    ("src/apps/api/views/competitions.py", 427, 447),                # results: rows and columns
    ("src/apps/api/views/competitions.py", 496, 506),                # results: the CSV
    ("src/apps/api/serializers/submissions.py", 22, 59),             # /api/submissions/ fields
    ("src/apps/api/serializers/competitions.py", 507, 522),          # /api/participants/ fields
    ("src/apps/api/urls.py", 75, 75),                                # results.csv: a format suffix
    ("src/static/riot/competitions/detail/submission_manager.tag", 14, 25),   # the buttons
    ("src/static/js/ours/client.js", 117, 120),                      # Download as CSV's URL
    ("src/static/riot/competitions/detail/participant_manager.tag", 224, 245),  # participants.csv
    # What the submissions API shows, and to whom (bundle.sh --private-share: why a private
    # part's labels never go to the platform, docs/bundle.md)
    ("src/apps/api/views/submissions.py", 28, 30),                   # SubmissionViewSet
    ("src/apps/api/views/submissions.py", 106, 166),                 # its serializer, queryset
    # SubmissionSerializer.scores: in the lines 22-59 above
    ("src/apps/api/serializers/submission_leaderboard.py", 8, 14),   # a score's fields
    # How a phase of several tasks shows its leaderboard (the merged bundle's column titles)
    ("src/apps/competitions/unpackers/base_unpacker.py", 321, 324),  # every phase: the first
    ("src/apps/api/views/competitions.py", 854, 865),                # each task: every column
    ("src/static/riot/competitions/detail/leaderboards.tag", 29, 39),  # task row, titles
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
    out = ["# codalab/codabench at {}: the code that reads a v2 competition.yaml, what the "
           "submissions API shows, and what an organizer downloads after the deadline, verbatim "
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
# ---- After the deadline: the platform's own lines, run on stand-ins for its objects ----------

def _block(text, path, first, last):
    """The extract's lines first..last of path, dedented to run on their own."""
    import textwrap
    lines = [code for p, n, code in source_lines(text) if p == path and first <= n <= last]
    return textwrap.dedent("\n".join(lines))


def bulk_name(text, sub):
    """The name download_many gives one submission (sub: a stand-in with id, owner, phase.id,
    data.created_when, data.data_file.name), renamed as the browser's zip renames it."""
    scope = {"sub": sub}
    exec(_block(text, "src/apps/api/views/submissions.py", 452, 453), scope)
    js = [code for p, _, code in source_lines(text) if p.endswith("submission_manager.tag")
          and ".replace(/" in code][0]
    found = re.search(r"replace\(/(\[.*?\])/g, \"(.)\"\)", js)
    return re.sub(found.group(1), found.group(2), scope["short_name"])


class _Query(list):
    """Enough of a Django queryset for can_user_make_submissions (and no more)."""

    def _match(self, sub, key, value):
        if key == "parent__isnull":
            return (sub["parent"] is None) == value
        if key == "created_when__date":
            return sub["created_when"].date() == value
        return sub[key] == value

    def filter(self, **kw):
        return _Query(s for s in self if all(self._match(s, k, v) for k, v in kw.items()))

    def exclude(self, **kw):
        return _Query(s for s in self if not all(self._match(s, k, v) for k, v in kw.items()))

    def count(self):
        return len(self)


def can_user_make_submissions(text, submissions, user, at, per_day, total):
    """Phase.can_user_make_submissions, run on dicts {owner, parent, status, created_when}
    (aware UTC datetimes) at the moment `at`: (allowed, reason)."""
    import types
    code = _block(text, "src/apps/competitions/models.py", 326, 345)
    scope = {"now": lambda: at}
    exec(code, scope)
    phase = types.SimpleNamespace(
        has_max_submissions=True, max_submissions_per_day=per_day,
        max_submissions_per_person=total, submissions=_Query(submissions),
        competition=types.SimpleNamespace(allow_robot_submissions=False))
    return scope["can_user_make_submissions"](phase, _User(user))


class _User(str):
    """A username that is also the account (`owner=user` compares it with the owner)."""
    is_bot = False


def results_csv(text, leaderboard_title, column_titles, phase):
    """The results CSV CompetitionViewSet.results writes for one phase: phase = {"id", "name",
    "tasks": [{"id", "name"}], "submissions": [{"owner", "parent", "id", "task",
    "fact_sheet_answers", "scores": [{"column_key", "score"}]}]}; column_titles {key: title}."""
    import collections
    import csv as csv_module
    import io as io_module
    import types
    columns = [types.SimpleNamespace(key=k, title=t) for k, t in column_titles.items()]
    leaderboard = types.SimpleNamespace(title=leaderboard_title, columns=types.SimpleNamespace(
        all=lambda: columns))
    scope = {"submission_query": [phase], "leaderboard": leaderboard,
             "OrderedDict": collections.OrderedDict}
    exec(_block(text, "src/apps/api/views/competitions.py", 427, 446), scope)
    body = _block(text, "src/apps/api/views/competitions.py", 498, 505)
    out = io_module.StringIO(newline="")
    scope.update(csv=csv_module, response=out,
                 data=scope["leaderboard_data"],
                 leaderboard_title=list(scope["leaderboard_data"])[0])
    exec(body, scope)
    return out.getvalue()


def participants_csv(text, participants):
    """The participants tab's "Download all participants" file, as its JavaScript writes it:
    participants = [{id, username, email, is_bot, status}]."""
    code = "\n".join(c for p, _, c in source_lines(text) if p.endswith("participant_manager.tag"))
    headers = _literals_any(re.search(r"const headers = \[(.*?)\];", code).group(1))
    fields = re.findall(r"^\s*p\.(\w+)", code, re.M)            # the row's fields, in order
    rows = [headers] + [[("Yes" if p[f] else "No") if f == "is_bot" else p[f] for f in fields]
                        for p in participants]
    # .map(v => `"${(v ?? '').toString().replace(/"/g, '""')}"`).join(','), rows joined by \n
    return "\n".join(",".join('"{}"'.format(str(v).replace('"', '""')) for v in r)
                     for r in rows)


def _literals_any(code):
    return re.findall(r"""['"]([^'"]*)['"]""", code)


def submissions_api(text):
    """What the extract's submissions API shows: {"permission_classes": the viewset's value,
    "anonymous_filter": the filter of the queryset a GET without login gets (its keyword
    arguments), "anonymous_prefetch": what that queryset prefetches, "score_fields": the
    fields of each score a submission shows}."""
    facts = {"anonymous_filter": [], "anonymous_prefetch": []}
    where = ""
    for path, _, code in source_lines(text):
        if not path.endswith(("views/submissions.py", "serializers/submissions.py",
                              "submission_leaderboard.py")):
            continue
        found = re.match(r"\s*permission_classes = (.*)$", code)
        if found:
            facts["permission_classes"] = found.group(1).strip()
        if "if not self.request.user.is_authenticated:" in code:
            where = "filter"
        elif where and "# Check if admin" in code:
            where = ""
        elif where == "filter" and ".prefetch_related(" in code:
            where = "prefetch"
        elif where == "filter":
            found = re.match(r"\s*(\w+=[\w.]+),?$", code)
            if found:
                facts["anonymous_filter"].append(found.group(1))
        elif where == "prefetch":
            facts["anonymous_prefetch"] += _literals(code)
        found = re.match(r"\s*fields = \((.*)\)", code)
        if found and path.endswith("submission_leaderboard.py"):
            facts["score_fields"] = _literals(found.group(1))
        found = re.match(r"\s*scores = (\w+)\(many=True\)", code)
        if found and path.endswith("serializers/submissions.py"):
            facts["submission_scores"] = found.group(1)
    return facts


def phases_use_the_first_leaderboard(text):
    """True when the unpacker attaches every phase to the yaml's first leaderboard (the others
    are saved, and shown by no phase)."""
    code = _code(text, "unpackers/base_unpacker.py")
    return any(re.search(r"for phase in self\.competition\['phases'\]", c) for c in code) and \
        any("phase['leaderboard'] = self.competition['leaderboards'][0].id" in c for c in code)


def every_column_under_each_task(text):
    """True when the leaderboard page gives each task of the phase a group of every column of
    the leaderboard, titled with the task's name, each column by its own title."""
    view = _code(text, "api/views/competitions.py")
    tag = _code(text, "detail/leaderboards.tag")
    return any("'colWidth': len(columns)," in c for c in view) and \
        any("for col in columns:" in c for c in view) and \
        any('colspan="{ task.colWidth }">{ task.name }</th>' in c for c in tag) and \
        any("{column.title}</th>" in c for c in tag)


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
