"""Packing a reference (pack.py, bundle.sh): every unit of the raw reference is read with the
scorer's own checks and written in the task's packed form, one file per unit, over the usable
CPUs. A broken unit is collected, not raised, so the organizer sees every problem at once; the
task writes its manifest last, so an interrupted run never leaves something that looks packed.
"""
import os
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from . import engine
from .problems import ProblemLog
from .task_api import Reference, ReferenceProblem


def _convert_chunk(context: Dict[str, Any], ids: Sequence[str]) -> Tuple[ProblemLog, int, int]:
    reference, encode, folder = context["reference"], context["encode"], context["folder"]
    log, size = ProblemLog(), 0
    for unit_id in ids:
        try:
            data = encode(reference.read(unit_id))
        except ReferenceProblem as exc:
            log.add(exc.kind, exc.name, exc.detail)
            continue
        with open(os.path.join(folder, unit_id + ".png"), "wb") as f:
            f.write(data)
        size += len(data)
    return log, size, len(ids)


def convert_units(reference: Reference, folder: str, encode: Callable[[Any], bytes],
                  workers: int, progress: Optional[Callable[[int], None]] = None
                  ) -> Tuple[ProblemLog, int, int]:
    """folder/<unit id>.png = encode(reference.read(unit id)) for every unit (encode: a
    module-level function, pickled to the workers). Returns (problems, units, bytes written)."""
    os.makedirs(folder, exist_ok=True)
    log, totals = ProblemLog(), [0, 0]

    def absorb(result: Tuple[ProblemLog, int, int]) -> None:
        chunk_log, size, n = result
        log.merge(chunk_log)
        totals[0] += n
        totals[1] += size
        if progress:
            progress(totals[0])

    engine.map_chunks(_convert_chunk, {"reference": reference, "encode": encode,
                                       "folder": folder},
                      engine.chunked(list(reference.ids), workers), workers, absorb)
    return log, totals[0], totals[1]
