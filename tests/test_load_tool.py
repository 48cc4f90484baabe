"""The load test's pure parts (benchmarks/load*.py, benchmarks/st_protocol.py): no server, no clock.

Percentiles, the expected headlines (each derived by hand in its comment), the websocket
messages a tab sends and how it keeps widget states and cached messages, the HTTP and
cookie parsing, the figures made from a run (CPU per rerun, affinity, targets), and the
deployment pieces (the image's environment, deploy/haproxy.cfg). The timed figures live in
the load test's output only, never here.
"""

from __future__ import annotations

import math
import random
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Selectbox_pb2 import Selectbox
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parents[1]
# The benchmark scripts import their siblings by name (`python benchmarks/load.py` puts the
# folder on sys.path); do the same here.
sys.path.insert(0, str(ROOT / "benchmarks"))

import load_figures  # noqa: E402
import load_http  # noqa: E402
import load_pages  # noqa: E402
import load_report  # noqa: E402
import load_servers  # noqa: E402
import st_protocol  # noqa: E402

from core import Scenario  # noqa: E402

# --- percentiles ---------------------------------------------------------------------------


def test_percentile_interpolates_between_ranks() -> None:
    # ranks 0..3; p50 → rank 1.5 → 2 + 0.5 × (3 − 2); p95 → rank 2.85 → 3 + 0.85 × (4 − 3)
    assert load_report.percentile([4, 1, 3, 2], 50) == 2.5
    assert load_report.percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)
    assert load_report.percentile([1, 2, 3, 4], 0) == 1
    assert load_report.percentile([1, 2, 3, 4], 100) == 4
    assert load_report.percentile([7.0], 99) == 7.0


def test_percentile_of_nothing_is_nan_and_q_is_checked() -> None:
    assert math.isnan(load_report.percentile([], 50))
    with pytest.raises(ValueError, match="q must be"):
        load_report.percentile([1.0], 101)


@pytest.mark.parametrize("q", [0, 1, 50, 95, 99, 100])
def test_percentile_matches_numpy(q: float) -> None:
    values = [random.Random(q).expovariate(3) for _ in range(101)]
    assert load_report.percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_summary() -> None:
    stats = load_report.summary([0.1, 0.2, 0.3, 0.4, 1.0])
    assert stats["n"] == 5 and stats["p50"] == 0.3 and stats["max"] == 1.0
    assert stats["p95"] == pytest.approx(0.4 + 0.8 * 0.6)  # rank 3.8
    empty = load_report.summary([])
    assert empty["n"] == 0 and math.isnan(empty["p95"]) and math.isnan(empty["max"])


# --- expected headlines --------------------------------------------------------------------

OVERVIEW, ROOFLINE = load_pages.PAGES["overview"], load_pages.PAGES["roofline"]


def test_every_page_row_names_its_input_and_headline() -> None:
    lesson = Scenario.lesson()
    for name, plan in load_pages.PAGES.items():
        assert (plan.input_key in lesson.to_flat()) == plan.scenario_input, name  # else a page input (tps)
        low, high = plan.values
        assert 1 <= low < high, name
        assert plan.headline(load_pages.scenario_of(plan.query)), name


def test_overview_total_latency_at_the_lesson_defaults_and_after_a_change() -> None:
    base = load_pages.scenario_of("")
    assert base == Scenario.lesson()
    # 9.33 ms TTFT + 500 × 7 ms = 3,509.33 ms
    assert load_pages.expected_headline(OVERVIEW, base) == "3.51 s"
    # 9.33 ms + 1,191 × 7 ms = 8,346.33 ms: rounds up, so a stale prompt length (1 token,
    # TTFT 7 ms → 8,344 ms, "8.34 s") would show.
    assert load_pages.expected_headline(OVERVIEW, base, 1191) == "8.35 s"
    # 9.33 ms + 76 × 7 ms = 541.33 ms: below a second the app shows ms
    assert load_pages.expected_headline(OVERVIEW, base, 76) == "541.33 ms"


