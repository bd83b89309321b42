"""Folio's domain and pipeline stages. Qt-free: nothing here imports PySide6 or qasync."""
