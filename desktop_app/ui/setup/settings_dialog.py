"""The settings dialog: edits the one Settings object and saves it as TOML.

Every field of the issue list is here: answer model (default / small / any GGUF file, with
its size and context length read from the file's header), embedder (default / an ONNX
folder; changing it offers to re-embed the library), citation style, sources per answer,
max tokens, temperature, CPU threads, judge, "find the passage only" (no model), prompt
language and the data folder. Invalid choices are refused with the reason
``Settings.validate`` gives; the dialog stays open so the user can fix them.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import paths
from desktop_app.core import settings as settings_store
from desktop_app.core.errors import KnownError
from desktop_app.core.settings import Settings
from desktop_app.core.types import CitationStyle
from desktop_app.services import model_install, model_serve
from desktop_app.ui.qt.async_bridge import TaskSet

logger = logging.getLogger(__name__)

MODEL_CHOICES = (("default", "Default (Qwen2.5 1.5B)"), ("small", "Small (SmolLM2 135M, fast)"), ("file", "A GGUF file…"),
                 (settings_store.SERVER, "A model server…"))
EMBEDDER_CHOICES = (("default", "Default (multilingual-e5-small: English, Chinese, German…)"),
                    ("minilm", "all-MiniLM-L6-v2 (English only; better on financial tables)"),
                    ("folder", "An ONNX folder…"))
DESCRIBE_DELAY_MS = 150
MUTED = "color: palette(placeholder-text);"
ERROR = "color: #c62828;"


class SettingsDialog(QDialog):
    saved = Signal(object, bool)  # the Settings saved, and whether to re-embed the library

    def __init__(self, parent: QWidget | None = None, path: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Folio settings")
        self.setMinimumWidth(720)
        self.path = path
        self.current = settings_store.load(path)
        self.tasks = TaskSet()
        self.reembed_box: QMessageBox | None = None
        self.model, self.model_path, model_row = self._choice_row(MODEL_CHOICES, "Answer model", "/path/to/model.gguf", self._browse_model)
        self.model_info = self._info_label("Answer model details")
        self.server_panel = self._server_panel()
        self.embedder, self.embedder_path, embedder_row = self._choice_row(EMBEDDER_CHOICES, "Embedder", "a folder with model.onnx and tokenizer.json", self._browse_embedder)
        self.embedder_info = self._info_label("Embedder details")
        self.style = self._combo("Citation style", ((CitationStyle.LABEL, "Numbered labels [1]"), (CitationStyle.SHORTID, "Short ids [abc1234]")))
        self.sources = self._spin("Sources per answer", 1, 20, self.current.sources_per_answer)
        self.max_tokens = self._spin("Max answer tokens", 16, 4096, self.current.max_tokens)
        self.threads = self._spin("CPU threads", 1, 256, self.current.threads)
        self.threads.setToolTip(f"Threads that write the answer. This computer has {os.cpu_count() or '?'} logical"
                                " cores; leave one for the window. The question's sources are read with"
                                " every core free at that moment.")
        self.temperature = QDoubleSpinBox(self)
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.05)
        self.temperature.setValue(self.current.temperature)
        self.temperature.setAccessibleName("Temperature")
        self.temperature.setMinimumWidth(90)
        self.judge = QCheckBox(
            "After each answer, ask the model whether each cited passage says its sentence"
            f" (about 2-3 s a sentence, up to {self.current.judge_budget_s:.0f} s more)", self)
        self.judge.setChecked(self.current.judge)
        self.judge.setAccessibleName("Check sentences with the model")
        self.judge.setToolTip(
            "The model reads the cited passage of each checked sentence (at most 8 an answer)"
            " and Folio reads how likely its \"yes\" is: a sentence turns green only where that is"
            " high, a green one whose \"yes\" is doubtful becomes not confirmed, and a red one"
            " stays red only where the model also doubts the passage says it (thresholds and"
            " their figures: docs/evaluation.md); the underline changes in place. Each"
            " question takes about 2-3 s on two cores (bench/verdicts.py); answers are cached"
            " per sentence and passage. Off: the rule checks alone.")
        self.quote_only = QCheckBox("Find the passage only (no model)", self)
        self.quote_only.setChecked(self.current.quote_only)
        self.quote_only.setAccessibleName("Find the passage only, no model")
        self.quote_only.setToolTip(
            "Each question shows the sentence of your documents that answers it, in the document's"
            " own words with its page (click it to see it highlighted), and its sources; no model"
            " writes an answer. About as quick as a search, and it works with no model installed."
            " When no sentence answers surely enough, Folio says so instead of showing a weak one.")
        self.ocr = QCheckBox("Read scanned pages with OCR when indexing (about 3 s a page)", self)
        self.ocr.setChecked(self.current.ocr)
        self.ocr.setAccessibleName("Read scanned pages with OCR")
        self.language = self._combo(
            "Prompt language",
            settings_store.prompt_languages(),
        )
        self.data_dir = QLineEdit(self.current.data_dir, self)
        self.data_dir.setPlaceholderText(f"Default: {paths.data_dir()}")
        self.data_dir.setAccessibleName("Data folder")
        self.data_dir.setAccessibleDescription("Where the library and the sample folder live; empty for the default")
        data_row = self._row(self.data_dir, self._button("Browse…", "Choose the data folder", self._browse_data_dir))
        self.error = QLabel(self)
        self.error.setStyleSheet("color: #c62828;")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        models = self._group("Models", [("Answer model", model_row), ("", self.model_info), ("", self.server_panel), ("Embedder", embedder_row), ("", self.embedder_info)])
        answers = self._group("Answers", [
            ("Citation style", self.style), ("Sources per answer", self.sources),
            ("Max answer tokens", self.max_tokens), ("Temperature", self.temperature),
            ("CPU threads", self.threads), ("Prompt language", self.language), ("", self.judge),
            ("", self.quote_only),
        ], stretch=False)  # fmt: skip
        storage = self._group("Storage", [("Data folder", data_row), ("", self.ocr)])
        note = QLabel("Changes apply to the next question. Models stay in Folio's models folder.", self)
        note.setStyleSheet(MUTED)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.try_save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (models, answers, storage, note, self.error, buttons):
            layout.addWidget(widget)
        self._describe_timer = QTimer(self)
        self._describe_timer.setSingleShot(True)
        self._describe_timer.setInterval(DESCRIBE_DELAY_MS)
        self._describe_timer.timeout.connect(self.describe_models)
        self._load_values()
        for signal in (self.model.currentIndexChanged, self.model_path.textChanged, self.embedder.currentIndexChanged, self.embedder_path.textChanged):
            signal.connect(self._choices_changed)
        self._choices_changed()
        self.finished.connect(lambda _result: self.tasks.cancel_all())

    # ------------------------------------------------------------------ building

    def _combo(self, name: str, items: tuple[tuple[str, str], ...]) -> QComboBox:
        box = QComboBox(self)
        for value, words in items:
            box.addItem(words, value)
        box.setAccessibleName(name)
        return box

    def _spin(self, name: str, low: int, high: int, value: int) -> QSpinBox:
        box = QSpinBox(self)
        box.setRange(low, high)
        box.setValue(value)
        box.setAccessibleName(name)
        box.setMinimumWidth(90)
        return box

    def _button(self, text: str, name: str, slot: object) -> QPushButton:
        button = QPushButton(text, self)
        button.setAccessibleName(name)
        button.clicked.connect(slot)
        return button

    @staticmethod
    def _row(*widgets: QWidget) -> QHBoxLayout:
        row = QHBoxLayout()
        for widget in widgets:
            row.addWidget(widget, 1 if isinstance(widget, QLineEdit) else 0)
        return row

    def _choice_row(self, items: tuple[tuple[str, str], ...], name: str, placeholder: str, browse: object) -> tuple[QComboBox, QLineEdit, QHBoxLayout]:
        box = self._combo(name, items)
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        edit = QLineEdit(self)
        edit.setPlaceholderText(placeholder)
        edit.setAccessibleName(f"{name} path")
        button = self._button("Browse…", f"Choose the {name.lower()}", browse)
        return box, edit, self._row(box, edit, button)

    def _info_label(self, name: str) -> QLabel:
        label = QLabel(self)
        label.setStyleSheet(MUTED)
        label.setWordWrap(True)
        label.setAccessibleName(name)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def _group(self, title: str, rows: list[tuple[str, object]], stretch: bool = True) -> QGroupBox:
        group = QGroupBox(title, self)
        form = QFormLayout(group)
        if not stretch:  # numbers and short lists read better at their natural width
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        for label, field in rows:
            form.addRow(label, field)  # type: ignore[call-overload]
        return group

    def _server_panel(self) -> QWidget:
        """Settings ▸ Answer model ▸ Model server: URL, model (listed by the server), API
        key (kept in its own private file, not in settings.toml), Test connection."""
        panel = QWidget(self)
        form = QFormLayout(panel)
        form.setContentsMargins(0, 0, 0, 0)
        self.server_url = QLineEdit(self.current.server_url, panel)
        self.server_url.setPlaceholderText("http://127.0.0.1:8080/v1 (llama-server, vLLM) or http://127.0.0.1:11434/v1 (Ollama)")
        self.server_url.setAccessibleName("Model server URL")
        self.server_url.editingFinished.connect(self.list_server_models)
        self.server_model = QComboBox(panel)
        self.server_model.setEditable(True)
        self.server_model.setAccessibleName("Model server's model")
        self.server_model.lineEdit().setPlaceholderText("the first model the server lists")
        self.server_model.setCurrentText(self.current.server_model)
        self.server_key = QLineEdit(settings_store.load_server_key(environment=False), panel)
        self.server_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.server_key.setPlaceholderText("optional; kept in a private file, never in settings.toml")
        self.server_key.setAccessibleName("Model server API key")
        self.server_test = self._button("Test connection", "Test the connection to the model server", self.test_server)
        self.server_status = self._info_label("Model server status")
        self.server_status.setMinimumHeight(2 * self.server_status.fontMetrics().lineSpacing() + 4)  # room for an error
        self.server_status.setText("Each question and the passages it cites go to this server; nothing else does.")
        form.addRow("Server URL", self.server_url)
        form.addRow("Model", self.server_model)
        form.addRow("API key", self.server_key)
        test_row = self._row(self.server_test)
        test_row.addStretch(1)
        form.addRow("", test_row)
        form.addRow("", self.server_status)
        self._server_request = 0
        return panel

    def list_server_models(self) -> None:
        """Fill the model list from GET /v1/models (off the GUI thread)."""
        if self.model.currentData() == settings_store.SERVER and self.server_url.text().strip():
            self._ask_server(test=False)

    def test_server(self) -> None:
        """Settings ▸ Test connection: says what works, or what is wrong."""
        self._ask_server(test=True)

    def _ask_server(self, *, test: bool) -> None:
        self._server_request += 1
        self._server_says("Testing the connection…" if test else "Asking the server for its models…", ok=True)
        self.server_test.setEnabled(False)
        fields = self.server_url.text().strip(), self.server_model.currentText().strip(), self.server_key.text().strip()
        self.tasks.spawn(self._server_call(self._server_request, *fields, test=test),
                         "test the model server" if test else "list the server's models")

    async def _server_call(self, request: int, url: str, model: str, key: str, *, test: bool) -> None:
        try:
            if test:
                report = await model_serve.test_connection(url, model, key)
                models, said, chosen = list(report.models), report.describe(), report.model
            else:
                models = await model_serve.list_server_models(url, key)
                said, chosen = f"The server lists {len(models)} model(s).", model or (models[0] if models else "")
        except KnownError as error:
            if request == self._server_request:
                self._server_says(str(error), ok=False)
            return
        finally:
            if request == self._server_request:
                self.server_test.setEnabled(True)
        if request != self._server_request:  # the fields changed meanwhile
            return
        self.server_model.clear()
        self.server_model.addItems(models)
        self.server_model.setCurrentText(chosen)
        self._server_says(said, ok=True)

    def _server_says(self, text: str, *, ok: bool) -> None:
        self.server_status.setText(text)
        self.server_status.setStyleSheet(MUTED if ok else ERROR)
        self.server_status.setAccessibleDescription(text)

    def _load_values(self) -> None:
        current = self.current
        if current.answer_model == settings_store.SERVER:
            self.model.setCurrentIndex(self.model.findData(settings_store.SERVER))
        elif current.answer_model in ("default", "small"):
            self.model.setCurrentIndex(self.model.findData(current.answer_model))
        else:
            self.model.setCurrentIndex(self.model.findData("file"))
            self.model_path.setText(current.answer_model)
        if current.embedder in ("default", "minilm"):
            self.embedder.setCurrentIndex(self.embedder.findData(current.embedder))
        else:
            self.embedder.setCurrentIndex(self.embedder.findData("folder"))
            self.embedder_path.setText(current.embedder)
        self.style.setCurrentIndex(max(0, self.style.findData(current.citation_style)))
        self.language.setCurrentIndex(max(0, self.language.findData(current.prompt_language)))

    # ------------------------------------------------------------------ choosing files

    def _browse_model(self) -> QFileDialog:
        return self._pick("Choose a GGUF model", "GGUF models (*.gguf)", self.model_file_chosen, folder=False)

    def _browse_embedder(self) -> QFileDialog:
        return self._pick("Choose an ONNX embedder folder", "", self.embedder_folder_chosen, folder=True)

    def _browse_data_dir(self) -> QFileDialog:
        return self._pick("Choose the data folder", "", self.data_dir.setText, folder=True)

    def _pick(self, title: str, name_filter: str, chosen: object, folder: bool) -> QFileDialog:
        dialog = QFileDialog(self, title, str(Path.home()), name_filter)
        if folder:
            dialog.setFileMode(QFileDialog.FileMode.Directory)
            dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        else:
            dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(chosen)
        dialog.open()
        return dialog

    def model_file_chosen(self, path: str) -> None:
        self.model.setCurrentIndex(self.model.findData("file"))
        self.model_path.setText(path)

    def embedder_folder_chosen(self, path: str) -> None:
        self.embedder.setCurrentIndex(self.embedder.findData("folder"))
        self.embedder_path.setText(path)

    # ------------------------------------------------------------------ details of the models

    def _choices_changed(self, *_: object) -> None:
        self.model_path.setEnabled(self.model.currentData() == "file")
        self.server_panel.setVisible(self.model.currentData() == settings_store.SERVER)
        self.embedder_path.setEnabled(self.embedder.currentData() == "folder")
        self.model_info.setText("Reading the model…")
        self.embedder_info.setText("")
        self._describe_timer.start()

    def describe_models(self) -> None:
        """Show size and context length of the chosen model (read off the GUI thread)."""
        self._describe_timer.stop()
        model, embedder = self._model_choice(), self._embedder_choice()
        self.tasks.spawn(self._describe(model, embedder), "describe models")

    async def _describe(self, model: str, embedder: str) -> None:
        if not model:
            self.model_info.setText("Choose a .gguf file.")
        elif model == settings_store.SERVER:
            self.model_info.setText("Answers come from an OpenAI-compatible model server.")
        else:
            info = await model_install.describe_answer_model(model)
            if model == self._model_choice():  # still the choice shown
                self.model_info.setText(info.problem or info.summary)
        if not embedder:
            self.embedder_info.setText("Choose a folder with model.onnx and tokenizer.json.")
        else:
            about = await model_install.describe_embedder(embedder)
            if embedder == self._embedder_choice():
                self.embedder_info.setText(about.summary or about.problem)

    def _model_choice(self) -> str:
        model = self.model.currentData()
        return self.model_path.text().strip() if model == "file" else str(model)

    def _embedder_choice(self) -> str:
        choice = self.embedder.currentData()
        return self.embedder_path.text().strip() if choice == "folder" else str(choice)

    # ------------------------------------------------------------------ saving

    def chosen(self) -> Settings:
        model, embedder = self._model_choice(), self._embedder_choice()
        if not model:
            raise KnownError("No GGUF file chosen.", "Browse for a .gguf file, or pick Default or Small.")
        if not embedder:
            raise KnownError("No embedder folder chosen.", "Browse for a folder with model.onnx and tokenizer.json, or pick Default.")
        return self.current.replace(
            answer_model=model,
            server_url=self.server_url.text().strip(),
            server_model=self.server_model.currentText().strip(),
            embedder=embedder,
            citation_style=self.style.currentData(),
            sources_per_answer=self.sources.value(),
            max_tokens=self.max_tokens.value(),
            temperature=round(self.temperature.value(), 3),
            threads=self.threads.value(),
            judge=self.judge.isChecked(),
            quote_only=self.quote_only.isChecked(),
            prompt_language=self.language.currentData(),
            data_dir=self.data_dir.text().strip(),
            ocr=self.ocr.isChecked(),
        )

    def try_save(self) -> bool:
        """Validate and save; on a bad choice show the reason and keep the dialog open.
        A new embedder first asks whether to re-embed the library."""
        try:
            settings = self.chosen()
            settings_store.save(settings, self.path)
            if settings.answer_model == settings_store.SERVER:
                settings_store.save_server_key(self.server_key.text())
        except KnownError as error:
            self.error.setText(str(error))
            self.error.setAccessibleName(str(error))
            return False
        except OSError as error:
            self.error.setText(f"Could not save the settings: {error}")
            return False
        previous, self.current = self.current, settings
        self.error.setText("")
        if settings.embedder != previous.embedder:
            self.reembed_box = self._ask_reembed(settings)
            return True
        self._finish(settings, False)
        return True

    def _ask_reembed(self, settings: Settings) -> QMessageBox:
        box = QMessageBox(QMessageBox.Icon.Question, "Re-embed the library?", "The embedder changed.", parent=self)
        box.setInformativeText(
            "Passages indexed with the old embedder are not found by meaning until they are "
            "embedded again, and their sizes are counted in its tokens, so every document is cut "
            "into passages again from its stored pages (the PDFs are not read again). Rebuild the "
            "library now? It runs in the background and can be stopped; the next index run "
            "finishes what a stop leaves."
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText("Re-embed now")
        box.button(QMessageBox.StandardButton.No).setText("Later")
        box.setDefaultButton(QMessageBox.StandardButton.Yes)
        box.finished.connect(lambda _result: self._finish(settings, box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)))
        box.open()
        return box

    def _finish(self, settings: Settings, reembed: bool) -> None:
        self.saved.emit(settings, reembed)
        self.accept()
