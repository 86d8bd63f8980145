"""Conversations in Postgres: every turn's question, answer, citations and trace, so a
session can be resumed (`finrag chat --session NAME`) and inspected (`finrag sessions`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg

from finrag.agent.state import Exchange, Pending, TurnResult
from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.status import NO_NUMBERS

# A 'system' message with this content marks where /reset started a fresh context: the
# turns before it stay stored (sessions show/export) but are no longer the conversation
# a resumed session remembers.
RESET_MARK = "context reset"
NOT_RECORDED = "not_recorded"  # the status of a turn stored before statuses were kept


@dataclass(frozen=True)
class ConversationInfo:
    name: str
    turns: int
    created_at: datetime
    updated_at: datetime
    last_question: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def open_conversation(conn: psycopg.Connection, name: str) -> int:
    """The conversation's id, created if it is new."""
    row = conn.execute(
        "INSERT INTO conversations (name) VALUES (%s) ON CONFLICT (name) DO NOTHING RETURNING id",
        (name,),
    ).fetchone()
    if row is None:
        row = conn.execute("SELECT id FROM conversations WHERE name = %s", (name,)).fetchone()
    conn.commit()
    return row[0]


def load_history(
    conn: psycopg.Connection, conversation_id: int
) -> tuple[list[Exchange], Pending | None, int]:
    """Past exchanges since the last /reset, a clarification still open after the last
    turn, the next turn number."""
    rows = conn.execute(
        "SELECT turn, role, content, trace FROM messages WHERE conversation_id = %s "
        "ORDER BY turn, id",  # as written: user, assistant, then a reset mark
        (conversation_id,),
    ).fetchall()
    exchanges: list[Exchange] = []
    pending: Pending | None = None
    last_turn = 0
    question = ""
    for turn, role, content, trace in rows:
        last_turn = max(last_turn, turn)
        if role == "system":
            if content == RESET_MARK:
                exchanges, pending = [], None
            continue
        if role == "user":
            question = content
            continue
        trace = trace or {}
        exchanges.append(Exchange(question, trace.get("standalone") or question, content))
        pending = Pending(**trace["pending"]) if trace.get("pending") else None
    return exchanges, pending, last_turn + 1


def load_last_turn(conn: psycopg.Connection, conversation_id: int) -> TurnResult | None:
    """The last stored turn as the REPL shows it (/sources, /trace, /filters); None if the
    conversation has no turn yet."""
    row = conn.execute(
        "SELECT turn, content, citations, trace FROM messages "
        "WHERE conversation_id = %s AND role = 'assistant' ORDER BY turn DESC, id DESC LIMIT 1",
        (conversation_id,),
    ).fetchone()
    if row is None:
        return None
    turn, reply, citations, record = row
    return turn_from_record(turn, reply, citations, record or {})


def turn_from_record(
    turn: int, reply: str, citations: list[dict[str, Any]], record: dict[str, Any]
) -> TurnResult:
    """A stored assistant message back as a TurnResult (fields a stored turn lacks stay empty)."""
    known = {f for f in Citation.__dataclass_fields__}
    return TurnResult(
        turn=turn,
        question=record.get("question", ""),
        standalone=record.get("standalone", ""),
        intent=record.get("intent", "relevant"),
        reply=reply,
        citations=[Citation(**{k: v for k, v in c.items() if k in known}) for c in citations],
        calculations=[_calculation(c) for c in record.get("calculations") or []],
        flags=record.get("flags") or [],
        assumptions=record.get("assumptions") or [],
        filters=record.get("filters") or {},
        sub_questions=record.get("sub_questions") or [],
        trace=record.get("trace") or {"path": [], "steps": [], "total_ms": 0},
        clarifying=bool(record.get("clarifying")),
        status=record.get("status") or _old_status(record),
        numbers=record.get("numbers") or [],
        supported=record.get("supported"),
    )


