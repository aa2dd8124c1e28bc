"""The C compiler at hand, the host's CPU, and subprocesses that a cancel kills.

Every compile and every benchmark run is a child process in its own process group;
:func:`run_lines` reads its standard output line by line and kills the group as soon as
the cancel event is set, so a cancelled measurement leaves no process behind.
"""

from __future__ import annotations

import os
import platform
import queue
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

__all__ = [
    "CompilerMissing",
    "MeasureCancelled",
    "compile_c",
    "compiler_version",
    "cpu_name",
    "find_compiler",
    "run_lines",
]


class MeasureCancelled(Exception):
    """The caller's cancel event was set: the measurement stopped, nothing was written."""


class CompilerMissing(RuntimeError):
    """No C compiler: neither $CC nor cc/gcc/clang on PATH."""


def find_compiler(preferred: str | None = None) -> list[str]:
    """The compiler command as an argument list: ``preferred``, else $CC, else the first
    of cc, gcc, clang on PATH. Raises :class:`CompilerMissing`."""
    candidates = [preferred] if preferred else []
    if os.environ.get("CC"):
        candidates.append(os.environ["CC"])
    candidates += ["cc", "gcc", "clang"]
    for c in candidates:
        if not c:
            continue
        argv = shlex.split(c)
        if argv and shutil.which(argv[0]):
            return argv
    raise CompilerMissing(
        "no C compiler found: set CC or install cc/gcc/clang (measuring the host "
        "compiles small C benchmark programs)"
    )


def compiler_version(cc: Sequence[str]) -> str:
    """The first line of ``cc --version`` ("gcc (Debian 12.2.0-14) 12.2.0")."""
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return cc[0]
    line = (out.stdout or out.stderr).strip().splitlines()
    return line[0].strip() if line else cc[0]


def cpu_name() -> str:
    """The CPU model as the operating system names it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                value = line.split(":", 1)[1].strip()
                if value:
                    return value
    except OSError:
        pass
    if platform.system() == "Darwin":
        try:
            out = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"],
                                 capture_output=True, text=True, timeout=10)  # fmt: skip
            if out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass


def _popen(argv: Sequence[str], cwd: Path | None, stdout: int) -> subprocess.Popen:
    return subprocess.Popen(
        list(argv), cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, start_new_session=True,
    )  # fmt: skip


def compile_c(
    cc: Sequence[str],
    source: Path,
    output: Path,
    flags: Sequence[str],
    cancel: threading.Event | None = None,
    assembly: bool = False,
) -> None:
    """Compile ``source`` to ``output`` (an executable linked with libm, or with
    ``assembly`` the -S text). Raises RuntimeError with the compiler's message, or
    :class:`MeasureCancelled`."""
    argv = [*cc, "-std=gnu11", *flags]
    argv += ["-S", "-o", str(output), str(source)] if assembly else [
        "-o", str(output), str(source), "-lm"]  # fmt: skip
    proc = _popen(argv, source.parent, subprocess.DEVNULL)
    while True:
        try:
            _, err = proc.communicate(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.is_set():
                _kill(proc)
                raise MeasureCancelled() from None
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{err.strip()[-2000:]}")


def run_lines(
    argv: Sequence[str],
    cancel: threading.Event | None = None,
    on_idle: Callable[[], None] | None = None,
    cwd: Path | None = None,
) -> Iterator[str]:
    """The lines a program prints, as it prints them. Kills it and raises
    :class:`MeasureCancelled` when ``cancel`` is set (checked ten times a second);
    ``on_idle`` is called between checks (progress while a long benchmark runs).
    Raises RuntimeError if it exits with an error."""
    proc = _popen(argv, cwd, subprocess.PIPE)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        while True:
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                if cancel is not None and cancel.is_set():
                    raise MeasureCancelled() from None
                if on_idle is not None:
                    on_idle()
                continue
            if line is None:
                break
            if cancel is not None and cancel.is_set():
                raise MeasureCancelled()
            yield line
        proc.wait()
        if proc.returncode != 0:
            err = proc.stderr.read() if proc.stderr else ""
            raise RuntimeError(f"{argv[0]} exited with status {proc.returncode}: {err[-2000:]}")
    finally:
        if proc.poll() is None:
            _kill(proc)
        reader.join(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
