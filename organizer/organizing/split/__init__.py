"""A public/private split of a test set (issue 35, docs/bundle.md "A private part"): chosen once
on the organizer's machine, by the group the confidence intervals resample, reproducible from
the reference and a seed. The bundle builder (bundle.sh --private-share) ships the public
part's labels only; compare.py (--split, --part) and later the standings score either part with
the organizer's full reference.

    choose.py   which groups (and so which units) are private: the rule, the seed, the share
    grouping.py the group of each unit, as the task's intervals resample (Intervals.clusters)
    document.py split.json: written, read back, and the units of one part
    selection.py one part selected on the full reference (--split, --part): the reference and
                each submission's files cut to it
    side_by_side.py the other part scored, both rankings side by side, Kendall's tau, the page
"""
