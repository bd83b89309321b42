"""The one Qt seam: the theme (fonts, palette, icons, Qt messages), PySide6 workarounds, the
asyncio bridge and the GUI-thread garbage collector."""
