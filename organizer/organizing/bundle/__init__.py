"""The bundle builder (bash bundle.sh: command.py) and the bundle check (check.py, alone:
organizer/bundle_check.py): a competition's source into one bundle zip per platform and track,
each checked against what the platform's unpacker refuses or gets wrong, dry-run with the
sample submission, and a plan of what to upload where.

    source.py          a competition as its source.json describes it
    schedule.py        the organizer's dates: phases moved, post-challenge, Development phase
    tracks.py          every track's v1.5 competition yaml (base definition + overlay)
    to_codabench.py    a track's v2 yaml derived from its v1.5 form; the merged v2 bundle's
    settings.py        what the organizer chooses: leaderboard rule, registration, fact sheet...
    pages.py           the pages' template tokens, from the phases and the bundled reference
    reference.py       the reference opened, packed and described as the scorer does
    kit.py             a track's starting kit and its phase.json
    placeholder.py     the kit's sample submission for an organizer's own reference
    parts.py           one track's zips built; a bundle's files and page tokens
    build.py           every track's bundle for each platform
    merged.py          the merged Codabench bundle (--merged)
    reproducible_zip.py  zips that are the same bytes for the same tree
    check.py           the bundle check: the platform model's rules on the definition, then
                       what crosses the bundle's parts; member_zips.py: its program,
                       reference and kit zips, and the score keys its program writes
    smoke.py           the sample submission dry-run through every bundle (kit/dry_run.py)
    plan.py            which zip to upload where, what participants meet, when phases open
    outputs.py         the bundles, kits and kit manifest written once everything passed
    refusal.py         Refused (nothing written), and how messages show paths and sizes
    command.py         bundle.sh's command line (organizer/bundle.py): options, then the above

What each platform does (its worker, its site, what its definition must hold) is its model's,
in kit/platforms/, which the kit's dry run uses too.
"""