def test_roofline_largest_batch_for_llama_70b_on_two_h100() -> None:
    base = load_pages.scenario_of(load_pages.LLAMA_70B)
    # memory 2 × 80 GB = 160e9 B; fp8 weights 70.55e9 B; KV per token 2 × 80 layers × 8 heads ×
    # 128 × 2 B = 327,680 B, × (200 + 500) tokens = 229.376e6 B; 89.45e9 / 229.376e6 = 389.97
    assert load_pages.expected_headline(ROOFLINE, base) == "389"
    # × (200 + 777) tokens = 320.143e6 B: 89.45e9 / 320.143e6 = 279.4
    assert load_pages.expected_headline(ROOFLINE, base, 777) == "279"


def test_with_value_goes_through_the_url_form() -> None:
    changed = load_pages.with_value(Scenario.lesson(), "out", 1000)
    assert changed.workload.output_tokens == 1000
    assert changed.to_flat() == {**Scenario.lesson().to_flat(), "out": "1000"}
    with pytest.raises(KeyError, match="not a URL key"):
        load_pages.with_value(Scenario.lesson(), "reply", 1000)


def test_new_value_is_in_range_and_never_the_current_one() -> None:
    rng = random.Random(0)
    low, high = OVERVIEW.values
    for current in [None, low, high, 500, *range(low, low + 50)]:
        value = load_pages.new_value(rng, OVERVIEW, current)
        assert low <= value <= high and value != current


def _element_msg(kind: str, path: list[int], **fields: object) -> ForwardMsg:
    msg = ForwardMsg()
    element = getattr(msg.delta.new_element, kind)
    for key, value in fields.items():
        if isinstance(value, list):
            getattr(element, key).extend(value)
        else:
            setattr(element, key, value)
    msg.metadata.delta_path.extend(path)
    return msg


def _run(*msgs: ForwardMsg, status: str = "FINISHED_SUCCESSFULLY") -> st_protocol.Run:
    run = st_protocol.Run(status=status)
    for msg in msgs:
        run.add(msg, msg.metadata.delta_path)
    return run


def test_headline_problem_names_what_is_wrong() -> None:
    metric = _element_msg("metric", [0, 2, 2, 0], label="Total latency", body="3.51 s")
    other = _element_msg("metric", [0, 2, 0, 0], label="Time to first token", body="9.33 ms")
    assert load_pages.headline_problem(OVERVIEW, _run(metric, other), "3.51 s") is None
    wrong = load_pages.headline_problem(OVERVIEW, _run(metric), "3.52 s")
    assert wrong == "Total latency shows '3.51 s', core says '3.52 s'"
    missing = load_pages.headline_problem(OVERVIEW, _run(other), "3.51 s")
    assert missing and "0 metrics labelled 'Total latency'" in missing and "Time to first token" in missing
    twice = _element_msg("metric", [0, 9], label="Total latency", body="3.51 s")
    assert "2 metrics" in (load_pages.headline_problem(OVERVIEW, _run(metric, twice), "3.51 s") or "")
    crash = _element_msg("exception", [0, 3], type="ZeroDivisionError", message="division by zero")
    assert "ZeroDivisionError" in (load_pages.headline_problem(OVERVIEW, _run(metric, crash), "3.51 s") or "")
    stopped = load_pages.headline_problem(OVERVIEW, _run(metric, status="FINISHED_EARLY_FOR_RERUN"), "3.51 s")
    assert stopped == "the script run ended FINISHED_EARLY_FOR_RERUN"


def test_a_later_element_at_the_same_path_replaces_the_earlier() -> None:
    first = _element_msg("metric", [0, 1], label="Total latency", body="1.00 s")
    second = _element_msg("metric", [0, 1], label="Total latency", body="2.00 s")
    assert _run(first, second).metric_values("Total latency") == ["2.00 s"]


