"""The async facade the UI and CLI use. Qt-free."""
