"""The ``http`` recognizer: an OpenAI-compatible vision endpoint asked for a structure."""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chemgauge.engines.ocsr.base import (
    DEFAULT_MAX_OUTPUT,
    FAILURE,
    PROVISIONAL,
    TIMEOUT,
    Recognizer,
    RecognizerOutput,
    parse_structured_answer,
    sha256_text,
)
from chemgauge.errors import ConfigError

__all__ = [
    "HTTP_PROMPT",
    "HttpRecognizer",
    "HttpSpec",
]

HTTP_PROMPT = (
    "You are an optical chemical structure recognizer. Read the chemical structure drawn in "
    "the image and answer with one JSON object only: "
    '{"smiles": "<isomeric SMILES of everything drawn>", "clarification": null}. '
    "Expand abbreviations into atoms. If the image cannot be read reliably, answer "
    '{"smiles": null, "clarification": "<what you need, e.g. a higher-resolution image>"}.'
)


@dataclass(frozen=True)
class HttpSpec:
    """An OpenAI-compatible ``/chat/completions`` endpoint; the key is read from ``api_key_env``."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    prompt: str = HTTP_PROMPT
    max_tokens: int = 2048


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
            "prompt_sha256": sha256_text(self.spec.prompt),
        }

    def _request(self, image: Path) -> urllib.request.Request:
        mime = "image/png" if image.suffix.lower() == ".png" else "image/jpeg"
        data_url = f"data:{mime};base64,{base64.b64encode(image.read_bytes()).decode()}"
        body = {
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
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.spec.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.spec.base_url.rstrip("/") + "/chat/completions"
        return urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")

    def _recognize(self, image: Path, timeout: float) -> RecognizerOutput:
        request = self._request(image)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read(self.max_output_bytes + 1)
        except urllib.error.HTTPError as exc:
            detail = exc.read(2000).decode("utf-8", errors="replace")
            return RecognizerOutput(FAILURE, message=f"HTTP {exc.code}", raw_output=detail)
        except TimeoutError:
            return RecognizerOutput(TIMEOUT, message=f"no answer within {timeout:g} s")
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                return RecognizerOutput(TIMEOUT, message=f"no answer within {timeout:g} s")
            return RecognizerOutput(FAILURE, message=f"connection failed: {exc.reason}")
        text = raw[: self.max_output_bytes].decode("utf-8", errors="replace")
        try:
            payload = json.loads(text)
            choice = payload["choices"][0]
            content = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            return RecognizerOutput(FAILURE, message="malformed chat completion", raw_output=text)
        served = payload.get("model")
        if isinstance(served, str):
            self.served_models.add(served)
        answer = parse_structured_answer(str(content))
        if choice.get("finish_reason") == "length":
            status = PROVISIONAL if answer.text else FAILURE
            answer = replace(answer, status=status, message="answer cut at max_tokens")
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else None
        return replace(answer, raw_output=str(content), usage=usage)
