"""The session's language: chosen once per session from the link's lang= (or the
configuration's dashboard.language), then by the sidebar's English / 한국어 switch, and
kept in the URL so that a copied link opens in the same language.

The choice lives in st.session_state[LANGUAGE_KEY], which is per browser session; t()
reads it there through the script run context (see dashboard/strings.py). It is kept
under its own key, not the switch's widget key: Streamlit drops a widget's state after a
run that did not draw the widget (one stopped by an error, say), and t() is called before
the switch is drawn. Signing out clears the session; the URL's lang= brings it back.

A widget whose choices are labelled in the language (the time range) holds its choice in
the browser as the label, and the browser sends that label back on every run: after a
switch the old language's label matches no choice, and Streamlit falls back to the first
one (range=30d became 24h on the next page). So a switch sets each such widget's value
again, which makes Streamlit send the browser the label in the new language."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from dashboard.strings import LANGUAGE_KEY, LANGUAGE_NAMES, LANGUAGES, Language, current_language, t
from dashboard.view_state import parse_language

SWITCH_KEY = "lang_switch"
# Korean breaks lines between words (eojeol), not inside one: a browser's default breaks
# anywhere in Hangul, which split the demo banner's words in two. Long unbroken strings
# (a model name, a path) may still wrap anywhere rather than run off the page.
KOREAN_LINE_BREAKS = """<style>
  [data-testid='stMain'] p, [data-testid='stMain'] li, [data-testid='stSidebar'] p,
  [data-testid='stMetricLabel'] p, [data-testid='stCaptionContainer'] {
    word-break: keep-all; overflow-wrap: anywhere;
  }
</style>"""


def choose(default: Language) -> Language:
    """The session's language, settled on its first run: the link's lang= if it names
    one of LANGUAGES (anything else is ignored), else `default`."""
    if st.session_state.get(LANGUAGE_KEY) not in LANGUAGES:
        st.session_state[LANGUAGE_KEY] = parse_language(st.query_params.get_all("lang")) or default
    return current_language()


def switch(default: Language, *, labelled: Iterable[str] = ()) -> None:
    """The English / 한국어 switch in the sidebar. Picking a language reruns the page in it
    and writes lang= into the URL (left out when it is `default`, so links stay short).
    `labelled` are the keys of widgets whose choices are labelled in the language."""
    language = current_language()
    if st.session_state.get(SWITCH_KEY) != language:  # a new session, or one just signed out
        st.session_state[SWITCH_KEY] = language
    st.sidebar.radio(
        t("language.label"),
        LANGUAGES,
        format_func=lambda code: LANGUAGE_NAMES[code],
        key=SWITCH_KEY,
        horizontal=True,
        on_change=_switched,
        args=(default, tuple(labelled)),
        label_visibility="collapsed",
    )
    if language == "ko":
        st.html(KOREAN_LINE_BREAKS)  # style only: Streamlit gives it no room on the page


def _switched(default: Language, labelled: tuple[str, ...]) -> None:
    chosen = st.session_state.get(SWITCH_KEY)
    if chosen not in LANGUAGES:
        return
    st.session_state[LANGUAGE_KEY] = chosen
    for key in labelled:
        if key in st.session_state:  # read back through the old labels, still the widget's own
            st.session_state[key] = st.session_state[key]
    if chosen == default:
        if "lang" in st.query_params:
            del st.query_params["lang"]
    else:
        st.query_params["lang"] = chosen
