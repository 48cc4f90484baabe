"""The frame every page shares: the link read once, the sidebar built from the descriptions, sharing.

AppTest runs the script without a browser: it seeds bound widgets from the query string
as a browser load does, but it does not write the address bar back (the browser tests do).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from app import compute, link
from app.page_inputs import BY_KEY
from core import presets
from core.efficiency import CALIBRATED, IDEAL
from core.engine import ENGINES
from core.flat import FLAT_KEYS
from core.scenario import Scenario

LLAMA_70B_FP8 = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "engine": "typical"}
PAGES = ["overview", "latency", "roofline", "bill", "lesson"]


def scenario(at: AppTest) -> Scenario:
    return at.session_state["app_scenario"]


def unescape(text: str) -> str:
    return text.replace("\\", "")


def opened(at: AppTest, box: str) -> AppTest:
    """A lazy sidebar expander opened, as a click does (its inputs are drawn only while open or edited)."""
    at.session_state[box] = True
    return at.run()


def shared(at: AppTest) -> str:
    """The link in the share box (its lazy expander opened)."""
    at.session_state["sb_share_open"] = True
    at.run()
    (code,) = at.sidebar.code
    return str(code.value)


def test_the_default_run_is_the_lesson_and_its_link_is_the_bare_page(open_app) -> None:
    at = open_app()
    assert scenario(at) == Scenario.lesson()
    assert not at.warning
    assert dict(at.query_params) == {}  # nothing to clean: the query was not rewritten
    # AppTest has no request URL: the share box falls back to the page's path.
    assert shared(at) == "/"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_at_the_defaults_and_with_a_real_model(open_app, page: str) -> None:
    for params in ({}, LLAMA_70B_FP8):
        at = open_app(page, **params)
        assert not at.exception
        assert scenario(at) == Scenario.from_flat(params)


def test_the_share_link_holds_the_page_the_scenario_and_the_page_inputs(open_app) -> None:
    at = open_app("latency", **LLAMA_70B_FP8, seed="7", out="1000")
    url = shared(at)
    parts = urlsplit(url)
    assert parts.path == "/latency"
    query = dict(parse_qsl(parts.query))
    # engine=typical is the H100's own default, so the short form leaves it out.
    assert query == {k: v for k, v in {**LLAMA_70B_FP8, "out": "1000", "seed": "7"}.items() if k != "engine"}
    # The same link opened fresh gives the same scenario and the same seed.
    again = open_app("latency", **query)
    assert scenario(again) == scenario(at) and again.number_input(key="seed").value == 7


def test_share_query_leaves_out_defaults() -> None:
    assert link.share_query(Scenario.lesson(), {"seed": 36, "p1": None, "reveal": False}) == ""
    assert link.share_query(Scenario.lesson(), {"seed": 7, "reveal": True}) == "?seed=7&reveal=true"


def test_a_bad_link_is_cleaned_with_one_warning_per_problem(open_app) -> None:
    at = open_app(prompt="1e308", out="abc", model="llama-3.1-8b", cached="x", seed="-5", junk="1")
    shown = [unescape(w.value) for w in at.main.warning]
    assert shown[:5] == [
        "Ignored unknown parameter(s): junk.",
        "prompt=1e308 is outside 1 to 10,000,000 tokens: using 10,000,000.",
        "Ignored out=abc: out must be a number from 1 to 1,000,000 tokens.",
        "Ignored cached=x: cached must be a number of at least 0 tokens.",
        "seed=-5 is outside 0 to 4,294,967,295: using 0.",
    ]
    # Then what the repaired scenario cannot do: 10,000,500 tokens of Llama 3.1 8B's KV (1,310.8 GB) on
    # the toy GPU's 80 GB, past its 131,072-token window.
    assert [text.split(":")[0] for text in shown[5:]] == [
        "Llama 3.1 8B at batch 1 does not fit on 1 × Toy GPU (Day 36 lesson)",
        "10,000,000 prompt + 500 reply = 10,000,500 tokens per sequence exceed Llama 3.1 8B's documented "
        "context window of 131,072 tokens",
    ]
    # The widgets start from the cleaned values, and the address bar was rewritten to them.
    assert at.number_input(key="prompt").value == 10_000_000 and at.number_input(key="out").value == 500
    assert dict(at.query_params) == {"model": "llama-3.1-8b", "prompt": "10000000", "seed": "0"}


def test_hostile_values_in_every_parameter_warn_escaped_and_never_raise(open_app) -> None:
    hostile = "[x](javascript:alert(1)) <script>"
    at = open_app(**{key: hostile for key in (*FLAT_KEYS, *BY_KEY)})
    assert not at.exception
    for warning in at.main.warning:
        assert "](" not in warning.value and "<script>" not in warning.value  # every mark escaped
    assert scenario(at).model.name == "x(javascriptalert(1)) script"  # names keep plain characters only


def test_link_warnings_stay_until_the_scenario_changes(open_app) -> None:
    at = open_app(out="abc")
    assert len(at.main.warning) == 1
    at.number_input(key="out").set_value(800).run()
    assert not at.main.warning


def test_a_bad_combination_warns_in_the_sidebar_and_keeps_the_last_valid_scenario(open_app) -> None:
    at = opened(open_app(prompt="300"), "sb_caching_open")
    before = scenario(at)
    at.number_input(key="cached").set_value(400).run()
    (warning,) = at.sidebar.warning
    assert unescape(warning.value).startswith(
        "Cached prompt tokens must be a whole number from 0 to 300 tokens (prompt), got '400'."
    )
    assert scenario(at) == before


def test_weights_that_do_not_fit_warn_with_the_fix(open_app) -> None:
    at = open_app(model="llama-3.1-405b", gpu="h100-sxm")
    (warning,) = at.main.warning  # over the numbers: a phone hides the sidebar
    assert not at.sidebar.warning
    # 405.85 B × 2 bytes = 811.7 GB of weights + the KV cache; 80 GB per GPU → 11 GPUs. A smaller
    # batch cannot help when the weights alone overflow, so it is not offered.
    assert unescape(warning.value).endswith(
        "the weights alone do not fit. Use at least 11 GPUs or fewer bits per weight."
    )


@pytest.mark.parametrize(
    ("link", "fix"),
    [
        # DeepSeek-V3 (671.03 B) at 16 bits is 1,342.1 GB on 8 × 141 GB = 1,128 GB; at 8 bits, as it ships,
        # 671.03 GB + 0.2 GB of KV cache for one request fits: the fix says how few bits are enough.
        (
            {"model": "deepseek-v3", "gpu": "h200", "gpus": "8", "wbits": "16"},
            "Use more GPUs or fewer bits per weight: at 8 bits (fp8 or int8) the weights take 671.03 GB and one "
            "request fits.",
        ),
        # Llama 3.1 70B on one H100 80 GB: 8 bits is 70.55 GB, which the datasheet's 80 GB holds but a server does
        # not (the typical engine uses 80 × 0.9 − 3.22 = 68.78 GB); 4.5 bits is 70.55 × 4.5 / 8 = 39.68 GB.
        (
            {"model": "llama-3.1-70b", "gpu": "h100-sxm"},
            "Use at least 2 GPUs or fewer bits per weight: at 4.5 bits (int4 AWQ/GPTQ or MXFP4) the weights take "
            "39.68 GB and one request fits.",
        ),
        # On one 40 GB A100 not even 4.5 bits: 39.68 GB is past the 40 × 0.9 − 3.22 = 32.78 GB an engine uses,
        # so no width is offered (it offered 4.5 bits, which a server would not start).
        (
            {"model": "llama-3.1-70b", "gpu": "a100-40gb"},
            "the weights alone do not fit. Use at least 4 GPUs or fewer bits per weight.",
        ),
    ],
)
def test_weights_that_do_not_fit_say_how_few_bits_would(open_app, link, fix) -> None:
    (warning,) = open_app(**link).main.warning
    assert unescape(warning.value).replace("\\", "").endswith(fix), warning.value


def test_an_engine_that_does_not_run_on_the_gpu_is_warned_over_the_page(open_app) -> None:
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", engine="mlx")
    assert [unescape(w.value).replace("\\", "") for w in at.main.warning] == [
        "MLX runs on Apple silicon alone, and NVIDIA H100 SXM 80GB is not: these are its costs on hardware it "
        "cannot use."
    ]


def test_the_width_that_fits_is_one_click_away(open_app) -> None:
    # DeepSeek-V3 at 16 bits (1,342 GB) on 8 × H200 (1,128 GB) does not fit; at 8 bits, as it ships, it does.
    at = open_app(model="deepseek-v3", gpu="h200", gpus="8", wbits="16")
    (button,) = [b for b in at.main.button if b.key == "use_fitting_bits"]
    assert button.label == "Use 8-bit weights"
    button.click().run()
    assert scenario(at).precision.weight_bits == 8
    assert not at.main.warning and not [b for b in at.main.button if b.key == "use_fitting_bits"]
    # Not offered where no width helps (405B on one H100) or a batch is the problem.
    assert not [b for b in open_app(model="llama-3.1-405b", gpu="h100-sxm").main.button if b.key == "use_fitting_bits"]


def test_a_setup_a_server_would_not_start_is_warned_over_the_page(open_app) -> None:
    # 8-bit Llama 3.1 70B (70.55 GB) fits an A100's 80 GB, so the Overview said "fits" while the Capacity
    # plan, sizing on the 68.78 GB the typical engine uses, said "does not fit": now the page says why.
    at = open_app(model="llama-3.1-70b", gpu="a100-80gb-sxm", wbits="8")
    warning, box = at.main.warning
    assert unescape(warning.value).replace("\\", "") == (
        "Llama 3.1 70B fits the 80.0 GB of 1 × NVIDIA A100 80GB SXM, but not what a server leaves itself: 70.5 GB "
        "of weights exceed the 68.8 GB the typical engine may use on 1 × 80 GB; a real server would not start it, and "
        "the Capacity plan counts it as not fitting."
    )
    # The page's own memory box agrees with it: it said "Fits." in green under that warning.
    # 70.55 GB + one 700-token sequence's 700 × 327,680 B = 0.23 GB of KV fit the card's 80 GB, and
    # (80 - 70.55) ÷ 0.229 = 41.2 → 41 sequences would; a server's 68.8 GB holds not even the weights.
    assert box.value.startswith("Fits the card, not a server (the warning above says why). Per GPU: weights 70.55 GB")
    assert box.value.endswith("The largest batch the card holds at 700 tokens per sequence: **41**; a server, none.")
    assert not [s for s in at.main.success if "Fits." in s.value]
    # ... and the wall's advice does not offer "up to the 41 that fit".
    (wall,) = [i.value for i in at.main.info if "**Memory-bound.**" in i.value]
    assert "a server holds not one request here" in wall and "that fit" not in wall


@pytest.mark.parametrize(
    ("link", "fix"),
    [
        # Llama 3.1 8B on one L4 (24 GB), 100,000 + 500 tokens: one sequence's KV is 100,500 × 131,072 B =
        # 13.2 GB, 29.2 GB with the 16.06 GB of weights → 2 GPUs; batch 1 is already the least.
        (
            {"gpu": "l4", "prompt": "100000"},
            "not one sequence of 100,500 tokens fits beside the weights. "
            "Use at least 2 GPUs, fewer bits per KV value, or shorter sequences.",
        ),
        # On one H100, 8,192-token sequences, batch 100: (80 - 16.06) GB ÷ (8,192 × 131,072 B) = 59.5 → 59 fit;
        # 16.06 + 100 × 1.074 GB = 123.4 GB → 2 GPUs.
        (
            {"gpu": "h100-sxm", "prompt": "7192", "out": "1000", "batch": "100"},
            "at most 59 sequences of 8,192 tokens fit. Use at least 2 GPUs, fewer bits per weight, or a batch of at most 59.",
        ),
    ],
)
def test_a_memory_warning_offers_only_the_fixes_that_help(open_app, link, fix) -> None:
    (warning,) = open_app(model="llama-3.1-8b", **link).main.warning
    assert unescape(warning.value).endswith(fix), warning.value


@pytest.mark.parametrize("page", ["plan", "compare"])
def test_pages_that_size_their_own_fleets_keep_the_sidebar_gpus_warnings_beside_them(open_app, page) -> None:
    # The plan and Compare run every priced GPU (each option's), not the sidebar's 3 × H100: that a
    # 405B does not fit there, or split over 3, is said beside those inputs, not over the plan. Its
    # 140,000 + 500 tokens past the 131,072-token window are the plan's lengths too: said over it.
    at = open_app(model="llama-3.1-405b", gpu="h100-sxm", gpus="3", prompt="140000", page=page)
    main = [w.value.replace("\\", "") for w in at.main.warning]
    assert [w for w in main if "context window of 131,072 tokens" in w] and not [
        w for w in main if "does not fit on 3" in w or "split evenly" in w
    ], main
    side = [w.value.replace("\\", "") for w in at.sidebar.warning]
    assert any("does not fit on 3 × NVIDIA H100" in w for w in side) and any("split evenly" in w for w in side)


def test_the_lesson_page_keeps_the_scenarios_warnings_beside_its_inputs(open_app) -> None:
    # The lesson runs the toy machine whatever the sidebar says: a 405B that does not fit is said in the
    # sidebar (the link's values show it), never over the lesson's own numbers.
    at = open_app(model="llama-3.1-405b", gpu="h100-sxm", page="lesson")
    assert not at.main.warning
    (warning,) = at.sidebar.warning
    assert "the weights alone do not fit" in warning.value


def test_automatic_efficiency_follows_the_gpu_and_a_chosen_one_stays(open_app) -> None:
    at = opened(open_app(), "sb_efficiency_open")
    at.selectbox(key="gpu").set_value("h100-sxm").run()
    assert scenario(at).efficiency == CALIBRATED
    assert at.number_input(key="mbu").value == CALIBRATED.mbu  # the numbers show the set in force
    at.radio(key="engine").set_value("ideal").run()
    at.selectbox(key="gpu").set_value("a100-80gb-sxm").run()
    assert scenario(at).efficiency == IDEAL and at.number_input(key="mbu").value == 1.0


def test_llama_cpp_follows_the_gpu_to_its_backend_and_a_backend_picked_by_name_stays(open_app) -> None:
    # Picking llama.cpp on the M2 Ultra preset runs its Metal profile, and the efficiency numbers show
    # that profile's (no expert padding, 80 µs per MoE layer); moving to the Radeon 8060S moves it to
    # the Radeon profile (dequantising share 0.48), to an H100 back to llama.cpp (padding 100).
    at = opened(open_app(model="qwen3-30b-a3b", gpu="m2-ultra"), "sb_efficiency_open")
    at.radio(key="engine").set_value("llama.cpp").run()
    assert at.radio(key="engine").value == "llama.cpp-metal"
    assert scenario(at).efficiency == ENGINES["llama.cpp-metal"].efficiency(presets.model("qwen3-30b-a3b"))
    assert at.number_input(key="expertpad").value == 0
    at.selectbox(key="gpu").set_value("radeon-8060s").run()
    assert at.radio(key="engine").value == "llama.cpp-radeon" and at.number_input(key="dqmfu").value == 0.48
    assert scenario(at).to_flat(minimal=True)["engine"] == "llama.cpp-radeon"  # the link says which
    at.selectbox(key="gpu").set_value("h100-sxm").run()
    assert at.radio(key="engine").value == "llama.cpp" and at.number_input(key="expertpad").value == 100
    # A backend picked by name on another GPU stays: the user asked for it.
    at.radio(key="engine").set_value("llama.cpp-radeon").run()
    assert at.radio(key="engine").value == "llama.cpp-radeon"
    # Other engines never move.
    at.radio(key="engine").set_value("vllm").run()
    at.selectbox(key="gpu").set_value("m2-ultra").run()
    assert at.radio(key="engine").value == "vllm"


def test_a_link_pairing_llama_cpp_with_a_mac_keeps_it_and_says_which_backend_has_its_costs(open_app) -> None:
    at = open_app(model="qwen3-30b-a3b", gpu="m2-ultra", engine="llama.cpp")
    assert at.radio(key="engine").value == "llama.cpp"  # a link reproduces what it says
    notes = [alert.value.replace("\\", "") for alert in at.main.info]  # shown as plain text: markup escaped
    assert any(n.startswith("On Apple silicon llama.cpp runs as engine llama.cpp-metal;") for n in notes)
    assert not any(
        "runs as engine" in a.value
        for a in open_app(model="qwen3-30b-a3b", gpu="m2-ultra", engine="llama.cpp-metal").main.info
    )


def test_a_gpu_count_the_engines_refuse_is_warned_over_the_page(open_app) -> None:
    # gpus=3 for Llama 3.1 70B: 64 query heads over 3 GPUs (core's test derives the sizes that split).
    at = open_app(model="llama-3.1-70b", gpu="h100-sxm", gpus="3")
    shown = [w.value.replace("\\", "") for w in at.main.warning]  # plain text: markup escaped
    assert any(
        w.startswith("Llama 3.1 70B's 64 query heads and 8 KV heads do not split evenly over 3 GPUs")
        and w.endswith("1, 2, 4, 8 or 16 GPUs do.")
        for w in shown
    ), shown
    assert not any(
        "split evenly" in w.value for w in open_app(model="llama-3.1-70b", gpu="h100-sxm", gpus="4").main.warning
    )


def test_editing_a_number_keeps_the_preset_and_travels_beside_it(open_app) -> None:
    at = opened(open_app(model="llama-3.1-8b"), "sb_numbers_open")
    at.number_input(key="layers").set_value(40).run()
    edited = scenario(at).model
    assert (edited.id, edited.layers, edited.kv_heads) == ("llama-3.1-8b", 40, 8)
    assert scenario(at).to_flat(minimal=True) == {"model": "llama-3.1-8b", "layers": "40"}
    # Picking another preset starts from its numbers again.
    at.selectbox(key="model").set_value("qwen3-8b").run()
    assert scenario(at).model == presets.model("qwen3-8b")
    assert at.number_input(key="layers").value == presets.model("qwen3-8b").layers


def test_a_custom_model_gains_a_kv_cache_when_its_shape_is_filled_in(open_app) -> None:
    # The custom base (the toy's numbers) has no attention shape: its five boxes start empty.
    at = opened(open_app(model="custom"), "sb_numbers_open")
    assert at.number_input(key="layers").value is None
    shape = {"layers": 32, "hidden": 4096, "qheads": 32, "kvheads": 8, "headdim": 128}
    for key, value in list(shape.items())[:-1]:
        at.number_input(key=key).set_value(value).run()
        assert "given together" in at.sidebar.warning[0].value  # four of five: not yet a shape
    at.number_input(key="headdim").set_value(128).run()
    model = scenario(at).model
    # Llama-3.1-8B's shape: 2 × 32 layers × 8 KV heads × 128 × 2 bytes = 131,072 bytes per token.
    assert model.kv_elements_per_token_per_layer * model.layers * 2 == 131_072 and not at.sidebar.warning
    at.number_input(key="layers").set_value(None).run()
    assert "given together" in at.sidebar.warning[0].value


NUMBER_KEYS = {"layers", "mbu", "cached", "bw"}  # one from each lazy box: model, efficiency, caching, GPU


def _drawn(at: AppTest) -> set[str]:
    return {w.key for w in at.sidebar.number_input} & NUMBER_KEYS


def test_closed_boxes_at_their_defaults_draw_no_inputs(open_app) -> None:
    at = open_app(model="llama-3.1-8b")
    assert _drawn(at) == set()  # none drawn: each widget costs every rerun
    assert opened(at, "sb_numbers_open") and _drawn(at) == {"layers", "bw"}
    assert scenario(at).model == presets.model("llama-3.1-8b")  # drawing them changes nothing


def test_a_box_holding_an_edit_stays_drawn_while_closed_and_goes_when_reset(open_app) -> None:
    # A link's edited number is drawn (its URL parameter must survive the run), the box closed.
    at = open_app(model="llama-3.1-8b", layers="40", cached="100")
    assert _drawn(at) == {"layers", "bw", "cached"}
    assert (scenario(at).model.layers, scenario(at).workload.cached_prompt_tokens) == (40, 100)
    # Back to the preset's value: the link drops it (AppTest does not write the address bar: as the
    # browser does), nothing is held, so the closed box stops drawing; the scenario is the preset's.
    at.number_input(key="layers").set_value(32).run()
    del at.query_params["layers"]
    at.run()
    assert _drawn(at) == {"cached"} and scenario(at).model == presets.model("llama-3.1-8b")
    assert scenario(at).workload.cached_prompt_tokens == 100


def test_choosing_an_api_fills_its_prices_and_a_typed_price_overrides_them(open_app) -> None:
    at = open_app()
    select = at.selectbox(key="api")
    assert len(select.options) > 1000  # the whole catalogue, not a handful
    select.set_value("openai/gpt-4o-mini").run()
    pricing = scenario(at).pricing
    # OpenAI's list price for gpt-4o-mini: $0.15 in, $0.075 cached, $0.60 out per million tokens.
    assert pricing.api_model == "openai/gpt-4o-mini"
    assert (
        pricing.input_usd_per_million_tokens,
        pricing.cached_input_usd_per_million_tokens,
        pricing.output_usd_per_million_tokens,
    ) == (0.15, 0.075, 0.6)
    assert scenario(at).to_flat(minimal=True) == {"api": "openai/gpt-4o-mini"}  # the prices are implied
    at.number_input(key="pout").set_value(0.9).run()
    assert scenario(at).to_flat(minimal=True) == {"api": "openai/gpt-4o-mini", "pout": "0.9"}
    # Another API replaces the typed price with its own list prices.
    at.selectbox(key="api").set_value("anthropic/claude-haiku-4-5").run()
    assert scenario(at).pricing.output_usd_per_million_tokens == 5.0


def test_sidebar_values_survive_a_round_of_pages(open_app) -> None:
    at = open_app(**LLAMA_70B_FP8)
    at.number_input(key="out").set_value(1234).run()
    for page in PAGES:
        at.switch_page(f"app/app_pages/{page}.py").run()
        assert scenario(at).workload.output_tokens == 1234


def test_a_downloaded_scenario_loads_back(open_app) -> None:
    at = open_app(**LLAMA_70B_FP8, out="900")
    data = json.dumps(scenario(at).to_flat()).encode()
    loaded, parsed, warnings = link.parse_json(data)
    assert (parsed, warnings) == (scenario(at), [])


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"not json", "not JSON"),
        ("{}".encode("utf-16"), "not JSON"),
        (b"[1, 2]", "one JSON object"),
        (b"[" * 100_000, "is 100,000 bytes"),  # over the size limit before any parsing
        (b'{"a": ' * 5000 + b"1" + b"}" * 5000, "not JSON"),  # deep nesting: RecursionError, caught
    ],
)
def test_an_unreadable_file_is_one_message_and_no_scenario(data: bytes, reason: str) -> None:
    clean, parsed, warnings = link.parse_json(data)
    assert clean is None and parsed is None
    assert len(warnings) == 1 and reason in warnings[0]


def test_a_file_with_numbers_nested_values_and_garbage_loads_what_it_can() -> None:
    data = json.dumps({"out": 1000, "batch": 8.0, "pin": "abc", "model": {"x": 1}, "gpus": True}).encode()
    _, parsed, warnings = link.parse_json(data)
    assert parsed is not None
    assert (parsed.workload.output_tokens, parsed.workload.batch_size) == (1000, 8)
    assert parsed.pricing.input_usd_per_million_tokens == 0.5  # the default: "abc" was ignored
    assert len(warnings) == 3  # model (nested), gpus (a boolean for a number), pin (not a number)
    assert "Ignored gpus=true: gpus must be a number" in warnings[1]


def test_a_number_past_pythons_digit_limit_is_a_long_value_not_a_broken_file() -> None:
    # 5,000 digits is past int()'s 4,300-digit limit: the file read "not JSON"; it is JSON, and the
    # value is the one thing wrong with it. 1e400 is kept as text and clamped like the link's.
    data = b'{"out": ' + b"9" * 5000 + b', "prompt": 1e400, "batch": 8}'
    _, parsed, warnings = link.parse_json(data)
    assert parsed is not None and parsed.workload.batch_size == 8
    assert parsed.workload.prompt_tokens == 10_000_000 and parsed.workload.output_tokens == 500
    assert warnings[0] == "Ignored out: its value is 5,000 characters long."
    assert warnings[1].startswith("prompt=1e400 is outside 1 to 10,000,000 tokens")


def test_a_long_page_value_is_ignored_with_a_warning_not_cut_silently() -> None:
    # Cut to 64 characters, `500` + 70 spaces + `abc` read as 500 without a word.
    clean, _, warnings = link.clean_link({"ttft": "500" + " " * 70 + "abc"})
    assert "ttft" not in clean and warnings == ["Ignored ttft: its value is 76 characters long."]


def test_a_file_may_give_a_switch_as_a_json_boolean() -> None:
    # {"overlap": true} is how a person writes a switch in JSON; the link's own text is "true".
    data = json.dumps({"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "typical", "overlap": True}).encode()
    _, parsed, warnings = link.parse_json(data)
    assert parsed is not None and warnings == []
    assert parsed.efficiency.launches_overlap is True


def test_the_preset_select_tooltip_names_its_source(open_app) -> None:
    at = open_app(gpu="h100-sxm")
    help_text = at.selectbox(key="gpu").help
    assert "Preset id `h100-sxm`" in help_text and "datasheet" in help_text
    assert "NVIDIA H100 SXM 80GB" in [c.value for c in at.sidebar.caption]


def test_the_page_keys_and_the_scenario_keys_never_collide() -> None:
    assert set(BY_KEY).isdisjoint(FLAT_KEYS)


def test_every_scenario_input_has_a_widget_in_the_sidebar(open_app) -> None:
    # A field added to a spec gets its link key, CLI flag and README row from its description; this
    # catches one the sidebar does not draw (with every lazy box open, every input must be there).
    from core.flat import INPUTS

    kinds = ("number_input", "text_input", "selectbox", "radio", "toggle")

    def drawn(at: AppTest) -> set[str]:
        for box in ("sb_numbers_open", "sb_efficiency_open", "sb_caching_open"):
            at.session_state[box] = True
        at.run()
        return {w.key for kind in kinds for w in at.sidebar.get(kind)}

    # On a mixture of experts (gpt-oss-120b), every input; a dense model has no experts' width to set.
    missing = sorted(set(INPUTS) - drawn(open_app(model="gpt-oss-120b")))
    assert not missing, f"scenario inputs with no sidebar widget: {missing}"
    assert sorted(set(INPUTS) - drawn(open_app())) == ["ebits"]


def test_the_scenario_cache_keys_on_every_pair_and_shares_one_frozen_result() -> None:
    # cached_scenario hashes its flat form as the tuple's repr (every key and value is in it):
    # flats that differ in one value, or in one key, get their own Scenario; an equal flat gets
    # the one object already built (a resource cache: no pickled copy per hit).
    base = (("model", "llama-3.1-8b"), ("gpu", "h100-sxm"), ("out", "500"))
    first = compute.cached_scenario(base)
    assert compute.cached_scenario(tuple(list(base))) is first
    other_value = compute.cached_scenario((*base[:2], ("out", "501")))
    other_key = compute.cached_scenario((*base[:2], ("prompt", "500")))
    assert (first.workload.output_tokens, first.workload.prompt_tokens) == (500, 200)  # 200: the default prompt
    assert other_value.workload.output_tokens == 501
    assert (other_key.workload.output_tokens, other_key.workload.prompt_tokens) == (
        Scenario().workload.output_tokens,
        500,
    )
    assert compute.cached_estimate(first) is compute.cached_estimate(Scenario.from_flat(dict(base)))


def test_a_tuple_argument_is_hashed_whole_and_never_confused_with_another() -> None:
    # Plain items: the tuple's repr (exact: a float's repr round-trips). Anything else: a list,
    # walked item by item as Streamlit did before, so a nested tuple is its own repr again.
    assert compute._hash_tuple((1, 2.5, "a", None)) == "(1, 2.5, 'a', None)"
    assert compute._hash_tuple(((1, 2), (3,))) == [(1, 2), (3,)]
    scenario = Scenario.from_flat({"model": "llama-3.1-8b", "gpu": "h100-sxm"})
    short, other = (compute.cached_latency_line(scenario, lengths) for lengths in ((1, 100, 500), (1, 100, 501)))
    assert len(short) == len(other) == 3 and short[2] < other[2]  # one more decode step at the end
    assert short[:2].tolist() == other[:2].tolist()


def test_a_model_is_served_as_its_publisher_ships_it_unless_the_width_was_edited(open_app) -> None:
    # DeepSeek-V3 ships FP8: its link needs no wbits, the sidebar opens at 8 bits and says so, and 671.03 GB of
    # weights fit 8 × H200 (1,128 GB) with no warning.
    at = open_app(model="deepseek-v3", gpu="h200", gpus="8")
    assert at.sidebar.number_input(key="wbits").value == 8
    assert scenario(at).precision.weight_bits == 8 and not at.main.warning
    assert "wbits" not in at.query_params
    assert any("as the model ships: FP8 (e4m3)" in c.value for c in at.sidebar.caption)
    # Picking a bf16 model from there follows its release (16), as the unedited width did before.
    at.sidebar.selectbox(key="model").set_value("llama-3.1-70b").run()
    assert at.sidebar.number_input(key="wbits").value == 16 and scenario(at).precision.weight_bits == 16
    # An edited width stays when the model changes: 4.5-bit Llama becomes gpt-oss with the rest at 4.5 (its
    # experts, never edited, as shipped: MXFP4, 4.25).
    at.sidebar.number_input(key="wbits").set_value(4.5).run()
    at.sidebar.selectbox(key="model").set_value("gpt-oss-120b").run()
    assert (scenario(at).precision.weight_bits, scenario(at).precision.expert_weight_bits) == (4.5, 4.25)
    # From the default 16 on a bf16 model to gpt-oss-120b: bf16 beside MXFP4 experts, both drawn, neither in the
    # link; back to a dense model, the experts' width goes with it.
    at = open_app(model="llama-3.1-8b")
    at.sidebar.selectbox(key="model").set_value("gpt-oss-120b").run()
    assert (scenario(at).precision.weight_bits, scenario(at).precision.expert_weight_bits) == (16, 4.25)
    assert at.sidebar.number_input(key="ebits").value == 4.25 and "ebits" not in at.query_params
    at.sidebar.selectbox(key="model").set_value("llama-3.1-8b").run()
    assert scenario(at).precision.expert_weight_bits is None


def test_a_link_at_the_most_layers_opens(open_app) -> None:
    # 1,000 layers under HF transformers (a 1.17 s step, past the old 1 s bound on a step's overhead) crashed
    # the page through the link reader; it now opens and estimates.
    at = open_app(model="llama-3.1-8b", engine="hf-transformers", layers="1000")
    assert scenario(at).model.layers == 1000 and scenario(at).efficiency.step_overhead_s == pytest.approx(1.17)


def test_a_sessions_pages_are_built_once_and_its_links_lead_to_them(open_app) -> None:
    # Built again each rerun, seven st.Page and three path links cost ~2 ms of server CPU (each
    # resolves its file's real path); kept, a rerun meets the very same objects.
    at = open_app()
    built = at.session_state["_site_pages"]
    at.sidebar.number_input(key="out").set_value(300).run()
    assert at.session_state["_site_pages"] is built
    # Each link is the page itself: its url path, so a click opens that page (not the Overview).
    targets = {link.proto.label: link.proto.page for link in at.main.get("page_link")}
    assert targets == {
        "The bill in detail: reply length, traffic": "bill",
        "Capacity plan: a fleet for your traffic": "plan",
        "Compare: APIs and fleets": "compare",
    }


def test_a_key_given_twice_in_a_link_is_said_and_the_bar_keeps_the_one_used() -> None:
    # The CLI refuses `--batch 2 --batch 3`; the link computed with 3 and kept both in the bar, unsaid.
    at = AppTest.from_file("../../streamlit_app.py", default_timeout=30)
    at.query_params["batch"] = ["2", "3"]
    at.run()
    assert not at.exception
    assert scenario(at).workload.batch_size == 3
    assert "batch is given 2 times (2, 3): using the last, 3." in [unescape(w.value) for w in at.warning]
    assert at.query_params["batch"] in ("3", ["3"])  # one value (AppTest gives a lone one as text)
    # A list input's repeats are its items, not a repeat: tp=1&tp=2 on the plan is the list 1, 2.
    assert link.repeated({"tp": ["1", "2"], "batch": ["4"]}) == []


def test_a_key_given_twice_in_a_scenario_file_is_said() -> None:
    # json keeps a repeated key's last value without a word; a nested object's repeats are not the file's.
    _, parsed, warnings = link.parse_json(b'{"batch": 3, "batch": 4, "x": {"a": 1, "a": 2}}')
    assert parsed is not None and parsed.workload.batch_size == 4
    assert warnings[0] == "batch is given 2 times (3, 4): using the last, 4."
    assert not any(w.startswith("a is given") for w in warnings)


def test_an_experts_width_on_a_dense_model_in_a_link_is_ignored_and_said(open_app) -> None:
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", ebits="4")
    assert scenario(at).precision.expert_weight_bits is None
    assert "Ignored ebits=4: Llama 3.1 8B has no experts (only a mixture of experts has); leave it empty." in [
        unescape(w.value) for w in at.warning
    ]
