"""A self-contained HTML page: each image beside its reference and predicted structures.

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

from chemgauge.benchmarks.ocsr.evaluate import candidate_mol
from chemgauge.benchmarks.ocsr.manifest import Case, Manifest
from chemgauge.benchmarks.ocsr.tallies import summary_facts
from chemgauge.chem.render import highlighted_svg
from chemgauge.errors import InputFileError
from chemgauge.eval.images import ImageRefusedError, read_image_header
from chemgauge.eval.records import atomic_open

__all__ = ["render_html", "write_html"]

#: Reference drawings kept for reuse (the same case with the same highlights).
DRAWING_CACHE = 64

_STYLE = """
body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}
.card{border:1px solid #bbb;border-radius:6px;margin:1em 0;padding:0.6em}
.row{display:flex;gap:1em;align-items:flex-start;flex-wrap:wrap}
.panel{text-align:center}.panel img{max-width:320px;max-height:240px;border:1px solid #ddd}
.status{font-weight:bold}.match{color:#176b1a}.mismatch{color:#a11}.other{color:#666}
code{font-size:0.85em;word-break:break-all}
"""


def _highlights(diff: Mapping[str, Any] | None, side: str) -> tuple[list[int], list[int]]:
    atoms: set[int] = set()
    bonds: set[int] = set()
    for error in (diff or {}).get("errors", []):
        atoms.update(error[f"{side}_atoms"])
        bonds.update(error[f"{side}_bonds"])
    return sorted(atoms), sorted(bonds)


def _panel(title: str, body: str) -> str:
    return f'<div class="panel"><div>{html.escape(title)}</div>{body}</div>'


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
        return _panel(title, f"<p>(image not shown: {html.escape(exc.reason)})</p>")
    except (InputFileError, OSError) as exc:
        return _panel(title, f"<p>(image not shown: {html.escape(str(exc))})</p>")
    mime = f"image/{header.format.lower()}"
    encoded = base64.b64encode(data).decode()
    return _panel(title, f'<img src="data:{mime};base64,{encoded}">')


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
            ref_cache[key] = "" if mol is None else highlighted_svg(mol, ref_atoms, ref_bonds)
            if len(ref_cache) > DRAWING_CACHE:
                ref_cache.popitem(last=False)
        panels.append(_panel("reference", ref_cache[key]))
    else:
        panels.append(
            _panel("no unique reference", f"<p>{html.escape(str(case.no_reference_reason))}</p>")
        )
    pred = candidate_mol(dict(row))
    if pred is not None:
        pred_atoms, pred_bonds = _highlights(diff, "pred")
        panels.append(_panel("prediction", highlighted_svg(pred, pred_atoms, pred_bonds)))
    else:
        panels.append(_panel("prediction", "<p>(no readable graph)</p>"))
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
    diff_note = "" if diff is None or diff["status"] == "ok" else f" (diff {diff['status']})"
    candidate = row["candidate"]
    validation = ""
    if candidate["present"]:
        verdict = "accepted" if candidate["accepted"] else f"rejected: {candidate['reason']}"
        validation = f" · validation: {html.escape(verdict)}"
    return (
        f'<div class="card"><div><span class="status">{html.escape(str(row["attempt_id"]))}'
        f" — {html.escape(str(row['status']))}</span>{validation} {verdicts}</div>"
        f"<div>{html.escape(str(message))}</div>"
        f'<div class="row">{"".join(panels)}</div>'
        f"<ul>{errors}</ul>{html.escape(diff_note)}"
        f"<div><code>{html.escape(str(candidate.get('smiles') or ''))}</code></div></div>"
    )


def _summary(report: Mapping[str, Any]) -> str:
    finite = report["finite_reference"]
    head = "".join(f"<th>{html.escape(s)}</th>" for s in finite["statuses"])
    cells = "".join(f"<td>{n}</td>" for n in finite["statuses"].values())
    policy_rows = "".join(
        f"<tr><th>{html.escape(p)}</th><td>{v['completed_exact']}</td><td>{v['provisional_exact']}"
        f"</td><td>{v['unsupported']}</td><td>{finite['planned']}</td></tr>"
        for p, v in finite["policies"].items()
    )
    return (
        f"<h2>Finite-reference attempts ({finite['planned']} planned, {finite['attempted']} "
        f"attempted)</h2><table><tr>{head}</tr><tr>{cells}</tr></table>"
        "<h3>Exact graphs by policy (same denominator)</h3><table><tr><th>policy</th>"
        "<th>completed exact</th><th>provisional exact</th><th>unsupported</th><th>planned</th>"
        f"</tr>{policy_rows}</table>{_facts(report)}"
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
    yield (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f"{_summary(report)}<p>reproducibility_sha256 <code>"
        f"{html.escape(str(report['reproducibility_sha256']))}</code></p>"
        "<h2>Attempts</h2>"
    )
    for row in rows:
        yield _card(manifest, row, ref_cache, policies)
    yield "</body></html>\n"


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
