"""The starting kit's sample submission when the bundle carries the organizer's own reference.

The repository's sample submission matches the sample reference only: in a kit built from the
real test labels, `check_submission.py sample_submission` (the kit README's first command) would
report every file unmatched. So such a kit gets a placeholder made from the test set's public
facts (the manifest: image names and sizes, label ids; the question ids): one constant label
image per test image, or the answer "yes" to every test question. It passes every check and is
scored (low): a format example, not a method, and nothing in it comes from the labels.
"""
import io
import json
import os
from typing import Any, Dict, Tuple

PLACEHOLDER_ANSWER = "yes"


def write_placeholder(manifest: Dict[str, Any], folder: str) -> Tuple[int, str]:
    """Write the placeholder into folder; (count, what) for the build's log."""
    os.makedirs(folder, exist_ok=True)
    if "images" in manifest:
        import numpy as np
        from PIL import Image
        # The lowest id the predictions may hold (Agriculture-Vision: 0, background).
        ids = [int(i) for i in manifest.get("label_ids", [0]) if int(i) >= 0]
        label = min(ids) if ids else 0
        encoded: Dict[Tuple[int, int], bytes] = {}
        for name, (width, height) in sorted(manifest["images"].items()):
            if (width, height) not in encoded:   # one encoding per size: the files are alike
                buf = io.BytesIO()
                Image.fromarray(np.full((height, width), label, np.uint8), "L").save(buf, "PNG")
                encoded[(width, height)] = buf.getvalue()
            with open(os.path.join(folder, name + ".png"), "wb") as f:
                f.write(encoded[(width, height)])
        return len(manifest["images"]), "images, every pixel label {}".format(label)
    if "question_ids" in manifest:
        results = [{"question_id": int(q), "answer": PLACEHOLDER_ANSWER}
                   for q in manifest["question_ids"]]
        with open(os.path.join(folder, "results.json"), "w", encoding="utf-8") as f:
            json.dump(results, f)
            f.write("\n")
        return len(results), "answers, each {!r}".format(PLACEHOLDER_ANSWER)
    raise ValueError("no placeholder submission for a manifest with keys {}".format(
        ", ".join(sorted(manifest))))
