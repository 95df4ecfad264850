"""The Streamlit entry point: `streamlit run app.py`."""

from dashboard.main import main

main()
