"""The frame every page shares: entry, sidebar, URL sync and export (AppTest, no browser)."""

from __future__ import annotations

import json

import pytest
import query
from streamlit.testing.v1 import AppTest

from core import presets
from core.efficiency import CALIBRATED, IDEAL
from core.scenario import FLAT_KEYS, Scenario

LLAMA_70B_FP8 = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "eff": "calibrated"}
PAGES = ["overview", "latency", "roofline", "bill", "lesson"]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


def scenario(at: AppTest) -> Scenario:
    return at.session_state["app_scenario"]


def unescape(text: str) -> str:
    return text.replace("\\", "")


def opened(at: AppTest, expander: str) -> AppTest:
    """Open a lazy sidebar expander ('sb_raw_open', 'sb_share_open'): its contents run only when open."""
    at.session_state[expander] = True
    return at.run()


def _written(at: AppTest) -> dict[str, str]:
    """The query string the script left in the address bar."""
    return dict(at.query_params)


def test_the_default_run_shows_the_lesson_and_writes_its_link(open_app) -> None:
    at = open_app()
    assert scenario(at) == Scenario.lesson()
    assert _written(at) == Scenario.lesson().to_flat()
    assert not at.warning
    # The share box holds the relative link that reproduces the view.
    assert [c.value for c in opened(at, "sb_share_open").sidebar.code] == [query.link_query(Scenario.lesson())]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_at_the_defaults_and_with_a_real_model(open_app, page: str) -> None:
    for params in ({}, LLAMA_70B_FP8):
        at = open_app(f"app_pages/{page}.py", **params)
        assert not at.exception
        assert scenario(at) == Scenario.from_flat(params)


def test_the_link_the_app_writes_reproduces_the_scenario_and_the_numbers(open_app) -> None:
    at = open_app()
    at.selectbox(key="sb_model").set_value("llama-3.1-8b").run()
    at.selectbox(key="sb_gpu").set_value("a100-80gb-sxm").run()
    at.number_input(key="sb_out").set_value(1234).run()
    at.number_input(key="sb_batch").set_value(16).run()
    at.selectbox(key="sb_kvprec").set_value("8").run()
    opened(at, "sb_raw_open").number_input(key="sb_bw").set_value(
        2100.5
    ).run()  # → gpu=custom, every number in the link
    at.radio(key="sb_eff").set_value("custom").run()
    at.slider(key="sb_mbu").set_value(0.66).run()
    written = _written(at)
    assert written["gpu"] == "custom" and written["bw"] == "2100500000000" and written["mbu"] == "0.66"
    again = open_app(**written)
    assert scenario(again) == scenario(at)
    assert metrics(again) == metrics(at)
    assert _written(again) == written  # and the reloaded page writes the same link
    assert not again.warning


def test_garbage_in_every_parameter_warns_and_falls_back(open_app) -> None:
    at = open_app(**{key: "<script>x</script>" for key in FLAT_KEYS}, junk="1")
    shown = unescape(" ".join(w.value for w in at.main.warning))
    for key in FLAT_KEYS:
        if key not in ("mname", "gname"):  # names are cleaned, not refused
            assert key in shown, key
    assert "junk" in shown
    assert scenario(at) == Scenario.lesson()
    assert metrics(at)["Time per output token"] == "7.00 ms"


@pytest.mark.parametrize("value", ["NaN", "inf", "-1", "1e308", "abc", "x" * 5000, "[a](javascript:x)"])
def test_hostile_values_warn_and_never_raise(open_app, value: str) -> None:
    at = open_app(prompt=value, out=value, batch=value, pin=value, model=value, eff=value)
    assert at.main.warning
    assert not at.exception
    assert _written(at) == scenario(at).to_flat()  # the bad link is replaced by a clean one


def test_a_clamped_link_says_so_and_uses_the_bound(open_app) -> None:
    at = open_app(out="999999999")
    assert scenario(at).workload.output_tokens == 200_000
    assert "out=999999999 is outside 1 to 200,000 tokens: using 200,000." in unescape(at.main.warning[0].value)


def test_link_warnings_stay_until_the_scenario_changes(open_app) -> None:
    at = open_app(batch="abc")
    at.run()
    assert len(at.main.warning) == 1
    at.number_input(key="sb_out").set_value(600).run()
    assert not at.main.warning


def test_a_bad_combination_warns_in_the_sidebar_and_keeps_the_last_valid_scenario(open_app) -> None:
    at = open_app()
    at.number_input(key="sb_cached").set_value(300).run()
    assert "Cached prompt tokens (300) must be from 0 to the prompt tokens (200)" in unescape(
        at.sidebar.warning[0].value
    )
    assert scenario(at) == Scenario.lesson()
    at.number_input(key="sb_prompt").set_value(400).run()  # now legal: 300 of 400 cached
    assert not at.sidebar.warning
    assert scenario(at).workload.cached_prompt_tokens == 300


def test_weights_that_do_not_fit_warn_with_the_fix(open_app) -> None:
    # Llama 3.1 405B in 16-bit: 405.85e9 × 2 = 811.7 GB; 80 GB per GPU → at least 11 GPUs.
    at = open_app(model="llama-3.1-405b", gpu="h100-sxm")
    text = unescape(at.sidebar.warning[0].value)
    assert "Use at least 11 GPUs" in text
    assert not at.exception


def test_switching_gpu_follows_its_default_efficiency_until_one_is_chosen(open_app) -> None:
    at = open_app()
    at.selectbox(key="sb_gpu").set_value("h100-sxm").run()
    assert scenario(at).efficiency == CALIBRATED  # a real GPU: calibrated by default
    at.radio(key="sb_eff").set_value("ideal").run()  # an explicit choice...
    at.selectbox(key="sb_gpu").set_value("a100-80gb-sxm").run()
    assert scenario(at).efficiency == IDEAL  # ...sticks across GPU switches


