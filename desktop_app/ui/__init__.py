"""Widgets. Reaches the backends only through desktop_app.services."""
