"""One request shape: prompt and reply lengths, the prefix cache, the batch and the GPUs it runs on."""

from __future__ import annotations

from dataclasses import dataclass

from core.fields import described, validate
from core.validation import MAX_TOKENS


@dataclass(frozen=True, slots=True)
class Workload:
    """One request shape: prompt and reply lengths, how many run together, on how many GPUs."""

    prompt_tokens: int = described(
        200, key="prompt", kind=int, label="Prompt tokens", unit="tokens", low=1, high=MAX_TOKENS, step=100,
        flag="--prompt-tokens",
        help="Tokens in the prompt (about ¾ of a word each). Read in one parallel pass: prefill.",
    )  # fmt: skip
    output_tokens: int = described(
        500, key="out", kind=int, label="Output tokens", unit="tokens", low=1, high=1_000_000, step=50,
        flag="--output-tokens", help="Tokens in the reply. Each one is a full pass over the model: decode.",
    )  # fmt: skip
    batch_size: int = described(
        1, key="batch", kind=int, label="Batch size", unit="requests", low=1, high=1_000_000, flag="--batch",
        help="Requests decoded together. One weight read serves them all.",
    )  # fmt: skip
    cached_prompt_tokens: int = described(
        0, key="cached", kind=int, label="Cached prompt tokens", unit="tokens", low=0, high="prompt_tokens",
        step=100, flag="--cached-tokens",
        help="Prompt tokens already in a prefix cache: not prefilled again, billed at the cached price.",
    )  # fmt: skip
    gpu_count: int = described(
        1, key="gpus", kind=int, label="GPU count", unit="GPUs", low=1, high=1024, flag="--gpus",
        help="GPUs sharing one copy of the model (tensor parallel): bandwidth, compute and memory add up.",
    )  # fmt: skip
    cache_write_tokens: int = described(
        0, key="cwrite", kind=int, label="Cache writes per reply (tokens)", unit="tokens", low=0,
        high="prompt_tokens - cached_prompt_tokens", step=100, flag="--cache-write-tokens",
        help="Prompt tokens each reply writes into the provider's prompt cache (billed at the cache-write price).",
    )  # fmt: skip

    def __post_init__(self) -> None:
        validate(self)  # cache writes ≤ prompt − cached is cache_write_tokens' own named bound

    @property
    def sequence_tokens(self) -> int:
        """What one sequence holds in its KV cache by the end of the reply."""
        return self.prompt_tokens + self.output_tokens

    @property
    def new_prompt_tokens(self) -> int:
        """Prompt tokens each sequence's prefill computes: the uncached ones, at least one.

        At least one, because the first output token needs one forward pass even when the
        whole prompt is cached.
        """
        return max(self.prompt_tokens - self.cached_prompt_tokens, 1)

    @property
    def prefill_tokens(self) -> int:
        """Tokens the one prefill pass computes for the whole static batch: batch × new prompt tokens.

        Everyone prefills together, so the TTFT is one pass over all of them. Example:
        batch 256 of 200-token prompts, nothing cached → 51,200 tokens.
        """
        return self.batch_size * self.new_prompt_tokens

    @property
    def mean_decode_context_tokens(self) -> float:
        """The mean context the reply's decode steps read: prompt + (output - 1) / 2.

        Step j of the reply reads prompt + j tokens, j = 0..output - 1. Example: a
        100-token prompt and a 4,000-token reply → 100 + 3,999 / 2 = 2,099.5.
        """
        return self.prompt_tokens + (self.output_tokens - 1) / 2