def test_a_run_the_app_restarts_is_followed_to_its_end() -> None:
    # A first load whose link the app cleans ends FINISHED_EARLY_FOR_RERUN and the server runs the
    # page again at once, as a browser tab sees it: the run is the second one's elements and status.
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    finished_early, finished = ForwardMsg(), ForwardMsg()
    finished_early.script_finished = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
    finished.script_finished = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY")
    metric = _element_msg("metric", [0, 3], label="The API", body="$75,000")
    frames = [m.SerializeToString() for m in (finished_early, metric, finished)]

    class Socket:
        async def send(self, _: bytes) -> None:
            return None

        async def recv(self) -> bytes:
            return frames.pop(0)

    session = st_protocol.Session("http://h:1", "plan", "")
    session._ws = Socket()
    # On a thread of its own: in a whole run Playwright's sync API keeps an event loop on this one.
    with ThreadPoolExecutor(1) as thread:
        run = thread.submit(asyncio.run, session.load(timeout_s=5)).result()
    assert run.status == "FINISHED_SUCCESSFULLY" and run.metric_values("The API") == ["$75,000"] and not frames


def test_the_floor_draws_each_page_once() -> None:
    # Three rows load the Capacity plan: the floor app (one st.Page per url path; a repeated path is an
    # error in st.navigation) draws it once, from the row whose input is a scenario field.
    pages = load_pages.floor_pages()
    assert len(set(pages)) == len(pages) and pages["plan"] == "plan" and pages["overview"] == "overview"
    assert {load_pages.PAGES[name].url_path or name for name in load_pages.PAGES} == set(pages)


def test_the_capacity_plans_rows_check_the_apis_bill() -> None:
    # Llama 3.1 70B at 2,000,000 replies a day, 1,000 in and 500 out at the lesson's $0.50 / $1.50:
    # 1,000 × 0.5e-6 + 500 × 1.5e-6 = $0.00125 a reply × 2,000,000 × 30 days = $75,000 a month.
    plan, target = load_pages.PAGES["plan"], load_pages.PAGES["plan-target"]
    base = load_pages.scenario_of(plan.query)
    assert load_pages.expected_headline(plan, base) == "$75,000"
    assert load_pages.expected_headline(plan, base, 1_000_000) == "$37,500"  # replies a day move it
    assert load_pages.expected_headline(target, base, 45) == "$75,000"  # a target does not (not a scenario key)


# --- messages a tab sends --------------------------------------------------------------------


def test_first_load_message() -> None:
    msg = st_protocol.first_load_msg("roofline", "model=llama-3.1-70b", "http://h:1/roofline")
    state = msg.rerun_script
    assert msg.WhichOneof("type") == "rerun_script"
    assert (state.page_name, state.page_script_hash, state.query_string) == ("roofline", "", "model=llama-3.1-70b")
    assert state.HasField("widget_states") and not state.widget_states.widgets
    assert state.context_info.url == "http://h:1/roofline" and state.context_info.timezone == "UTC"
    assert type(msg).FromString(msg.SerializeToString()) == msg


def test_rerun_message_carries_page_widgets_and_cached_hashes() -> None:
    widgets = [st_protocol.number_state("out", 777, True), st_protocol.number_state("pin", 0.5, False)]
    msg = st_protocol.rerun_msg("abc123", "out=777", widgets, ["h1", "h2"], "http://h:1/")
    state = msg.rerun_script
    assert (state.page_script_hash, state.page_name, state.query_string) == ("abc123", "", "out=777")
    assert [(w.id, w.WhichOneof("value")) for w in state.widget_states.widgets] == [
        ("out", "int_value"),
        ("pin", "double_value"),
    ]
    assert state.widget_states.widgets[0].int_value == 777 and state.widget_states.widgets[1].double_value == 0.5
    assert list(state.cached_message_hashes) == ["h1", "h2"]


def test_number_state_refuses_a_fraction_for_an_integer_input() -> None:
    assert st_protocol.number_state("n", 3.0, True).int_value == 3
    with pytest.raises(ValueError, match="cannot take"):
        st_protocol.number_state("n", 2.5, True)


def _number_input(**fields: object) -> NumberInput:
    return NumberInput(id="n", label="Output tokens", data_type=NumberInput.INT, **fields)


