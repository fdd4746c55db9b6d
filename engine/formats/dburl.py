"""PostgreSQL connection URLs: recognising one, and never showing its password.

libpq's URI form (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING-URIS):
`postgresql://[user[:password]@][host][:port][,...][/dbname][?param=value&...]`, scheme `postgresql`
or `postgres`. libpq takes the credentials up to the first '@' that comes before any '/'
(`conninfo_uri_parse_options` in libpq's fe-connect.c), so a password with an unencoded '@' or '/'
is split into host or database name, where error messages would echo it. Such a URL is ambiguous:
`ambiguity()` says so and the importer refuses it before connecting. A password can also sit in a
`password=` parameter; both places are replaced by `***` wherever a URL is shown.
"""

from __future__ import annotations

from urllib.parse import unquote

SCHEMES = ("postgresql://", "postgres://")
MASK = "***"


def is_postgres_url(text: object) -> bool:
    return isinstance(text, str) and text.lower().startswith(SCHEMES)


def _parts(url: str) -> tuple[str, str | None, str]:
    """(scheme://, the credentials libpq reads or None, everything after them)."""
    scheme, _, tail = url.partition("://")
    head = tail.partition("/")[0]
    if "@" in head:
        userinfo, _, rest = tail.partition("@")
        return f"{scheme}://", userinfo, rest
    return f"{scheme}://", None, tail


def ambiguity(url: str) -> str | None:
    """Why libpq would read part of the password as host or database, or None when the URL is clear."""
    _, _, rest = _parts(url)
    before, _, query = rest.partition("?")
    # an '@' or '/' in a parameter name means the first '?' was inside a password
    if "@" in before or any(c in pair.partition("=")[0] for pair in query.split("&") for c in "@/"):
        return ("the URL has an '@' outside its user:password part; percent-encode '@' as %40, '/' as %2F and "
                "':' as %3A in the password (or leave it out and set PGPASSWORD or ~/.pgpass)")
    return None


def _masked_query(query: str) -> str:
    pairs = []
    for pair in query.split("&"):
        key, eq, _ = pair.partition("=")
        pairs.append(f"{key}={MASK}" if eq and unquote(key).lower() == "password" else pair)
    return "&".join(pairs)


def redact(url: str) -> str:
    """The URL with every password replaced by `***` (user, host, port, database and options kept)."""
    scheme, userinfo, rest = _parts(url)
    if ambiguity(url) is not None:
        # hide everything up to the last '@': whatever libpq makes of it, the password is in there
        before, q, query = url.partition("://")[2].rpartition("@")[2].partition("?")
        return f"{scheme}{MASK}@{before}" + (q + _masked_query(query) if q else "")
    before, q, query = rest.partition("?")
    shown = scheme
    if userinfo is not None:
        shown += (userinfo.partition(":")[0] + ":" + MASK if ":" in userinfo else userinfo) + "@"
    return shown + before + (q + _masked_query(query) if q else "")


def passwords(url: str) -> list[str]:
    """Every form of the URL's passwords that could surface in a message (raw and decoded), longest first."""
    _, userinfo, rest = _parts(url)
    found = []
    if userinfo is not None and ":" in userinfo:
        found.append(userinfo.partition(":")[2])
    for pair in rest.partition("?")[2].split("&"):
        key, eq, value = pair.partition("=")
        if eq and unquote(key).lower() == "password":
            found.append(value)
    forms = {form for raw in found if raw for form in (raw, unquote(raw))}
    return sorted(forms, key=len, reverse=True)  # longest first, so a substring never leaves a tail


def scrub(text: str, url: str) -> str:
    """`text` (a driver's error message, say) with the URL redacted and its passwords masked."""
    text = text.replace(url, redact(url))
    for secret in passwords(url):
        text = text.replace(secret, MASK)
    return text
