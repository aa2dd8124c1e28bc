"""The C compiler at hand, the host's CPU, and subprocesses that a cancel stops.

Every compile and every benchmark run is a child process in its own process group
(its own session: Ctrl-C at the terminal reaches this process only, which decides).
:func:`run_lines` reads its standard output line by line; it and :func:`compile_c`
stop the group when the cancel event is set or when anything else ends them early (a
signal: :mod:`parasol_core.base.signals`): SIGTERM first, so that a compiler removes
its temporary files, then SIGKILL after :data:`GRACE` seconds. A compiler's TMPDIR is
the directory of what it compiles (the measurement's build directory), so whatever it
leaves goes with that directory. A stopped measurement leaves no process behind.

What comes from outside (the CPU's name, the compiler's version line, $CC, what a
compiler says) goes through :func:`parasol_core.base.limits.outside_text` before it
reaches a model or the terminal: bounded, control characters escaped.
"""

from __future__ import annotations

import os
import platform
import queue
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from parasol_core.base import signals
from parasol_core.base.limits import outside_text

__all__ = [
    "CompilerMissing",
    "MeasureCancelled",
    "check_compiler",
    "compile_c",
    "compiler_version",
    "cpu_name",
    "find_compiler",
    "run_lines",
]

GRACE = 2.0
"""Seconds a stopped child has, after SIGTERM, to clean up before SIGKILL."""
CPUINFO = Path("/proc/cpuinfo")


class MeasureCancelled(Exception):
    """The caller's cancel event was set: the measurement stopped, nothing was written."""


class CompilerMissing(RuntimeError):
    """No C compiler: neither $CC nor cc/gcc/clang on PATH, or the one asked for (the
    ``compiler`` option, $CC) is not there or does not work."""


def find_compiler(preferred: str | None = None) -> list[str]:
    """The compiler command as an argument list: ``preferred``, else $CC, else the first
    of cc, gcc, clang on PATH. A compiler asked for (``preferred``, $CC) that is not
    there is an error naming it, never a quiet fall back to another. Raises
    :class:`CompilerMissing`."""
    asked = [(preferred, "the compiler asked for")] if preferred else []
    if not asked and os.environ.get("CC"):
        asked = [(os.environ["CC"], "CC")]
    for command, what in asked:
        shown = outside_text(command)
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise CompilerMissing(f"{what}={shown!r} is not a command line: {e}") from None
        if not argv:
            raise CompilerMissing(f"{what}={shown!r} names no compiler")
        if shutil.which(argv[0]) is None:
            raise CompilerMissing(f"{what}={shown!r}: no such program "
                                  f"({outside_text(argv[0])!r} is not an executable file "
                                  "or a program on PATH)")  # fmt: skip
        return argv
    for c in ("cc", "gcc", "clang"):
        if shutil.which(c):
            return [c]
    raise CompilerMissing(
        "no C compiler found: set CC or install cc/gcc/clang (measuring the host "
        "compiles small C benchmark programs)"
    )


def check_compiler(cc: Sequence[str], timeout: float = 60.0) -> None:
    """Compile and link a one-line program with ``cc`` (in a directory of its own,
    removed after): CompilerMissing naming the command and what it said if it does not
    work, before any measuring starts."""
    shown = outside_text(" ".join(cc))
    with tempfile.TemporaryDirectory(prefix="parasol-cc-check-") as tmp:
        src = Path(tmp) / "check.c"
        src.write_text("int main(void) { return 0; }\n")
        argv = [*cc, "-o", str(Path(tmp) / "check"), str(src)]
        with _child(argv, Path(tmp), subprocess.DEVNULL, _compiler_env(Path(tmp))) as proc:
            try:
                _, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise CompilerMissing(f"the C compiler {shown!r} did not compile a one-line "
                                      f"program in {timeout:g} s") from None  # fmt: skip
        if proc.returncode != 0:
            said = outside_text(err.strip()[-500:], 500, lines=True) or (
                f"exit status {proc.returncode}")  # fmt: skip
            raise CompilerMissing(f"the C compiler {shown!r} does not work: it could not "
                                  f"compile a one-line program:\n{said}")  # fmt: skip


