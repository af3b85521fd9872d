"""A leaderboard as JSON for machines, and the text of its values for people.

The JSON holds everything the HTML and Markdown pages show and more: every run's identity,
every pairwise test with its counts, raw and Holm-adjusted p-values, every breakdown board.
It holds no time of its own, so the same runs and settings give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import chemgauge
from chemgauge.eval.stats import Interval
from chemgauge.report.board import Board, Leaderboard, Ranking
from chemgauge.report.entrants import Entrant
from chemgauge.report.standings import Kind, PairResult, Standing

__all__ = [
    "BOARD_FORMAT",
    "BOARD_SCHEMA_VERSION",
    "difference_text",
    "interval_text",
    "leaderboard_to_dict",
    "value_text",
]

BOARD_FORMAT = "chemgauge-board"
BOARD_SCHEMA_VERSION = 1


def _number(value: float, kind: Kind) -> str:
    return f"{100 * value:.1f}" if kind != "mean" else f"{value:.3f}"


def value_text(value: Interval, kind: Kind) -> str:
    """``36.5%`` for a rate, ``0.584`` for a mean; ``n/a`` without items."""
    if value.estimate is None:
        return "n/a"
    return _number(value.estimate, kind) + ("%" if kind != "mean" else "")


def interval_text(value: Interval, kind: Kind) -> str:
    """``[30.1, 43.4]`` (percent for rates); empty when there is no interval."""
    if value.low is None or value.high is None:
        return ""
    return f"[{_number(value.low, kind)}, {_number(value.high, kind)}]"


def difference_text(value: Interval, kind: Kind) -> str:
    """A difference: ``+4.2 pp [+1.0, +7.5]`` for rates, ``+0.031 [...]`` for means."""
    if value.estimate is None:
        return "n/a"
    scale, digits, unit = (100.0, 1, " pp") if kind != "mean" else (1.0, 3, "")
    text = f"{scale * value.estimate:+.{digits}f}{unit}"
    if value.low is not None and value.high is not None:
        text += f" [{scale * value.low:+.{digits}f}, {scale * value.high:+.{digits}f}]"
    return text


def _interval(value: Interval) -> dict[str, Any]:
    return {
        "estimate": value.estimate,
        "interval": [value.low, value.high],
        "method": value.method,
        "confidence": value.confidence,
    }


def entrant_identity(entrant: Entrant) -> dict[str, Any]:
    """Who a run is: label, system, where it lives, its config hash, version and date."""
    envelope = entrant.run.envelope
    return {
        "label": entrant.label,
        "system": entrant.system,
        "report": str(entrant.run.report_path),
        "rows": str(entrant.run.rows_path),
        "config_sha256": envelope.config_sha256,
        "chemgauge_version": envelope.chemgauge_version,
        "created": envelope.created,
        "reproducibility_sha256": envelope.reproducibility_sha256,
        "check": entrant.check,
    }


def _standing(board: Board, standing: Standing, kind: Kind) -> dict[str, Any]:
    out = {
        "run": board.entrants[standing.index].label,
        "rank": standing.rank,
        "letters": standing.letters,
        "value": _interval(standing.value),
    }
    if kind != "mean":
        out["count"] = None if standing.count is None else int(standing.count)
        out["n"] = None if standing.total is None else int(standing.total)
    else:
        out["n"] = standing.value.n
    return out


def _pair(board: Board, pair: PairResult, alpha: float) -> dict[str, Any]:
    out: dict[str, Any] = {
        "a": board.entrants[pair.a].label,
        "b": board.entrants[pair.b].label,
        "n": pair.n,
        "difference": _interval(pair.difference),
        "test": pair.test,
        "p": pair.p_value,
        "p_holm": pair.p_holm,
        "significant": pair.significant(alpha),
    }
    if pair.only_a is not None:
        out["only_a"], out["only_b"] = pair.only_a, pair.only_b
    return out


def ranking_to_dict(board: Board, ranking: Ranking) -> dict[str, Any]:
    """One ranking: the metric, its items, every standing and every pair."""
    standings = ranking.standings
    alpha = standings.settings.alpha
    return {
        "metric": ranking.metric.name,
        "kind": ranking.metric.kind,
        "description": ranking.metric.description,
        "items": ranking.items,
        "standings": [_standing(board, s, ranking.metric.kind) for s in standings.standings],
        "pairs": [_pair(board, p, alpha) for p in standings.pairs],
        "undefined_resamples": standings.undefined_resamples,
    }


def _board(board: Board) -> dict[str, Any]:
    return {
        "number": board.number,
        "family": board.family,
        "items": board.items,
        "items_sha256": board.items_sha256,
        "protocol": dict(board.protocol),
        "notes": list(board.notes),
        "runs": [entrant_identity(e) for e in board.entrants],
        "rankings": [ranking_to_dict(board, r) for r in board.rankings],
        "breakdowns": [
            {"dimension": b.dimension, "bucket": b.bucket, **ranking_to_dict(board, b.ranking)}
            for b in board.breakdowns
        ],
    }


def settings_to_dict(leaderboard: Leaderboard) -> dict[str, Any]:
    """The settings every number on the board depends on."""
    config = leaderboard.config
    stats = config.stats
    return {
        "metrics": list(config.metrics) or "each family's default",
        "alpha": stats.alpha,
        "confidence": stats.confidence,
        "seed": stats.seed,
        "resamples": stats.resamples,
        "force": config.force,
        "verify": leaderboard.verified,
        "tests": {
            "hit": "exact McNemar on the items both runs take part in",
            "ratio": "paired bootstrap (items resampled jointly for all runs)",
            "mean": "paired bootstrap (items resampled jointly for all runs)",
        },
        "intervals": {
            "hit": "Wilson",
            "ratio": "Wilson on the run's own denominator",
            "mean": "paired bootstrap percentile",
        },
        "holm": "over all pairs of a board; each breakdown bucket is its own family",
        "letters": "runs sharing a letter are not significantly different (Holm p > alpha)",
    }


def leaderboard_to_dict(leaderboard: Leaderboard) -> dict[str, Any]:
    """The whole leaderboard as a JSON-ready mapping."""
    return {
        "format": BOARD_FORMAT,
        "schema_version": BOARD_SCHEMA_VERSION,
        "chemgauge_version": chemgauge.__version__,
        "settings": settings_to_dict(leaderboard),
        "boards": [_board(b) for b in leaderboard.boards],
        "refused": [r.to_dict() for r in leaderboard.refusals],
    }


def identity_rows(board: Board) -> Mapping[str, dict[str, Any]]:
    """Each run's identity by label."""
    return {e.label: entrant_identity(e) for e in board.entrants}
