"""An OpenAI-compatible chat-completions client that answers p2s tasks.

One request per task (``POST {base_url}/chat/completions``) with the messages the benchmark
renders from its prompts. Transient failures (timeouts, refused connections, HTTP 408, 425,
429 and 5xx, a body that is not JSON) are retried with exponential backoff, honouring a
bounded ``Retry-After``; other HTTP errors (a wrong key or model name) stop the run at once.
When retries run out the run stops too, since journals make it resumable: an outage is not
the model's wrong answer. A reply whose content does not hold the answer object is kept as an
``invalid`` prediction with the reason.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chemgauge.errors import BackendError, ConfigError, TransientHttpError
from chemgauge.families.p2s.engine.models import (
    Messages,
    P2SModel,
    Task,
    invalid_prediction,
    prediction,
)

__all__ = ["ChatConfig", "ChatModel", "parse_answer"]

_TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_MAX_REASONING = 4000
_MAX_RETRY_AFTER = 60.0


@dataclass(frozen=True)
class ChatConfig:
    """Where and how to ask; the API key is read from an environment variable, never stored."""

    base_url: str
    model: str
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout_s: float = 120.0
    max_attempts: int = 4
    backoff_s: float = 2.0
    max_response_bytes: int = 4 << 20

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base URL must start with http:// or https://: {self.base_url!r}")
        if self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be >= 1, got {self.max_attempts}")

    def describe(self) -> dict[str, Any]:
        """Settings that determine the answers (no key, no timeouts)."""
        return {
            "base_url": self.base_url.rstrip("/"),
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }


def _json_candidates(content: str) -> list[str]:
    texts = [content.strip()]
    texts += [m.strip() for m in _FENCE.findall(content)]
    start, end = content.find("{"), content.rfind("}")
    if 0 <= start < end:
        texts.append(content[start : end + 1])
    return texts


def parse_answer(content: str, record_id: str) -> dict[str, Any]:
    """Turn a reply's text into a prediction object, or an ``invalid`` one saying why.

    The index is kept as given when it is an integer, even out of range: the scorer counts
    out-of-range answers separately from unparsable ones.
    """
    obj: Any = None
    for text in _json_candidates(content):
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict):
            break
    if not isinstance(obj, dict):
        return invalid_prediction(record_id, "reply holds no JSON object")
    if "record_id" in obj and obj["record_id"] != record_id:
        return invalid_prediction(record_id, f"reply names record {obj['record_id']!r}")
    index = obj.get("selected_candidate_index")
    if not isinstance(index, int) or isinstance(index, bool):
        return invalid_prediction(record_id, f"selected_candidate_index is {index!r}")
    reasoning = obj.get("reasoning", "")
    reasoning = reasoning if isinstance(reasoning, str) else json.dumps(reasoning)
    return prediction(record_id, index, reasoning[:_MAX_REASONING])


class ChatModel(P2SModel):
    """Asks an OpenAI-compatible endpoint, one task per request."""

    name = "chat"

    def __init__(
        self,
        config: ChatConfig,
        render: Callable[[Task], Messages],
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__()
        self.config = config
        self.render = render
        self.sleep = sleep
        self.requests = 0
        self.retries = 0

    def describe(self) -> dict[str, Any]:
        """Name and endpoint settings."""
        return {"name": self.name, **self.config.describe()}

    def _post(self, body: bytes) -> dict[str, Any]:
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.config.api_key_env) if self.config.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
                data = response.read(self.config.max_response_bytes + 1)
        except urllib.error.HTTPError as exc:
            if exc.code in _TRANSIENT_STATUS:
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
                try:
                    wait = float(retry_after) if retry_after else None
                except ValueError:
                    wait = None
                raise TransientHttpError(f"HTTP {exc.code}", wait) from None
            detail = exc.read(500).decode("utf-8", "replace") if exc.fp else ""
            raise BackendError(f"{url}: HTTP {exc.code} {exc.reason}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise TransientHttpError(f"{type(exc).__name__}: {exc}") from None
        if len(data) > self.config.max_response_bytes:
            raise BackendError(f"{url}: response over {self.config.max_response_bytes} bytes")
        try:
            reply = json.loads(data)
        except ValueError:
            raise TransientHttpError("response body is not JSON") from None
        if not isinstance(reply, dict):
            raise TransientHttpError("response body is not a JSON object")
        return reply

    def _ask(self, task: Task) -> dict[str, Any]:
        body = json.dumps(
            {
                "model": self.config.model,
                "messages": self.render(task),
                "temperature": self.config.temperature,
                "max_tokens": self.config.max_tokens,
            }
        ).encode("utf-8")
        last = ""
        for attempt in range(self.config.max_attempts):
            try:
                reply = self._post(body)
            except TransientHttpError as exc:
                last = str(exc)
                if attempt + 1 < self.config.max_attempts:
                    self.retries += 1
                    wait = self.config.backoff_s * 2**attempt
                    if exc.retry_after is not None:
                        wait = min(max(wait, exc.retry_after), _MAX_RETRY_AFTER)
                    self.sleep(wait)
                continue
            try:
                content = reply["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                return invalid_prediction(task["record_id"], "reply has no message content")
            if not isinstance(content, str):
                return invalid_prediction(task["record_id"], "message content is not text")
            return parse_answer(content, task["record_id"])
        raise BackendError(
            f"{self.config.base_url}: gave up on {task['record_id']!r} after "
            f"{self.config.max_attempts} attempts ({last}); rerun to resume"
        )

    def _predict(self, batch: list[Task]) -> list[dict[str, Any]]:
        return [self._ask(task) for task in batch]
