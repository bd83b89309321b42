"""The one Qt seam: the theme (fonts, palette, icons, Qt messages), PySide6 workarounds, the
asyncio bridge and the GUI-thread garbage collector; and, Qt-free, the window's colours
(palette.py) and the escaping every pane's rich text goes through (rich_text.py)."""