def test_a_link_with_the_gpus_default_efficiency_still_follows_the_gpu(open_app) -> None:
    at = open_app(gpu="h100-sxm", eff="calibrated")
    at.selectbox(key="sb_gpu").set_value(presets.TOY_GPU_ID).run()
    assert scenario(at).efficiency == IDEAL


def test_editing_a_raw_number_turns_the_preset_into_custom(open_app) -> None:
    at = opened(open_app(gpu="h100-sxm"), "sb_raw_open")
    at.number_input(key="sb_mem").set_value(96.0).run()
    assert at.selectbox(key="sb_gpu").value == "custom"
    assert scenario(at).gpu.memory_bytes == 96_000_000_000
    assert scenario(at).gpu.name == "NVIDIA H100 SXM 80GB (edited)"
    at.selectbox(key="sb_gpu").set_value("h100-sxm").run()  # back to the preset: its numbers return
    assert at.number_input(key="sb_mem").value == 80.0
    assert scenario(at).gpu == presets.gpu("h100-sxm")


def test_loading_prices_from_the_catalogue_fills_the_three_prices(open_app) -> None:
    at = open_app()
    at.selectbox(key="sb_price_source").set_value("OpenAI · gpt-4o-mini").run()
    pricing = scenario(at).pricing
    assert (
        pricing.input_usd_per_million_tokens,
        pricing.cached_input_usd_per_million_tokens,
        pricing.output_usd_per_million_tokens,
    ) == (0.15, 0.075, 0.6)
    # 200 × 0.15e-6 + 500 × 0.6e-6 = 0.00003 + 0.0003 = $0.000330 a reply.
    assert metrics(at)["Cost per reply"] == "$0.000330"
    at.number_input(key="sb_pin").set_value(0.2).run()  # typed prices are no longer the provider's
    assert at.selectbox(key="sb_price_source").value is None


def test_sidebar_values_survive_a_round_of_pages(open_app) -> None:
    at = open_app()
    at.number_input(key="sb_out").set_value(777).run()
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        assert scenario(at).workload.output_tokens == 777, page
    assert at.number_input(key="sb_out").value == 777


def test_a_downloaded_scenario_loads_back(open_app) -> None:
    source = opened(open_app(**LLAMA_70B_FP8), "sb_share_open")
    data = [b for b in source.get("download_button") if "scenario" in str(b.proto.label)]
    assert len(data) == 1
    saved = query.scenario_json(scenario(source)).encode()
    at = opened(open_app(), "sb_share_open")
    at.file_uploader(key="sb_upload").upload("scenario.json", saved, "application/json").run()
    assert scenario(at) == Scenario.from_flat(LLAMA_70B_FP8)
    assert not at.exception


def test_a_bad_file_is_a_warning_and_changes_nothing(open_app) -> None:
    at = opened(open_app(), "sb_share_open")
    at.file_uploader(key="sb_upload").upload("scenario.json", b"{not json", "application/json").run()
    assert scenario(at) == Scenario.lesson()
    assert "not JSON" in unescape(at.main.warning[0].value)
    at = opened(open_app(), "sb_share_open")
    at.file_uploader(key="sb_upload").upload("s.json", json.dumps({"out": "-5"}).encode(), "application/json").run()
    assert scenario(at).workload.output_tokens == 1  # clamped, and said so
    assert "out" in unescape(at.main.warning[0].value)


def test_the_preset_select_tooltip_names_its_source(open_app) -> None:
    at = open_app(gpu="h100-sxm")
    assert "Source (checked 2026" in unescape(at.selectbox(key="sb_gpu").help)
    assert "With sparsity" in unescape(at.selectbox(key="sb_gpu").help)  # the datasheet's footnote, halved
    # The select shows the name alone (the id made it too long for the sidebar); the tooltip has the id.
    assert "NVIDIA H100 SXM 80GB" in at.selectbox(key="sb_gpu").options
    assert "Preset id `h100-sxm`" in at.selectbox(key="sb_gpu").help
    opened(at, "sb_raw_open").number_input(key="sb_bw").set_value(3000.0).run()
    assert "Custom: your own numbers" in at.selectbox(key="sb_gpu").help


def test_raw_numbers_typed_then_folded_away_are_kept(open_app) -> None:
    at = opened(open_app(), "sb_raw_open")
    at.number_input(key="sb_bw").set_value(3000.0).run()
    at.session_state["sb_raw_open"] = False  # fold the expander: its inputs stop running...
    at.run()
    assert not [n for n in at.number_input if n.key == "sb_bw"]
    at.number_input(key="sb_out").set_value(600).run()  # ...and another change keeps the typed number
    assert scenario(at).gpu.memory_bandwidth_bytes_per_s == 3_000_000_000_000
    assert scenario(at).workload.output_tokens == 600
    at.selectbox(key="sb_gpu").set_value("h100-sxm").run()  # a preset picked while folded brings its numbers
    assert opened(at, "sb_raw_open").number_input(key="sb_bw").value == 3350.0


def test_optional_numbers_can_be_cleared(open_app) -> None:
    at = opened(open_app(gpu="h100-sxm", model="llama-3.1-8b"), "sb_raw_open")
    at.number_input(key="sb_usdh").set_value(None).run()  # no rental price: no self-hosting
    assert scenario(at).gpu.price_usd_per_hour is None and scenario(at).gpu.id == "custom"
    at.number_input(key="sb_layers").set_value(None).run()  # a partial attention shape is refused
    assert "fill in all five" in unescape(at.sidebar.warning[0].value)
    assert scenario(at).model.id == "llama-3.1-8b"  # the last valid scenario stays