def test_a_tab_keeps_its_widget_values_unless_the_server_sets_them() -> None:
    # First run: the server sets the value (seeded from the link).
    seeded = st_protocol.browser_widget_state("number_input", _number_input(default=1, value=500, set_value=True))
    assert seeded is not None and seeded.int_value == 500
    # Later runs carry only the default: the tab keeps what it holds (here, a typed 777).
    held = st_protocol.number_state("n", 777, True)
    kept = st_protocol.browser_widget_state("number_input", _number_input(default=1), held)
    assert kept is held
    # A widget new to the tab starts at its default.
    fresh = st_protocol.browser_widget_state("number_input", _number_input(default=1))
    assert fresh is not None and fresh.int_value == 1
    # Floats travel as double_value.
    price = NumberInput(id="p", data_type=NumberInput.FLOAT, default=0, value=0.5, set_value=True)
    assert st_protocol.browser_widget_state("number_input", price) == WidgetState(id="p", double_value=0.5)


def test_select_boxes_hold_the_shown_option() -> None:
    box = Selectbox(id="m", options=["Toy 7B", "Llama 3.1 70B"], default=0)
    assert st_protocol.browser_widget_state("selectbox", box) == WidgetState(id="m", string_value="Toy 7B")
    box.raw_value, box.set_value = "Llama 3.1 70B", True
    assert st_protocol.browser_widget_state("selectbox", box).string_value == "Llama 3.1 70B"
    unset = Selectbox(id="src", options=["a", "b"])
    assert st_protocol.browser_widget_state("selectbox", unset) == WidgetState(id="src")
    assert st_protocol.browser_widget_state("metric", object()) is None


def test_run_widget_states_cover_the_widgets_on_the_page() -> None:
    out = _element_msg("number_input", [1, 10], id="out", label="Output tokens", default=1.0)
    run = _run(out, _element_msg("metric", [0, 1], label="Total latency", body="1 s"))
    held = {"out": st_protocol.number_state("out", 900, True), "gone": st_protocol.number_state("gone", 1, True)}
    assert run.widget_states(held) == {"out": held["out"]}  # a widget no longer drawn is dropped


# --- the tab's message cache -------------------------------------------------------------------


def _cacheable(hash_: str) -> ForwardMsg:
    msg = _element_msg("plotly_chart", [0, 5], spec="{}")
    msg.hash, msg.metadata.cacheable = hash_, True
    return msg


def test_message_cache_answers_references_and_expires() -> None:
    cache = st_protocol.MessageCache(max_age=2)
    big = _cacheable("h1")
    assert cache.resolve(big) is big and cache.hashes() == ["h1"]
    ref = ForwardMsg(ref_hash="h1")
    cache.script_finished()
    assert cache.resolve(ref) is big  # used on run 1: its age starts again
    for _ in range(2):
        cache.script_finished()
    assert cache.hashes() == ["h1"]  # 2 runs unused: still kept
    cache.script_finished()
    assert cache.hashes() == []  # 3 runs unused: dropped, as the frontend does
    with pytest.raises(st_protocol.ProtocolError, match="never cached"):
        cache.resolve(ref)


def test_message_cache_ignores_small_messages() -> None:
    cache = st_protocol.MessageCache()
    small = _element_msg("markdown", [0, 1], body="hi")
    small.hash = "h2"
    cache.resolve(small)
    assert cache.hashes() == []


# --- HTTP ---------------------------------------------------------------------------------------


def test_http_response_and_cookies() -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nset-cookie: SERVERID=s2; path=/\r\n"
        b"Set-Cookie: _streamlit_xsrf=2|ab|cd; Path=/; SameSite=Lax\r\nX-Served-By: s2\r\n\r\n<html>"
    )
    response = load_http.parse_http_response(raw)
    assert response.status == 200 and response.body == b"<html>"
    assert response.header("x-served-by") == "s2"
    assert response.cookies() == {"SERVERID": "s2", "_streamlit_xsrf": "2|ab|cd"}
    assert load_http.cookie_header(response.cookies()) == "SERVERID=s2; _streamlit_xsrf=2|ab|cd"
    with pytest.raises(load_http.HttpError):
        load_http.parse_http_response(b"SSH-2.0-OpenSSH\r\n\r\n")


# --- figures from a run -------------------------------------------------------------------------


