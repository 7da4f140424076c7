"""A scratch PostgreSQL database for one bench run (both benches that can
run on PostgreSQL use it)."""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

from sqlalchemy import create_engine, text


@contextlib.contextmanager
def scratch_postgresql(admin_url: str, prefix: str = "judge_bench", suffix: str = "") -> Iterator[str]:
    """A fresh PostgreSQL database made through `admin_url`, dropped afterwards."""
    name = f"{prefix}_{os.getpid()}" + (f"_{suffix}" if suffix else "")
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
