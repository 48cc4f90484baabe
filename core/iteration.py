"""One engine iteration under continuous batching, and the iterations a request lives through.

An iteration decodes one token for each of `b` running sequences (each at its own
context; the mean suffices because KV bytes and attention FLOPs are linear in context)
and prefills a chunk of `p` prompt tokens that start at position `q`. Its time is the
same roofline as `core.phases`, on the same `Machine`:

    bytes = weights read by the b + p tokens (MoE: the experts they touch)
            + KV of the b sequences at their context + KV of the chunk's prefix + KV written
    FLOPs = decode_flops(b, context) + 2 × active params × p + attention of the chunk
    time  = max(bytes / bandwidth, FLOPs / compute)
            + step overhead + per-sequence overhead × (b + prompts) + tensor-parallel all-reduces

With b = 0 and the whole prompt in one chunk this is exactly `phases.prefill` (batch 1);
with p = 0 it is exactly `phases.decode_step`. Every argument may be a numpy array
(one iteration per entry), so a sweep over concurrency is one call.
References: Yu et al., "Orca" (OSDI 2022) for iteration-level scheduling; Agrawal et al.,
"Sarathi-Serve" (OSDI 2024) for chunked prefill riding along with decodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from core.arraymath import Quantity, maximum
from core.attention import attention_flops_per_token, prefill_chunk_attention_flops
from core.memory import kv_cache_bytes, weight_bytes_read
from core.replica import Replica
from core.step_time import compute_time_s, expert_padding_flops, fixed_time_s, memory_time_s, step_time_s


@dataclass(frozen=True, slots=True)
class Iteration:
    """One iteration (or one per entry when the inputs are arrays)."""

    flops: Quantity
    bytes_moved: Quantity
    memory_time_s: Quantity
    compute_time_s: Quantity
    fixed_time_s: Quantity
    host_time_s: float = 0.0  # an eager engine's launches, overlapping the GPU's work (Machine.host_time_s)

    @property
    def time_s(self) -> Quantity:
        return step_time_s(maximum(self.memory_time_s, self.compute_time_s), self.fixed_time_s, self.host_time_s)


def iteration(
    replica: Replica,
    decode_sequences: Quantity,
    decode_context_tokens: Quantity,
    prefill_tokens: Quantity = 0.0,
    prefill_context_tokens: Quantity = 0.0,
    prefill_sequences: Quantity | None = None,
) -> Iteration:
    """Step time of one iteration of `decode_sequences` decodes plus a prefill chunk.

    The chunk's p tokens belong to `prefill_sequences` prompts (default 1 when p > 0), each
    contributing p/n tokens at positions q+1..q+p/n of its own prompt; attention is linear
    in position, so the chunk's attention FLOPs are p × attention at q + (p/n + 1)/2, in the
    cheaper form for latent attention (`attention.prefill_chunk_attention_flops`).
    Example (Llama 3.1 70B fp8 on one B200, ideal): b = 0, p = 1,000 → 141 TFLOP of
    weights + 1.3 TFLOP of attention over 4,500 TFLOP/s = 31.7 ms, compute-bound.
    """
    model, precision, machine = replica.model, replica.precision, replica.machine
    b, p, q = decode_sequences, prefill_tokens, prefill_context_tokens
    if prefill_sequences is None:
        prefill_sequences = np.greater(p, 0) * 1.0 if isinstance(p, np.ndarray) else float(p > 0)
    weight_flops = 2.0 * model.active_params * (b + p)
    # Each prompt attends over its own tokens only (the chunk splits evenly between them), in the cheaper of
    # latent attention's two forms, as `estimate` prefills; the decodes in the absorbed one.
    attention_flops = b * attention_flops_per_token(model, decode_context_tokens + 1) + prefill_chunk_attention_flops(
        model, q, p, prefill_sequences
    )
    weights = weight_bytes_read(model, precision, b + p)
    n = replica.gpu_count  # heads replicated past the KV-head count are stored and read once per copy
    kv = (
        kv_cache_bytes(model, precision, decode_context_tokens, b, n)
        + kv_cache_bytes(model, precision, q, prefill_sequences, n)
        + kv_cache_bytes(model, precision, p, 1, n)
    )
    return Iteration(
        flops=weight_flops + attention_flops,
        bytes_moved=weights + kv,
        memory_time_s=memory_time_s(machine, weights, kv),
        compute_time_s=compute_time_s(machine, weight_flops + expert_padding_flops(model, machine, p), attention_flops),
        fixed_time_s=fixed_time_s(model, machine, b + p, b + prefill_sequences),
        host_time_s=machine.host_time_s,
    )


@dataclass(frozen=True, slots=True)
class RequestSteps:
    """The iterations one request lives through, given how many others decode beside it.

    Engines pack every waiting prompt into the next iteration, up to the token budget, so
    an iteration carrying prompts carries g of them (1 ≤ g ≤ `most_prompts`); its time is
    interpolated between one prompt and the budget's worth (exact where both are on the
    same side of the roofline's ridge, which is where prefills live).
    """

    decode_s: Quantity  # a decode-only iteration during its reply
    chunks: Quantity  # iterations another's prompt is split over during this reply (sharing the budget with it)
    most_prompts: Quantity  # prompts one iteration can carry: the budget's worth, 1 when chunked over several
    mixed_one_s: Quantity  # an iteration during its reply that also carries one prompt (chunk)
    mixed_most_s: Quantity  # ... that carries `most_prompts` prompts
    prefill_one_s: Quantity  # its own prefill alone: one iteration per chunk, the others decoding alongside
    prefill_most_s: Quantity  # its own prefill sharing each iteration with most_prompts - 1 other prompts
    # most_prompts - 1 (at least 1e-12): the interpolation's span, which a plan's searches use thousands of times.
    _span: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_span", np.maximum(np.asarray(self.most_prompts, dtype=float) - 1, 1e-12))

    def last(self) -> RequestSteps:
        """The last entry alone (1-long arrays): the most others running, where the slots' limit lies."""
        return self.rows(np.array([-1]))

    @classmethod
    def stacked(cls, each: Sequence[RequestSteps], rows: np.ndarray) -> RequestSteps:
        """Several requests' steps over the same entries as one, a row per entry of `rows` (an index into `each`).

        Arrays of shape (len(rows), entries): many setups' open loops evaluated in one pass.
        """
        shape = np.shape(each[0].decode_s)

        def column(name: str) -> np.ndarray:
            values = [getattr(s, name) for s in each]
            if any(np.shape(v) != shape for v in values):  # a scalar field (e.g. one chunk for every entry)
                values = [np.broadcast_to(v, shape) for v in values]
            return np.asarray(np.stack(values)[rows])

        return cls(*(column(name) for name in _STEP_FIELDS))

    @classmethod
    def joined(cls, each: Sequence[RequestSteps]) -> RequestSteps:
        """Several requests' steps (1-D, each its own entries) end to end: one array per field.

        Many setups' closed loops solved in one pass (`closed_loop.closed_loops`).
        """

        def column(name: str) -> np.ndarray:
            return np.concatenate([np.broadcast_to(getattr(s, name), np.shape(s.decode_s)) for s in each])

        return cls(*(column(name) for name in _STEP_FIELDS))

    def padded(self, entries: int) -> RequestSteps:
        """These 1-D steps repeated at their last entry up to `entries` (a setup with fewer slots stacked beside more).

        Past its own slots a setup's requests wait, and those that run are its last entry's: the
        open loop masks the padded states' own terms and reads their times at the last slot.
        """
        count = int(np.shape(self.decode_s)[0])

        def column(name: str) -> np.ndarray:
            values = np.broadcast_to(getattr(self, name), (count,))
            # np.pad(mode="edge")'s numbers, without its overhead (a plan pads dozens of setups)
            return values if count == entries else np.concatenate((values, np.repeat(values[-1:], entries - count)))

        return RequestSteps(*(column(name) for name in _STEP_FIELDS))

    def rows(self, which: np.ndarray) -> RequestSteps:
        """The rows `which` of stacked steps (`stacked`)."""
        return RequestSteps(*(np.asarray(getattr(self, name))[which] for name in _STEP_FIELDS))

    def _between(self, one: Quantity, most: Quantity, prompts: Quantity) -> Quantity:
        # np.minimum/np.maximum rather than np.clip: the same numbers, a third of the overhead on small arrays.
        return one + (most - one) * np.minimum(np.maximum((prompts - 1) / self._span, 0.0), 1.0)

    def mixed_s(self, prompts: Quantity = 1.0) -> Quantity:
        return self._between(self.mixed_one_s, self.mixed_most_s, prompts)

    def prefill_s(self, prompts: Quantity = 1.0) -> Quantity:
        return self._between(self.prefill_one_s, self.prefill_most_s, prompts)

    def stall_s(self, prompts: Quantity = 1.0) -> Quantity:
        """What one other prompt adds to this request's reply: chunks × (mixed − decode) / prompts sharing."""
        return self.chunks * (self.mixed_s(prompts) - self.decode_s) / prompts


