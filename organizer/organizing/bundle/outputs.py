"""What a build writes outside its build folder, once every bundle passed: the bundles moved into
the output folder (and a word on other bundles already there), each track's starting kit
unpacked as participants get it (--kits), the repository's kit manifest refreshed from the
sample."""
import io
import os
import zipfile
from typing import Callable, List

from .parts import Built
from .refusal import human, shown

Say = Callable[[str], None]


def move_bundles(built: List[Built], out: str, say: Say) -> None:
    say("Built in {}:".format(shown(os.path.abspath(out))))
    for b in built:
        os.replace(b.path, os.path.join(out, b.name))
        say("  {:<44} {:>9}  {}".format(b.name, human(os.path.getsize(
            os.path.join(out, b.name))), b.what))
    others = other_bundles(out, [b.name for b in built])
    if others:
        say("WARNING: {} also holds bundles this build did not write: {}. Upload only the "
            "ones listed above (or remove the others).".format(
                shown(os.path.abspath(out)), ", ".join(others)))


def other_bundles(out: str, built: List[str]) -> List[str]:
    """Bundle zips in `out` that this build did not write (another edition's, another
    competition's): easy to upload by mistake beside the new ones."""
    return sorted(n for n in os.listdir(out) if n.endswith(("-codalab.zip", "-codabench.zip"))
                  and n not in built)


def update_kit_manifest(path: str, manifest: bytes, say: Say) -> None:
    """Keep the repository's kit manifest (source.json "repo_manifest") equal to the sample's
    (the kit's tools use it when run from the repository)."""
    current = None
    if os.path.isfile(path):
        with open(path, "rb") as f:
            current = f.read()
    if current != manifest:
        with open(path, "wb") as f:
            f.write(manifest)
        say("Updated {} from the sample reference.".format(shown(path)))


def write_kits(built: List[Built], out: str, folder: str, say: Say) -> None:
    """Each track's starting kit as participants unpack it from the built bundle: folder/<track>/
    (a merged bundle's kit, which holds every track's: folder/merged/)."""
    written: List[str] = []
    for b in built:
        name = b.tracks[0] if len(b.tracks) == 1 else "merged"
        if name in written:
            continue
        with zipfile.ZipFile(os.path.join(out, b.name)) as bundle_zip:
            kit = io.BytesIO(bundle_zip.read("starting_kit.zip"))
        with zipfile.ZipFile(kit) as kit_zip:
            kit_zip.extractall(os.path.join(folder, name))
        written.append(name)
    say("Starting kits in {}: {} (each as participants unpack its starting_kit.zip)".format(
        shown(os.path.abspath(folder)), ", ".join(n + "/" for n in written)))