def _old_status(record: dict[str, Any]) -> str:
    """Turns stored before issue 16 kept only a checker's boolean, which said "verified" of
    numbers merely found in an excerpt: their status is not known now."""
    return NOT_RECORDED if record else NO_NUMBERS


def _calculation(data: dict[str, Any]) -> CalculationOutcome:
    known = set(CalculationOutcome.__dataclass_fields__)
    return CalculationOutcome(**{k: v for k, v in data.items() if k in known})


def save_turn(
    conn: psycopg.Connection, conversation_id: int, result: TurnResult, pending: Pending | None
) -> None:
    """The user's line and the reply, with its citations and trace, in one transaction."""
    record = result.as_dict()
    record.pop("answer")
    record.pop("citations")
    record["pending"] = asdict(pending) if pending else None
    with conn.transaction():
        conn.execute(
            "INSERT INTO messages (conversation_id, turn, role, content) "
            "VALUES (%s, %s, 'user', %s)",
            (conversation_id, result.turn, result.question),
        )
        conn.execute(
            "INSERT INTO messages (conversation_id, turn, role, content, citations, trace) "
            "VALUES (%s, %s, 'assistant', %s, %s, %s)",
            (
                conversation_id,
                result.turn,
                result.reply,
                json.dumps([c.as_dict() for c in result.citations]),
                json.dumps(record, default=str),
            ),
        )
        conn.execute(
            "UPDATE conversations SET updated_at = now() WHERE id = %s", (conversation_id,)
        )


def mark_reset(conn: psycopg.Connection, conversation_id: int, after_turn: int) -> None:
    """Start a fresh context after ``after_turn``; every stored turn is kept."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO messages (conversation_id, turn, role, content) "
            "VALUES (%s, %s, 'system', %s)",
            (conversation_id, after_turn, RESET_MARK),
        )


def clear_conversation(conn: psycopg.Connection, conversation_id: int) -> int:
    """Delete every stored message of the conversation (its name stays); the turns deleted."""
    with conn.transaction():
        rows = conn.execute(
            "DELETE FROM messages WHERE conversation_id = %s RETURNING role", (conversation_id,)
        ).fetchall()
    return sum(1 for (role,) in rows if role == "user")


def session_names(conn: psycopg.Connection, prefix: str = "") -> list[str]:
    """Conversation names starting with ``prefix``, most recent first (shell completion)."""
    rows = conn.execute(
        "SELECT name FROM conversations WHERE starts_with(name, %s) ORDER BY updated_at DESC",
        (prefix,),
    ).fetchall()
    return [name for (name,) in rows]


def list_conversations(conn: psycopg.Connection) -> list[ConversationInfo]:
    rows = conn.execute(
        """
        SELECT c.name, count(m.id) FILTER (WHERE m.role = 'user'), c.created_at, c.updated_at,
               (SELECT content FROM messages u WHERE u.conversation_id = c.id AND u.role = 'user'
                ORDER BY u.turn DESC LIMIT 1)
        FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id
        GROUP BY c.id ORDER BY c.updated_at DESC
        """
    ).fetchall()
    return [ConversationInfo(*row) for row in rows]


def conversation_messages(conn: psycopg.Connection, name: str) -> list[dict[str, Any]] | None:
    """Every message of a conversation, oldest first; None if there is no such conversation."""
    row = conn.execute("SELECT id FROM conversations WHERE name = %s", (name,)).fetchone()
    if row is None:
        return None
    rows = conn.execute(
        "SELECT turn, role, content, citations, trace, created_at FROM messages "
        "WHERE conversation_id = %s ORDER BY turn, id",
        (row[0],),
    ).fetchall()
    keys = ("turn", "role", "content", "citations", "trace", "created_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def remove_conversation(conn: psycopg.Connection, name: str) -> bool:
    with conn.transaction():
        row = conn.execute(
            "DELETE FROM conversations WHERE name = %s RETURNING id", (name,)
        ).fetchone()
    return row is not None
