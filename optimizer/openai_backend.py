"""The ``openai`` LLM backend: every role through any OpenAI-compatible chat endpoint.

- Prompts are versioned files in ``optimizer/prompts/<role>.v<N>.md`` (system part, then
  a ``---user---`` line, then the user template). Untrusted text is passed as delimited
  data and the prompts say so.
- Replies must be JSON objects matching the role's schema. A malformed reply is retried
  with the validation error shown to the model, then reported as LLMOutputError: never
  guessed or patched up.
- 429, 5xx, timeouts and connection errors are retried with exponential backoff (each
  retry counted); when attempts run out the call raises BackendUnavailableError, which
  is retriable: the stream layer keeps the event and tries again later.
- Every call is metered (tokens from the reply's usage, cost from the configured prices)
  against the nugget's budget.
- Extraction replies and reflector revisions that state facts absent from the feedback
  context are rejected by the factual guard.
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from nuggetflow.errors import (
    BackendUnavailableError,
    ConfigError,
    LLMOutputError,
)
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.claims import addressed_to_system, plain_text
from optimizer.guard import check_revision
from optimizer.lexicon import near_duplicate
from optimizer.roles import ReflectionInput, Roles
from optimizer.types import (
    USEFULNESS_LABELS,
    Answer,
    ContextPassage,
    Extraction,
    FeedbackContext,
    Judgement,
    NuggetDraft,
    Revision,
    correction_context,
)

log = get_logger(__name__)

PROMPTS = Path(__file__).parent / "prompts"
PROMPT_VERSION = 1
#: Roles whose prompt moved on; the others are still at PROMPT_VERSION.
PROMPT_VERSIONS = {"actionability": 3, "reflector": 2, "judge": 2}
MALFORMED_RETRIES = 2
T = TypeVar("T")


@functools.cache
def load_prompt(role: str, version: int | None = None) -> tuple[str, str]:
    """(system, user template) of a role's versioned prompt file (its current version
    unless ``version`` is given)."""
    version = version or PROMPT_VERSIONS.get(role, PROMPT_VERSION)
    path = PROMPTS / f"{role}.v{version}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"prompt file missing: {path}", field="prompts") from exc
    system, _, user = text.partition("---user---")
    return system.strip(), user.strip()


def _fill(template: str, **values: object) -> str:
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", str(value))
    return out


def _str(d: dict[str, Any], key: str, allow_empty: bool = True) -> str:
    value = d.get(key)
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise ValueError(f"{key!r} must be a {'non-empty ' if not allow_empty else ''}string")
    return value


def _strings(d: dict[str, Any], key: str) -> list[str]:
    value = d.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{key!r} must be a list of non-empty strings")
    return [" ".join(v.split()) for v in value]


def _bool(d: dict[str, Any], key: str) -> bool:
    value = d.get(key)
    if not isinstance(value, bool):
        raise ValueError(f"{key!r} must be true or false")
    return value


class ChatClient:
    """JSON chat completions with retries, backoff, schema validation and metering."""

    def __init__(self, settings: Settings, *, sleep: Callable[[float], None] = time.sleep,
                 on_retry: Callable[[str, str], None] | None = None) -> None:
        import openai

        self._client = openai.OpenAI(base_url=settings.openai_base_url or None,
                                     api_key=settings.openai_key() or "unused",
                                     timeout=settings.llm_timeout_seconds, max_retries=0)
        self._models = {"default": settings.llm_model}
        for pair in filter(None, (p.strip() for p in settings.llm_role_models.split(","))):
            role, _, model = pair.partition("=")
            if not model:
                raise ConfigError(f"expected role=model, got {pair!r}",
                                  field="NUGGETFLOW_LLM_ROLE_MODELS")
            self._models[role.strip()] = model.strip()
        self._attempts = settings.llm_max_attempts
        self._price_in = settings.llm_price_input_per_mtok / 1e6
        self._price_out = settings.llm_price_output_per_mtok / 1e6
        self._sleep = sleep
        self._on_retry = on_retry

    def model(self, role: str) -> str:
        """The model configured for a role."""
        return self._models.get(role, self._models["default"])

    def complete(self, role: str, user_values: dict[str, object],
                 parse: Callable[[dict[str, Any]], T], meter: Meter) -> T:
        """Call the role's prompt; return the parsed reply (see the module docstring)."""
        import openai

        system, template = load_prompt(role)
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": _fill(template, **user_values)}]
        malformed = 0
        transient = 0
        while True:
            meter.check(role)
            try:
                reply = self._client.chat.completions.create(  # type: ignore[call-overload]
                    model=self.model(role), messages=messages,
                    response_format={"type": "json_object"}, temperature=0)
            except (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                    openai.InternalServerError) as exc:
                transient += 1
                meter.retries += 1
                kind = type(exc).__name__
                if self._on_retry:
                    self._on_retry(role, kind)
                if transient >= self._attempts:
                    raise BackendUnavailableError(
                        f"LLM endpoint failed {transient} times for {role}: {kind}") from exc
                delay = min(30.0, 0.5 * 2 ** (transient - 1)) * (0.5 + random.random())
                log.warning("LLM call failed; retrying", role=role, error=kind,
                            attempt=transient, delay_s=round(delay, 2))
                self._sleep(delay)
                continue
            usage = reply.usage
            p_tok = usage.prompt_tokens if usage else 0
            c_tok = usage.completion_tokens if usage else 0
            meter.record(role, p_tok, c_tok, p_tok * self._price_in + c_tok * self._price_out)
            content = reply.choices[0].message.content or ""
            try:
                data = json.loads(content)
                if not isinstance(data, dict):
                    raise ValueError("the reply is not a JSON object")
                return parse(data)
            except (ValueError, KeyError, TypeError) as exc:
                malformed += 1
                if malformed > MALFORMED_RETRIES:
                    raise LLMOutputError(f"{role}: malformed reply after {malformed} tries: "
                                         f"{exc}", field=role) from exc
                log.warning("malformed LLM reply; asking again", role=role, error=str(exc))
                messages += [{"role": "assistant", "content": content},
                             {"role": "user", "content": f"That reply was invalid: {exc}. "
                              "Reply again with the JSON object only."}]


