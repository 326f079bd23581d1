"""Break the code on purpose, one way at a time, and check that a test fails (issue 7 section 6).

    python3 tests/mutants.py [NAME_PART ...]

Each mutation replaces one exact piece of source (it must occur once), runs the tests that must
catch it, prints CAUGHT or MISSED, and restores the file. Not collected by pytest: it edits the
sources while it runs. Add a line here with every new metric, report or guard.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SP = "scoring_program/scoring/"
# (name, file, exact source, its replacement, the pytest arguments that must fail)
MUTATIONS = [
    ('FP and FN swapped',
     SP + 'tasks/agrivision/metric.py',
     '    return tp, fp, fn\n',
     '    return tp, fn, fp\n',
     'tests/tasks/agrivision/test_agrivision_reports.py'),
    ('HTML confusion transposed',
     SP + 'tasks/agrivision/task.py',
     '(summary["tp"], summary["fp"], summary["fn"]), summary["confusion"],',
     '(summary["tp"], summary["fp"], summary["fn"]), [list(r) for r in zip(*summary["confusion"])],',
     'tests/tasks/agrivision/test_agrivision_reports.py'),
    ('TP and FN swapped in console table',
     SP + 'tasks/agrivision/task.py',
     'zip(CLASSES, summary["tp"], summary["fp"], summary["fn"])',
     'zip(CLASSES, summary["fn"], summary["fp"], summary["tp"])',
     'tests/tasks/agrivision/test_agrivision_reports.py'),
    ('zip-slip guard removed',
     SP + 'submission/archive.py',
     '        if not (target == dest_real or target.startswith(dest_real + os.sep)):',
     '        if False:',
     'tests/core/test_hostile_inputs.py -k zip_slip'),
    ('packed CRC check removed',
     SP + 'readers/png.py',
     '            if not crc_ok(kind, body, crc):\n                return None',
     '            pass',
     'tests/tasks/agrivision/test_agrivision_packed.py'),
    ('packed index beyond table accepted',
     SP + 'tasks/agrivision/packed.py',
     '    if coded.labels.size and int(coded.labels.max()) >= len(coded.table):',
     '    if False:',
     'tests/tasks/agrivision/test_agrivision_packed.py'),
    ('VQA packed CRC-32 not verified',
     SP + 'tasks/planetscapes_vqa/packed.py',
     '    if zlib.crc32(data) != crc:',
     '    if False:',
     'tests/tasks/planetscapes_vqa/test_planetscapes_vqa_packed.py -k checksum'),
    ('VQA packed size not verified',
     SP + 'tasks/planetscapes_vqa/packed.py',
     '    if len(data) != size:',
     '    if False:',
     'tests/tasks/planetscapes_vqa/test_planetscapes_vqa_packed.py -k damaged'),
    ('VQA packed forms table rotated in the reader',
     SP + 'tasks/planetscapes_vqa/packed.py',
     '    flat = _look_up(table, _read_ints(',
     '    flat = _look_up(table[1:] + table[:1], _read_ints(',
     'tests/tasks/planetscapes_vqa/test_planetscapes_vqa_packed.py -k equals_raw'),
    ('VQA packed twins not written',
     SP + 'tasks/planetscapes_vqa/packed.py',
     '        "twins": [[i, list(classes)] for i, classes in sorted(truth.twins.items())],',
     '        "twins": [],',
     'tests/tasks/planetscapes_vqa/test_planetscapes_vqa_packed.py -k round_trip'),
    ('VQA packed manifest count not compared',
     SP + 'tasks/planetscapes_vqa/packed.py',
     '    if len(twins) != n_twins:',
     '    if False:',
     'tests/tasks/planetscapes_vqa/test_planetscapes_vqa_packed.py -k damaged'),
    ('VQA packed questions.json not compared',
     SP + 'tasks/planetscapes_vqa/packed.py',
     '    if questions.keys() != set(truth.qids):',
     '    if False:',
     'tests/tasks/planetscapes_vqa/test_planetscapes_vqa_packed.py -k damaged'),
    ('VQA pack does not read back',
     SP + 'tasks/planetscapes_vqa/packed.py',
     '    differ = [f for f in FIELDS if getattr(again, f) != getattr(truth, f)]',
     '    differ = []',
     'tests/tasks/planetscapes_vqa/test_planetscapes_vqa_packed.py -k reads_back'),
    ('direct decode trusted when Pillow replaced the memory',
     SP + 'readers/pillow_array.py',
     '        if img.im is target.im:',
     '        if True:',
     'tests/core/test_pillow_array.py'),
    ('direct decode into the array skipped (array left empty)',
     SP + 'readers/pillow_array.py',
     '        img.im = target.im\n        img.load()\n        if img.im is target.im:',
     '        img.load()\n        if True:',
     'tests/core/test_pillow_array.py'),
    ('mode 1 mishandled (bytes viewed, not compared)',
     SP + 'readers/png_labels.py',
     '        return (arr.view(np.uint8) != 0).view(np.uint8)\n    scale',
     '        return arr.view(np.uint8)\n    scale',
     'tests/core/test_hostile_inputs.py -k bit_depth'),
    ('low depths not unscaled',
     SP + 'readers/png_labels.py',
     '        arr = _stored_samples(arr, header.bit_depth)',
     '        pass',
     'tests/core/test_hostile_inputs.py -k bit_depth'),
    ('unknown task in config.yaml -> exit 4',
     SP + 'config.py',
     '    if not isinstance(name, str) or name not in known:',
     '    if not isinstance(name, str):',
     'tests/core/test_hostile_inputs.py -k config'),
    ('config.yaml in a wrapped reference ignored',
     SP + 'config.py',
     '        sub = sole_subfolder(ref_dir)\n',
     '        sub = None\n',
     'tests/core/test_hostile_inputs.py -k config'),
    ('cgroup quota rounded up',
     SP + 'engine.py',
     'max(1, int(quota) // int(period))',
     'max(1, -(-int(quota) // int(period)))',
     'tests/core/test_command.py -k cgroup'),
    ('second IHDR not checked',
     SP + 'readers/png_labels.py',
     '        if img.size != (header.width, header.height) or \\\n'
     '                img.mode not in png.pillow_modes(header) or rawmode != png.pillow_rawmode(header):',
     '        if False:',
     'tests/core/test_png_label_checks.py -k ihdr'),
    ('size cap removed',
     SP + 'readers/png_labels.py',
     '            if size > cap:',
     '            if False:',
     'tests/core/test_png_label_checks.py -k padded'),
    ('links followed',
     SP + 'readers/png_labels.py',
     '    what = _kind_of_file(st.st_mode)\n    if what == "a folder":',
     '    what = _kind_of_file(os.stat(path).st_mode)\n    if what == "a folder":',
     'tests/core/test_png_label_checks.py -k symlink'),
    ('names not escaped',
     SP + 'problems.py',
     '        name, detail = shown(name), shown(detail)\n',
     '',
     'tests/core/test_hostile_inputs.py -k hostile_name'),
    ('stale scores kept',
     SP + 'cli.py',
     '                os.makedirs(paths["out"], exist_ok=True)\n'
     '                clear_outputs(paths["out"])\n',
     '                os.makedirs(paths["out"], exist_ok=True)\n',
     'tests/core/test_hostile_inputs.py -k earlier'),
    ('a bug while decoding blamed on the participant',
     SP + 'readers/png_labels.py',
     '        except IMAGE_ERRORS as exc:\n            raise _corrupt(exc) from None',
     '        except Exception as exc:\n            raise _corrupt(exc) from None',
     'tests/core/test_honest_errors.py'),
    ('a bug while reading a reference layer blamed on the organizers',
     SP + 'tasks/agrivision/reference.py',
     '    except IMAGE_ERRORS as exc:',
     '    except Exception as exc:',
     'tests/core/test_honest_errors.py'),
    ('bootstrap: BTRS without its half-unit shift',
     SP + 'metrics/bootstrap.py',
     '    c = n * p + 0.5\n',
     '    c = n * p\n',
     'tests/core/test_bootstrap.py'),
    ('bootstrap: group chain with the unconditional probability',
     SP + 'metrics/bootstrap.py',
     'binomial(rand, left_n, size / left_units)',
     'binomial(rand, left_n, size / n)',
     'tests/core/test_bootstrap.py'),
    ('interval: an Agriculture-Vision miss counts one FP per pixel, not one per label',
     SP + 'tasks/agrivision/metric.py',
     'w[s, x, N_CLASSES + x] += len(ys)',
     'w[s, x, N_CLASSES + x] += 1',
     'tests/tasks/agrivision/test_agrivision_confidence.py'),
    ('interval: VQA questions resampled in the reference order, not by id',
     SP + 'tasks/planetscapes_vqa/metric.py',
     'pairs = sorted((q, n) for qids, ns in self.question_rows',
     'pairs = list((q, n) for qids, ns in self.question_rows',
     'tests/tasks/planetscapes_vqa/test_planetscapes_vqa_confidence.py'),
    ('interval: Planetscapes FP over every reference row, ignored ones included',
     SP + 'tasks/planetscapes_semantic/intervals.py',
     '    fp = m[ev][:, ev].sum(axis=0) - tp\n',
     '    fp = m[:, ev].sum(axis=0) - tp\n',
     'tests/tasks/planetscapes_semantic/test_planetscapes_semantic_confidence.py'),
    ('compare: a tie counted as a win',
     SP + 'compare/paired.py',
     '    return a is not None and (b is None or a > b)',
     '    return a is not None and (b is None or a >= b)',
     'tests/compare'),
    ('compare: CSV injection guard removed',
     SP + 'compare/outputs.py',
     '    return "\'" + text if text.startswith(FORMULA_STARTS) else text',
     '    return text',
     'tests/compare/test_compare.py -k inject'),
]


def main(only) -> int:
    missed = 0
    for name, path, old, new, tests in MUTATIONS:
        if only and not any(o in name for o in only):
            continue
        full = os.path.join(ROOT, path)
        with open(full) as f:
            src = f.read()
        assert src.count(old) == 1, (name, src.count(old))
        with open(full, "w") as f:
            f.write(src.replace(old, new))
        try:
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p",
                                   "no:cacheprovider"] + tests.split(), cwd=ROOT,
                                  capture_output=True, text=True, timeout=900)
        finally:
            with open(full, "w") as f:
                f.write(src)
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        failed = [line[7:] for line in lines if line.startswith("FAILED")]
        missed += not proc.returncode
        print("%-48s %s  %s | %s" % (name, "CAUGHT" if proc.returncode else "MISSED", tests,
                                     (failed or lines[-1:] or [""])[0][:100]), flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