def _measured() -> load_figures.Measured:
    servers = [
        load_figures.ServerTrace("s1", 11, cpu_start_s=10.0, cpu_loaded_s=12.0, cpu_end_s=15.0, rss_mb=[100, 120, 110]),
        load_figures.ServerTrace("s2", 12, cpu_start_s=20.0, cpu_loaded_s=21.0, cpu_end_s=23.0, rss_mb=[100, 105]),
    ]
    reruns = [load_figures.Rerun(t, 0.1 * t, "s1" if t % 2 else "s2") for t in range(1, 11)]
    sessions = [load_figures.SessionTrace("s1", ["s1"]), load_figures.SessionTrace("s2", ["s2"])]
    return load_figures.Measured(
        wall_s=10.0,
        reruns=reruns,
        loaded_at=6.0,
        ended_at=10.0,
        servers=servers,
        sessions=sessions,
        generator_cpu_s=0.5,
    )


def test_cpu_per_rerun_counts_only_the_span_after_the_last_first_load() -> None:
    # after loading: (15 − 12) + (23 − 21) = 5 CPU s over the reruns finished at 6..10 (5 of them)
    assert load_figures.cpu_per_rerun_ms(_measured()) == (1000.0, 5)
    # idle at 0.1 CPU s/s each: 2 × 0.1 × (10 − 6) s = 0.8 s is not the reruns' → 4.2 s / 5
    idle = _measured()
    for server in idle.servers:
        server.idle_cpu_per_s = 0.1
    assert load_figures.cpu_per_rerun_ms(idle)[0] == pytest.approx(840.0)
    empty = load_figures.Measured(servers=_measured().servers)
    assert math.isnan(load_figures.cpu_per_rerun_ms(empty)[0])


def test_figures_split_by_replica_and_check_affinity() -> None:
    config = {"mode": "steady", "replicas": 2, "sessions": 100, "period_s": 5.0}
    result = load_figures.figures(config, _measured())
    s1, s2 = result["servers"]
    assert (s1["cpu_s"], s1["cpu_pct"], s1["rss_max_mb"], s1["rss_after_mb"]) == (5.0, 50.0, 120, 110)
    assert (s1["sessions"], s1["reruns"], s2["reruns"]) == (1, 5, 5)
    assert result["affinity"]["sessions_off_their_replica"] == 0
    assert result["generator"]["cpu_pct"] == 5.0
    moved = _measured()
    moved.sessions.append(load_figures.SessionTrace("s1", ["s2"]))  # the cookie said s1, the balancer s2
    assert load_figures.figures(config, moved)["affinity"]["sessions_off_their_replica"] == 1


def test_machine_figures_separate_this_test_from_other_processes() -> None:
    m = _measured()  # servers used (15 − 10) + (23 − 20) = 8 CPU s in 10 s; the generator 0.5 s
    m.machine_busy_s, m.machine_stolen_s, m.cores, m.balancer_cpu_s = 15.0, 1.0, 2, 0.5
    machine = load_figures.figures({"mode": "steady", "replicas": 2, "sessions": 2, "period_s": 5.0}, m)["machine"]
    assert machine["busy_cores"] == 1.5 and machine["stolen_cores"] == 0.1
    assert machine["this_test_cores"] == pytest.approx(0.9)  # (8 + 0.5 + 0.5) / 10
    assert machine["other_processes_cores"] == pytest.approx(0.6)  # (15 − 9) / 10


def test_targets_for_the_run_set_up_with_notes_when_it_differs() -> None:
    figures = {
        "config": {"mode": "steady", "replicas": 1, "sessions": 10, "period_s": 5.0},
        "rerun": {"p95": 0.4},
        "health": {"p95": 1.5},
        "errors": {"count": 0},
        "affinity": {"sessions_off_their_replica": 0},
    }
    verdicts = {v["target"]: v for v in load_report.judged(figures)}
    assert set(verdicts) == {"rerun p95 ≤ 1 s", "health p95 ≤ 1 s", "0 errors"}
    assert verdicts["rerun p95 ≤ 1 s"]["pass"] and not verdicts["health p95 ≤ 1 s"]["pass"]
    assert verdicts["0 errors"]["note"] == "10 sessions, the target is for 50"
    figures["config"] = {"mode": "burst", "replicas": 1, "sessions": 50, "period_s": 2.0}
    figures["rerun"] = {"p95": math.nan}  # nothing measured fails
    burst = load_report.judged(figures)
    assert [(v["target"], v["pass"], v["note"]) for v in burst] == [
        ("burst drains with rerun p95 ≤ 3 s", False, ""),
        ("0 errors", True, ""),
    ]


