"""Webots' VRML97-style files read into nodes: the syntax only, nothing of what the
nodes mean (:mod:`.world` imports motors from them).

What is read: ``#`` comments; nodes with fields (``Type { field value ... }``); numbers,
number groups (``0 1 0 1.57``), strings, ``TRUE``/``FALSE``, ``NULL``, ``[ ... ]``
lists; ``DEF``/``USE``; ``PROTO`` definitions (the interface's defaults and the body) and
``EXTERNPROTO`` lines (the URL by PROTO name); ``field IS interfaceField``
(:class:`IsRef`); Webots' saved ``hidden`` fields (skipped). Template code
(``%< ... >%``, and the older ``%{ ... }%``) is not evaluated: a value computed by it is a
:class:`Template`, a statement is skipped, and a node written inside a branch of an
``if`` or ``switch`` knows the line of that branch (:attr:`Node.branch`). A syntax error
is a :class:`ConfigError` naming the file and the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.config import ConfigError


@dataclass
class Node:
    """One node: its type, fields (name -> value) and where it starts."""

    type: str
    fields: dict[str, Any]
    line: int
    use: bool = False  #: a ``USE`` of a DEF'd node (a copy: not walked again)
    #: the file that wrote it: its PROTO declarations are the ones its type is looked up in
    scope: Parser | None = field(default=None, repr=False, compare=False)
    #: the line of the template statement opening the branch it is written in (an
    #: ``if``'s or ``else``'s), which Webots may not take; None: in none
    branch: int | None = field(default=None, compare=False)

    @property
    def where(self) -> str:
        """``line N``, or ``File.proto, line N`` for a node of another file."""
        return self.at(self.line)

    def at(self, line: int) -> str:
        """``line`` of the file that wrote this node, said as :attr:`where` is."""
        origin = self.scope.origin if self.scope is not None else ""
        return f"{origin + ', ' if origin else ''}line {line}"

    def label(self, name: str | None = None) -> str:
        named = f" {name!r}" if name else ""
        return f"{self.type}{named} ({self.where})"


@dataclass(frozen=True)
class IsRef:
    """``field IS interfaceField`` inside a PROTO body."""

    name: str


@dataclass(frozen=True)
class Template:
    """A value computed by template code (``%<= ... >%``): not evaluated."""

    text: str


@dataclass
class Proto:
    """A PROTO defined in the file: its interface defaults and body."""

    name: str
    defaults: dict[str, Any]
    body: list[Any]


_TOKEN = re.compile(r"""
    (?P<space>[\s,]+) | (?P<comment>\#[^\n]*)
  | (?P<template>%<.*?>%|%\{.*?\}%)
  | (?P<string>"(?:\\.|[^"\\])*")
  | (?P<punct>[{}\[\]])
  | (?P<word>[^\s,{}\[\]"\#]+)
""", re.S | re.X)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_INTERFACE_KEYWORDS = {"field", "vrmlField", "hiddenField", "deprecatedField",
                       "unconnectedField"}


#: Strings and comments of template code (their braces and words do not count).
_JS_INERT = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`"""
                       r"|//[^\n]*|/\*.*?\*/)", re.S)
_LUA_INERT = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|--[^\n]*)""")
_JS_BRANCH = re.compile(r"\b(if|else|switch)\b")


class _Branches:
    """The template blocks open where the parser is, from the template statements seen:
    JavaScript's braces (``%< if (...) { >%``, ``%< } else { >%``, ``%< } >%``) and Lua's
    words (``%{ if ... then }%``, ``%{ else }%``, ``%{ end }%``). A block opened by
    ``if``, ``else`` or ``switch`` is a branch, which Webots may not take; a loop's or a
    function's is not."""

    def __init__(self) -> None:
        #: per open block, innermost last: the line of the statement that opened the
        #: branch, or None for a block that is not one
        self.blocks: list[int | None] = []

    @property
    def innermost(self) -> int | None:
        """The line of the innermost branch open (None: in no branch)."""
        return next((b for b in reversed(self.blocks) if b is not None), None)

    def statement(self, text: str, line: int) -> None:
        """A template statement at ``line``; expressions (``%<= >%``, ``%{= }%``) and
        anything else open or close nothing."""
        if text.startswith("%<") and not text.startswith("%<="):
            self.javascript(_JS_INERT.sub(" ", text[2:-2]), line)
        elif text.startswith("%{") and not text.startswith("%{="):
            self.lua(_LUA_INERT.sub(" ", text[2:-2]), line)

    def javascript(self, code: str, line: int) -> None:
        start = 0
        for brace in re.finditer(r"[{}]", code):
            if brace.group() == "{":
                before = code[start:brace.start()]
                self.blocks.append(line if _JS_BRANCH.search(before) else None)
            elif self.blocks:
                self.blocks.pop()
            start = brace.end()

    def lua(self, code: str, line: int) -> None:
        loops = 0  # for/while whose "do" is still to come
        for word in re.findall(r"[A-Za-z_]\w*", code):
            if word == "if":
                self.blocks.append(line)
            elif word in ("else", "elseif") and self.blocks and self.blocks[-1] is not None:
                self.blocks[-1] = line  # the next branch of the same if
            elif word in ("for", "while"):
                self.blocks.append(None)
                loops += 1
            elif word == "do" and loops:
                loops -= 1
            elif word in ("do", "function", "repeat"):
                self.blocks.append(None)
            elif word in ("end", "until") and self.blocks:
                self.blocks.pop()


