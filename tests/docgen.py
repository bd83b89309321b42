"""Small documents in the formats Folio reads, good and hostile, made for tests (as
tests/pdfgen.py makes PDFs): a minimal DOCX, ODT, PPTX and EPUB; a truncated DOCX, a zip
bomb, an XML entity bomb, an external entity naming a local file, a DRM-protected EPUB, an
encrypted (OLE) DOCX, a huge single paragraph, binary junk named ``.md``."""

from __future__ import annotations

import zipfile
from pathlib import Path

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _zip(path: Path, members: dict[str, bytes | str], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def docx(path: Path, paragraphs: list[tuple[str, str]], title: str = "", doctype: str = "") -> Path:
    """A DOCX of ``(style, text)`` paragraphs ("Heading1", "" for body text)."""
    body = "".join(
        f'<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'
        if style else f'<w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'
        for style, text in paragraphs
    )
    document = (f'<?xml version="1.0" encoding="UTF-8"?>{doctype}'
                f'<w:document xmlns:w="{W}"><w:body>{body}</w:body></w:document>')
    styles = (f'<?xml version="1.0"?><w:styles xmlns:w="{W}">'
              '<w:style w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
              '<w:style w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>')
    core = ('<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/'
            'package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f'<dc:title>{title}</dc:title></cp:coreProperties>')
    members: dict[str, bytes | str] = {"[Content_Types].xml": "<Types/>", "word/document.xml": document,
                                       "word/styles.xml": styles}
    if title:
        members["docProps/core.xml"] = core
    return _zip(path, members)


def truncated(source: Path, path: Path) -> Path:
    data = source.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def zip_bomb(path: Path, gigabytes: float = 2.0) -> Path:
    """A DOCX whose document.xml inflates to ``gigabytes`` GB (about 1 MB per GB on disk):
    written in streamed pieces, so making it never holds the bomb in memory."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            member.write(f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>'.encode())
            piece = b"A" * (16 * 2**20)
            for _ in range(int(gigabytes * 1024 / 16)):
                member.write(piece)
            member.write(b"</w:t></w:r></w:p></w:body></w:document>")
    return path


def entity_bomb(path: Path) -> Path:
    """A DOCX whose document.xml is "billion laughs" (10^9 lol's if entities expanded)."""
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
    doctype = f"<!DOCTYPE w:document [{entities}]>"
    return docx(path, [("Heading1", "Laughs"), ("", "&lol9;")], title="Laughs", doctype=doctype)


def external_entity(path: Path, secret_file: Path) -> Path:
    """A DOCX whose text is an external entity naming ``secret_file`` (XXE)."""
    doctype = f'<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file://{secret_file}">]>'
    return docx(path, [("Heading1", "Quarterly notes"), ("", "Before &xxe; after the entity.")],
                title="Quarterly notes", doctype=doctype)


def encrypted_docx(path: Path) -> Path:
    """What Word writes for a password-protected DOCX: an OLE compound file, not a zip."""
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 4096)
    return path


def epub(path: Path, chapters: list[tuple[str, str]], title: str, encrypt: bool = False) -> Path:
    """An EPUB 3 of ``(heading, paragraph)`` chapters; ``encrypt``: its chapters listed in
    META-INF/encryption.xml (AES, as a DRM scheme would)."""
    items = "".join(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
                    for i in range(len(chapters)))
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    members: dict[str, bytes | str] = {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
        'opendocument:xmlns:container"><rootfiles><rootfile full-path="OPS/book.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>',
        "OPS/book.opf": '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata>'
        f"<manifest>{items}</manifest><spine>{spine}</spine></package>",
    }
    for i, (heading, text) in enumerate(chapters):
        members[f"OPS/c{i}.xhtml"] = ('<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                                     f"<head><title>{heading}</title></head><body><h1>{heading}</h1><p>{text}</p></body></html>")
    if encrypt:
        refs = "".join(
            '<EncryptedData xmlns="http://www.w3.org/2001/04/xmlenc#"><EncryptionMethod '
            'Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/><CipherData>'
            f'<CipherReference URI="OPS/c{i}.xhtml"/></CipherData></EncryptedData>' for i in range(len(chapters)))
        members["META-INF/encryption.xml"] = f'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container">{refs}</encryption>'
    return _zip(path, members)


def huge_paragraph(path: Path, megabytes: int = 8) -> Path:
    """A Markdown file that is one paragraph of ``megabytes`` MB."""
    sentence = "The quick brown fox jumps over the lazy dog near the river bank. "
    path.write_text("# One long paragraph\n\n" + sentence * (megabytes * 2**20 // len(sentence)), encoding="utf-8")
    return path


def binary_junk(path: Path, size: int = 200_000) -> Path:
    """Random-looking bytes (deterministic) under a text name."""
    state = 12345
    out = bytearray()
    for _ in range(size):
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(state >> 16 & 0xFF)
    path.write_bytes(bytes(out))
    return path
