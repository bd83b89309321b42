"""EPUB 2 and 3: the OPF's spine in order, each item through the HTML walker. Qt-free.

The container (META-INF/container.xml) names the package document; its ``dc:title`` is the
title and its spine the reading order (items marked ``linear="no"`` are read too, last
is not needed: they are read in spine order like the rest). Every spine item starts a part.
An EPUB whose ``META-INF/encryption.xml`` encrypts content documents is DRM-protected (font
obfuscation alone is not). Members are read under the container's caps.
"""

from __future__ import annotations

import posixpath
from urllib.parse import unquote

from desktop_app.core.ingest.formats.containers import BadContainer, Container
from desktop_app.core.ingest.formats.html import parse_html, walk_html
from desktop_app.core.ingest.formats.parts import PartBuilder, clean_inline

__all__ = ["read_epub"]

_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
# Font obfuscation (IDPF and Adobe) is listed in encryption.xml without protecting any text.
_FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")
_HTML_TYPES = ("application/xhtml+xml", "text/html", "application/x-dtbook+xml")


def _encrypted_paths(box: Container) -> set[str]:
    if not box.has("META-INF/encryption.xml"):
        return set()
    root = box.xml("META-INF/encryption.xml")
    paths: set[str] = set()
    for data in root.iter(f"{_ENC}EncryptedData"):
        method = data.find(f"{_ENC}EncryptionMethod")
        algorithm = method.get("Algorithm", "") if method is not None else ""
        if algorithm in _FONT_OBFUSCATION:
            continue
        reference = data.find(f".//{_ENC}CipherReference")
        if reference is not None and reference.get("URI"):
            paths.add(posixpath.normpath(unquote(reference.get("URI", ""))))
    return paths


def read_epub(path: str) -> tuple[str, PartBuilder]:
    """(title, builder with the blocks) of the EPUB at ``path``; raises BadContainer."""
    with Container(path, "EPUB") as box:
        container = box.xml("META-INF/container.xml")
        rootfile = container.find(f".//{_CONTAINER}rootfile")
        if rootfile is None or not rootfile.get("full-path"):
            raise BadContainer("not a valid EPUB: its container names no package document")
        opf_path = rootfile.get("full-path", "")
        opf = box.xml(opf_path)
        base = posixpath.dirname(opf_path)
        title_element = opf.find(f".//{_DC}title")
        title = clean_inline(title_element.text or "") if title_element is not None else ""
        manifest = {
            item.get("id"): (posixpath.normpath(posixpath.join(base, unquote(item.get("href", "")))),
                             item.get("media-type", ""))
            for item in opf.iter(f"{_OPF}item")
        }
        encrypted = _encrypted_paths(box)
        spine = [ref.get("idref") for ref in opf.iter(f"{_OPF}itemref")]
        documents = [manifest[i] for i in spine if i in manifest and manifest[i][1] in _HTML_TYPES]
        if not documents:
            raise BadContainer("not a valid EPUB: its spine lists no content document")
        if any(name in encrypted for name, _ in documents):
            raise BadContainer("This EPUB is DRM-protected: its text is encrypted, so Folio "
                               "cannot read it.", drm=True)
        builder = PartBuilder()
        for name, _media in documents:
            if not box.has(name):
                continue  # a spine item the archive lacks: read the rest
            builder.new_part()
            walk_html(parse_html(box.read(name)), builder)
        return title, builder
