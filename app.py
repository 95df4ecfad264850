"""The Streamlit entry point: `streamlit run app.py`.

It serves page.py (every page view) with one route of the dashboard's own beside
Streamlit's: the sign-in cookie's (dashboard/session_routes.py), which lets a sign-in
outlast a reload and reach new tabs."""

import streamlit as st
from streamlit import config

from dashboard import session_routes

app = st.App("page.py", routes=session_routes.routes(str(config.get_option("server.baseUrlPath") or "")))
