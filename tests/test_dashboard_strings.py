"""The catalogue in English and Korean: complete and consistent, every key the dashboard
uses exists, the session's language in t(), the configuration, and the page in Korean.

One module because it is the tests of one catalogue in its two languages.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import logging
import re
import string
import threading
from pathlib import Path
from typing import Any, get_args
from zoneinfo import ZoneInfo

import pytest
from streamlit import dataframe_util
from streamlit.runtime.scriptrunner import add_script_run_ctx
from streamlit.testing.v1 import AppTest

from contract.measures import BY_NAME
from dashboard import auth, figures, nodes, panels, signin, strings
from dashboard import format as fmt
from dashboard.strings import EN, LANGUAGE_NAMES, LANGUAGES, current_language, t, use_language
from dashboard.strings_ko import KO
from dashboard.view_state import RANGES, USER_MEASURES
from settings import config as etl_config
from settings.config import load_config
from settings.errors import ConfigError
from tests import known_store

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "page.py")
SEOUL_NOV_21 = {"range": "custom", "from": "2026-11-21", "to": "2026-11-21"}
KOREAN = SEOUL_NOV_21 | {"lang": "ko"}
PASSWORD = "correct horse battery staple"


# --- the catalogue ----------------------------------------------------------------------


def fields(text: str) -> set[str]:
    """The {name} fields of a format string (format specs and conversions aside)."""
    return {
        re.split(r"[.\[]", name)[0] for _, name, _, _ in string.Formatter().parse(text) if name is not None
    }


def test_both_languages_have_every_key() -> None:
    assert not set(EN) - set(KO), f"no Korean for: {sorted(set(EN) - set(KO))}"
    assert not set(KO) - set(EN), f"Korean only (stale?): {sorted(set(KO) - set(EN))}"


def test_both_languages_agree_on_the_placeholders() -> None:
    differ = {key: (fields(EN[key]), fields(KO[key])) for key in EN if key in KO}
    differ = {key: pair for key, pair in differ.items() if pair[0] != pair[1]}
    assert not differ, differ


def test_every_korean_text_is_written() -> None:
    """Nothing empty in either language (English date axes write their own labels too)."""
    assert [key for key in KO if not KO[key].strip() and EN[key].strip()] == []
    assert {key for key in EN if not EN[key]} == set()


def test_languages_are_the_same_everywhere() -> None:
    assert LANGUAGES == ("en", "ko") == etl_config.LANGUAGES
    assert set(LANGUAGE_NAMES) == set(LANGUAGES) == set(strings.CATALOGUES)
    assert set(get_args(strings.Language)) == set(get_args(etl_config.Language)) == set(LANGUAGES)


def test_the_card_tooltips_say_what_the_metric_catalogue_says() -> None:
    for name in panels.CARDS:
        assert EN[f"card.{name}.help"] == BY_NAME[name].description, name


def _source_files() -> list[Path]:
    return sorted((ROOT / "dashboard").glob("*.py"))


def _t_calls(tree: ast.AST) -> list[ast.expr]:
    return [
        node.args[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "t"
        and node.args
    ]


def _pattern(arg: ast.JoinedStr) -> re.Pattern[str]:
    parts = [
        re.escape(str(part.value)) if isinstance(part, ast.Constant) else "[A-Za-z0-9_.]+"
        for part in arg.values
    ]
    return re.compile("".join(parts))


def test_every_key_the_dashboard_asks_for_exists() -> None:
    """Scans dashboard/*.py: every t("literal") is a key; every t(f"prefix.{x}") matches
    some key; and every other string that looks like a key of a catalogue namespace
    ("page.nodes" handed to a helper, "download.users" in a table) is one."""
    namespaces = {key.split(".")[0] for key in EN}
    missing: list[str] = []
    for path in _source_files():
        if path.name in ("strings.py", "strings_ko.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for arg in _t_calls(tree):
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if arg.value not in EN:
                    missing.append(f"{path.name}:{arg.lineno}: t({arg.value!r})")
            elif isinstance(arg, ast.JoinedStr):
                pattern = _pattern(arg)
                if not any(pattern.fullmatch(key) for key in EN):
                    missing.append(f"{path.name}:{arg.lineno}: t(f{pattern.pattern!r})")
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                looks_like_a_key = re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)+", text) is not None
                if looks_like_a_key and text.split(".")[0] in namespaces and text not in EN:
                    missing.append(f"{path.name}:{node.lineno}: {text!r}")
    assert not missing, "\n".join(missing)


def test_every_key_made_at_run_time_exists() -> None:
    """The keys put together from data: each family complete."""
    made = [
        *(f"range.{key}" for key in RANGES),
        *(f"users.by.{m}" for m in USER_MEASURES),
        *(f"measure.{m}" for m in USER_MEASURES),
        *(f"card.{name}" for name in panels.CARDS),
        *(f"card.{name}.help" for name in panels.CARDS),
        *(f"kind.{kind}" for kind in figures.KINDS),
        *(f"series.{column}" for column in ("successes", "failures")),
        *(f"filters.{field}" for field in ("users", "models", "nodes", "clients")),
        *(f"role.{role}" for role in get_args(auth.Identity.__annotations__["role"])),
        *(f"signin.refused.{signin._shown(p)}" for p in get_args(auth.KeyCheck.__annotations__["problem"])),
        "signin.refused.password",
        *(f"panel.peers.{mode}" for mode in ("anonymous", "named", "hidden")),
        *(f"col.{label}" for label in ("node", "model")),
        *(f"nodes.tab.{name}" for name in nodes.TABS),
        *(
            f"serving.load.{form}.{m}"
            for form in ("measure", "short")
            for m in ("ttft_p95_ms", "latency_p95_ms")
        ),
        *(f"period.{unit}" for unit in ("s", "m", "h", "d", "mo")),
    ]
    assert [key for key in made if key not in EN] == []


def test_a_missing_korean_text_falls_back_to_english_and_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(EN, "test.only_english", "Only in English, {n}")
    with use_language("ko"), caplog.at_level(logging.WARNING, "dashboard.strings"):
        assert t("test.only_english", n=1) == "Only in English, 1"
    assert "test.only_english" in caplog.text
    caplog.clear()  # expected here, unlike in the page tests below
    with pytest.raises(KeyError):
        t("no.such.key")


# --- the session's language ---------------------------------------------------------------


def test_without_a_session_the_text_is_english() -> None:
    assert current_language() == "en"
    assert t("title") == "LLM usage"
    with use_language("ko"):
        assert (current_language(), t("title")) == ("ko", "LLM 사용량")
    assert t("title") == "LLM usage"


class _Session:
    """What t() needs of a ScriptRunContext: the session's state."""

    def __init__(self, language: str | None) -> None:
        self.session_state = {} if language is None else {strings.LANGUAGE_KEY: language}


def test_each_sessions_thread_reads_its_own_language() -> None:
    """Streamlit runs every session's script in a thread carrying its context: many at
    once, each must get its own language, whatever the others chose."""
    barrier = threading.Barrier(4)
    seen: dict[str, list[str]] = {}

    def session(name: str) -> None:
        barrier.wait()
        seen[name] = [t("title") for _ in range(200)]

    threads = {}
    for name, language in (("ko", "ko"), ("en", "en"), ("unset", None), ("bogus", "fr")):
        thread = threading.Thread(target=session, args=(name,))
        add_script_run_ctx(thread, _Session(language))  # type: ignore[arg-type]
        threads[name] = thread
    for thread in threads.values():
        thread.start()
    for thread in threads.values():
        thread.join()
    assert set(seen["ko"]) == {"LLM 사용량"}
    assert set(seen["en"]) == set(seen["unset"]) == set(seen["bogus"]) == {"LLM usage"}


# --- the configuration ----------------------------------------------------------------------


def test_the_default_language_comes_from_the_configuration(tmp_path: Path) -> None:
    path = tmp_path / "usage.toml"
    assert load_config(env={}).dashboard.language == "en"
    path.write_text('[dashboard]\nlanguage = "ko"\n', encoding="utf-8")
    assert load_config(path, env={}).dashboard.language == "ko"
    assert load_config(path, env={"USAGE_LANGUAGE": "en"}).dashboard.language == "en"
    assert load_config(env={"USAGE_LANGUAGE": "ko"}).dashboard.language == "ko"


@pytest.mark.parametrize("value", ['"fr"', '"KO"', "1"])
def test_an_unknown_language_is_a_configuration_error(tmp_path: Path, value: str) -> None:
    path = tmp_path / "usage.toml"
    path.write_text(f"[dashboard]\nlanguage = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r'dashboard.language must be "en" or "ko"'):
        load_config(path, env={})
    with pytest.raises(ConfigError, match=r'"en" or "ko", not \'de\''):
        load_config(env={"USAGE_LANGUAGE": "de"})


# --- the page in Korean -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return known_store.build(tmp_path_factory.mktemp("strings") / "store")


@pytest.fixture(scope="module")
def password_hash() -> str:
    return auth.hash_password(PASSWORD)


@pytest.fixture(autouse=True)
def report_missing_texts(caplog: pytest.LogCaptureFixture) -> Any:
    """Every page test below fails on a text the Korean catalogue lacks."""
    strings._REPORTED.clear()
    with caplog.at_level(logging.WARNING, "dashboard.strings"):
        yield
    assert not [r.getMessage() for r in caplog.records if r.name == "dashboard.strings"]


def app(
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    params: dict[str, str],
    *,
    admin: bool = True,
    config: str = "",
    password_hash: str = "",
) -> AppTest:
    path = store.parent / "usage-strings.toml"
    path.write_text(f'[dashboard]\ntimezone = "Asia/Seoul"\n{config}', encoding="utf-8")
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_CONFIG", str(path))
    monkeypatch.delenv("USAGE_TIMEZONE", raising=False)
    monkeypatch.delenv("USAGE_LANGUAGE", raising=False)
    if password_hash:
        monkeypatch.setenv("USAGE_ADMIN_PASSWORD_HASH", password_hash)
    signin.gate().reset()
    at = AppTest.from_file(APP, default_timeout=60)
    if admin:
        at.session_state["identity"] = auth.Identity(role="admin", name="admin")
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def cards(at: AppTest) -> dict[str, tuple[str, str]]:
    return {m.label: (m.value, m.delta) for m in at.metric}


def lang_in_url(at: AppTest) -> str | None:
    value = at.query_params.get("lang")
    return value if isinstance(value, str) or value is None else value[-1]


def submit(at: AppTest, form: int) -> None:
    """Submit the sign-in form: 0 for a student's key, 1 for the password."""
    button: Any = at.get("form_submit_button")[form]
    button.click().run()
    assert not at.exception, at.exception


def switch(at: AppTest, language: str) -> AppTest:
    at.radio(key="lang_switch").set_value(language).run()
    assert not at.exception, at.exception
    return at


def test_the_overview_in_korean(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "MIN_PREVIOUS_REQUESTS", 1)  # compare with the one request before
    at = app(store, monkeypatch, KOREAN)
    assert [title.value for title in at.title] == ["LLM 사용량"]
    assert cards(at) == {
        "비용": ("$0.0203", "+102.6%"),
        "요청": ("3", "+200.0%"),
        "토큰": ("4,949", "+280.7%"),
        "캐시 적중률": ("25.2%", "+5.2%p"),
        "성공률": ("66.7%", "-33.3%p"),
        "지연 시간 중앙값": ("4.0초", "+100.0%"),
    }
    # the compared day: without its year when it is this year's (the cards are narrow)
    this_year = dt.datetime.now(ZoneInfo("Asia/Seoul")).year == 2026
    assert at.metric[0].proto.delta_description == (
        "11월 20일 대비" if this_year else "2026년 11월 20일 대비"
    )
    titles = [m.value for m in at.markdown]
    for title in ("토큰 추이", "프롬프트 캐싱", "요청 추이", "GPU 노드", "사용자", "클라이언트", "모델"):
        assert f"**{title}**" in titles
    assert any(c.value.startswith("최신 요청 2026년 11월 21일 10:00 ·") for c in at.caption)
    assert [s.label for s in at.sidebar.selectbox] == ["기간", "시간대"]
    assert at.sidebar.selectbox[0].format_func("custom") == "직접 지정"
    assert at.get("download_button")[0].proto.label == "사용자 (CSV)"
    charts = {e.proto.id.rsplit("-", 1)[-1]: json.loads(e.proto.spec) for e in at.get("plotly_chart")}
    tokens = charts["tokens"]
    assert [trace["name"] for trace in tokens["data"]] == [
        "캐시 안 된 프롬프트",
        "캐시된 프롬프트",
        "답변",
        "추론",
    ]
    assert tokens["data"][0]["hovertemplate"].startswith("%{y:,} 토큰")
    assert {s["value"] for s in tokens["layout"]["xaxis"]["tickformatstops"]} >= {"%-m월 %-d일"}
    assert tokens["layout"]["yaxis"]["title"]["text"] == "토큰"
    assert lang_in_url(at) == "ko"  # the link keeps the language


def test_the_switch_changes_the_language_and_the_link(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = app(store, monkeypatch, SEOUL_NOV_21)
    assert at.radio(key="lang_switch").value == "en" and lang_in_url(at) is None
    assert at.radio(key="lang_switch").options == ["English", "한국어"]
    switch(at, "ko")
    assert at.title[0].value == "LLM 사용량" and "캐시 적중률" in cards(at)
    assert lang_in_url(at) == "ko" and at.query_params["range"] == "custom"  # the filters stay
    assert "캐시" in json.dumps(json.loads(at.get("plotly_chart")[0].proto.spec), ensure_ascii=False)
    switch(at, "en")
    assert at.title[0].value == "LLM usage" and cards(at)["Cache hit rate"][0] == "25.2 %"
    assert lang_in_url(at) is None  # English is the default: left out of the link


def test_the_configured_language_is_the_default_and_a_link_overrides_it(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    korean = app(store, monkeypatch, SEOUL_NOV_21, config='language = "ko"\n')
    assert korean.title[0].value == "LLM 사용량" and lang_in_url(korean) is None
    english = app(store, monkeypatch, SEOUL_NOV_21 | {"lang": "en"}, config='language = "ko"\n')
    assert english.title[0].value == "LLM usage" and lang_in_url(english) == "en"
    switch(english, "ko")
    assert lang_in_url(english) is None  # now the default again


def test_an_unknown_language_in_the_link_is_ignored(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = app(store, monkeypatch, SEOUL_NOV_21 | {"lang": "fr"}, config='language = "ko"\n')
    assert at.title[0].value == "LLM 사용량"
    assert any("lang='fr'" in w.value for w in at.sidebar.warning)
    assert lang_in_url(at) is None


def test_two_sessions_keep_their_own_language(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    korean = app(store, monkeypatch, KOREAN)
    english = app(store, monkeypatch, SEOUL_NOV_21)
    korean.run()
    assert korean.title[0].value == "LLM 사용량" and english.title[0].value == "LLM usage"


def test_sign_in_in_korean_and_the_switch_there(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = app(store, monkeypatch, KOREAN, admin=False, password_hash=password_hash)
    assert [title.value for title in at.title] == ["로그인"]
    assert [tab.label for tab in at.tabs] == ["학생", "관리자"]
    at.text_input[1].input("wrong password")
    submit(at, 1)
    assert [e.value for e in at.error] == ["비밀번호가 틀렸습니다."]
    switch(at, "en")
    assert [title.value for title in at.title] == ["Sign in"] and lang_in_url(at) is None
    switch(at, "ko")
    at.text_input[1].input(PASSWORD)
    submit(at, 1)
    assert at.title[0].value == "LLM 사용량" and "요청" in cards(at)
    assert any("**admin** (관리자) 로그인 중" in c.value for c in at.sidebar.caption)
    at.button(key="sign_out").click().run()
    assert [title.value for title in at.title] == ["로그인"]  # the link kept the language


def test_a_students_page_in_korean(store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str) -> None:
    at = app(store, monkeypatch, KOREAN, admin=False, password_hash=password_hash)
    at.text_input[0].input("sk-alice")
    submit(at, 0)
    assert not at.exception, at.exception
    assert [p.proto.text for p in at.get("progress")] == [
        "alice-laptop: $10.00 중 $3.25 사용(32.5%), $6.75 남음",
        "alice-jupyter: $0.50 사용, 예산 미설정",
        "키 전체에 걸친 개인 예산: $40.00 중 $3.75",
    ]
    assert any("한도: TPM 20,000 · RPM 60" in c.value for c in at.caption)
    peers = next(e for e in at.get("plotly_chart") if e.proto.id.endswith("peers_chart"))
    assert sorted(json.loads(peers.proto.spec)["data"][0]["y"]) == ["나", "학생 A"]


def test_the_nodes_and_budgets_pages_in_korean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from etl.run import ingest_rows
    from settings.config import Config
    from tests import test_node_queries
    from tests.test_pages import open_page

    node_store = tmp_path / "nodes"
    ingest_rows(Config(store=node_store, nodes=known_store.NODES), test_node_queries.ROWS)
    at = open_page(
        node_store,
        monkeypatch,
        "노드",
        range="custom",
        lang="ko",
        **{"from": "2026-11-20", "to": "2026-11-20"},
    )
    titles = [m.value for m in at.markdown]
    for title in ("GPU 노드별", "모델별", "동시 처리 중인 요청", "출력 속도 추이", "오류 유형별 실패"):
        assert f"**{title}**" in titles
    columns = json.dumps(json.loads(at.dataframe[0].proto.columns), ensure_ascii=False)
    assert "출력 속도 p50" in columns and "TTFT p50" in columns
    assert "토큰/초" in shown_text(at.dataframe[0])  # cells written by format.py, in Korean
    charts = {e.proto.id.rsplit("-", 1)[-1]: json.loads(e.proto.spec) for e in at.get("plotly_chart")}
    assert all(text.endswith(("ms", "초")) for text in charts["ttft"]["data"][0]["hovertext"])
    assert (
        charts["failures"]["layout"]["annotations"][0]["text"] == "이 기간과 조건에 해당하는 요청이 없습니다."
    )

    budgets = open_page(known_store.build(tmp_path / "store"), monkeypatch, "예산", lang="ko")
    assert "키 **5**개 중 예산 초과 **0**개, 위험(80% 이상 사용 또는 초기화 전 소진 예상) **1**개" in [
        m.value for m in budgets.markdown
    ]
    columns = json.dumps(json.loads(budgets.dataframe[1].proto.columns), ensure_ascii=False)
    assert "마지막 요청" in columns and re.search(
        r"\d{4}년 \d+월 \d+일 \d\d:\d\d", shown_text(budgets.dataframe[1])
    )


def shown_text(table: Any) -> str:
    """A table's cells as the page writes them (a Styler's display values)."""
    return dataframe_util.convert_arrow_bytes_to_pandas_df(
        table.proto.arrow_data.styler.display_values
    ).to_csv()
