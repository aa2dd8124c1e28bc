"""Help > Documentation: the pages the README's "Where to go next" lists (the manual,
the topic pages, the developers' guides), shown in the web browser.

The pages are Markdown files of the source tree (``docs/``, the README, the samples'
README). A browser shows Markdown as plain text, or hands it to an editor, so each page
is written once as HTML (Qt's Markdown reader) into PIUI's cache folder, its links to
the other pages turned into links to their HTML, its pictures left where they are, and
that file is opened with the desktop's browser (``QDesktopServices``). Which pages the
menu offers, in which order, is read from the README's "Where to go next" section, so
that the menu and the README never disagree.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the source tree: README.md, docs/
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SECTION = "## Where to go next"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s#]+\.md)(#[^)\s]*)?\)")


@dataclass(frozen=True)
class Page:
    title: str  # the page's own first heading
    path: Path  # its Markdown file
    group: str  # the README's lead-in: "If you use PIUI or its command line:"


def pages(readme: Path = README) -> list[Page]:
    """The pages of the README's "Where to go next", users' pages first, each once."""
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError:
        return []
    start = text.find(SECTION)
    if start < 0:
        return []
    body = text[start + len(SECTION) :]
    end = body.find("\n## ")
    body = body if end < 0 else body[:end]
    groups: list[tuple[str, list[Page]]] = []
    seen: set[Path] = set()
    for line in body.splitlines():
        if line.startswith("If you"):
            groups.append((line.strip(), []))
            continue
        for _label, target, _anchor in _LINK.findall(line):
            path = (readme.parent / target).resolve()
            if path in seen or not groups:
                continue
            seen.add(path)
            groups[-1][1].append(Page(_title(path, _label), path, groups[-1][0]))
    groups.sort(key=lambda g: 0 if " use " in g[0] else 1)  # the users' pages first
    return [page for _, found in groups for page in found]


def _title(path: Path, fallback: str) -> str:
    try:
        with path.open(encoding="utf-8") as f:
            for line in f:
                if line.startswith("# "):
                    return line[2:].strip()
    except OSError:
        pass
    return fallback


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading ("Measuring this machine (parasol-model
    measure)" -> "measuring-this-machine-parasol-model-measure")."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = html.unescape(text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def html_of(page: Path, out_dir: Path, root: Path = ROOT) -> Path:
    """Write ``page`` (Markdown, under ``root``) as HTML under ``out_dir``, at the same
    place relative to ``root``, with every page it links to (recursively, each once);
    return the HTML file of ``page``."""
    done: dict[Path, Path] = {}
    _write(page.resolve(), out_dir, root.resolve(), done)
    return done[page.resolve()]


def _target(source: Path, out_dir: Path, root: Path) -> Path:
    try:
        relative = source.relative_to(root)
    except ValueError:
        relative = Path(source.name)
    return (out_dir / relative).with_suffix(".html")


def _write(source: Path, out_dir: Path, root: Path, done: dict[Path, Path]) -> None:
    from PySide6.QtGui import QTextDocument

    target = _target(source, out_dir, root)
    done[source] = target
    text = source.read_text(encoding="utf-8")
    document = QTextDocument()
    document.setMarkdown(text)
    body = document.toHtml()
    linked: list[Path] = []

    def link(match: re.Match) -> str:
        href = html.unescape(match.group(1))
        if href.startswith("#"):  # on this page (the <base> is the source's folder)
            return f'href="{html.escape(target.as_uri() + href)}"'
        name, _, anchor = href.partition("#")
        if "://" in name or not name.endswith(".md"):
            return match.group(0)
        other = (source.parent / name).resolve()
        if not other.exists():
            return match.group(0)
        if other not in done:
            linked.append(other)
        url = _target(other, out_dir, root).as_uri() + (f"#{anchor}" if anchor else "")
        return f'href="{html.escape(url)}"'

    body = re.sub(r'href="([^"]+)"', link, body)

    def anchor(match: re.Match) -> str:  # headings get GitHub's anchors
        return f'{match.group(0)}<a name="{_slug(match.group(2))}"></a>'

    body = re.sub(r"<h([1-6])[^>]*>(.*?)(?=</h\1>)", anchor, body, flags=re.S)
    base = f'<base href="{html.escape(source.parent.as_uri())}/">'  # its pictures, in place
    style = ("<style>body { max-width: 60em; margin: 1em auto; font-family: sans-serif; "
             "line-height: 1.4; } pre, code { background: #f4f4f4; } "
             "table { border-collapse: collapse; } td, th { padding: 2px 6px; }</style>")  # fmt: skip
    body = body.replace("<head>", f'<head><meta charset="utf-8">{base}{style}', 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    for other in linked:
        if other not in done:
            _write(other, out_dir, root, done)
