"""Conversations in Postgres: every turn's question, answer, citations and trace, so a
session can be resumed (`finrag chat --session NAME`) and inspected (`finrag sessions`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg

from finrag.agent.state import Exchange, Pending, TurnResult


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
    """Past exchanges, a clarification still open after the last turn, the next turn number."""
    rows = conn.execute(
        "SELECT turn, role, content, trace FROM messages WHERE conversation_id = %s "
        "ORDER BY turn, role DESC",  # 'user' before 'assistant' in each turn
        (conversation_id,),
    ).fetchall()
    exchanges: list[Exchange] = []
    pending: Pending | None = None
    last_turn = 0
    question = ""
    for turn, role, content, trace in rows:
        last_turn = max(last_turn, turn)
        if role == "user":
            question = content
            continue
        trace = trace or {}
        exchanges.append(Exchange(question, trace.get("standalone") or question, content))
        pending = Pending(**trace["pending"]) if trace.get("pending") else None
    return exchanges, pending, last_turn + 1


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


def clear_conversation(conn: psycopg.Connection, conversation_id: int) -> None:
    with conn.transaction():
        conn.execute("DELETE FROM messages WHERE conversation_id = %s", (conversation_id,))


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
        "WHERE conversation_id = %s ORDER BY turn, role DESC",
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
