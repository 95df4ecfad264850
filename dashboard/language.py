"""The session's language: chosen once per session from the link's lang= (or the
configuration's dashboard.language), then by the sidebar's English / 한국어 switch, and
kept in the URL so that a copied link opens in the same language.

The choice lives in st.session_state[LANGUAGE_KEY], which is per browser session; t()
reads it there through the script run context (see dashboard/strings.py). It is kept
under its own key, not the switch's widget key: Streamlit drops a widget's state after a
run that did not draw the widget (one stopped by an error, say), and t() is called before
the switch is drawn. Signing out clears the session; the URL's lang= brings it back."""

from __future__ import annotations

import streamlit as st

from dashboard.strings import LANGUAGE_KEY, LANGUAGE_NAMES, LANGUAGES, Language, current_language, t
from dashboard.view_state import parse_language

SWITCH_KEY = "lang_switch"


def choose(default: Language) -> Language:
    """The session's language, settled on its first run: the link's lang= if it names
    one of LANGUAGES (anything else is ignored), else `default`."""
    if st.session_state.get(LANGUAGE_KEY) not in LANGUAGES:
        st.session_state[LANGUAGE_KEY] = parse_language(st.query_params.get_all("lang")) or default
    return current_language()


def switch(default: Language) -> None:
    """The English / 한국어 switch in the sidebar. Picking a language reruns the page in it
    and writes lang= into the URL (left out when it is `default`, so links stay short)."""
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
        args=(default,),
        label_visibility="collapsed",
    )


def _switched(default: Language) -> None:
    chosen = st.session_state.get(SWITCH_KEY)
    if chosen not in LANGUAGES:
        return
    st.session_state[LANGUAGE_KEY] = chosen
    if chosen == default:
        if "lang" in st.query_params:
            del st.query_params["lang"]
    else:
        st.query_params["lang"] = chosen