_STEP_FIELDS = tuple(f.name for f in fields(RequestSteps) if f.init)  # what `stacked` and `rows` copy


def prompt_chunks(replica: Replica, prompt_tokens: Quantity, decoding: Quantity) -> Quantity:
    """Iterations a prompt needs: ⌈P / (token budget − decodes)⌉ when chunked, else 1.

    vLLM's budget (max_num_batched_tokens) counts the decodes riding along; an engine
    without chunked prefill puts the whole prompt in one iteration. Example: 8,192 prompt
    tokens, budget 8,192, 64 decodes → 2 chunks.
    """
    engine = replica.engine
    if not engine.chunked_prefill:
        return np.ones_like(prompt_tokens * decoding * 1.0)
    room = np.maximum(engine.max_batched_tokens - np.asarray(decoding, dtype=float), 1.0)
    return np.ceil(np.asarray(prompt_tokens, dtype=float) / room)


def most_prompts(replica: Replica, prompt_tokens: Quantity, decoding: Quantity) -> Quantity:
    """Prompts one iteration can carry beside `decoding` decodes: (budget − decodes) / P.

    Chunking engines split the last prompt, so the share is fractional; engines that
    prefill whole prompts carry ⌊(budget − decodes) / P⌋; never fewer than one.
    Example: 8,192 − 64 over 1,000-token prompts → 8.128 (vLLM) or 8 (TensorRT-LLM).
    """
    room = np.maximum(replica.engine.max_batched_tokens - np.asarray(decoding, dtype=float), 1.0)
    share = room / np.asarray(prompt_tokens, dtype=float)
    return np.maximum(share if replica.engine.chunked_prefill else np.floor(share), 1.0)


