"""The sidebar's small sentences (app/sidebar_text.py), where a number's words depend on the number."""

from __future__ import annotations

import pytest

from app.sidebar_text import bits_note


@pytest.mark.parametrize(
    ("bits", "expected"),
    [
        (1.0, "1 bit per weight."),  # a link's wbits=0 lands here (the range's floor): singular
        (8.0, "8 bits per weight: fp8 / int8."),
        (4.5, "4.5 bits per weight: int4 with group scales (AWQ, GPTQ), MXFP4."),
        (3.0, "3 bits per weight."),  # no usual format at this width: nothing named
    ],
)
def test_a_width_is_named_in_the_right_number(bits: float, expected: str) -> None:
    assert bits_note(bits) == expected


def test_a_width_beside_the_experts_own_says_so() -> None:
    # gpt-oss ships bf16 beside MXFP4 experts: "16 bits per weight … (4.46 bits per weight on average)" read as
    # a contradiction; the 16 is the rest's, the experts' width is the next input.
    release = "MXFP4 experts (4.25 bits), bf16 attention (4.46 bits per weight on average)"
    assert bits_note(16.0, release, experts_apart=True) == (
        "16 bits per weight outside the experts, as the model ships: " + release + "."
    )
