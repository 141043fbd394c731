"""A throwaway PostgreSQL cluster for the A2A benchmark's PostgreSQL rows. Standard library only.

`initdb` in a temporary directory, `postgres` on a Unix socket in it (no TCP port), with the
server's default durability (`fsync` and `synchronous_commit` on: what a user of the store
gets), started in a session of its own and stopped — fast shutdown, then SIGKILL of its
process group — when the benchmark is done with it. As root (CI), `initdb` and `postgres` run
as the `postgres` user the Debian package creates, through `setpriv`. Binaries: the directory
in `AGENTPROTO_PG_BIN`, else the one on `PATH` holding `initdb`, else the newest
`/usr/lib/postgresql/*/bin`. Every wait is bounded.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

START_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0


def bin_dir() -> Path | None:
    if os.environ.get("AGENTPROTO_PG_BIN"):
        return Path(os.environ["AGENTPROTO_PG_BIN"])
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent  # Debian links a few of them into /usr/local/bin
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def version() -> str:
    """`postgres --version`'s number, or "not installed"."""
    found = bin_dir()
    if found is None:
        return "not installed"
    try:
        out = subprocess.run([str(found / "postgres"), "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    words = out.stdout.split()  # "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    return words[2] if len(words) > 2 else "unknown"


class Cluster:
    """One running server; `database()` hands out a fresh database's connection string."""

    def __init__(self, failure, settings: tuple[str, ...] = ()) -> None:
        """`settings`: more `name=value` server settings (`postgres -c`), e.g. to preload
        `pg_stat_statements` for `pg_cost.py`."""
        self.Failure = failure
        found = bin_dir()
        if found is None:
            raise failure(
                "PostgreSQL not found: install it with `apt-get install -y postgresql` (or set AGENTPROTO_PG_BIN)"
            )
        self.bin = found
        self.dir = Path(tempfile.mkdtemp(prefix="agentproto-bench-pg-"))
        self.proc: subprocess.Popen | None = None
        self.count = 0
        self.prefix: list[str] = []
        try:
            if os.geteuid() == 0:
                user = pwd.getpwnam("postgres")
                os.chown(self.dir, user.pw_uid, user.pw_gid)
                self.prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"]
            self._run([str(self.bin / "initdb"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C",
                       "-D", str(self.dir / "data")], "initdb", timeout=120)  # fmt: skip
            log = open(self.dir / "postgres.log", "ab")  # noqa: SIM115  (closed with the process)
            argv = self.prefix + [str(self.bin / "postgres"), "-D", str(self.dir / "data"), "-k", str(self.dir),
                                  "-c", "listen_addresses=", "-c", "max_connections=300"]  # fmt: skip
            for setting in settings:
                argv += ["-c", setting]
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
            log.close()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _run(self, argv: list[str], what: str, timeout: float = 30) -> None:
        try:
            out = subprocess.run(self.prefix + argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise self.Failure(f"PostgreSQL {what}: timed out after {timeout} s") from None
        if out.returncode != 0:
            raise self.Failure(f"PostgreSQL {what} failed: {out.stdout[-1500:]} {out.stderr[-1500:]}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            ready = subprocess.run([str(self.bin / "pg_isready"), "-q", "-h", str(self.dir), "-U", "postgres"],
                                   capture_output=True, timeout=10)  # fmt: skip
            if ready.returncode == 0:
                return
            if self.proc is not None and self.proc.poll() is not None:
                raise self.Failure(f"postgres exited during start-up: {self.log()}")
            if time.monotonic() > deadline:
                raise self.Failure(f"postgres not ready after {START_TIMEOUT} s: {self.log()}")
            time.sleep(0.1)  # polling an external server's readiness, bounded by the deadline

    def log(self) -> str:
        try:
            return (self.dir / "postgres.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def database(self) -> str:
        """A fresh, empty database: the connection string the server's `--store postgres` takes."""
        self.count += 1
        name = f"bench_{os.getpid()}_{self.count}"
        self._run([str(self.bin / "createdb"), "-h", str(self.dir), "-U", "postgres", name], "createdb")
        return f"host={self.dir} port=5432 user=postgres dbname={name}"

    def psql(self, sql: str, dbname: str = "postgres") -> list[list[str]]:
        """Rows of one statement run by `psql` in `dbname`, as lists of column texts."""
        argv = [str(self.bin / "psql"), "-h", str(self.dir), "-U", "postgres", "-d", dbname, "-X", "-A", "-t",
                "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql]  # fmt: skip
        try:
            out = subprocess.run(self.prefix + argv, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise self.Failure(f"psql {sql!r}: timed out after 30 s") from None
        if out.returncode != 0:
            raise self.Failure(f"psql {sql!r} failed: {out.stderr[-1500:]}")
        return [line.split("\t") for line in out.stdout.splitlines() if line]

    def stop(self) -> None:
        """Fast shutdown (SIGINT), SIGKILL of the group if it lingers, then the directory goes."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)
