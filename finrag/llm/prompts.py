"""Prompts are files in ``prompts/`` (see ``finrag.datadir``), one per step, loaded by name.

A file has a ``## system`` and/or a ``## user`` section; ``$name`` placeholders are
filled with ``string.Template`` (braces in JSON examples need no escaping), and a
missing value is an error rather than a silent gap. Prompt changes show in diffs, and
each prompt's hash is recorded with evaluation runs.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from string import Template

from finrag.datadir import data_dir
from finrag.llm.base import Message

_SECTION = re.compile(r"^## (system|user)\s*$", re.M)


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str | None
    user: str | None

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.system}\0{self.user}".encode()).hexdigest()[:12]

    def messages(self, **values: object) -> list[Message]:
        out: list[Message] = []
        if self.system:
            out.append({"role": "system", "content": Template(self.system).substitute(values)})
        if self.user:
            out.append({"role": "user", "content": Template(self.user).substitute(values)})
        return out


@cache
def load_prompt(name: str) -> Prompt:
    path = data_dir("prompts") / f"{name}.md"
    text = path.read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if not sections:
        raise ValueError(f"{path} has no '## system' or '## user' section")
    return Prompt(name, sections.get("system"), sections.get("user"))


def prompt_digests() -> dict[str, str]:
    """Every prompt's short hash, for the record of an evaluation run."""
    return {p.stem: load_prompt(p.stem).digest for p in sorted(data_dir("prompts").glob("*.md"))}
