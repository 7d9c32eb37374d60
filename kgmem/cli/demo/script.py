"""The demo's script: a chat written for kgmem and the drafts an agent writes about it.

``chat.json`` (package data) holds the chat as ``kgmem ingest chat.json`` reads one
(``chat``, ``messages`` with role, text and timestamp; turn ``n`` is message ``n``, cited
``chat:<chat>#<n>``), plus ``drafts``: each a draft in the REST batch-draft format and its
``case`` (fact, preference, routine, event, change: true; invention: a claim the chat does not
state; contradiction: a claim against an accepted one), with an optional ``note`` saying what
to look at; and ``next``: what the printed commands search for, ask a packet for and open.
A draft's case says what it is, never what the gate will answer: the demo prints that.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["DemoDraft", "NextSteps", "Script", "load_script"]

FORMAT = "kgmem-demo/1"


@dataclass(frozen=True)
class DemoDraft:
    case: str
    note: str
    draft: dict[str, Any]  # sent as it is: the JSON an agent sends

    @property
    def title(self) -> str:
        return str(self.draft["title"])

    @property
    def evidence(self) -> list[tuple[int, str]]:
        """Each cited turn and its quote."""
        return [
            (int(str(e["source"]).rpartition("#")[2]), str(e["quote"]))
            for e in self.draft.get("evidence", ())
        ]


@dataclass(frozen=True)
class NextSteps:
    search: str
    task: str
    intent: str
    entity: str


@dataclass(frozen=True)
class Script:
    about: str
    chat: str
    messages: tuple[dict[str, Any], ...]  # as chat.json gives them: no chat, no turn
    drafts: tuple[DemoDraft, ...]
    next: NextSteps

    def turns(self) -> list[dict[str, Any]]:
        """The messages as ``ingest_messages`` takes them: each with its chat and turn."""
        return [{**m, "chat": self.chat, "turn": n} for n, m in enumerate(self.messages)]

    def speaker(self, turn: int) -> str:
        """Who said turn ``turn``: the user, the assistant, or the tool it names."""
        message = self.messages[turn]
        if message["role"] == "tool":
            return f"the {message['tool_name']} tool"
        return "the assistant" if message["role"] == "assistant" else "the user"


def load_script() -> Script:
    """The bundled script (``kgmem/cli/demo/chat.json``)."""
    text = resources.files("kgmem.cli.demo").joinpath("chat.json").read_text(encoding="utf-8")
    data = json.loads(text)
    if data.get("format") != FORMAT:
        raise ValueError(f"chat.json: expected format {FORMAT!r}")
    return Script(
        about=data["about"],
        chat=data["chat"],
        messages=tuple(data["messages"]),
        drafts=tuple(DemoDraft(d["case"], d.get("note", ""), d["draft"]) for d in data["drafts"]),
        next=NextSteps(**data["next"]),
    )