class OpenAIActionability:
    """Actionability + extraction through the chat endpoint."""

    def __init__(self, chat: ChatClient) -> None:
        self.chat = chat

    def extract(self, ctx: FeedbackContext, meter: Meter) -> Extraction:
        """Validated extraction; a body with facts absent from the feedback is rejected.

        Feedback addressed to the system is refused before any model sees it."""
        # (the raw text too: markup that runs code is gone once the text is plain)
        why = addressed_to_system(plain_text(ctx.comment)) or addressed_to_system(ctx.comment)
        if why:
            return Extraction("other", False,
                              f"refused: {why} (feedback is data, not instructions)")

        def parse(d: dict[str, Any]) -> Extraction:
            label = _str(d, "usefulness")
            if label not in USEFULNESS_LABELS:
                raise ValueError(f"usefulness must be one of {USEFULNESS_LABELS}")
            can = _bool(d, "can_produce_nugget")
            ex = Extraction(label, can, _str(d, "reason"))
            if not can:
                return ex
            ex = Extraction(label, can, ex.reason, plain_text(_str(d, "title", False)),
                            plain_text(_str(d, "body", False)), _str(d, "subject", False),
                            _str(d, "predicate", False), _str(d, "object", False),
                            _str(d, "scope") or "global", _str(d, "kind") or "SemanticFact")
            verdict = check_revision(NuggetDraft(ex.title, ex.body), correction_context(ctx), "")
            if not verdict.ok:
                raise ValueError("the nugget states facts the feedback does not: "
                                 + "; ".join(verdict.violations))
            return ex

        return self.chat.complete("actionability", {
            "query": ctx.query, "answer": ctx.answer, "comment": ctx.comment,
            "rating": ctx.rating}, parse, meter)


class OpenAIAnchors:
    """Anchors through the chat endpoint."""

    def __init__(self, chat: ChatClient) -> None:
        self.chat = chat

    def anchors(self, draft: NuggetDraft, extraction: Extraction, q0: str, *,
                q0_paraphrases: int, synthetic: int, vocabulary: Sequence[str],
                meter: Meter) -> list[str]:
        """Exactly q0_paraphrases + synthetic anchors."""
        total = q0_paraphrases + synthetic

        def parse(d: dict[str, Any]) -> list[str]:
            out = _strings(d, "anchors")
            if len(out) < total:
                raise ValueError(f"expected {total} anchors, got {len(out)}")
            return out[:total]

        return self.chat.complete("anchors", {
            "title": draft.title, "body": draft.body, "q0": q0,
            "vocabulary": ", ".join(vocabulary), "q0_paraphrases": q0_paraphrases,
            "synthetic": synthetic, "total": total}, parse, meter)


