"""OCSR memory check: peak RSS of `chemgauge ocsr run` at 10/50/100% of N images.

The input is N cases drawn (seeded) from the review's real JPO and CLEF images in
../shared/data/ocsr_review (extracted to a temporary folder, never into the repository),
each with its reference molfile. The recognizer answers from the review's archived OSRA
output for that image (a table keyed by image hash, behind the ``python`` back-end), so the
run measures chemgauge's own memory (plan, journal, scoring, graph diff, report, HTML), not
OSRA's. Each size runs the real CLI in a fresh process; peak RSS comes from getrusage over
the child processes. Target: peak RSS at 100% at most 1.2x that at 10%.

    .venv/bin/python bench/scale_ocsr.py [--n 3000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tarfile
import tempfile
from pathlib import Path

from peak_rss import measure_command
from result_files import add_record_options, peak_rss_figure, record_path, write_result

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))
ASSETS = DATA / "ocsr_review" / "assets"
SETS = ("JPO", "CLEF")


# The CLI with a recognizer answering from the archived-output table (argv[1]).
_DRIVER = """
import hashlib, json, sys
from pathlib import Path
TABLE = json.loads(Path(sys.argv.pop(1)).read_text())
def recognize(image):
    return TABLE.get(hashlib.sha256(image.read_bytes()).hexdigest(), "")
from chemgauge.cli import app
app(sys.argv[1:])
"""


def _extract(archive: Path, dest: Path) -> Path:
    with tarfile.open(archive, "r:*") as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        tar.extractall(dest, members=members, filter="data")
    (folder,) = {Path(m.name).parts[0] for m in members}
    return dest / folder


def _utf8(path: Path) -> bool:
    try:
        path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _pool(folder: Path) -> tuple[list[object], dict[str, str]]:
    """Every real image as a case (via the importer), and its archived OSRA output by hash."""
    from chemgauge.families.ocsr.external import import_image_set
    from chemgauge.families.ocsr.review import iter_tar_molfiles

    cases: list[object] = []
    answers: dict[str, str] = {}
    for name in SETS:
        images = _extract(ASSETS / "images" / f"{name}.tar.gz", folder / "images")
        references = _extract(ASSETS / "reference" / f"{name}_mol_ref.tar.gz", folder / "refs")
        manifest = import_image_set(
            images, references, folder / f"{name}.json", name=name, attribution=name, licence="MIT"
        )
        osra = {
            stem: text
            for tool, stem, text in iter_tar_molfiles(ASSETS / "results" / f"{name}.tar.gz")
            if tool == "osra"
        }
        for case in manifest.cases:
            if case.reference is not None and not _utf8(folder / case.reference.molfile):
                continue  # the importer reads it leniently, the manifest loader does not
            cases.append(case)
            answers[case.sha256] = osra.get(case.id, "")
    return cases, answers


def build_input(path: Path, n: int, seed: int) -> None:
    """A manifest of ``n`` cases at ``path`` (real images drawn with replacement, each case
    with its own id) and the recognizer's answer table beside it."""
    from chemgauge.families.ocsr.manifest import Case, Manifest, write_manifest

    folder = path.parent
    cases, answers = _pool(folder)
    rng = random.Random(seed)
    chosen: list[Case] = []
    for i in range(n):
        case = cases[rng.randrange(len(cases))]
        assert isinstance(case, Case)
        chosen.append(case.model_copy(update={"id": f"{case.id}-{i}"}))
    write_manifest(Manifest(name=f"ocsr-scale-{n}", cases=chosen, root=folder), path)
    path.with_suffix(".answers.json").write_text(json.dumps(answers))


def run(path: Path, jobs: int) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one `chemgauge ocsr run` in a fresh process."""
    out = path.with_suffix(".results")
    cmd = [sys.executable, "-c", _DRIVER, str(path.with_suffix(".answers.json"))]
    cmd += ["ocsr", "run", "--manifest", str(path), "--model", "python"]
    cmd += ["--callable", "__main__:recognize", "--run", "--restart", "-q"]
    cmd += ["--jobs", str(jobs), "--out", str(out)]
    return measure_command(cmd, "ocsr run")


def _slice(full: Path, part: Path, count: int) -> None:
    """The first ``count`` cases of the full manifest (same images, same answers)."""
    data = json.loads(full.read_text())
    data["cases"] = data["cases"][:count]
    data["name"] = f"{data['name']}[:{count}]"
    part.write_text(json.dumps(data))
    part.with_suffix(".answers.json").write_bytes(full.with_suffix(".answers.json").read_bytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000, help="cases at 100%%")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--jobs", type=int, default=2)
    add_record_options(parser)
    args = parser.parse_args()
    print(f"# bench/scale_ocsr.py  {os.cpu_count()} cores  n={args.n}", flush=True)
    with tempfile.TemporaryDirectory(prefix="chemgauge-scale-ocsr-") as tmp:
        full = Path(tmp) / "full.json"
        build_input(full, args.n, args.seed)
        print(f"{'fraction':>9}{'cases':>8}{'wall s':>9}{'cases/s':>9}{'peak RSS MiB':>14}")
        rss: dict[float, int] = {}
        for fraction in (0.1, 0.5, 1.0):
            count = int(args.n * fraction)
            part = Path(tmp) / f"part-{count}.json"
            _slice(full, part, count)
            wall, peak = run(part, args.jobs)
            rss[fraction] = peak
            print(
                f"{fraction:>9.0%}{count:>8}{wall:>9.1f}{count / wall:>9.1f}{peak / 1024:>14.0f}",
                flush=True,
            )
        print(f"peak RSS 100% / 10%: {rss[1.0] / rss[0.1]:.2f}x (target <= 1.2x)")
    path = record_path(args, "scale_ocsr", full_size=args.n >= 3000)
    if path is not None:
        write_result(
            "scale_ocsr",
            title="Peak memory of an OCSR run from 10% to 100%",
            method=(
                f"chemgauge ocsr run (--jobs {args.jobs}, HTML report on) on {args.n:,} real "
                "JPO and CLEF images answered from the review's archived OSRA output (so the "
                "run measures chemgauge, not OSRA), at 10%, 50% and 100%; peak RSS over the "
                "child processes."
            ),
            figures=[peak_rss_figure("ocsr", f"{args.n:,} images", rss[0.1], rss[1.0])],
            path=path,
        )


if __name__ == "__main__":
    main()
