"""Each platform as one model: CodaLab (its v1 worker, its v1.5 competition bundles) and
Codabench (its worker, its v2 bundles and its importer of v1.5 ones).

A model answers, by the platform's own code (docs/bundle.md cites it): how its worker unpacks a
scoring program, a reference and a submission, lays out the run folder and runs the program's
command, under which time limit, how it reads the scores and shows the leaderboard row, which
submission the leaderboard keeps, which phase takes a submission now, and what its competition
bundle's definition must hold. The kit's dry run (dry_run.py) and the organizer's bundle check
(bundle.sh) use the same models, so a platform's behaviour has one home:

    registry.py      the models by name, and the model a competition.yaml is written for
    model.py         what every model answers (Platform), and the shared defaults
    worker.py        what both workers do alike: the run folder, unpacking, running a command
    codalab.py       CodaLab's worker and site (CODALAB)
    codabench.py     Codabench's worker and site (CODABENCH)
    codalab_definition.py, codabench_definition.py
                     each platform's reading of its competition.yaml: phases and dates, the
                     leaderboard rule, and what its unpacker refuses or silently gets wrong
    definition.py    what both definitions' checks share: the report, the bundle's members
    leaderboard.py   the leaderboard rules in participants' words
    dates.py         dates as both platforms read them (naive UTC), and "now" (BUNDLE_NOW)
    yaml_text.py     small YAML files as the platforms read them, PyYAML optional

It ships in every starting kit beside dry_run.py: Python 3.7+ and the standard library (PyYAML
used when installed), plus the scoring program's own zips module, which the kit ships too.
"""
