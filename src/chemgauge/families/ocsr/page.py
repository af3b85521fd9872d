"""A self-contained HTML page: each image beside its reference and predicted structures.

The page has the style of the other report pages and the report's headline (completed exact
graphs over the planned attempts with a finite reference, per policy).

Atoms and bonds named by localized errors are highlighted on both drawings; statuses,
validation, per-policy verdicts and the raw back-end message are shown for every attempt.
The page is written card by card (:func:`write_html`), so rows stream from the rows file and
only a bounded cache of reference drawings is kept.
"""

from __future__ import annotations

import base64
import html
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from chemgauge.errors import ImageRefusedError, InputFileError
from chemgauge.eval.atomic import atomic_open
from chemgauge.eval.images import read_image_header
from chemgauge.families.ocsr.adapter import policy_rates
from chemgauge.families.ocsr.evaluate import candidate_mol
from chemgauge.families.ocsr.manifest import Case, Manifest
from chemgauge.families.ocsr.tallies import not_run_phrase, summary_facts
from chemgauge.report.adapter import Table
from chemgauge.report.drawings import mol_svg
from chemgauge.report.formatting import fmt_count, fmt_rate
from chemgauge.report.html import page_end, page_start, rate_cards, table_html

__all__ = ["render_html", "write_html"]

#: Reference drawings kept for reuse (the same case with the same highlights).
DRAWING_CACHE = 64

_CSS = """
.attempt { margin: 0 0 12px; }
.attempt .mols img { max-width: 100%; height: auto; display: block; margin: 0 auto;
  border: 1px solid var(--line); border-radius: 4px; }
.attempt .mols figure > p { margin: 0; padding: 8px; background: var(--panel); }
.verdicts span { margin-right: 10px; }
.match { color: #176b1a; }
.mismatch { color: #a11; }
.other { color: var(--muted); }
"""


def _highlights(diff: Mapping[str, Any] | None, side: str) -> tuple[list[int], list[int]]:
    atoms: set[int] = set()
    bonds: set[int] = set()
    for error in (diff or {}).get("errors", []):
        atoms.update(error[f"{side}_atoms"])
        bonds.update(error[f"{side}_bonds"])
    return sorted(atoms), sorted(bonds)


def _figure(caption: str, body: str) -> str:
    return f"<figure>{body}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _image_panel(manifest: Manifest, case: Case) -> str:
    """The image as a data URL, or why it is not shown (checked from its header, never decoded
    here: a decompression bomb would otherwise be handed to every browser opening the page)."""
    size = "size unknown" if case.width is None else f"{case.width}x{case.height}"
    title = f"image {size}"
    try:
        path = manifest.image_path(case)
        header = read_image_header(path)
        data = path.read_bytes()
    except ImageRefusedError as exc:
        return _figure(title, f"<p>(image not shown: {html.escape(exc.reason)})</p>")
    except (InputFileError, OSError) as exc:
        return _figure(title, f"<p>(image not shown: {html.escape(str(exc))})</p>")
    mime = f"image/{header.format.lower()}"
    encoded = base64.b64encode(data).decode()
    return _figure(title, f'<img src="data:{mime};base64,{encoded}" alt="{html.escape(title)}">')


def _in_order(identity: Mapping[str, str], policies: Sequence[str]) -> dict[str, str]:
    """Verdicts in the report's policy order, then any others: a row read back from the
    rows file has its keys sorted, one held in memory has them in policy order."""
    ordered = {p: identity[p] for p in policies if p in identity}
    ordered.update(identity)
    return ordered


def _card(
    manifest: Manifest,
    row: Mapping[str, Any],
    ref_cache: OrderedDict[str, str],
    policies: Sequence[str],
) -> str:
    case = manifest.by_id[str(row["case_id"])]
    panels = [_image_panel(manifest, case)]
    diff = row.get("graph_diff")
    if case.reference is not None:
        ref_atoms, ref_bonds = _highlights(diff, "ref")
        key = f"{case.id}:{ref_atoms}:{ref_bonds}"
        if key in ref_cache:
            ref_cache.move_to_end(key)
        else:
            mol = manifest.reference_mol(case)
            ref_cache[key] = (
                "<p>(reference not drawn)</p>"
                if mol is None
                else mol_svg(mol, "reference", ref_atoms, ref_bonds)
            )
            if len(ref_cache) > DRAWING_CACHE:
                ref_cache.popitem(last=False)
        panels.append(_figure("reference", ref_cache[key]))
    else:
        panels.append(
            _figure("no unique reference", f"<p>{html.escape(str(case.no_reference_reason))}</p>")
        )
    pred = candidate_mol(dict(row))
    if pred is not None:
        pred_atoms, pred_bonds = _highlights(diff, "pred")
        panels.append(_figure("prediction", mol_svg(pred, "prediction", pred_atoms, pred_bonds)))
    else:
        panels.append(_figure("prediction", "<p>(no readable graph)</p>"))
    identity = _in_order(row.get("identity") or {}, policies)
    verdicts = " ".join(
        f'<span class="{"match" if v == "match" else "mismatch" if v == "mismatch" else "other"}">'
        f"{html.escape(p)}: {html.escape(str(v))}</span>"
        for p, v in identity.items()
    )
    recognition = row.get("recognition") or {}
    message = recognition.get("message") or row.get("not_run_reason") or ""
    served = (recognition.get("served") or {}).get("model")
    if served:
        message = f"{message} (served by {served})" if message else f"served by {served}"
    errors = "".join(
        f"<li>{html.escape(e['category'])}: {html.escape(e['detail'])}</li>"
        for e in (diff or {}).get("errors", [])
    )
    details = []
    if diff is not None and diff["status"] != "ok":
        details.append(("graph diff", str(diff["status"])))
    candidate = row["candidate"]
    if candidate["present"]:
        verdict = "accepted" if candidate["accepted"] else f"rejected: {candidate['reason']}"
        details.append(("validation", verdict))
    details.append(("recognized SMILES", str(candidate.get("smiles") or "none")))
    listed = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in details)
    return (
        f'<article class="failure attempt"><h4>{html.escape(str(row["attempt_id"]))}: '
        f"{html.escape(str(row['status']))}</h4>"
        f'<p class="verdicts">{verdicts}</p>'
        + (f'<p class="note">{html.escape(str(message))}</p>' if message else "")
        + f'<div class="mols">{"".join(panels)}</div>'
        + (f"<ul>{errors}</ul>" if errors else "")
        + f"<dl>{listed}</dl></article>"
    )


