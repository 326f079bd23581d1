"""One pass of the engine's process pool over the test units for many submissions: each unit's
reference is read once, and every submission's prediction of it is read, checked and folded
into that submission's own state (task_api.py's loop, with one state per submission).

States are additive and merged as chunks arrive, as engine.evaluate does for one submission, so
the result is the same for any worker count and order.
"""
from typing import Any, Dict, List, NamedTuple, Sequence, Tuple

from .. import engine
from ..problems import ProblemLog
from ..task_api import PredictionProblem, ReferenceProblem

# (unit id, [(model index, prediction path, name shown in messages)])
Item = Tuple[str, List[Tuple[int, str, str]]]


class Scored(NamedTuple):
    states: List[Any]             # per model
    logs: List[ProblemLog]        # per model: problems of its predictions
    reference_log: ProblemLog
    units: int


def _score_chunk(context: Dict[str, Any], items: Sequence[Item]):
    reference, fmt, task = context["reference"], context["format"], context["task"]
    states = [task.new_state(context["config"]) for _ in range(context["models"])]
    logs = [ProblemLog() for _ in range(context["models"])]
    ref_log = ProblemLog()
    for unit_id, predictions in items:
        try:
            truth = reference.read(unit_id)
        except ReferenceProblem as exc:
            ref_log.add(exc.kind, exc.name, exc.detail)
            continue
        expectation = reference.expect(unit_id, truth)
        for model, path, shown in predictions:
            try:
                prediction = fmt.read(path, expectation)
            except PredictionProblem as exc:
                if exc.log is not None:
                    logs[model].merge(exc.log)
                else:
                    logs[model].add(exc.kind, shown, exc.detail)
                continue
            states[model].update_unit(unit_id, prediction, truth)
    return states, logs, ref_log, len(items)


def score_all(task, reference, fmt, config: Dict[str, Any], files: List[Dict[str, str]],
              shown: List[Dict[str, str]], workers: int, progress=None) -> Scored:
    """files[m]: unit id -> prediction path of model m; shown[m]: unit id -> its name in
    messages."""
    models = len(files)
    total = Scored([task.new_state(config) for _ in range(models)],
                   [ProblemLog() for _ in range(models)], ProblemLog(), 0)
    done = [0]
    units = sorted(set(u for f in files for u in f))
    items = [(u, [(m, files[m][u], shown[m][u]) for m in range(models) if u in files[m]])
             for u in units]

    def absorb(result) -> None:
        states, logs, ref_log, n = result
        for m in range(models):
            total.states[m].merge(states[m])
            total.logs[m].merge(logs[m])
        total.reference_log.merge(ref_log)
        done[0] += n
        if progress:
            progress(done[0])

    engine.map_chunks(_score_chunk, {"task": task, "reference": reference, "format": fmt,
                                     "config": config, "models": models},
                      engine.chunked(items, workers), workers, absorb)
    return Scored(total.states, total.logs, total.reference_log, done[0])