def test_json_safe_writes_nan_as_null() -> None:
    assert load_report.json_safe({"a": [math.nan, 1.0], "b": {"c": math.nan}}) == {"a": [None, 1.0], "b": {"c": None}}


# --- deployment pieces ---------------------------------------------------------------------------


def test_replicas_run_with_the_images_environment() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for key, value in load_servers.IMAGE_ENV.items():
        assert re.search(rf"^\s*(ENV\s+)?{key}={value}\b", dockerfile, re.MULTILINE), key


def test_haproxy_config_has_affinity_health_checks_and_tunnel_timeout() -> None:
    cfg = load_servers.HAPROXY_CFG.read_text()
    lines = {" ".join(line.split()) for line in cfg.splitlines() if line.strip() and not line.lstrip().startswith("#")}
    for needed in (
        "balance roundrobin",
        "cookie SERVERID insert indirect nocache",
        "option httpchk GET /_stcore/health",
        "timeout tunnel 1h",
        "http-response set-header X-Served-By %s",
    ):
        assert needed in lines, needed
    env = load_servers.haproxy_env(8000, [load_servers.Replica(f"s{i}", 9000 + i, None) for i in (1, 2)])
    assert env == {"LB_BIND": "127.0.0.1:8000", "REPLICA_1": "127.0.0.1:9001", "REPLICA_2": "127.0.0.1:9002"}
    for name in env:
        assert f'"${{{name}}}"' in cfg, name
    assert re.findall(r"^\s*server (s\d) .* cookie (s\d)$", cfg, re.MULTILINE) == [("s1", "s1"), ("s2", "s2")]


# --- the floor -----------------------------------------------------------------------------


def test_floor_ratio_and_its_verdict() -> None:
    app = {"server_cpu_per_rerun_ms": 26.0}
    floor = {"server_cpu_per_rerun_ms": 20.0, "rerun": load_report.summary([0.01, 0.02]), "errors": {"count": 0},
             "server_cpu_per_rerun_basis": "b"}  # fmt: skip
    assert load_report.floor_ratio(app, floor) == pytest.approx(1.3)  # 26 ÷ 20
    assert load_report.floor_lines(app, floor)[-1].endswith("= 1.30x  (target ≤ 1.3x: PASS)")
    assert load_report.floor_lines({"server_cpu_per_rerun_ms": 27.0}, floor)[-1].endswith("FAIL)")  # 1.35x
    # Nothing measured on the floor: no ratio, and no pass.
    assert math.isnan(load_report.floor_ratio(app, {**floor, "server_cpu_per_rerun_ms": math.nan}))
    assert load_report.floor_lines(app, {**floor, "server_cpu_per_rerun_ms": math.nan})[-1].endswith("FAIL)")


def test_the_floor_runs_the_images_command_with_only_the_script_swapped(tmp_path, monkeypatch) -> None:
    started = []

    class Started:
        pid = 1

        def poll(self):
            return None

    def popen(command, **kwargs):
        started.append((command, kwargs["env"]))
        return Started()

    monkeypatch.setattr(load_servers.subprocess, "Popen", popen)
    monkeypatch.setattr(load_servers, "_wait_healthy", lambda *a: None)
    load_servers.start_replica("floor", tmp_path, "benchmarks/floor_app.py", {"FLOOR_FIGURES": "f.json"})
    command, env = started[0]
    app = load_servers.APP.app_command(int(command[-1].split("=")[1]))
    assert command == [a if a != load_servers.APP.ENTRY else "benchmarks/floor_app.py" for a in app]
    assert env["FLOOR_FIGURES"] == "f.json" and env["STREAMLIT_SERVER_FILE_WATCHER_TYPE"] == "none"
