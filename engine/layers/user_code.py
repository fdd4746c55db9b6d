"""What a config's `use: package.module:Class` may name, decided before anything is imported.

A config YAML can come from anyone ("a file someone sends you", SECURITY.md), and `use:` names code
that the replay imports and calls. Calling first and checking the type after ran `os:system` with the
YAML's kwargs. The rule now:

1. Nothing from Python's standard library (`sys.stdlib_module_names`): it defines no middleware, and
   it holds `os.system`, `builtins.open`, `subprocess.Popen`, modules that act when imported
   (`antigravity`, `this`).
2. The module is found on the Python path **without importing it or its parent packages**
   (`locate`: the import system's own finders, asked directly), and its source is read, not run:
   `Class` must be a class whose bases lead, statement by statement (`class X(Base)`, `from m import
   Base`, `m.Base`, `Base[...]`, re-exports), to one of the allowed bases. A function, an assignment,
   an instance, a name the source does not define, a class whose bases lead elsewhere: refused, the
   module never imported — so a module that acts when imported is not, unless it really defines such
   a class (and then the dashboard asks first: SECURITY.md).
   A module that is already imported is asked for the name itself (importing it again runs nothing;
   a lazy export of its own, PEP 562 `__getattr__`, is its own code, already trusted by running).
3. After the import, the object is checked again (a class, its MRO holding an allowed base) before it
   is called.

Allowed bases: LangChain's `AgentMiddleware` for a `middleware:` entry; for a kwargs value `{use:,
kwargs:}` also LangChain's `ContextEdit` (`ClearToolUsesEdit`), a chat model (`BaseChatModel`) and
our `OfflineSummarizer` (docs/config.md, *Your own middleware*).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.context_editing import ContextEdit
from langchain_core.language_models import BaseChatModel

from engine.base.errors import ConfigError
from engine.summarizers.offline import OfflineSummarizer

MIDDLEWARE_BASES: tuple[type, ...] = (AgentMiddleware,)
VALUE_BASES: tuple[type, ...] = (AgentMiddleware, ContextEdit, BaseChatModel, OfflineSummarizer)
# Following a class's bases through re-exports visits a few modules; more than this is a loop or a maze.
MAX_STEPS = 60
MAX_SOURCE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Located:
    """Where a module would be imported from, found without importing it."""

    name: str
    file: str | None  # its source file (a package's __init__.py); None for a built-in or namespace package
    module: ModuleType | None  # the module itself when it is already imported (importing it again runs nothing)
    is_package: bool


@dataclass(frozen=True)
class UsePlan:
    """A `use:` that passed the static check: what would be imported and built."""

    key: str  # middleware.0, middleware.0.kwargs.edits.0
    use: str  # package.module:Class
    module: str
    file: str | None
    imported: bool  # already imported in this process (no module code runs for it)

    def describe(self) -> str:
        where = f"{self.module} is already imported" if self.imported else (f"imports {self.module} from {self.file}" if self.file
                                                          else f"imports {self.module}")
        return f"{self.use} ({where})"


def split_use(use: str) -> tuple[str, list[str]]:
    module, _, attr = use.partition(":")
    return module, attr.split(".")


def base_names(bases: tuple[type, ...]) -> str:
    names = [b.__name__ for b in bases]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def check_use(use: str, *, key: str, bases: tuple[type, ...] = MIDDLEWARE_BASES) -> UsePlan:
    """The static check (rules 1 and 2 above): a UsePlan, or a ConfigError saying why, nothing imported."""
    module, attrs = split_use(use)
    top = module.partition(".")[0]
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        raise ConfigError(f"{use} is refused: {top!r} is Python's standard library, which defines no "
                          f"{base_names(bases)}; nothing was imported", key=f"{key}.use")
    found = locate(module)
    if found is None:
        raise ConfigError(f"cannot import {module!r} (ModuleNotFoundError: No module named {_missing(module)!r})",
                          key=f"{key}.use")
    # what the refusal says about the import it did not do
    outcome = (f"{module} ({found.file}) was not imported" if found.module is None and found.file
               else f"{module} was not imported" if found.module is None else "nothing was called")
    checker = _Checker(bases)
    try:
        bindings = checker.name_in(module, attrs[0])
        for attr in attrs[1:]:
            bindings = [inner for b in bindings for inner in checker.member(b, attr)]
        ok = any(checker.derives(b) for b in bindings)
    except _Unclear as exc:
        raise ConfigError(f"{use} is refused: {exc}; {outcome}", key=f"{key}.use") from None
    if not ok:
        what = _what(bindings, module, ".".join(attrs))
        if not bindings and found.module is None and checker.unreadable(module):
            what = "its module has no Python source to check it in"
        raise ConfigError(f"{use} is refused: {what}, not a class deriving from {base_names(bases)}; {outcome}",
                          key=f"{key}.use")
    return UsePlan(key=key, use=use, module=module, file=found.file, imported=found.module is not None)


def _missing(module: str) -> str:
    """The first dotted prefix of `module` that cannot be found (what ModuleNotFoundError would name)."""
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        if locate(".".join(parts[:i])) is None:
            return ".".join(parts[:i])
    return module


def article(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _what(bindings: list[object], module: str, name: str) -> str:
    if not bindings:
        return f"{module} defines no {name!r}"
    first = bindings[0]
    if isinstance(first, _Other):
        return f"{name} is {first.what}"
    if isinstance(first, _Module):
        return f"{name} is a module"
    if isinstance(first, _Live):
        obj = first.obj
        return f"{name} is a class ({obj.__module__}.{obj.__qualname__})" if isinstance(obj, type) else (
            f"{name} is {article(type(obj).__name__)}")
    return f"{name} is a class whose bases lead elsewhere"


def derives(cls: Any, bases: tuple[type, ...]) -> bool:
    """A class whose MRO holds one of `bases` (no virtual subclasses: `register` cannot make one)."""
    return isinstance(cls, type) and any(b in cls.__mro__ for b in bases)


# -- finding a module without importing it --------------------------------------------------------
def locate(name: str) -> Located | None:
    """Where module `name` would be imported from. Parents are looked up the same way, never imported:
    the import system's finders (`sys.meta_path`) are asked for each dotted level with the parent's
    search path, which is what `importlib.import_module` does before it runs anything."""
    path: list[str] | None = None
    parts = name.split(".")
    for i in range(len(parts)):
        full = ".".join(parts[: i + 1])
        last = i == len(parts) - 1
        module = sys.modules.get(full)
        if module is not None:
            locations = getattr(module, "__path__", None)
            if last:
                return Located(full, getattr(module, "__file__", None), module, locations is not None)
            if locations is None:
                return None
            path = list(locations)
            continue
        spec = _find_spec(full, path)
        if spec is None:
            return None
        if last:
            file = spec.origin if spec.has_location else None
            return Located(full, file, None, spec.submodule_search_locations is not None)
        if spec.submodule_search_locations is None:
            return None
        path = list(spec.submodule_search_locations)
    return None


def _find_spec(name: str, path: list[str] | None) -> Any:
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(name, path)
        except (ImportError, ValueError, OSError):  # a finder that cannot say: ask the next one
            continue
        if spec is not None:
            return spec
    return None


# -- reading source instead of running it ---------------------------------------------------------
class _Unclear(Exception):
    """The source cannot be followed far enough to tell (too many steps)."""


@dataclass(frozen=True)
class _Live:
    obj: Any  # an attribute of an already imported module


@dataclass(frozen=True)
class _Module:
    name: str


@dataclass(frozen=True)
class _Class:
    module: str
    node: ast.ClassDef


@dataclass(frozen=True)
class _Other:
    what: str  # "a function", "assigned a value, ..."


class _Checker:
    """Follows names through module sources (parsed, never run) and imported modules (looked up)."""

    def __init__(self, bases: tuple[type, ...]) -> None:
        self.bases = bases
        self.steps = 0
        self._trees: dict[str, tuple[Located, ast.Module] | None] = {}

    def _step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Unclear("its definition could not be followed (too many re-exports)")

    def unreadable(self, module: str) -> bool:
        return self._tree(module) is None

    def _tree(self, module: str) -> tuple[Located, ast.Module] | None:
        if module not in self._trees:
            self._trees[module] = _parse(module)
        return self._trees[module]

    def name_in(self, module: str, name: str) -> list[object]:
        """Every binding of `name` at the top level of `module` (conditional ones included)."""
        self._step()
        live = sys.modules.get(module)
        if live is not None:
            if name in vars(live):
                return [_Live(vars(live)[name])]
            if locate(f"{module}.{name}") is not None:
                return [_Module(f"{module}.{name}")]
            if callable(vars(live).get("__getattr__")):  # PEP 562 lazy exports of a module already running
                try:
                    return [_Live(getattr(live, name))]
                except Exception:  # AttributeError, or the lazy import failing: no such class
                    return []
            return []
        parsed = self._tree(module)
        if parsed is None:
            return []
        found, tree = parsed
        package = module if found.is_package else module.rpartition(".")[0]
        out: list[object] = []
        stars: list[str] = []
        for stmt in _top_level(tree.body):
            if isinstance(stmt, ast.ClassDef) and stmt.name == name:
                out.append(_Class(module, stmt))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                out.append(_Other("a function"))
            elif isinstance(stmt, ast.ImportFrom):
                source = _absolute(stmt.module, stmt.level, package)
                for alias in stmt.names if source is not None else ():
                    if alias.name == "*":
                        stars.append(str(source))
                    elif (alias.asname or alias.name) == name:
                        sub = f"{source}.{alias.name}"
                        out.extend([_Module(sub)] if locate(sub) is not None else self.name_in(str(source), alias.name))
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname == name or (alias.asname is None and alias.name.partition(".")[0] == name):
                        out.append(_Module(alias.name if alias.asname else name))
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    if isinstance(stmt.value, (ast.Name, ast.Attribute)):  # an alias: `Mine = Theirs`
                        out.extend(self.expr(module, stmt.value))
                    else:
                        out.append(_Other("assigned a value, not defined by a class statement"))
        for source in stars if not out else ():
            out.extend(self.name_in(source, name))
        if not out and locate(f"{module}.{name}") is not None:
            out.append(_Module(f"{module}.{name}"))
        return out

    def expr(self, module: str, node: ast.expr) -> list[object]:
        """What an expression in `module` (a base class, an alias) stands for."""
        if isinstance(node, ast.Subscript):  # AgentMiddleware[StateT, ContextT]
            return self.expr(module, node.value)
        if isinstance(node, ast.Name):
            return self.name_in(module, node.id)
        if isinstance(node, ast.Attribute):
            return [m for owner in self.expr(module, node.value) for m in self.member(owner, node.attr)]
        return []

    def member(self, owner: object, attr: str) -> list[object]:
        self._step()
        if isinstance(owner, _Module):
            return self.name_in(owner.name, attr)
        if isinstance(owner, _Live):
            if isinstance(owner.obj, ModuleType):
                return self.name_in(owner.obj.__name__, attr)
            if isinstance(owner.obj, type) and attr in vars(owner.obj):
                return [_Live(vars(owner.obj)[attr])]
            return []
        if isinstance(owner, _Class):
            return [_Class(owner.module, n) for n in owner.node.body if isinstance(n, ast.ClassDef) and n.name == attr]
        return []

    def derives(self, binding: object) -> bool:
        self._step()
        if isinstance(binding, _Live):
            return derives(binding.obj, self.bases)
        if isinstance(binding, _Class):
            return any(self.derives(b) for base in binding.node.bases for b in self.expr(binding.module, base))
        return False


def _parse(module: str) -> tuple[Located, ast.Module] | None:
    found = locate(module)
    if found is None or found.file is None or not found.file.endswith(".py"):
        return None  # a built-in, an extension module or a namespace package: no source to read
    try:
        with open(found.file, "rb") as fh:
            data = fh.read(MAX_SOURCE_BYTES + 1)
        if len(data) > MAX_SOURCE_BYTES:
            return None
        return found, ast.parse(data, filename=found.file)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _absolute(module: str | None, level: int, package: str) -> str | None:
    """The module a `from ... import` names: `from .x import Y` inside package `a.b` is `a.b.x`."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, *([module] if module else [])]) or None


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A module's top-level statements, including those inside top-level if/try/with blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            yield from _top_level(stmt.body)
            for handler in stmt.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(stmt.orelse)
            yield from _top_level(stmt.finalbody)
        elif isinstance(stmt, ast.With):
            yield from _top_level(stmt.body)


__all__ = ["MIDDLEWARE_BASES", "VALUE_BASES", "Located", "UsePlan", "check_use", "derives", "locate"]
