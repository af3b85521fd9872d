"""The ``http`` recognizer: an OpenAI-compatible vision endpoint asked for a structure.

Every answer is checked for who served it: the ``model`` the server names must be the one
requested, exactly (a dated snapshot ``NAME-YYYY-MM-DD`` is another model unless named in
``accept_models``, ``--accept-model``), and a reasoning effort the server echoes must be the
one requested; one it does not echo is recorded unverified (``effort_verified`` false).
The first answer that fails this, and the first authentication error (HTTP 401/403), 404
or quota error (402, or 429 naming the quota or billing), fails its attempt with a
``stop_reason``: the runner then records every remaining attempt ``not_run`` with that
reason, so a run never switches models or retries. A plain rate limit (429 without a quota
reason) or a server error fails only its own attempt. Each request is cut on elapsed time at
its limit (recorded ``timeout``), however slowly the server keeps sending.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chemgauge.errors import ConfigError
from chemgauge.families.ocsr.engine.base import (
    DEFAULT_MAX_OUTPUT,
    FAILURE,
    PROVISIONAL,
    TIMEOUT,
    Recognizer,
    RecognizerOutput,
    parse_structured_answer,
    sha256_text,
    within_deadline,
)

__all__ = [
    "HTTP_PROMPT",
    "HttpRecognizer",
    "HttpSpec",
    "served_as_requested",
    "served_fields",
    "stop_reason_for_status",
]

HTTP_PROMPT = (
    "You are an optical chemical structure recognizer. Read the chemical structure drawn in "
    "the image and answer with one JSON object only: "
    '{"smiles": "<isomeric SMILES of everything drawn, abbreviations written out as atoms>", '
    '"abbreviations": [{"label": "<each abbreviation label exactly as displayed, e.g. Boc>", '
    '"atoms": [<0-based indices, in SMILES atom order, of the atoms it stands for>]}], '
    '"clarification": null, "review": "<optional: your own check of the drawing>"}. '
    'Use "abbreviations": [] when none is drawn. If the image cannot be read reliably, answer '
    '{"smiles": null, "clarification": "<what you need, e.g. a higher-resolution image>"}; '
    'if you give a structure you are unsure of, add "status": "provisional".'
)


@dataclass(frozen=True)
class HttpSpec:
    """An OpenAI-compatible ``/chat/completions`` endpoint; the key is read from ``api_key_env``."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    prompt: str = HTTP_PROMPT
    max_tokens: int = 2048
    reasoning_effort: str | None = None
    #: Served model names accepted besides ``model`` itself (each named exactly).
    accept_models: tuple[str, ...] = ()


