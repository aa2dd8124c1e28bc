"""Every message about an estimator that cannot be reached names its address once: the
client's errors name it already ("cannot reach the estimator at URL: Connection
refused"), and PIUI's export said "cannot export to URL: cannot reach the estimator at
URL: ..." (parasol_core.estimator.client.naming)."""

from __future__ import annotations

import pytest

from parasol_core.estimator.client import (
    Client,
    EstimatorError,
    RemoteError,
    naming,
)
from parasol_core.estimator.local import free_port


def unreachable() -> tuple[str, EstimatorError]:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(EstimatorError) as e, Client(url, timeout=5.0) as c:
        c.info()
    return url, e.value


def test_naming_says_the_address_once_whether_the_error_names_it_or_not():
    url, error = unreachable()
    assert url in str(error)
    assert naming(url, "cannot export", error).count(url) == 1
    remote = RemoteError(-32000, "no such method", url=url)  # its words name no address
    text = naming(url, "the estimator", remote)
    assert text.count(url) == 1 and text.startswith(f"the estimator at {url}: ")


def test_the_preferences_check_says_the_address_once():
    from piui.windows.preferences import check_failure

    url, error = unreachable()
    assert check_failure(url, "", error).count(url) == 1


def test_push_and_status_say_the_address_once(tmp_path, capsys):
    from parasol_core.cli import main
    from parasol_core.estimator.server import main as estimator_main

    model = tmp_path / "m.machine"
    model.write_text("begin machine\n    id = 1\nend machine\n")
    url = f"http://127.0.0.1:{free_port()}"
    assert main(["push", str(model), "--url", url, "--timeout", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count(url) == 1, err
    assert estimator_main(["status", "--url", url]) == 1
    out = capsys.readouterr().out
    assert out.count(url) == 1, out
