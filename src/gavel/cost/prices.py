"""Prices in USD per million tokens: given on the command line, or a small built-in table.

Providers publish prices per million input and output tokens, so the flags take them in that
unit (``--price 2.5,10``), and a price copied from a pricing page needs no conversion. The
built-in table is a convenience for a first estimate only: prices change, differ by tier and
region, and the table says the date it was checked so a report can mark its figures as
approximate. It knows the providers' batch discount (:data:`BATCH_DISCOUNT`): a run through a
Batch API (``--batch``, ``--judge-batch``) is priced at it, while a price given with ``--price``
is taken as the price of what is sent, batch or not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gavel.errors import ConfigError

#: When the built-in table was checked against the providers' pricing pages.
TABLE_DATE = "2025-08"


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens; ``source`` says where it came from."""

    input: float
    output: float
    source: str = "given"
    #: True for a built-in table entry: an approximate figure, to be checked.
    approximate: bool = False

    def cost(self, input_tokens: float, output_tokens: float) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000

    def per_thousand(self) -> tuple[float, float]:
        """The runner's price table unit (per 1,000 tokens)."""
        return self.input / 1000, self.output / 1000


#: (input, output) USD per million tokens, standard (not batch) tier, short prompts.
#: OpenAI: openai.com/api/pricing; Anthropic: docs.anthropic.com/en/docs/about-claude/pricing;
#: Google: ai.google.dev/gemini-api/docs/pricing.
BUILT_IN: dict[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.0),
    "gpt-4o-mini": (0.15, 0.60),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-5-haiku": (0.80, 4.0),
    "gemini-2.5-pro": (1.25, 10.0),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.0-flash": (0.10, 0.40),
}


#: The share of the standard price a Batch API request costs, by the table name's provider
#: prefix (OpenAI, Anthropic and Google all give 50% off batch requests).
BATCH_DISCOUNT: dict[str, float] = {"gpt-": 0.5, "claude-": 0.5, "gemini-": 0.5}


def parse_price(text: str, flag: str) -> Price:
    """``IN,OUT`` (USD per million tokens) as a :class:`Price`, or a ConfigError naming
    ``flag``."""
    try:
        given, taken = (float(part) for part in text.split(","))
    except ValueError:
        raise ConfigError(
            f"{flag} {text!r}: give two numbers, IN,OUT in USD per million tokens"
        ) from None
    if not all(math.isfinite(v) and v >= 0 for v in (given, taken)):
        raise ConfigError(f"{flag}: prices must be finite numbers, 0 or more")
    return Price(given, taken, source=flag)


def built_in_price(model: str, batch: bool = False) -> Price | None:
    """The table's price for ``model``: the longest table name the model's name starts with
    (``gpt-4o-2024-08-06`` is ``gpt-4o``, ``gpt-4o-mini`` is not), after a provider prefix
    such as ``openai/``; None when the table does not know it. With ``batch``, the provider's
    batch price."""
    name = model.rsplit("/", 1)[-1].lower()
    known = [key for key in BUILT_IN if name == key or name.startswith(key + "-")]
    if not known:
        return None
    key = max(known, key=len)
    given, taken = BUILT_IN[key]
    if batch:
        share = next(v for prefix, v in BATCH_DISCOUNT.items() if key.startswith(prefix))
        return Price(given * share, taken * share, approximate=True,
                     source=f"built-in table ({key}, batch price: {1 - share:.0%} off, "
                     f"{TABLE_DATE})")  # fmt: skip
    return Price(given, taken, source=f"built-in table ({key}, {TABLE_DATE})", approximate=True)


def resolve_price(model: str, text: str | None, flag: str, batch: bool = False) -> Price | None:
    """The price a flag gives (as given, batch or not), else the built-in table's (its batch
    price with ``batch``), else None."""
    if text is not None:
        return parse_price(text, flag)
    return built_in_price(model, batch)
