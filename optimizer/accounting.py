"""LLM call accounting and budgets, per nugget.

Every role call goes through a :class:`Meter`: it counts calls, prompt and completion
tokens, cost and time per role, and enforces the per-nugget budget before each call.
The local backend reports token counts estimated from words (``estimated=True``).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from nuggetflow.errors import BudgetExceededError


@dataclass(frozen=True)
class Budget:
    """Per-nugget ceilings; 0 means unlimited."""

    max_calls: int = 0
    max_tokens: int = 0


@dataclass
class Meter:
    """Counts LLM calls, tokens, cost and time for one nugget."""

    budget: Budget = field(default_factory=Budget)
    calls: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0
    estimated: bool = False
    started: float = field(default_factory=time.perf_counter)
    #: role -> [prompt tokens, completion tokens, cost in USD]
    usage: dict[str, list[float]] = field(default_factory=dict)

    @property
    def total_calls(self) -> int:
        """All role calls so far."""
        return sum(self.calls.values())

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def seconds(self) -> float:
        """Wall time since the meter was created."""
        return time.perf_counter() - self.started

    def check(self, role: str) -> None:
        """Raise BudgetExceededError if one more call of ``role`` would break the budget."""
        b = self.budget
        if b.max_calls and self.total_calls + 1 > b.max_calls:
            raise BudgetExceededError(f"call budget of {b.max_calls} used up before {role}",
                                      field="budget_calls")
        if b.max_tokens and self.tokens >= b.max_tokens:
            raise BudgetExceededError(f"token budget of {b.max_tokens} used up before {role}",
                                      field="budget_tokens")

    def record(self, role: str, prompt_tokens: int, completion_tokens: int,
               cost_usd: float = 0.0, estimated: bool = False) -> None:
        """Count one completed call."""
        self.calls[role] += 1
        used = self.usage.setdefault(role, [0, 0, 0.0])
        used[0] += prompt_tokens
        used[1] += completion_tokens
        used[2] += cost_usd
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cost_usd += cost_usd
        self.estimated = self.estimated or estimated

    def summary(self) -> dict[str, object]:
        """A JSON-ready summary."""
        return {"llm_calls": self.total_calls, "calls_by_role": dict(self.calls),
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "tokens": self.tokens,
                "tokens_estimated": self.estimated, "cost_usd": round(self.cost_usd, 6),
                "retries": self.retries, "seconds": round(self.seconds, 3),
                "usage_by_role": {r: {"prompt_tokens": int(u[0]), "completion_tokens": int(u[1]),
                                      "cost_usd": round(u[2], 6)}
                                  for r, u in sorted(self.usage.items())}}


def estimate_tokens(*texts: str) -> int:
    """A rough token count (4/3 per word) for backends that do not report usage."""
    return sum(round(len(t.split()) * 4 / 3) for t in texts)