def _split(replica: Replica, prompt_tokens: Quantity, during_reply: np.ndarray) -> tuple[Quantity, Quantity, Quantity]:
    """(chunks, tokens per chunk, mean prefix) of a prompt split into k equal chunks.

    Equal chunks have the same total FLOPs as full chunks plus a remainder; chunk i starts
    at i·P/k, so the mean prefix is P(k-1)/(2k).
    """
    chunks = prompt_chunks(replica, prompt_tokens, during_reply)
    return chunks, prompt_tokens / chunks, prompt_tokens * (chunks - 1) / (2 * chunks)


def request_steps(
    replica: Replica,
    prompt_tokens: Quantity,
    decode_context_tokens: float,
    decoding_during_reply: Quantity,
    decoding_during_prefill: Quantity,
) -> RequestSteps:
    """Decode, mixed and prefill iterations for a request of `prompt_tokens` (arrays welcome)."""
    during_reply = np.asarray(decoding_during_reply, dtype=float)
    during_prefill = np.asarray(decoding_during_prefill, dtype=float)
    # Another's prompt during this reply shares the budget with this request's decode too; this
    # request's own prompt only with the others' (at concurrency 1, none: an 8,192-token prompt
    # is one iteration of vLLM's 8,192 budget, as `estimate` prefills it, not two).
    chunks, chunk, prefix = _split(replica, prompt_tokens, during_reply)
    most = np.where(chunks > 1, 1.0, most_prompts(replica, prompt_tokens, during_reply))
    own_chunks, own_chunk, own_prefix = _split(replica, prompt_tokens, during_prefill)

    # The five iterations as one call on stacked arrays (element by element the same arithmetic as
    # five calls): a decode-only one, then one carrying 1 or `most` prompts, during the reply and
    # during its own prefill. A plan builds this for dozens of setups; one call is a fifth the overhead.
    shape = np.broadcast_shapes(
        np.shape(during_reply), np.shape(during_prefill), np.shape(chunk), np.shape(most), np.shape(own_chunk)
    )  # fmt: skip

    def rows(*values: Quantity) -> np.ndarray:
        stacked = np.empty((len(values), *shape))
        for i, value in enumerate(values):
            stacked[i] = value  # assignment broadcasts (np.broadcast_to costs more than the maths here)
        return stacked

    times = iteration(
        replica,
        rows(during_reply, during_reply, during_reply, during_prefill, during_prefill),
        decode_context_tokens,
        rows(0.0, chunk, chunk * most, own_chunk, own_chunk * most),
        rows(0.0, prefix, prefix, own_prefix, own_prefix),
        rows(0.0, 1.0, most, 1.0, most),
    ).time_s
    return RequestSteps(
        decode_s=times[0],
        chunks=chunks,
        most_prompts=most,
        mixed_one_s=times[1],
        mixed_most_s=times[2],
        prefill_one_s=own_chunks * times[3],
        prefill_most_s=own_chunks * times[4],
    )


def lone_prefill_s(
    replica: Replica, prompt_tokens: Quantity, decode_context_tokens: float, decoding_during_prefill: Quantity
) -> Quantity:
    """`request_steps(...).prefill_one_s` alone: a prompt's own prefill, no other prompt sharing it.

    One iteration per chunk, `decoding_during_prefill` sequences decoding beside it and sharing
    the token budget with it, as in `request_steps`.
    """
    during_prefill = np.asarray(decoding_during_prefill, dtype=float)
    chunks, chunk, prefix = _split(replica, prompt_tokens, during_prefill)
    return chunks * iteration(replica, during_prefill, decode_context_tokens, chunk, prefix, 1.0).time_s