class Parser:
    """One file's text as tokens, and what :meth:`parse_file` found in it: its ``DEF``
    nodes, its ``PROTO`` definitions and ``EXTERNPROTO`` declarations. ``source`` names
    the file in messages; ``origin`` is ``""`` for the file given, else the PROTO file's
    name its nodes are said to be in (``Arm.proto, line 3``)."""

    def __init__(self, text: str, source: str, origin: str = "") -> None:
        self.source = source
        self.origin = origin  #: "" for the file given, else the PROTO file's name
        #: the Webots release of the ``#VRML_SIM`` header (``(2023, "b")``); None: none
        self.release = release(text)
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, line)
        line = 1
        pos = 0
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None:
                raise self.error(f"unexpected character {text[pos]!r}", line)
            kind = match.lastgroup or ""
            if kind not in ("space", "comment"):
                self.tokens.append((kind, match.group(), line))
            line += match.group().count("\n")
            pos = match.end()
        self.i = 0
        self.branches = _Branches()
        self.defs: dict[str, Node] = {}
        self.protos: dict[str, Proto] = {}
        #: PROTO name -> (URL, line) of the file's EXTERNPROTO declarations
        self.externs: dict[str, tuple[str, int]] = {}

    def error(self, reason: str, line: int | None = None) -> ConfigError:
        at = f" (line {line})" if line is not None else ""
        return ConfigError(f"{self.source}: syntax error{at}: {reason}")

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def at(self, text: str) -> bool:
        """True if the next token is ``text``."""
        token = self.peek()
        return token is not None and token[1] == text

    def take(self, expected: str | None = None, what: str = "more") -> tuple[str, str, int]:
        """The next token; with ``expected``, it must be that text."""
        token = self.peek()
        if token is None:
            raise self.error("unexpected end of file (expected "
                             f"{repr(expected) if expected else what})")
        if expected is not None and token[1] != expected:
            raise self.error(f"expected {expected!r}, found {token[1]!r}", token[2])
        self.i += 1
        return token

    # ---------------------------------------------------------------- file

    def parse_file(self) -> list[Any]:
        """The file's top-level nodes (its PROTO definitions go to :attr:`protos`)."""
        nodes: list[Any] = []
        while (token := self.peek()) is not None:
            kind, text, line = token
            if kind == "template":
                self.i += 1
                self.branches.statement(text, line)
            elif text in ("EXTERNPROTO", "IMPORTABLE"):
                self.take()
                if text == "IMPORTABLE":
                    self.take("EXTERNPROTO")
                _, url, line = self.take(what="a URL")
                url = _unquote(url) if url.startswith('"') else url
                self.externs[Path(url.split("/")[-1]).stem] = (url, line)
            elif text == "PROTO":
                self.parse_proto()
            else:
                nodes.append(self.parse_value_node())
        return nodes

    def parse_proto(self) -> None:
        self.take("PROTO")
        name = self.take()[1]
        self.take("[")
        defaults: dict[str, Any] = {}
        while self.peek() is not None and not self.at("]"):
            kind, text, line = self.take()
            if kind == "template":
                self.branches.statement(text, line)
                continue
            if text not in _INTERFACE_KEYWORDS:
                raise self.error(f"PROTO {name}: expected a field declaration, found "
                                 f"{text!r}", line)
            self.take()  # the type, e.g. SFFloat
            if self.at("{"):
                self.skip_block("{", "}")  # allowed values, e.g. SFString{"a", "b"}
            field_name = self.take()[1]
            defaults[field_name] = self.parse_value()
        self.take("]")
        self.take("{")
        self.protos[name] = Proto(name, defaults, self.items("}", self.parse_value_node))

    def items(self, closing: str, parse: Callable[[], Any]) -> list[Any]:
        """``parse()`` up to ``closing`` (consumed); template statements are skipped."""
        items = []
        while (token := self.peek()) is not None and token[1] != closing:
            if token[0] == "template":
                self.i += 1
                self.branches.statement(token[1], token[2])
            else:
                items.append(parse())
        self.take(closing)
        return items

    def skip_block(self, opening: str, closing: str) -> None:
        depth = 0
        while True:
            text = self.take()[1]
            depth += (text == opening) - (text == closing)
            if depth == 0:
                return

    # ---------------------------------------------------------------- nodes

    def parse_value_node(self) -> Node:
        value = self.parse_value()
        if not isinstance(value, Node):
            token = self.tokens[self.i - 1]
            raise self.error(f"expected a node, found {token[1]!r}", token[2])
        return value

    def parse_node(self, type_name: str, line: int) -> Node:
        self.take("{")
        branch = self.branches.innermost
        fields: dict[str, Any] = {}
        while True:
            token = self.peek()
            if token is None:
                raise self.error(f"{type_name} (line {line}): unexpected end of file "
                                 "(expected a field or '}')")
            kind, text, field_line = token
            if text == "}":
                self.i += 1
                return Node(type_name, fields, line, scope=self, branch=branch)
            self.i += 1
            if kind == "template":
                self.branches.statement(text, field_line)
                continue
            if kind != "word":
                raise self.error(f"{type_name}: expected a field name, found {text!r}",
                                 field_line)
            if text == "hidden":  # Webots' saved state (hidden position_0_0 ...)
                self.take()
                self.parse_value()
                continue
            fields[text] = self.parse_value()

    def parse_value(self) -> Any:
        kind, text, line = self.take(what="a value")
        if kind == "template":
            self.branches.statement(text, line)
            return Template(text)
        if kind == "string":
            return _unquote(text)
        if text == "[":
            return self.items("]", self.parse_value)
        if text in ("TRUE", "FALSE"):
            return text == "TRUE"
        if text == "NULL":
            return None
        if text == "IS":
            return IsRef(self.take()[1])
        if text == "DEF":
            name = self.take()[1]
            node = self.parse_value_node()
            self.defs[name] = node
            return node
        if text == "USE":
            name = self.take()[1]
            if name not in self.defs:
                raise self.error(f"USE {name}: no DEF {name} before it", line)
            original = self.defs[name]
            return Node(original.type, original.fields, line, use=True, scope=original.scope)
        if _NUMBER.match(text):
            numbers = [float(text)]
            while (token := self.peek()) is not None and token[0] == "word" \
                    and _NUMBER.match(token[1]):
                numbers.append(float(self.take()[1]))
            return numbers[0] if len(numbers) == 1 else tuple(numbers)
        if kind == "word" and self.at("{"):
            return self.parse_node(text, line)
        raise self.error(f"unexpected {text!r}", line)


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


# --------------------------------------------------------------------------- import


def release(text: str) -> tuple[int, str] | None:
    """The Webots release a file was written by, from its ``#VRML_SIM R2023b`` header:
    ``(2023, "b")``; None without one."""
    found = re.match(r"#VRML_SIM R(\d{4})([a-z])", text)
    return (int(found.group(1)), found.group(2)) if found is not None else None
