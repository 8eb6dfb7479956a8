"""The test command's servers: scripts/db/up.sh fails loudly, and the fault proxy cuts.

up.sh runs here from a copy of scripts/ in a temporary directory, so it keeps its state
(and its servers) apart from the servers the other tests use; each run stops what it
started.
"""

import os
import shutil
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import psycopg
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A directory holding a copy of scripts/, as up.sh's checkout root."""
    shutil.copytree(SCRIPTS, tmp_path / "scripts")
    yield tmp_path
    subprocess.run([tmp_path / "scripts/db/down.sh"], capture_output=True, check=False)


def up(checkout: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [checkout / "scripts/db/up.sh"], env=env, capture_output=True, text=True, timeout=300
    )


def test_a_server_that_does_not_start_stops_the_script_with_its_logs(
    checkout: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    mariadbd = fake / "mariadbd"
    mariadbd.write_text("#!/bin/sh\necho 'refusing to start' >&2\nexit 1\n")
    mariadbd.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    result = up(checkout, env)
    assert result.returncode != 0, result.stderr
    assert "MariaDB did not start" in result.stderr
    assert "startup failed" in result.stderr
    # The logs' tails, and no connection details for servers that are not there.
    assert "--- " in result.stderr
    assert not (checkout / ".cache/db/db.env").exists()
    assert not (checkout / ".cache/db/state").exists()


def test_a_tmpdir_the_servers_cannot_write_does_not_matter(checkout: Path, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    env = {**os.environ, "TMPDIR": str(private)}
    result = up(checkout, env)
    assert result.returncode == 0, result.stderr
    assert "MINTID_MYSQL_URL=" in (checkout / ".cache/db/db.env").read_text()


def control(request: str) -> str:
    host, port = os.environ["MINTID_FAULT_PROXY"].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request.encode() + b"\n")
        return sock.makefile().readline().strip()


def test_the_fault_proxy_cuts_a_database_for_a_while() -> None:
    url = urllib.parse.urlsplit(os.environ["MINTID_PG_URL"])
    port = control(f"open 127.0.0.1 {url.port}")
    through = url._replace(netloc=f"{url.username}:{url.password}@127.0.0.1:{port}").geturl()
    with psycopg.connect(through, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert control(f"cut {port} 1000") == "ok"
        with pytest.raises(psycopg.OperationalError):
            conn.execute("SELECT 2")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(through, connect_timeout=2)
    deadline = time.monotonic() + 10
    while True:
        try:
            with psycopg.connect(through, connect_timeout=2) as conn:
                assert conn.execute("SELECT 3").fetchone() == (3,)
                break
        except psycopg.OperationalError:
            assert time.monotonic() < deadline, "the proxy did not listen again"
            time.sleep(0.1)
    assert control(f"close {port}") == "ok"
    assert control("bogus").startswith("error:")