def _summary(report: Mapping[str, Any]) -> str:
    """The headline (the report's: completed exact graphs over the planned attempts with a
    finite reference, per policy) and the tables behind it."""
    finite = report["finite_reference"]
    statuses = Table(
        "Attempt statuses",
        ("status", "attempts"),
        tuple((s, str(n)) for s, n in finite["statuses"].items()),
    )
    policies = Table(
        "Exact graphs by policy",
        ("policy", "completed exact", "provisional exact", "unsupported"),
        tuple(
            (
                policy,
                f"{fmt_rate(rate)} ({fmt_count(rate)})",
                str(block["provisional_exact"]),
                str(block["unsupported"]),
            )
            for rate, (policy, block) in zip(
                policy_rates(finite), finite["policies"].items(), strict=True
            )
        ),
        caption=f"Every rate is over the {finite['planned']} planned attempts with a finite "
        "reference, as in report.json.",
    )
    return (
        '<section id="headline"><h2>Headline</h2>'
        f"<p>{finite['planned']} planned attempts with a finite reference: "
        f"{finite['attempted']} attempted, {finite['completed']} completed, "
        f"{finite['provisional']} provisional, "
        f"{html.escape(not_run_phrase(finite['not_run'], finite.get('not_run_reasons')))}.</p>"
        f"{rate_cards(policy_rates(finite))}{table_html(policies)}{table_html(statuses)}"
        f"{_facts(report)}<p>reproducibility_sha256 <code>"
        f"{html.escape(str(report['reproducibility_sha256']))}</code></p></section>"
        f"{_reviews(report)}"
    )


def _reviews(report: Mapping[str, Any]) -> str:
    """The back-end's own visual review, in its own section (never ground truth)."""
    block = report.get("model_review") or {}
    if not block.get("attempts_with_review"):
        return ""
    items = "".join(
        f"<li><code>{html.escape(str(r['attempt_id']))}</code> ({html.escape(str(r['status']))})"
        f": {html.escape(str(r['review']))}</li>"
        for r in block["reviews"]
    )
    return (
        '<section id="model-review"><h2>Model\'s own visual review</h2>'
        f'<p class="note">{html.escape(str(block["note"]))}; '
        f"{block['attempts_with_review']} attempt(s) carried one.</p><ul>{items}</ul></section>"
    )


def _facts(report: Mapping[str, Any]) -> str:
    return "".join(f"<p>{html.escape(item)}</p>" for item in summary_facts(report))


def _page(
    manifest: Manifest, rows: Iterable[Mapping[str, Any]], report: Mapping[str, Any]
) -> Iterator[str]:
    """The page in pieces: head and summary, one card per row, the end."""
    ref_cache: OrderedDict[str, str] = OrderedDict()
    policies = list(report.get("policies") or ())
    title = f"chemgauge OCSR report: {manifest.name}"
    nav = [("headline", "Headline"), ("attempts", "Attempts")]
    yield (
        page_start(title, f"manifest <code>{html.escape(manifest.name)}</code>", nav, _CSS)
        + _summary(report)
        + '<section id="attempts"><h2>Attempts</h2>'
    )
    for row in rows:
        yield _card(manifest, row, ref_cache, policies)
    yield "</section>" + page_end("counts are from the scored rows.")


def render_html(
    manifest: Manifest, rows: Iterable[Mapping[str, Any]], report: Mapping[str, Any]
) -> str:
    """The whole page as a string (deterministic for identical rows)."""
    return "".join(_page(manifest, rows, report))


def write_html(
    path: str | Path,
    manifest: Manifest,
    rows: Iterable[Mapping[str, Any]],
    report: Mapping[str, Any],
) -> Path:
    """Stream the page into ``path`` atomically, a card at a time (same bytes as
    :func:`render_html`)."""
    with atomic_open(path, text=True) as handle:
        for piece in _page(manifest, rows, report):
            handle.write(piece)
    return Path(path)
