"""Request lengths under load: fixed, or uniform between a low fraction and the maximum.

InferenceX (vLLM's `benchmark_serving`, random dataset, `--random-range-ratio 0.8`) draws
each prompt and each reply length uniformly between 80 % and 100 % of the nominal
length; `low_fraction = 1` means every request has exactly the nominal lengths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.specs import MAX_TOKENS
from core.validation import check_int, check_number

if TYPE_CHECKING:
    from core.workload import Workload


@dataclass(frozen=True, slots=True)
class RequestLengths:
    """Prompt and reply lengths: each uniform on [low_fraction × nominal, nominal]."""

    prompt_tokens: int
    output_tokens: int
    low_fraction: float = 1.0

    @classmethod
    def of(cls, workload: Workload, low_fraction: float = 1.0) -> RequestLengths:
        """A workload's nominal prompt and reply, fixed unless `low_fraction` varies them."""
        return cls(workload.prompt_tokens, workload.output_tokens, low_fraction)

    def __post_init__(self) -> None:
        check_int("prompt_tokens", self.prompt_tokens, 1, MAX_TOKENS)
        check_int("output_tokens", self.output_tokens, 1, MAX_TOKENS)
        check_number("low_fraction", self.low_fraction, 0.01, 1)

    @property
    def mean_fraction(self) -> float:
        return (1 + self.low_fraction) / 2

    @property
    def squared_variation(self) -> float:
        """Squared coefficient of variation of a uniform [f·n, n] length: (1-f)² / (3 (1+f)²).

        Example: 80-100 % → 0.04 / 9.72 = 0.0041; fixed lengths → 0.
        """
        f = self.low_fraction
        return (1 - f) ** 2 / (3 * (1 + f) ** 2)

    @property
    def mean_prompt_tokens(self) -> float:
        """Example: 8,192 nominal at 80-100 % → 7,372.8."""
        return self.prompt_tokens * self.mean_fraction

    @property
    def mean_output_tokens(self) -> float:
        return self.output_tokens * self.mean_fraction

    def prompt_tokens_quantile(self, q: float) -> float:
        """The q-th quantile of the prompt length (the minimum at q = 0, the nominal at q = 1)."""
        return self.prompt_tokens * (self.low_fraction + q * (1 - self.low_fraction))

    @property
    def mean_decode_context_tokens(self) -> float:
        """Cached tokens at an average decode step: P̄ + (E[M²] / E[M] - 1) / 2.

        A reply of M tokens decodes at contexts P..P+M-1 (mean P + (M-1)/2); longer replies
        hold more steps, so steps weigh replies by their length: E[M²]/E[M] = M̄ (1 + cv²).
        Example: 1,000 / 500 fixed → 1000 + 499/2 = 1,249.5.
        """
        return self.mean_prompt_tokens + (self.mean_output_tokens * (1 + self.squared_variation) - 1) / 2

    @property
    def mean_tokens_held(self) -> float:
        """KV-cache tokens a running sequence holds, averaged over its life (paged, at its length)."""
        return self.mean_decode_context_tokens + 0.5

    @property
    def mean_tokens_reserved(self) -> float:
        """Tokens an engine that guarantees no eviction reserves per sequence: prompt + whole reply."""
        return self.mean_prompt_tokens + self.mean_output_tokens