def compiler_version(cc: Sequence[str]) -> str:
    """The first line of ``cc --version`` ("gcc (Debian 12.2.0-14) 12.2.0"), as
    :func:`~parasol_core.base.limits.outside_text` makes it."""
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, timeout=30,
                             stdin=subprocess.DEVNULL)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return outside_text(cc[0])
    said = (out.stdout or out.stderr)[:65536].decode("utf-8", errors="replace").strip()
    return outside_text(said.splitlines()[0] if said else cc[0])


def cpu_name() -> str:
    """The CPU model as the operating system names it, as
    :func:`~parasol_core.base.limits.outside_text` makes it (any bytes, any length)."""
    try:
        with open(CPUINFO, "rb") as f:
            data = f.read(1 << 20)
        for line in data.splitlines():
            if line.lower().startswith((b"model name", b"hardware", b"cpu model")):
                value = outside_text(line.split(b":", 1)[-1])
                if value:
                    return value
    except OSError:
        pass
    if platform.system() == "Darwin":
        try:
            out = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"],
                                 capture_output=True, timeout=10)  # fmt: skip
            if out.stdout.strip():
                return outside_text(out.stdout[:65536])
        except (OSError, subprocess.SubprocessError):
            pass
    return outside_text(platform.processor() or platform.machine() or "unknown CPU")


def _stop(proc: subprocess.Popen, grace: float = GRACE) -> None:
    """End a child's process group: SIGTERM (a compiler then removes its temporary
    files), SIGKILL if it is still there after ``grace`` seconds; waited for."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    try:  # the group may outlive its leader (a compiler driver's cc1): SIGKILL what is left
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _compiler_env(directory: Path) -> dict[str, str]:
    """The compiler's environment: its temporary files go in ``directory``."""
    env = dict(os.environ)
    for name in ("TMPDIR", "TMP", "TEMP"):
        env[name] = str(directory)
    return env


def _popen(argv: Sequence[str], cwd: Path | None, stdout: int,
           env: dict[str, str] | None = None) -> subprocess.Popen:  # fmt: skip
    return subprocess.Popen(
        list(argv), cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, errors="replace", start_new_session=True, env=env,
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
    with _child(argv, source.parent, subprocess.DEVNULL, _compiler_env(source.parent)) as proc:
        while True:
            try:
                _, err = proc.communicate(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.is_set():
                    raise MeasureCancelled() from None
    if proc.returncode != 0:
        said = outside_text(err.strip()[-2000:], 2000, lines=True)
        raise RuntimeError(f"{outside_text(' '.join(argv), 2000)} failed:\n{said}")


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
    with _child(argv, cwd, subprocess.PIPE) as proc:
        yield from _lines_of(proc, argv, cancel, on_idle)


def _lines_of(proc: subprocess.Popen, argv: Sequence[str], cancel: threading.Event | None,
              on_idle: Callable[[], None] | None) -> Iterator[str]:  # fmt: skip
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
            err = proc.stderr.read(65536) if proc.stderr else ""
            raise RuntimeError(f"{outside_text(argv[0])} exited with status {proc.returncode}: "
                               f"{outside_text(err[-2000:], 2000, lines=True)}")  # fmt: skip
    finally:
        if proc.poll() is None:
            _stop(proc)
        reader.join(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@contextmanager
def _child(argv: Sequence[str], cwd: Path | None, stdout: int,
           env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:  # fmt: skip
    """A child process for the block, stopped (:func:`_stop`) if it still runs when the
    block ends, however it ends. Started with signals deferred: a signal while it
    starts is raised once the child is known, so it is never left running unknown."""
    proc = None
    try:
        with signals.deferred():
            proc = _popen(argv, cwd, stdout, env)
        yield proc
    finally:
        if proc is not None and proc.poll() is None:
            _stop(proc)
