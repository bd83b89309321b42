"""The settings dialog: every field persists to the TOML file, every invalid choice is
refused with its reason, model details come from the file, and a new embedder offers to
re-embed the library."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from desktop_app.core import settings as settings_store
from tests.ggufgen import write_gguf
from tests.ui.conftest import until
from tests.ui.fakes import FakeKnowledgeBase


def onnx_folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "model.onnx").write_bytes(b"\x08\x07onnx")
    (path / "tokenizer.json").write_text("{}")
    return path


def test_every_field_persists_to_the_toml_file(window, folio_home, tmp_path, run) -> None:  # noqa: ANN001
    model = write_gguf(tmp_path / "own.gguf")
    embedder = onnx_folder(tmp_path / "e5")
    data = tmp_path / "library-data"
    dialog = window.show_settings()
    dialog.model_file_chosen(str(model))
    dialog.embedder_folder_chosen(str(embedder))
    dialog.style.setCurrentIndex(dialog.style.findData("shortid"))
    dialog.sources.setValue(7)
    dialog.max_tokens.setValue(512)
    dialog.temperature.setValue(0.4)
    dialog.threads.setValue(2)
    dialog.judge.setChecked(True)
    assert dialog.ocr.isChecked()  # OCR is on by default
    dialog.ocr.setChecked(False)
    dialog.language.setCurrentIndex(dialog.language.findData("zh"))
    dialog.data_dir.setText(str(data))
    saved: list[tuple[object, bool]] = []
    dialog.saved.connect(lambda settings, reembed: saved.append((settings, reembed)))
    assert dialog.try_save()
    dialog.reembed_box.button(QMessageBox.StandardButton.No).click()  # "Later"
    assert saved and saved[0][1] is False and not dialog.isVisible()
    on_disk = tomllib.loads((folio_home / "config" / "settings.toml").read_text(encoding="utf-8"))
    assert on_disk["answer_model"] == str(model) and on_disk["embedder"] == str(embedder)
    loaded = settings_store.load()
    assert (loaded.citation_style, loaded.sources_per_answer, loaded.max_tokens) == ("shortid", 7, 512)
    assert (loaded.temperature, loaded.threads, loaded.judge, loaded.prompt_language) == (0.4, 2, True, "zh")
    assert loaded.data_dir == str(data) and loaded.ocr is False
    # Reopened, the dialog shows what was saved.
    again = window.show_settings()
    assert again.model.currentData() == "file" and again.model_path.text() == str(model)
    assert again.embedder_path.text() == str(embedder) and again.judge.isChecked()
    assert again.data_dir.text() == str(data) and not again.ocr.isChecked()
    again.reject()


def test_the_chosen_gguf_shows_its_size_and_context_length(window, tmp_path, run) -> None:  # noqa: ANN001
    model = write_gguf(tmp_path / "qwen-tiny.gguf", "qwen2", 32768, padding=2_000_000)
    dialog = window.show_settings()
    dialog.model_file_chosen(str(model))
    run(until(lambda: "context" in dialog.model_info.text(), what="model details"))
    assert dialog.model_info.text() == "qwen-tiny.gguf · 2.0 MB · context 32,768 tokens · qwen2 Q4_K_M"
    dialog.model_path.setText(str(tmp_path / "nothing.gguf"))
    run(until(lambda: "Cannot read" in dialog.model_info.text(), what="the missing file named"))
    dialog.reject()


def _fake_gguf(tmp_path: Path) -> dict[str, str]:
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"PK\x03\x04 a zip, renamed")
    return {"model": "file", "model_path": str(fake)}


INVALID = {
    "a .gguf that is not GGUF": (_fake_gguf, "not a GGUF model: it does not start with the GGUF magic bytes"),
    "a missing model": (lambda t: {"model": "file", "model_path": str(t / "gone.gguf")}, "is not a .gguf file"),
    "no model file chosen": (lambda t: {"model": "file", "model_path": ""}, "No GGUF file chosen."),
    "an embedder folder without model.onnx": (
        lambda t: {"embedder": "folder", "embedder_path": str(t)}, "does not hold model.onnx and tokenizer.json"
    ),
    "a relative data folder": (lambda t: {"data_dir": "relative/folder"}, "is not an absolute path"),
    "a data folder that is a file": (
        lambda t: {"data_dir": str(write_gguf(t / "file.gguf"))}, "is a file, not a folder"
    ),
    "a data folder under a missing parent": (
        lambda t: {"data_dir": str(t / "no" / "such" / "place")}, "does not exist"
    ),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_choices_are_refused_with_the_reason(window, folio_home, tmp_path, case) -> None:  # noqa: ANN001
    make, reason = INVALID[case]
    dialog = window.show_settings()
    for field, value in make(tmp_path).items():
        widget = getattr(dialog, field)
        if hasattr(widget, "findData"):
            widget.setCurrentIndex(widget.findData(value))
        else:
            widget.setText(value)
    assert not dialog.try_save()
    assert reason in dialog.error.text() and dialog.isVisible()
    assert not (folio_home / "config" / "settings.toml").exists()
    dialog.reject()


def test_a_new_embedder_offers_to_re_embed_and_the_window_does_it(window, fake_kb, library, tmp_path, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    replacement = FakeKnowledgeBase()
    replacement.documents_by_path = dict(fake_kb.documents_by_path)
    window.kb_factory = lambda: replacement
    dialog = window.show_settings()
    dialog.embedder_folder_chosen(str(onnx_folder(tmp_path / "e5")))
    assert dialog.try_save()
    box = dialog.reembed_box
    assert box is not None and box.isVisible() and "Re-embed" in box.windowTitle()
    box.button(QMessageBox.StandardButton.Yes).click()
    run(until(lambda: replacement.reindex_calls == 1 and window.index_task.done(), what="re-embedding"))
    assert window.kb is replacement and fake_kb.closed
    assert window.status_label.text() == "The library is re-embedded with the new embedder."


def test_find_the_passage_only_round_trips_and_says_what_it_does(window, run) -> None:  # noqa: ANN001
    dialog = window.show_settings()
    box = dialog.quote_only
    assert box.text() == "Find the passage only (no model)" and not box.isChecked()
    assert "no model" in box.toolTip() and "own words" in box.toolTip()
    box.setChecked(True)
    assert dialog.try_save()
    assert settings_store.load().quote_only and window.quote_only
    again = window.show_settings()
    assert again.quote_only.isChecked()
    again.quote_only.setChecked(False)
    assert again.try_save()
    assert not settings_store.load().quote_only and not window.quote_only
