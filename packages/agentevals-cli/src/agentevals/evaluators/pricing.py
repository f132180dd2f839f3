"""What a judge call costs: USD per million input and output tokens, by model.

The built-in table holds the public list prices of common judge models (standard tier, no batch or cache
discounts) when this release was made; prices change, so ``judge_prices:`` in eval_config.yaml overrides or
adds entries, and a model found in neither is counted as unpriced (cost 0, ``priced: false``)::

    prices = Prices({"my-vllm-judge": {"input": 0.0, "output": 0.0}, "gpt-4o": {"input": 2.0, "output": 8.0}})
    prices.cost("gpt-4o-mini-2024-07-18", input_tokens=1200, output_tokens=80)   # -> 0.000228 (table's gpt-4o-mini)
    prices.cost("unknown-model", 10, 10)                                          # -> None

A model name is looked up lower-cased, without a ``provider/`` prefix (``openai/gpt-4o``), first as written,
then by the longest entry it starts with followed by ``-``, ``@`` or ``:`` (dated snapshots such as
``gpt-4o-mini-2024-07-18`` or ``claude-sonnet-4-5@20250929`` take their family's price). The caller's
entries win over the table's at every step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

__all__ = ["PRICES", "Price", "Prices", "check_price_table"]


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


PRICES: dict[str, Price] = {
    # OpenAI (platform.openai.com/docs/pricing)
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4-turbo": Price(10.00, 30.00),
    "gpt-3.5-turbo": Price(0.50, 1.50),
    "o1": Price(15.00, 60.00),
    "o3": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    "text-embedding-3-small": Price(0.02, 0.0),
    "text-embedding-3-large": Price(0.13, 0.0),
    # Anthropic (anthropic.com/pricing)
    "claude-opus-4": Price(15.00, 75.00),
    "claude-opus-4-1": Price(15.00, 75.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-sonnet-4-5": Price(3.00, 15.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-haiku-4-5": Price(1.00, 5.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    # Google (ai.google.dev/pricing; prompts up to 200k tokens)
    "gemini-2.5-pro": Price(1.25, 10.00),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "gemini-2.0-flash": Price(0.10, 0.40),
}
"""The built-in price table (USD per million input / output tokens)."""

_SEPARATORS = ("-", "@", ":")


def check_price_table(table: Mapping[str, Mapping[str, float]]) -> dict[str, Price]:
    """``judge_prices:`` as ``Price`` objects; ``ValueError`` (one line) for an entry that is not
    ``{input: X, output: Y}`` with non-negative numbers."""
    out: dict[str, Price] = {}
    for model, entry in table.items():
        if not isinstance(entry, Mapping) or set(entry) != {"input", "output"}:
            raise ValueError(f"{model!r} must be {{input: USD per 1M tokens, output: USD per 1M "
                             f"tokens}}, got {dict(entry) if isinstance(entry, Mapping) else entry!r}")
        values = [entry["input"], entry["output"]]
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < float("inf") for v in values):
            raise ValueError(f"{model!r}: prices must be non-negative numbers, got {dict(entry)}")
        out[_normal(model)] = Price(float(entry["input"]), float(entry["output"]))
    return out


class Prices:
    """The built-in table with the config's ``judge_prices`` over it."""

    def __init__(self, overrides: Optional[Mapping[str, Mapping[str, float]]] = None) -> None:
        self.overrides = check_price_table(overrides or {})

    def find(self, model: Optional[str]) -> Optional[Price]:
        """The price of ``model``, or None when neither the overrides nor the table know it."""
        if not model:
            return None
        name = _normal(model)
        for table in (self.overrides, PRICES):
            if name in table:
                return table[name]
        for table in (self.overrides, PRICES):
            family = max((key for key in table if name.startswith(key) and name[len(key)] in _SEPARATORS),
                         key=len, default=None)
            if family is not None:
                return table[family]
        return None

    def cost(self, model: Optional[str], input_tokens: int, output_tokens: int) -> Optional[float]:
        """USD for one call's tokens, or None when the model has no price."""
        price = self.find(model)
        return None if price is None else price.cost(input_tokens, output_tokens)


def _normal(model: str) -> str:
    name = model.strip().lower()
    return name.rsplit("/", 1)[-1] if "/" in name else name
