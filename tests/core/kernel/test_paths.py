"""The data folder chosen in Settings moves the library for the command line too."""

from __future__ import annotations

from pathlib import Path

from desktop_app.core import paths
from desktop_app.core import settings as settings_store
from desktop_app.core.settings import Settings


def test_the_library_follows_the_data_folder_chosen_in_settings(tmp_path: Path) -> None:
    assert paths.db_path(Settings().data_dir) == paths.data_dir() / "library.duckdb"
    chosen = tmp_path / "elsewhere"
    chosen.mkdir()
    assert paths.db_path(str(chosen)) == chosen / "library.duckdb"
    assert paths.models_dir() != chosen / "models"  # models stay where they were installed


def test_the_knowledge_base_uses_the_settings_it_is_given_not_the_saved_ones(tmp_path: Path) -> None:
    from desktop_app.services.knowledge_base import KnowledgeBase

    saved, given = tmp_path / "saved", tmp_path / "given"
    saved.mkdir()
    given.mkdir()
    settings_store.save(Settings(data_dir=str(saved)))
    kb = KnowledgeBase(settings=Settings(data_dir=str(given)))
    assert kb.db_path == given / "library.duckdb"


def test_the_cli_opens_the_library_in_the_chosen_data_folder(tmp_path: Path) -> None:
    from desktop_app.services.knowledge_base import KnowledgeBase

    chosen = tmp_path / "lib"
    chosen.mkdir()
    settings_store.save(Settings(data_dir=str(chosen)))
    kb = KnowledgeBase(settings=settings_store.load())
    assert kb.db_path == chosen / "library.duckdb"
