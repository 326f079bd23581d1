"""Final packages for the tests of verify.py and check_final.py: a package laid out as the rules
say (results/ of the small reference's images, code/, models/ with a fixture, a report), and
the hostile pickles the tests of issue 32 put in them (live: Python's own unpickler runs them)."""
import os
import shutil
import struct
import zipfile

import numpy as np
from PIL import Image

import torch_files as tf
from agrivision_data import SMALL_IDS, SMALL_SIZE

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "verify",
                        "fixtures")
PDF = b"%PDF-1.4\n1 0 obj << /Type /Pages /Kids [] /Count 4 >> endobj\n%%EOF\n"


def predictions(folder, seed=1):
    os.makedirs(str(folder), exist_ok=True)
    rng = np.random.RandomState(seed)
    for i in SMALL_IDS:
        Image.fromarray(rng.randint(0, 9, SMALL_SIZE).astype(np.uint8)).save(
            os.path.join(str(folder), i + ".png"))
    return folder


def package(tmp_path, name="final", results=True, code=True, models=True, report=PDF,
            model_file="training_checkpoint.ckpt", as_zip=True):
    top = tmp_path / name / "submission"
    top.mkdir(parents=True)
    if results:
        predictions(top / "results")
    if code:
        (top / "code").mkdir()
        (top / "code" / "infer.py").write_text("print('infer')\n")
    if models:
        (top / "models").mkdir()
        if model_file:
            shutil.copy(os.path.join(FIXTURES, model_file), str(top / "models"))
    if report is not None:
        (top / "challenge_report.pdf").write_bytes(report)
    if not as_zip:
        return tmp_path / name
    path = tmp_path / (name + ".zip")
    with zipfile.ZipFile(str(path), "w") as zf:
        for folder, _, files in os.walk(str(tmp_path / name)):
            for f in sorted(files):
                full = os.path.join(folder, f)
                zf.write(full, os.path.relpath(full, str(tmp_path / name)))
    return path


def protocol0(command):
    """os.system(command) as protocol 0 writes it: text only, no \\x80 header."""
    return "cos\nsystem\n(S'{}'\ntR.".format(command).encode()


def protocol1(command):
    return b"cos\nsystem\nq\x00(X" + struct.pack("<I", len(command)) + command.encode() + \
        b"tq\x01Rq\x02."


# torch.hub._load_local(".", "evil"): imports ./hubconf.py
HUB = tf.PROTO + tf.glob("torch.hub", "_load_local") + tf.MARK + tf.text(".") + \
    tf.text("evil") + tf.TUPLE + tf.REDUCE + tf.STOP
