"""`ctxi ui`: launch the dashboard (streamlit run app.py) on a bundled sample or a given thread."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path

from engine.base.errors import ContextInspectorError

NAME = "ui"
LOCALHOST = "127.0.0.1"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD = frozenset({"0.0.0.0", "::", ""})  # every address of this machine
HELP = "Launch the Context Inspector dashboard in the browser."
# Set for the server by --allow-middleware: a dashboard open to a network (--host) applies a config that
# names middleware (Python code) only then, after the same confirmation as on this machine (ui/session.py).
NETWORK_CODE_ENV = "CTXI_NETWORK_MIDDLEWARE"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", help="a thread file to open (default: a bundled sample)")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--host", default=LOCALHOST, metavar="ADDRESS",
                   help="address to listen on (default %(default)s: this machine only). Another address lets "
                        "anyone who can reach it use the dashboard and its API keys: see SECURITY.md")
    p.add_argument("--headless", action="store_true", help="do not open a browser window")
    p.add_argument("--sessions", action="append", default=[], metavar="DIR",
                   help="list the agents' sessions under DIR on the Sessions page (repeatable), e.g. "
                        "~/.claude/projects, ~/.codex/sessions; default: CTXI_SESSIONS, else sessions.roots in the "
                        "workspace's settings.yaml. Only these folders are listed (SECURITY.md)")
    p.add_argument("--allowed-host", dest="allowed_hosts", action="append", default=[], metavar="NAME",
                   help="another host name or address browsers use to reach the dashboard (repeatable); only "
                        "127.0.0.1, localhost and --host are accepted otherwise, which stops DNS rebinding")
    p.add_argument("--allow-middleware", action="store_true",
                   help="with --host: let the Config page apply a config that names middleware (Python code), "
                        "after its confirmation; without --host it is always asked for")


def allowed_hosts(host: str, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The Host names the server accepts (Streamlit's `server.allowedHosts`): the ones it listens on.

    An empty list (Streamlit's default) accepts any Host header, so a page on a rebinding domain
    (`attacker.example` resolving to 127.0.0.1) could drive the dashboard from the user's browser:
    Streamlit 1.67 `web/server/starlette/starlette_websocket.py` `is_host_allowed` is what refuses
    its WebSocket. A wildcard address (0.0.0.0) adds this machine's own names; any other name people
    use is given with --allowed-host.
    """
    names = ["127.0.0.1", "localhost"]
    if host in WILDCARD:
        names += [socket.gethostname(), socket.getfqdn()]
    else:
        names.append(host)
    names += extra
    out: list[str] = []
    for name in names:
        name = name.strip().strip("[]").lower()
        if name and name not in out:
            out.append(name)
    return out


def app_path() -> Path:
    app = Path(__file__).resolve().parents[2] / "app.py"
    if not app.exists():
        raise ContextInspectorError(f"app.py not found next to the engine ({app}); run from a source checkout")
    return app


def run(args: argparse.Namespace) -> int:
    from engine.formats import upload_limit_mib
    from engine.formats.dburl import is_postgres_url, redact

    env = dict(os.environ)
    if is_postgres_url(args.file):
        # the URL would sit in the server's environment and process list; the Threads page takes it typed
        raise ContextInspectorError(f"{redact(args.file)}: open a PostgreSQL database from the Threads page "
                                    "(LangGraph on PostgreSQL), or read it with ctxi inspect / replay")
    if args.file:
        env["CTXI_OPEN"] = str(Path(args.file).resolve())
    if args.sessions:
        from engine.workspace.disk_sessions import ENV_VAR, resolve_roots

        # checked here (a missing folder is one line, before the server starts), handed over in the environment
        env[ENV_VAR] = os.pathsep.join(str(r) for r in resolve_roots(args.sessions))
    hosts = allowed_hosts(args.host, args.allowed_hosts)
    env.pop(NETWORK_CODE_ENV, None)  # only this command's own flag allows it
    if args.allow_middleware:
        env[NETWORK_CODE_ENV] = "1"
    if args.host not in LOOPBACK:
        print(f"ctxi ui: warning: listening on {args.host}: anyone who can reach this address can open the threads "
              "it shows, upload files, and start runs with the API keys in this environment (see SECURITY.md); "
              f"browsers may reach it as {', '.join(hosts)} (add others with --allowed-host)", file=sys.stderr)
    cmd = [sys.executable, "-m", "streamlit", "run", str(app_path()), "--server.port", str(args.port),
           "--server.address", args.host, "--browser.gatherUsageStats", "false",
           # as .streamlit/config.toml says (read only when started from the project folder): going back
           # to recent settings resends references, not the charts the browser already holds
           "--global.maxCachedMessageAge", "20",
           # no full collection after every script run (a pause of up to a second with cached Runs held)
           "--runner.postScriptGC", "false",
           # no page writes bare expressions: no syntax-tree rewrite on each page's first run
           "--runner.magicEnabled", "false",
           # a widget given both a default and a value in session state is intended (the sidebar, lazy tabs)
           "--global.disableWidgetStateDuplicationWarning", "true",
           # the largest upload the importers take (CTXI_MAX_BYTES); Streamlit's own default is 200
           "--server.maxUploadSize", str(upload_limit_mib())]
    for name in hosts:  # DNS rebinding: a WebSocket whose Host is none of these is refused (403)
        cmd += ["--server.allowedHosts", name]
    if args.headless:
        cmd += ["--server.headless", "true"]
    return launch(cmd, env)


def launch(cmd: list[str], env: dict[str, str]) -> int:
    """Start the server; on POSIX this process becomes it and never returns."""
    if os.name == "posix":
        # Become the server (same pid) instead of waiting on a child: killing `ctxi ui` (SIGTERM from a
        # supervisor, `kill PID`) then stops the dashboard, where a child Streamlit outlived its parent
        # and kept serving (issue 35). stdout/stderr are flushed first: exec drops Python's buffers.
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, cmd, env)
    return subprocess.call(cmd, env=env)  # Windows: no exec that keeps the process; a child it stays
