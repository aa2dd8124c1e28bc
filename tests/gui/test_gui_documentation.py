"""Issue 33, item 6: Help has a way to the documentation. Help > Documentation lists the
README's "Where to go next" pages (the users' first) and opens one in the web browser,
written as HTML with working links; with no browser, it says where the page is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT
from PySide6.QtCore import QUrl

from piui.widgets.documentation import DOCS


def _documentation_menu(main_window):
    help_menu = next(a.menu() for a in main_window.menuBar().actions()
                     if a.text().replace("&", "") == "Help")  # fmt: skip
    return next(a.menu() for a in help_menu.actions() if a.text() == "&Documentation")


def _where_to_go_next() -> set[Path]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Where to go next", 1)[1].split("\n## ", 1)[0]
    return {(ROOT / t).resolve() for t in re.findall(r"\]\(([^)#]+\.md)", section)}


@pytest.fixture
def opened(main_window, monkeypatch, tmp_path):
    """The URLs the menu asked the desktop to open (a browser is there: True)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    urls: list[QUrl] = []
    main_window.open_url = lambda url: urls.append(url) or True
    return urls


def test_the_menu_offers_every_page_the_readme_lists(main_window):
    entries = [a for a in _documentation_menu(main_window).actions() if not a.isSeparator()]
    titles = [a.text() for a in entries]
    assert titles[0] == "The PIUI manual"  # the users' pages first
    assert titles[-1] == "The documentation folder"
    pages = {Path(a.toolTip().split(",")[0]) for a in entries[:-1]}
    assert {p.name for p in _where_to_go_next()} == {p.name for p in pages}
    assert len(entries) - 1 == len(_where_to_go_next())


def test_a_page_opens_in_the_browser_as_html_with_its_links(main_window, opened, tmp_path):
    manual = next(a for a in _documentation_menu(main_window).actions()
                  if a.text() == "The PIUI manual")  # fmt: skip
    manual.trigger()
    (url,) = opened
    page = Path(url.toLocalFile())
    assert page.suffix == ".html" and page.is_file()
    assert tmp_path / "cache" in page.parents  # written to the cache, not the source tree
    html = page.read_text()
    assert "The PIUI manual" in html
    links = re.findall(r'href="(file://[^"#]+)', html)
    assert any(link.endswith("/docs/architecture.html") for link in links)
    for link in links:  # every page it links to is there, as HTML (or the folder itself)
        target = Path(QUrl(link).toLocalFile())
        assert target.exists(), link
    assert 'name="the-application"' in html  # the contents' anchors lead somewhere
    assert "Opened manual.md" in main_window.statusBar().currentMessage()


def test_the_folder_entry_opens_the_docs_folder(main_window, opened):
    folder = next(a for a in _documentation_menu(main_window).actions()
                  if a.text() == "The documentation folder")  # fmt: skip
    folder.trigger()
    assert [Path(u.toLocalFile()) for u in opened] == [DOCS]


def test_without_a_browser_it_says_where_the_page_is(main_window, monkeypatch, tmp_path,
                                                     modal_dialogs):  # fmt: skip
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    main_window.open_url = lambda url: False  # no browser on this desktop
    assert not main_window.show_documentation(DOCS / "topology.md")
    title, text = modal_dialogs[-1]
    assert title == "No web browser"
    assert str(DOCS) in text and "topology.html" in text and "topology.md" in text
    assert any("no web browser" in line for line in main_window.terminal.lines())


def test_documentation_that_is_not_there_says_so(main_window, opened):
    assert not main_window.show_documentation(Path("/nowhere/docs/manual.md"))
    assert opened == []
    assert main_window.errors[-1][0] == "Documentation not found"
