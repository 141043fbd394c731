"""Which PostgreSQL driver the Python A2A store uses: asyncpg or psycopg 3, measured.

Starts a throwaway cluster (`a2a_pg.Cluster`), then for each driver runs, on a pool of 10
connections, the two statements shapes the store's hot path has:

- a SendMessage-shaped commit: one transaction that creates a task row and its first
  event, then a second one that locks the row (`FOR UPDATE`), checks its version, updates
  it and appends an event (a send to a new task is a create and a status update);
- a task read (`SELECT … WHERE tenant = $1 AND id = $2`).

Each sequentially (one caller) and at 50 concurrent callers; prints rows/s. Run:
`.venv/bin/python bench/a2a/pg_driver.py` (needs both drivers installed). The result is
recorded in `python/docs/postgres.md`.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from a2a_pg import Cluster  # noqa: E402

SCHEMA = """
CREATE TABLE t (tenant TEXT NOT NULL, id TEXT NOT NULL, version BIGINT NOT NULL, last_seq BIGINT NOT NULL,
                body BYTEA NOT NULL, PRIMARY KEY (tenant, id));
CREATE TABLE e (tenant TEXT NOT NULL, task_id TEXT NOT NULL, seq BIGINT NOT NULL, body BYTEA NOT NULL,
                PRIMARY KEY (tenant, task_id, seq));
"""
BODY = b'{"id":"x","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"history":[{"role":"ROLE_USER","parts":[{"text":"hello"}]}]}'  # noqa: E501
SEQUENTIAL = 400
CONCURRENT = 50
PER_CALLER = 40


class Failure(Exception):
    pass


async def measure(name: str, op: Callable[[int], Awaitable[Any]]) -> None:
    start = time.perf_counter()
    for i in range(SEQUENTIAL):
        await op(i)
    seq_rate = SEQUENTIAL / (time.perf_counter() - start)

    async def caller(c: int) -> None:
        for i in range(PER_CALLER):
            await op(1_000_000 + c * 10_000 + i)

    start = time.perf_counter()
    await asyncio.gather(*(caller(c) for c in range(CONCURRENT)))
    conc_rate = CONCURRENT * PER_CALLER / (time.perf_counter() - start)
    print(f"{name:40s} sequential {seq_rate:8.0f}/s   50 concurrent {conc_rate:8.0f}/s", flush=True)


async def with_asyncpg(dsn: str) -> None:
    import asyncpg  # type: ignore[import-not-found]

    host = dsn.split("host=")[1].split()[0]
    db = dsn.split("dbname=")[1].split()[0]
    pool = await asyncpg.create_pool(host=host, user="postgres", database=db, min_size=10, max_size=10)
    async with pool.acquire() as c:
        await c.execute(SCHEMA)

    async def send(i: int) -> None:
        async with pool.acquire() as c:
            async with c.transaction():
                await c.execute("INSERT INTO t VALUES ('', $1, 1, 1, $2)", f"a{i}", BODY)
                await c.execute("INSERT INTO e VALUES ('', $1, 1, $2)", f"a{i}", BODY)
            async with c.transaction():
                row = await c.fetchrow("SELECT version FROM t WHERE tenant = '' AND id = $1 FOR UPDATE", f"a{i}")
                assert row[0] == 1
                await c.execute("UPDATE t SET version = 2, last_seq = 2, body = $2 WHERE tenant = '' AND id = $1",
                                f"a{i}", BODY)  # fmt: skip
                await c.execute("INSERT INTO e VALUES ('', $1, 2, $2)", f"a{i}", BODY)

    async def read(i: int) -> None:
        async with pool.acquire() as c:
            row = await c.fetchrow("SELECT version, body FROM t WHERE tenant = '' AND id = $1", f"a{i}")
            assert row is not None

    await measure("asyncpg: SendMessage-shaped commit", send)
    await measure("asyncpg: task read", read)
    await pool.close()


async def with_psycopg(dsn: str) -> None:
    from psycopg_pool import AsyncConnectionPool  # type: ignore[import-not-found]

    pool = AsyncConnectionPool(dsn, min_size=10, max_size=10, open=False)
    await pool.open()
    async with pool.connection() as c:
        await c.execute(
            SCHEMA.replace("CREATE TABLE t ", "CREATE TABLE t2 ").replace("CREATE TABLE e ", "CREATE TABLE e2 ")
        )

    async def send(i: int) -> None:
        async with pool.connection() as c:
            async with c.transaction():
                await c.execute("INSERT INTO t2 VALUES ('', %s, 1, 1, %s)", (f"p{i}", BODY), prepare=True)
                await c.execute("INSERT INTO e2 VALUES ('', %s, 1, %s)", (f"p{i}", BODY), prepare=True)
            async with c.transaction():
                cur = await c.execute(
                    "SELECT version FROM t2 WHERE tenant = '' AND id = %s FOR UPDATE", (f"p{i}",), prepare=True
                )
                row = await cur.fetchone()
                assert row is not None and row[0] == 1
                await c.execute("UPDATE t2 SET version = 2, last_seq = 2, body = %s WHERE tenant = '' AND id = %s",
                                (BODY, f"p{i}"), prepare=True)  # fmt: skip
                await c.execute("INSERT INTO e2 VALUES ('', %s, 2, %s)", (f"p{i}", BODY), prepare=True)

    async def read(i: int) -> None:
        async with pool.connection() as c:
            cur = await c.execute(
                "SELECT version, body FROM t2 WHERE tenant = '' AND id = %s", (f"p{i}",), prepare=True
            )
            assert await cur.fetchone() is not None

    await measure("psycopg 3 (binary, pool): SendMessage commit", send)
    await measure("psycopg 3 (binary, pool): task read", read)
    await pool.close()


def main() -> None:
    cluster = Cluster(Failure)
    try:
        asyncio.run(with_asyncpg(cluster.database()))
        asyncio.run(with_psycopg(cluster.database()))
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
