"""PostgreSQL URLs: what is shown of them (never a password) and which ones are refused as ambiguous."""

from __future__ import annotations

import pytest

from engine.formats.dburl import ambiguity, is_postgres_url, passwords, redact, scrub


@pytest.mark.parametrize("url,shown", [
    ("postgresql://agent:hunter2@db:5432/lg", "postgresql://agent:***@db:5432/lg"),
    ("postgres://u:s%40cret@h1:1,h2:2/db?sslmode=require", "postgres://u:***@h1:1,h2:2/db?sslmode=require"),
    ("postgresql://u:pa?ss@host/db", "postgresql://u:***@host/db"),  # libpq: credentials run to the first '@'
    ("postgresql://u:@h/d", "postgresql://u:***@h/d"),
    ("postgresql://u@h/db", "postgresql://u@h/db"),
    ("postgresql://h", "postgresql://h"),
    ("postgresql://host/db?application_name=a@b&password=zz", "postgresql://host/db?application_name=a@b&password=***"),
    ("postgresql://u:p@h/db?Password=x&passfile=/a", "postgresql://u:***@h/db?Password=***&passfile=/a"),
    ("postgresql:///db?user=me@corp", "postgresql:///db?user=me@corp"),
    # ambiguous: everything before the last '@' is hidden
    ("postgresql://u:p@ss/word@127.0.0.1:5/db", "postgresql://***@127.0.0.1:5/db"),
    ("postgresql://u:pa/ss@host/db", "postgresql://***@host/db"),
    ("postgresql://u:p?a/b@host/db", "postgresql://***@host/db"),
])
def test_redact(url: str, shown: str) -> None:
    assert is_postgres_url(url)
    assert redact(url) == shown


@pytest.mark.parametrize("url,refused", [
    ("postgresql://u:p%40ss%2Fword@h/db", False), ("postgresql:///db?user=me@corp", False),
    ("postgresql://u:p@ss/word@h/db", True), ("postgresql://u:pa/ss@h/db", True), ("postgresql://u:p?a/b@h/db", True),
    ("postgresql://u:p@h1@h2/db", True),
])
def test_ambiguous_urls(url: str, refused: bool) -> None:
    assert (ambiguity(url) is not None) == refused


def test_scrub_masks_every_form_of_the_password() -> None:
    url = "postgresql://u:s%40cret@h/db?password=other"
    assert passwords(url) == ["s%40cret", "s@cret", "other"]
    message = f"failed for {url}: s@cret and s%40cret and other"
    assert scrub(message, url) == "failed for postgresql://u:***@h/db?password=***: *** and *** and ***"


def test_files_are_not_urls() -> None:
    assert not is_postgres_url("checkpoints.sqlite") and not is_postgres_url(None)
    assert is_postgres_url("POSTGRESQL://h/db")
