"""Where a file dialog opens: the one rule every dialog that asks for a file follows
(open, save as, export, import, the grid view's pictures, a model to compare with,
measured times to fit).

The folder of the model on screen, where its neighbours are (the measurements beside it,
the platform exported from it, the next model of the study); for a model with no file
yet (new, measured, imported, copied from a sample), the folder of the file opened or
saved last; else a fallback the dialog chooses (the samples for Open, the home folder for
the others). Never the process's working directory, which depends on how PIUI was
started (``/`` from a desktop menu) and says nothing about the work.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def dialog_folder(model_path: str | Path | None, recent: Iterable[str | Path] = (),
                  fallback: str | Path | None = None) -> Path:  # fmt: skip
    """The folder a file dialog opens in (see the module): the first of the model's
    folder, the folders of ``recent`` files (newest first), ``fallback`` and the home
    folder that exists."""
    candidates: list[Path] = []
    if model_path is not None:
        candidates.append(Path(model_path).parent)
    candidates.extend(Path(p).parent for p in recent)
    if fallback is not None:
        candidates.append(Path(fallback))
    for folder in candidates:
        folder = folder.expanduser()
        if folder.is_absolute() and folder.is_dir():
            return folder
    return Path.home()


def dialog_start(model_path: str | Path | None, name: str, recent: Iterable[str | Path] = (),
                 fallback: str | Path | None = None) -> Path:  # fmt: skip
    """The file a save or export dialog proposes: ``name`` in :func:`dialog_folder`
    (the model's own file when ``name`` is its name and it has one)."""
    return dialog_folder(model_path, recent, fallback) / name


def file_name(model_path: str | Path | None, model_name: str, suffix: str,
              extra: str = "") -> str:  # fmt: skip
    """A file name for something made from the model: its file's stem, else its name
    (made safe for a file name), else "untitled"; then ``extra`` and the ``suffix``
    (``file_name(p, n, ".xml")`` -> ``grid4x4.xml``)."""
    if model_path is not None:
        stem = Path(model_path).stem
    else:
        stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in model_name.strip())
        stem = stem.strip("-.") or "untitled"
    return f"{stem}{extra}{suffix}"
