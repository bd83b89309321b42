"""The settings dialog: edits the one Settings object and saves it as TOML.

Invalid choices are refused with the reason ``Settings.validate`` gives; the dialog stays
open so the user can fix them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import settings as settings_store
from desktop_app.core.errors import KnownError
from desktop_app.core.settings import Settings

logger = logging.getLogger(__name__)

MODEL_CHOICES = (("default", "Default (Qwen2.5 1.5B)"), ("small", "Small (SmolLM2 135M, fast)"))


class SettingsDialog(QDialog):
    saved = Signal(object)  # Settings

    def __init__(self, parent: QWidget | None = None, path: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Folio settings")
        self.path = path
        self.current = settings_store.load(path)
        self.model = QComboBox(self)
        for value, words in MODEL_CHOICES:
            self.model.addItem(words, value)
        self.model.addItem("A GGUF file…", "file")
        self.model_path = QLineEdit(self)
        self.model_path.setPlaceholderText("/path/to/model.gguf")
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model)
        model_row.addWidget(self.model_path, 1)
        model_row.addWidget(browse)
        self.style = QComboBox(self)
        self.style.addItem("Numbered labels [1]", "label")
        self.style.addItem("Short ids [abc1234]", "shortid")
        self.sources = self._spin(1, 20, self.current.sources_per_answer)
        self.max_tokens = self._spin(16, 4096, self.current.max_tokens)
        self.threads = self._spin(1, 256, self.current.threads)
        self.temperature = QDoubleSpinBox(self)
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.05)
        self.temperature.setValue(self.current.temperature)
        self.judge = QCheckBox("Ask the model to double-check each sentence (slower)", self)
        self.judge.setChecked(self.current.judge)
        self.language = QComboBox(self)
        for value, words in (("auto", "Automatic"), ("en", "English"), ("zh", "Chinese")):
            self.language.addItem(words, value)
        self.error = QLabel(self)
        self.error.setStyleSheet("color: #c62828;")
        self.error.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Answer model", model_row)
        form.addRow("Citation style", self.style)
        form.addRow("Sources per answer", self.sources)
        form.addRow("Max answer tokens", self.max_tokens)
        form.addRow("Temperature", self.temperature)
        form.addRow("CPU threads", self.threads)
        form.addRow("Prompt language", self.language)
        form.addRow("", self.judge)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.try_save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Model and thread changes apply to the next question.", self))
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self._load_values()

    def _spin(self, low: int, high: int, value: int) -> QSpinBox:
        box = QSpinBox(self)
        box.setRange(low, high)
        box.setValue(value)
        return box

    def _load_values(self) -> None:
        model = self.current.answer_model
        position = self.model.findData(model)
        if position < 0:
            self.model.setCurrentIndex(self.model.findData("file"))
            self.model_path.setText(model)
        else:
            self.model.setCurrentIndex(position)
        self.style.setCurrentIndex(max(0, self.style.findData(self.current.citation_style)))
        self.language.setCurrentIndex(max(0, self.language.findData(self.current.prompt_language)))

    def _browse(self) -> None:
        dialog = QFileDialog(self, "Choose a GGUF model", str(Path.home()), "GGUF models (*.gguf)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self._model_file_chosen)
        dialog.open()

    def _model_file_chosen(self, path: str) -> None:
        self.model.setCurrentIndex(self.model.findData("file"))
        self.model_path.setText(path)

    def chosen(self) -> Settings:
        model = self.model.currentData()
        if model == "file":
            model = self.model_path.text().strip()
        return self.current.replace(
            answer_model=model,
            citation_style=self.style.currentData(),
            sources_per_answer=self.sources.value(),
            max_tokens=self.max_tokens.value(),
            temperature=round(self.temperature.value(), 3),
            threads=self.threads.value(),
            judge=self.judge.isChecked(),
            prompt_language=self.language.currentData(),
        )

    def try_save(self) -> bool:
        """Validate and save; on a bad choice show the reason and keep the dialog open."""
        settings = self.chosen()
        try:
            settings_store.save(settings, self.path)
        except KnownError as error:
            self.error.setText(str(error))
            return False
        except OSError as error:
            self.error.setText(f"Could not save the settings: {error}")
            return False
        self.current = settings
        self.saved.emit(settings)
        self.accept()
        return True