class OpenAIProbes:
    """Probe paraphrases through the chat endpoint."""

    def __init__(self, chat: ChatClient) -> None:
        self.chat = chat

    def paraphrases(self, q0: str, count: int, *, avoid: Sequence[str], seed: int,
                    meter: Meter) -> list[str]:
        """``count`` paraphrases; near-duplicates of q0 or the avoid list are dropped."""
        def parse(d: dict[str, Any]) -> list[str]:
            out = [p for p in _strings(d, "paraphrases") if not near_duplicate(p, q0)
                   and not any(near_duplicate(p, a) for a in avoid)]
            if len(out) < min(3, count):
                raise ValueError(f"need {count} paraphrases unlike the avoid list, got "
                                 f"{len(out)}")
            return out[:count]

        return self.chat.complete("probes", {"q0": q0, "avoid": json.dumps(list(avoid)),
                                             "count": count, "seed": seed}, parse, meter)


class OpenAIReflector:
    """Reflector through the chat endpoint (the guard runs in the INO loop)."""

    def __init__(self, chat: ChatClient) -> None:
        self.chat = chat

    def revise(self, inp: ReflectionInput, meter: Meter) -> Revision:
        """A revised draft from the failure traces."""
        failures = "\n".join(
            f"- {p.query!r}; rank {p.rank or 'not retrieved'}; won: "
            f"{[c.title for c in p.competitors]}; answer: {p.answer[:300]!r}"
            for p in inp.probes if not p.passed)

        def parse(d: dict[str, Any]) -> Revision:
            draft = NuggetDraft(_str(d, "title", False), _str(d, "body", False),
                                tuple(_strings(d, "anchors")))
            edits = tuple(_strings(d, "edits")) if "edits" in d else ()
            return Revision(draft, edits)

        return self.chat.complete("reflector", {
            "context": inp.correction_context, "title": inp.draft.title,
            "body": inp.draft.body, "anchors": json.dumps(list(inp.draft.anchors)),
            "q0": inp.q0, "failures": failures}, parse, meter)


class OpenAIGenerator:
    """Answer generation with citations through the chat endpoint."""

    def __init__(self, chat: ChatClient) -> None:
        self.chat = chat

    def answer(self, query: str, passages: Sequence[ContextPassage], meter: Meter) -> Answer:
        """The answer; cited ids must be among the passages given."""
        known = {p.id for p in passages}

        def parse(d: dict[str, Any]) -> Answer:
            cited = _strings(d, "cited") if d.get("cited") else []
            unknown = [c for c in cited if c not in known]
            if unknown:
                raise ValueError(f"cited ids not among the passages: {unknown}")
            return Answer(_str(d, "answer"), tuple(cited))

        text = "\n".join(f"[{p.id}] {p.title}: {p.text}" for p in passages)
        return self.chat.complete("generator", {"query": query, "passages": text}, parse,
                                  meter)


class OpenAIJudge:
    """Answer judging through the chat endpoint."""

    def __init__(self, chat: ChatClient) -> None:
        self.chat = chat

    def judge(self, query: str, answer: str, nugget: NuggetDraft, extraction: Extraction,
              meter: Meter, *, facts: Sequence[str] = (), superseded: str = "") -> Judgement:
        """The four judge axes."""

        def parse(d: dict[str, Any]) -> Judgement:
            compliance = _str(d, "compliance")
            if compliance not in ("addresses", "partial", "misses", "contradicts"):
                raise ValueError("compliance must be addresses, partial, misses or contradicts")
            return Judgement(compliance, _bool(d, "faithful"), _bool(d, "non_regression"),
                             _bool(d, "grounded"))

        stated = "\n".join(f"- {f}" for f in facts) or f"- {nugget.body}"
        return self.chat.complete("judge", {"query": query, "title": nugget.title,
                                            "body": nugget.body, "answer": answer,
                                            "facts": stated,
                                            "superseded": superseded or "(not given)"},
                                  parse, meter)


def openai_roles(settings: Settings, **client_kwargs: Any) -> Roles:
    """Every role through one OpenAI-compatible endpoint."""
    chat = ChatClient(settings, **client_kwargs)
    return Roles(actionability=OpenAIActionability(chat), anchors=OpenAIAnchors(chat),
                 probes=OpenAIProbes(chat), reflector=OpenAIReflector(chat),
                 generator=OpenAIGenerator(chat), judge=OpenAIJudge(chat))