class HttpRecognizer(Recognizer):
    """A vision model behind an OpenAI-compatible API; the image is sent as a data URL only."""

    name = "http"

    def __init__(self, spec: HttpSpec, *, max_output_bytes: int = DEFAULT_MAX_OUTPUT):
        super().__init__(max_output_bytes=max_output_bytes)
        if not spec.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"http back-end URL must start with http:// or https://: {spec.base_url!r}"
            )
        self.spec = spec
        self.served_models: set[str] = set()

    def _detect_version(self) -> str:
        return self.spec.model

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "base_url": self.spec.base_url,
            "model": self.spec.model,
            "reasoning_effort": self.spec.reasoning_effort,
            **({"accept_models": list(self.spec.accept_models)} if self.spec.accept_models else {}),
            "prompt_sha256": sha256_text(self.spec.prompt),
        }

    def mismatch(self, served: dict[str, Any]) -> str:
        """Why an answer was not served as requested ("" when it was)."""
        model, requested = served.get("model"), self.spec.model
        if not isinstance(model, str) or not model:
            return f"the answer does not name the model that served it (requested {requested!r})"
        if not served_as_requested(model, requested, self.spec.accept_models):
            return f"served model {model!r} is not the requested {requested!r}"
        effort, wanted = served.get("reasoning_effort"), self.spec.reasoning_effort
        if wanted is not None and effort is not None and effort != wanted:
            return f"served reasoning effort {effort!r} is not the requested {wanted!r}"
        return ""

    def _request(self, image: Path) -> urllib.request.Request:
        mime = "image/png" if image.suffix.lower() == ".png" else "image/jpeg"
        data_url = f"data:{mime};base64,{base64.b64encode(image.read_bytes()).decode()}"
        body: dict[str, Any] = {
            "model": self.spec.model,
            "max_tokens": self.spec.max_tokens,
            "temperature": 0,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": self.spec.prompt},
                        {"type": "image_url", "image_url": {"url": data_url}},
                    ],
                }
            ],
        }
        if self.spec.reasoning_effort is not None:
            body["reasoning_effort"] = self.spec.reasoning_effort
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.spec.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.spec.base_url.rstrip("/") + "/chat/completions"
        return urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")

    def _recognize(self, image: Path, timeout: float) -> RecognizerOutput:
        """One request cut on elapsed time: the exchange runs on a daemon thread, and one
        still running at ``timeout`` is abandoned and recorded ``timeout`` (a socket timeout
        alone never fires on a server that keeps sending a byte at a time)."""
        request = self._request(image)
        deadline = time.monotonic() + timeout
        done, output = within_deadline(lambda: self._exchange(request, timeout, deadline), timeout)
        if not done or output is None:  # it stops by itself at its next read
            return RecognizerOutput(
                TIMEOUT, message=f"no complete answer within {timeout:g} s; request abandoned"
            )
        return output

    def _exchange(
        self, request: urllib.request.Request, timeout: float, deadline: float
    ) -> RecognizerOutput:
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = bytearray()
                while len(raw) <= self.max_output_bytes:
                    if time.monotonic() > deadline:
                        return RecognizerOutput(
                            TIMEOUT, message=f"no complete answer within {timeout:g} s"
                        )
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    raw.extend(chunk)
        except urllib.error.HTTPError as exc:
            detail = exc.read(2000).decode("utf-8", errors="replace")
            stop = stop_reason_for_status(exc.code, detail)
            message = f"HTTP {exc.code}" + (f": {stop}" if stop else "")
            return RecognizerOutput(FAILURE, message=message, raw_output=detail, stop_reason=stop)
        except TimeoutError:
            return RecognizerOutput(TIMEOUT, message=f"no answer within {timeout:g} s")
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                return RecognizerOutput(TIMEOUT, message=f"no answer within {timeout:g} s")
            return RecognizerOutput(FAILURE, message=f"connection failed: {exc.reason}")
        except http.client.HTTPException as exc:
            return RecognizerOutput(FAILURE, message=f"broken answer: {type(exc).__name__}")
        text = raw[: self.max_output_bytes].decode("utf-8", errors="replace")
        try:
            payload = json.loads(text)
            choice = payload["choices"][0]
            content = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            return RecognizerOutput(FAILURE, message="malformed chat completion", raw_output=text)
        served = served_fields(payload)
        if self.spec.reasoning_effort is not None:  # echoed and equal, or not echoed at all
            served["requested_effort"] = self.spec.reasoning_effort
            served["effort_verified"] = served["reasoning_effort"] is not None
        if isinstance(served["model"], str):
            self.served_models.add(served["model"])
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else None
        wrong = self.mismatch(served)
        if wrong:  # the answer is kept for audit, never scored as a structure
            return RecognizerOutput(
                FAILURE,
                message=wrong,
                raw_output=str(content),
                usage=usage,
                served=served,
                stop_reason=wrong,
            )
        answer = parse_structured_answer(str(content))
        if choice.get("finish_reason") == "length":
            status = PROVISIONAL if answer.text else FAILURE
            answer = replace(answer, status=status, message="answer cut at max_tokens")
        return replace(answer, raw_output=str(content), usage=usage, served=served)


def served_as_requested(served: str, requested: str, accepted: tuple[str, ...] = ()) -> bool:
    """The requested model itself, or one named in ``accepted`` (a dated snapshot such as
    ``gpt-x-2026-01-31`` is another model unless accepted by that exact name)."""
    return served == requested or served in accepted


def served_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """Model, reasoning effort and service tier as the server echoed them (``None`` if not)."""
    reasoning = payload.get("reasoning")
    effort = payload.get("reasoning_effort")
    if effort is None and isinstance(reasoning, dict):
        effort = reasoning.get("effort")
    return {
        "model": payload.get("model"),
        "reasoning_effort": effort if isinstance(effort, str) else None,
        "service_tier": payload.get("service_tier")
        if isinstance(payload.get("service_tier"), str)
        else None,
    }


_QUOTA = re.compile(r"quota|billing|credit", re.IGNORECASE)


def stop_reason_for_status(code: int, detail: str) -> str:
    """Why an HTTP error means no later request can succeed as configured ("" if it may)."""
    if code in (401, 403):
        return f"authentication refused (HTTP {code})"
    if code == 404:
        return "endpoint or model not found (HTTP 404)"
    if code == 402 or (code == 429 and _QUOTA.search(detail)):
        return f"quota exhausted (HTTP {code})"
    return ""
