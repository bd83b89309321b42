"""Looks: fonts that read well in Chinese and English, colours from the system palette,
the icons in ``resources/icons``, and Qt's messages routed into Python logging."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QToolButton, QWidget

from desktop_app.core import paths
from desktop_app.ui.qt.palette import DARK, Colours

logger = logging.getLogger(__name__)
qt_logger = logging.getLogger("qt")

# Families tried in order for CJK text; the first one installed is appended to the
# application font's family list so Qt falls back to it for Han characters.
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Noto Sans SC",
    "WenQuanYi Micro Hei",
    "Microsoft YaHei UI",
    "Microsoft YaHei",
    "PingFang SC",
    "Hiragino Sans GB",
)
MIN_POINT_SIZE = 10.0


def apply_fonts(app: QGuiApplication) -> QFont:
    """Set a readable application font: the system UI font, at least 10 pt, with an
    installed CJK family as fallback. Returns the font set."""
    installed = set(QFontDatabase.families())
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)
    # The system font is often an alias ("Sans Serif"); in a family list an alias does not
    # resolve and the CJK family would then draw Latin text and full-width quotes (’).
    families = [QFontInfo(font).family()]
    for family in CJK_FAMILIES:
        if family in installed:
            families.append(family)
            break
    else:
        logger.info("no CJK font found among %s; Chinese text uses Qt's fallback", CJK_FAMILIES)
    font.setFamilies(families)
    if font.pointSizeF() < MIN_POINT_SIZE:
        font.setPointSizeF(MIN_POINT_SIZE)
    app.setFont(font)
    return font


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def colours_for(palette: QPalette) -> Colours:
    base = DARK if is_dark(palette) else Colours()
    return Colours(
        **{
            **base.__dict__,
            "text": palette.color(QPalette.ColorRole.Text).name(),
            "link": palette.color(QPalette.ColorRole.Link).name(),
        }
    )


@cache
def icon(name: str) -> QIcon:
    """An icon from ``resources/icons/NAME.svg``; an empty icon if the file is missing."""
    path = paths.resources_dir() / "icons" / f"{name}.svg"
    if not path.is_file():
        logger.warning("icon %s missing", path)
        return QIcon()
    return QIcon(str(path))


def tool_button(parent: QWidget, name: str, tip: str, slot: Callable[[], object]) -> QToolButton:
    """A flat tool button with icon NAME (none when empty), its tooltip, and the tooltip's
    words before " (shortcut)" as its screen-reader name."""
    button = QToolButton(parent)
    if name:
        button.setIcon(icon(name))
    button.setToolTip(tip)
    button.setAccessibleName(tip.split(" (")[0])
    button.setAutoRaise(True)
    button.clicked.connect(slot)
    return button


_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


# Harmless messages of Qt's offscreen and xcb platforms, logged at debug level only.
_NOISE = ("propagateSizeHints", "does not support raise")


def _qt_message(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    category = context.category or "default"
    level = _LEVELS.get(kind, logging.WARNING)
    if any(noise in message for noise in _NOISE):
        level = logging.DEBUG
    qt_logger.log(level, "[%s] %s", category, message)


def route_qt_messages() -> object:
    """Send Qt's own warnings and debug output to Python logging (logger ``qt``); returns
    the handler it replaced, for :func:`restore_qt_messages`."""
    return qInstallMessageHandler(_qt_message)


def restore_qt_messages(previous: object = None) -> None:
    qInstallMessageHandler(previous)  # type: ignore[arg-type]
