"""``folio PATH --ask Q --open-citation N --screenshot F --quit-after`` with the fake
facade, in process (the real-model run is the e2e test)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QImage

from desktop_app.ui.window import app as app_module
from tests.ui.fakes import FakeKnowledgeBase
from tests.ui.window.test_window_flow import warranty_answer


@pytest.fixture
def scripted_kb(monkeypatch, library) -> FakeKnowledgeBase:  # noqa: ANN001
    kb = FakeKnowledgeBase()
    kb.scripted.append(warranty_answer(library))
    monkeypatch.setattr(app_module, "make_knowledge_base", lambda db, model: kb)
    return kb


def test_automation_flow_writes_the_screenshot(scripted_kb, library, tmp_path, capsys) -> None:  # noqa: ANN001
    shot = tmp_path / "shots" / "window.png"
    folder = str(library["manual"].path.parent)
    code = app_module.main(
        [
            folder,
            "--ask",
            "How long is the pump warranty?",
            "--open-citation",
            "1",
            "--screenshot",
            str(shot),
            "--quit-after",
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert scripted_kb.questions == ["How long is the pump warranty?"]
    assert scripted_kb.closed
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1400, 900)
    # The right third shows a page with the yellow passage highlight somewhere on it.
    yellow = sum(
        1
        for x in range(950, 1390, 4)
        for y in range(120, 880, 4)
        if (c := QColor(image.pixel(x, y))).red() > 230 and c.green() > 190 and c.blue() < 160
    )
    assert yellow > 10


def test_automation_fails_with_a_reason(scripted_kb, library, tmp_path, capsys) -> None:  # noqa: ANN001
    shot = tmp_path / "failed.png"
    folder = str(library["manual"].path.parent)
    code = app_module.main(
        [
            folder,
            "--ask",
            "How long?",
            "--open-citation",
            "5",
            "--screenshot",
            str(shot),
            "--quit-after",
        ]
    )
    assert code == 1
    assert "no citation 5" in capsys.readouterr().err
    assert shot.is_file()  # saved anyway: it shows what went wrong


def test_bad_arguments_are_refused_before_any_window(tmp_path, capsys) -> None:  # noqa: ANN001
    assert app_module.main([str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert app_module.main([str(tmp_path), "--open-citation", "0"]) == 2
