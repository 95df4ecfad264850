"""The script Streamlit runs for every page view (app.py serves it): dashboard/main.py."""

from dashboard.main import main

main()
