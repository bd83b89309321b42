"""Opening untrusted containers and XML safely: zip archives (DOCX, ODT, PPTX, EPUB) are
checked before anything is inflated, members are read under a size cap, and XML is parsed
with entities, DTDs and the network off. Qt-free.

A zip bomb (a 1 MB DOCX that inflates to gigabytes) is refused from its directory: the
sizes its members declare and their compression ratio. A member that inflates past what it
declared is cut off at the cap while it is read, so a lying directory costs at most the cap.
XML never expands an entity: an entity bomb ("billion laughs") stays a few references, and an
external entity naming a local file is never opened (tests/core/ingest/formats prove both).
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol, overload

if TYPE_CHECKING:
    from lxml import etree, html

__all__ = [
    "BadContainer", "MAX_MEMBER_BYTES", "MAX_TOTAL_BYTES", "Container", "HtmlElement", "XmlElement",
    "html_parser", "parse_xml", "xml_parser",
]


class XmlElement(Protocol):
    """What the format readers use of an lxml element (lxml ships no type information)."""

    @property
    def tag(self) -> object: ...  # "{namespace}name"; a function for a comment or an entity

    @property
    def text(self) -> str | None: ...

    @property
    def tail(self) -> str | None: ...

    @overload
    def get(self, key: str) -> str | None: ...

    @overload
    def get(self, key: str, default: str) -> str: ...

    def find(self, path: str) -> XmlElement | None: ...

    def iter(self, *tags: str) -> Iterator[XmlElement]: ...

    def __iter__(self) -> Iterator[XmlElement]: ...

    def getparent(self) -> XmlElement | None: ...

    def remove(self, element: XmlElement) -> None: ...


class HtmlElement(XmlElement, Protocol):
    """An element of lxml.html: an XmlElement that also reads its text whole."""

    def text_content(self) -> str: ...

    def iter(self, *tags: str) -> Iterator[HtmlElement]: ...

    def __iter__(self) -> Iterator[HtmlElement]: ...

# A document's text members are a few MB at most (the largest formats/ file: 0.3 MB); 64 MB
# for one member and 256 MB for all the members read keep the worker far under its memory cap.
MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024
# Text XML deflates 5-20x (the formats/ files: 4-9x); 100x is a bomb, for members over 1 MB.
MAX_RATIO = 100
_RATIO_FLOOR = 1024 * 1024
MAX_MEMBERS = 20_000
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an encrypted Office file is an OLE file


class BadContainer(Exception):
    """The file is not a readable container; ``str()`` says why, for the user."""

    def __init__(self, message: str, *, password: bool = False, drm: bool = False) -> None:
        super().__init__(message)
        self.password = password
        self.drm = drm


def xml_parser() -> etree.XMLParser:
    """An lxml parser that expands no entity, loads no DTD and opens no URL."""
    from lxml import etree

    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           dtd_validation=False, huge_tree=False, remove_comments=True,
                           remove_pis=True)


def html_parser() -> html.HTMLParser:
    """lxml's HTML parser with the network off (it reads no DTD and expands no entity but
    HTML's own)."""
    from lxml import html

    return html.HTMLParser(no_network=True, huge_tree=False, remove_comments=True,
                           remove_pis=True)


def parse_xml(data: bytes, what: str) -> XmlElement:
    """The root element of ``data``; :class:`BadContainer` when it is not XML."""
    from lxml import etree

    try:
        root: XmlElement | None = etree.fromstring(data, xml_parser())
    except etree.XMLSyntaxError as exc:
        raise BadContainer(f"{what} is not valid XML ({exc})") from exc
    if root is None:
        raise BadContainer(f"{what} is empty")
    return root


class Container:
    """A zip archive opened for reading after its directory passed the bomb checks."""

    def __init__(self, path: str, kind: str) -> None:
        self.kind = kind
        self._read_total = 0
        try:
            with open(path, "rb") as handle:
                head = handle.read(8)
        except OSError as exc:
            raise BadContainer(f"cannot open the file ({exc.strerror or exc})") from exc
        if head == _OLE_MAGIC:
            raise BadContainer(f"This {kind} is protected by a password; Folio cannot read "
                               "encrypted Office files. Save it without a password to index it.",
                               password=True)
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise BadContainer(f"not a valid {kind} (the zip archive is damaged or truncated: {exc})") from exc
        infos = self.zip.infolist()
        if len(infos) > MAX_MEMBERS:
            raise BadContainer(f"not a valid {kind}: it holds {len(infos):,} files")
        declared = sum(i.file_size for i in infos)
        if declared > MAX_TOTAL_BYTES * 4:
            raise BadContainer(f"not a valid {kind}: it would inflate to {declared / 1e9:.1f} GB "
                               "(a zip bomb?)")
        for info in infos:
            if info.file_size > _RATIO_FLOOR and info.file_size > MAX_RATIO * max(1, info.compress_size):
                raise BadContainer(f"not a valid {kind}: {info.filename} would inflate "
                                   f"{info.file_size // max(1, info.compress_size):,}x (a zip bomb?)")
        self.names = {i.filename for i in infos}

    def __enter__(self) -> Container:
        return self

    def __exit__(self, *exc: object) -> None:
        self.zip.close()

    def has(self, name: str) -> bool:
        return name in self.names

    def read(self, name: str) -> bytes:
        """A member's bytes, refusing past :data:`MAX_MEMBER_BYTES` (whatever it declares)
        and past :data:`MAX_TOTAL_BYTES` read from the archive in all."""
        if name not in self.names:
            raise BadContainer(f"not a valid {self.kind}: {name} is missing")
        try:
            with self.zip.open(name) as member:
                data = member.read(MAX_MEMBER_BYTES + 1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
            raise BadContainer(f"not a valid {self.kind}: {name} cannot be read ({exc})") from exc
        except RuntimeError as exc:  # an encrypted member ("password required")
            raise BadContainer(f"This {self.kind} is protected by a password.", password=True) from exc
        if len(data) > MAX_MEMBER_BYTES:
            raise BadContainer(f"not a valid {self.kind}: {name} inflates past "
                               f"{MAX_MEMBER_BYTES // 2**20} MB (a zip bomb?)")
        self._read_total += len(data)
        if self._read_total > MAX_TOTAL_BYTES:
            raise BadContainer(f"not a valid {self.kind}: it inflates past "
                               f"{MAX_TOTAL_BYTES // 2**20} MB (a zip bomb?)")
        return data

    def xml(self, name: str) -> XmlElement:
        return parse_xml(self.read(name), f"{name} of this {self.kind}")
