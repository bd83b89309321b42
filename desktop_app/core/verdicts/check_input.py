"""What ``folio verify`` and File ▸ Check a Text… read: a text to check against the library.
Qt-free, no asyncio.

Two kinds of input:

- an answer exported by Folio (``folio export`` / Export Answer…, core/library/history.py):
  Markdown whose markers are footnotes ``[^1]`` and whose footnote definitions name the
  chunk, file and page and quote the passage verbatim. Its heading is the question, its
  "Checks" section and footnotes are not part of the answer; or the same answer exported
  as its JSON audit record (``--format json``: its ``answer``, ``citations`` with chunk id,
  page and passage, ``citation_style``);
- anyone's own draft, Markdown or plain text, with or without ``[1]``-style markers.

:func:`read_text` turns either into plain prose (Markdown syntax removed, paragraphs and
list items kept on their own lines, markers removed) split into sentences, each with the
labels of the markers it carried: a :class:`TextToCheck` (core/types/events.py, the
check's first event); :func:`read_claims_line` reads one line of a ``--claims`` JSONL
batch.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.text.markers import find_markers
from desktop_app.core.text.sentences import attach_citations, split_sentences
from desktop_app.core.types import CitationStyle, Footnote, Sentence, TextToCheck

# ----------------------------------------------------------------- Markdown to prose
_FENCE = re.compile(r"^\s*(```|~~~)")
_FOOTNOTE_DEF = re.compile(r"^\[\^([^\]\s]+)\]:\s*(.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_RULE = re.compile(r"^(?:-{3,}|\*{3,}|_{3,}|={3,})$")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_LIST_ITEM = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])\s+")
_QUOTE = re.compile(r"^(?:>\s?)+")
# Lines of an exported answer that are Folio's own notes, not the answer.
_EXPORTED_QUOTE = re.compile(r"^From the document, source \[[^\]]+\]:")  # history.py's quote block
_EXPORT_NOTES = re.compile(
    r"^(?:Asked within:|> \*\*|\*Markers .* name no source|_Model: .*_$|Checked by Folio:)"
)
_INLINE = (
    (re.compile(r"~~\[[^\]]{1,64}\]~~"), ""),  # a struck-through (hallucinated) marker
    (re.compile(r"\[\^([^\]\s]+)\]"), r"[\1]"),  # footnote reference -> marker
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # image -> its alt text
    (re.compile(r"\[([^\]]+)\]\((?:[^)\s]+)(?:\s+\"[^\"]*\")?\)"), r"\1"),  # link -> its text
    (re.compile(r"<(?:https?://[^>]+)>"), ""),  # autolink
    (re.compile(r"</?[A-Za-z][^<>]*>"), ""),  # HTML tag
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?=\S)([^_]+?)(?<=\S)_(?![\w_])"), r"\1"),
    (re.compile(r"~~(.+?)~~"), r"\1"),
)


def inline_plain(line: str) -> str:
    """One line of Markdown without its inline syntax (emphasis, code, links, images, tags);
    footnote references ``[^2]`` become markers ``[2]``."""
    for pattern, replacement in _INLINE:
        line = pattern.sub(replacement, line)
    return line


def _parse_footnote(label: str, head: str, quoted: list[str]) -> Footnote:
    chunk = re.search(r"\bchunk (\S+?)(?:;|$|\s)", head)
    name = re.search(r"\(`([^`]+)`\)", head)
    page = re.search(r"\bp\. ([^\s,(]+)", head)
    return Footnote(
        label=label,
        chunk_id=chunk.group(1) if chunk else "",
        file_name=name.group(1) if name else "",
        page_label=page.group(1) if page else "",
        passage="\n".join(quoted).strip("\n"),
    )


def markdown_to_prose(raw: str) -> tuple[str, str, dict[str, Footnote]]:
    """``(title, prose, footnotes)``: the prose has one paragraph, heading, list item or
    table row per block (blocks apart by a blank line), markers ``[N]`` where the Markdown
    had footnote references; ``title`` is the first heading ("" if none)."""
    title, blocks, footnotes = _blocks(raw)
    return title, "\n\n".join(text for text, _ in blocks), footnotes


def _blocks(raw: str) -> tuple[str, list[tuple[str, bool]], dict[str, Footnote]]:
    """The title, the prose blocks (text, is a heading) and the footnotes of ``raw``."""
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    exported = any(_FOOTNOTE_DEF.match(line) and " chunk " in line for line in lines)
    blocks: list[tuple[str, bool]] = []
    current: list[str] = []
    footnotes: dict[str, Footnote] = {}
    title = ""
    fenced = skipping_checks = False
    note: tuple[str, str, list[str]] | None = None  # the footnote being read

    def flush() -> None:
        if current:
            blocks.append((" ".join(current), False))
            current.clear()

    def close_note() -> None:
        nonlocal note
        if note is not None:
            footnotes[note[0]] = _parse_footnote(*note)
            note = None

    quoting = False
    for line in lines:
        if _FENCE.match(line):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        definition = _FOOTNOTE_DEF.match(line.strip())
        if definition:
            flush()
            close_note()
            note = (definition.group(1), definition.group(2), [])
            continue
        if note is not None:
            if line.startswith(("    ", "\t")) or not line.strip():
                body = line[4:] if line.startswith("    ") else line.lstrip("\t")
                if body.strip():
                    note[2].append(_QUOTE.sub("", body) if body.lstrip().startswith(">") else body)
                elif note[2]:
                    note[2].append("")
                continue
            close_note()
        stripped = line.strip()
        heading = _HEADING.match(stripped)
        if exported and heading and heading.group(1).strip().lower() == "checks":
            flush()
            skipping_checks = True  # Folio's own list of checks, up to the footnotes
            continue
        if skipping_checks:
            continue
        if not stripped or _RULE.match(stripped) or _TABLE_SEPARATOR.match(stripped):
            flush()
            continue
        if exported and _EXPORTED_QUOTE.match(stripped):
            flush()
            quoting = True  # the document's own words (the answer finder's quote): no claim
            continue
        if quoting:
            if stripped.startswith(">"):
                continue
            quoting = False
        if exported and _EXPORT_NOTES.match(stripped):
            flush()
            continue
        if heading:
            flush()
            text = inline_plain(heading.group(1)).strip()
            if not title:
                title = text
                if exported:
                    continue  # an exported answer's heading is its question
            blocks.append((text, True))
            continue
        stripped = _QUOTE.sub("", stripped).strip()
        if _LIST_ITEM.match(stripped) or stripped.startswith("|"):
            flush()
            if stripped.startswith("|"):
                cells = [c.strip() for c in stripped.strip("|").split("|")]
                blocks.append((" · ".join(inline_plain(c) for c in cells if c), False))
            else:
                current.append(inline_plain(_LIST_ITEM.sub("", stripped, count=1)))
            continue
        current.append(inline_plain(stripped))
    flush()
    close_note()
    return title, [(b.strip(), heading) for b, heading in blocks if b.strip()], footnotes


def _audit_record(raw: str) -> tuple[str, list[tuple[str, bool]], dict[str, Footnote], str] | None:
    """An answer exported as its JSON audit record (``folio export --format json``): its
    question, answer blocks, cited passages and marker style; None for any other text."""
    if not raw.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
        return None
    footnotes: dict[str, Footnote] = {}
    for cited in data.get("citations") or []:
        if isinstance(cited, dict) and "id" in cited:
            document = cited.get("document")
            document = document if isinstance(document, dict) else {}
            label = str(cited["id"])
            footnotes[label] = Footnote(
                label, str(cited.get("chunk_id") or ""), Path(str(document.get("path") or "")).name,
                str(cited.get("page_label") or cited.get("page") or ""), str(cited.get("passage") or ""),
            )
    style = CitationStyle.SHORTID if data.get("citation_style") == CitationStyle.SHORTID else CitationStyle.LABEL
    return str(data.get("question") or ""), _blocks(data["answer"])[1], footnotes, style


def read_text(raw: str, name: str = "") -> TextToCheck:
    """The sentences of ``raw`` (Markdown, plain text, or an answer exported as Markdown or
    as its JSON audit record) and the marker labels each carried; the markers themselves
    are removed from the text."""
    record = _audit_record(raw)
    if record is not None:
        title, blocks, footnotes, style = record
    else:
        title, blocks, footnotes = _blocks(raw)
        style = CitationStyle.LABEL
    prose = "\n\n".join(text for text, _ in blocks)
    heading_spans: list[tuple[int, int]] = []
    at = 0
    for block, heading in blocks:
        if heading:
            heading_spans.append((at, at + len(block)))
        at += len(block) + 2
    exported = any(f.chunk_id for f in footnotes.values())
    sentences = split_sentences(prose)
    markers = find_markers(prose, style)
    pairs = attach_citations(sentences, markers)
    cut = sorted({span for _, span in markers})
    # Remove each marker and the spaces before it; map the sentence spans to the new text.
    removed: list[tuple[int, int]] = []
    for start, end in cut:
        while start > 0 and prose[start - 1] in " \t\u00a0":
            start -= 1
        removed.append((start, end))
    parts: list[str] = []
    at = 0
    for start, end in removed:
        if start >= at:
            parts.append(prose[at:start])
            at = end
    parts.append(prose[at:])
    text = "".join(parts)

    def moved(offset: int) -> int:
        shift = 0
        for start, end in removed:
            if end <= offset:
                shift += end - start
            elif start < offset:
                shift += offset - start
        return offset - shift

    kept: list[Sentence] = []
    cited: list[tuple[str, ...]] = []
    headings: set[int] = set()
    for sentence, ids in pairs:
        start, end = moved(sentence.start), moved(sentence.end)
        while end > start and text[end - 1].isspace():
            end -= 1
        if end <= start:
            continue
        if any(a <= sentence.start < b for a, b in heading_spans):
            headings.add(len(kept))
        kept.append(Sentence(start, end, text[start:end]))
        cited.append(ids)
    if not exported and not footnotes:
        title = title or name
    return TextToCheck(title or name, text, tuple(kept), tuple(cited), footnotes, exported,
                       frozenset(headings))


# ----------------------------------------------------------------- --claims JSONL
@dataclass(frozen=True)
class ClaimLine:
    """One line of a ``--claims`` batch: a sentence, the passages it may cite (label ->
    text) and the labels it does cite."""

    sentence: str
    passages: dict[str, str]
    ids: tuple[str, ...]
    key: object = None  # the line's own "id", echoed in the output


class BadClaimLine(ValueError):
    """A ``--claims`` line that cannot be read; the message says why, for the output line."""


def read_claims_line(line: str) -> ClaimLine:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BadClaimLine(f"not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(data, dict):
        raise BadClaimLine("not a JSON object")
    sentence = data.get("sentence")
    if not isinstance(sentence, str) or not sentence.strip():
        raise BadClaimLine('"sentence" must be a non-empty string')
    raw_passages = data.get("passages", [])
    if not isinstance(raw_passages, list):
        raise BadClaimLine('"passages" must be a list of {"label": ..., "text": ...}')
    passages: dict[str, str] = {}
    for n, item in enumerate(raw_passages, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise BadClaimLine(f'passage {n} must be an object with a "text" string')
        label = item.get("label", str(n))
        if not isinstance(label, str | int) or isinstance(label, bool):
            raise BadClaimLine(f'passage {n}: "label" must be a string or a number')
        passages[str(label)] = item["text"]
    ids = data.get("ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, str | int) and not isinstance(i, bool) for i in ids):
        raise BadClaimLine('"ids" must be a list of passage labels')
    return ClaimLine(sentence, passages, tuple(str(i) for i in ids), data.get("id"))
