"""A chat session: the graph run once per turn, with memory in Postgres.

session = ChatSession(store, settings, name="q3-review")
result = session.turn("What was 3M's capex in FY2018?")
result.reply, result.citations, result.trace
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from finrag.agent.graph import TokenMeter, TraceStep, run_graph
from finrag.agent.memory import (
    clear_conversation,
    load_history,
    load_last_turn,
    mark_reset,
    open_conversation,
    save_turn,
    session_names,
)
from finrag.agent.nodes import ChatGraph
from finrag.agent.state import Exchange, Pending, TurnResult, TurnState
from finrag.answer.pipeline import Asker
from finrag.config import Settings
from finrag.db import Store
from finrag.llm import LLM, get_llm
from finrag.personas import Persona, active_persona, persona_name
from finrag.personas.kpis import kpis_for_answers


def new_session_name() -> str:
    return "chat-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


class ChatSession:
    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        name: str | None = None,
        interactive: bool = True,
        llm: LLM | None = None,
        on_token: Callable[[str], None] | None = None,
        on_event: Callable[[str], None] | None = None,
        on_step: Callable[[TraceStep], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.name = name or new_session_name()
        self.interactive = interactive
        self.meter = TokenMeter()
        self.llm = self.meter.wrap(llm or get_llm(settings))
        self.asker = Asker(store, settings, llm=self.llm)
        self.graph = ChatGraph(
            self.asker,
            self.llm,
            history_turns=settings.chat.history_turns,
            on_token=on_token,
            on_event=on_event,
        )
        self.on_step = on_step
        self.current: TurnState | None = None
        with store.connect() as conn:
            self.conversation_id = open_conversation(conn, self.name)
            self.history, self.pending, self.next_turn = load_history(conn, self.conversation_id)
            # The last completed turn, for /sources, /trace and /filters: a resumed session
            # shows its last stored turn; a cancelled turn leaves it as it was.
            self.last: TurnResult | None = load_last_turn(conn, self.conversation_id)
        self.stored_turns = self.next_turn - 1

    @property
    def resumed_turns(self) -> int:
        return len(self.history)

    def turn(self, question: str) -> TurnResult:
        """One user line through the graph; the result is saved before it is returned."""
        state = TurnState(
            question=question,
            history=list(self.history),
            interactive=self.interactive,
            pending=self.pending,
        )
        self.current = state  # the turn under way, for a progress display's on_step
        trace = run_graph(
            self.graph.nodes, "contextualize", state, self.meter, on_step=self.on_step
        )
        # Calls the embedded model answered for Ollama, said once (an answer's are there).
        fell = dict.fromkeys(f["words"] for step in trace.steps for f in step.fallbacks)
        state.flags += [w for w in fell if not any(w in flag for flag in state.flags)]
        result = TurnResult(
            turn=self.next_turn,
            question=question,
            standalone=state.standalone,
            intent=state.intent or "relevant",
            reply=state.reply,
            citations=state.citations,
            calculations=state.calculations,
            flags=state.flags,
            assumptions=state.assumptions,
            status=state.final_status(),
            numbers=state.numbers,
            supported=state.supported,
            filters=state.filters.as_dict() if state.filters else {},
            sub_questions=state.sub_questions,
            trace=trace.as_dict(),
            clarifying=state.next_pending is not None,
            series=[s for a in (state.answer, *state.sub_answers) if a for s in a.series],
            plan=state.plan,
        )
        if (persona := self.persona) is not None:  # its KPIs for what the turn asked about
            with self.store.connect() as conn:
                result.persona = kpis_for_answers(conn, persona, [state.answer, *state.sub_answers])
        if state.assumptions:
            result.reply = "Assumed: " + " ".join(state.assumptions) + "\n\n" + result.reply
        with self.store.connect() as conn:
            save_turn(conn, self.conversation_id, result, state.next_pending)
        self.history.append(Exchange(question, state.standalone, result.reply))
        self.pending = state.next_pending
        self.next_turn += 1
        self.stored_turns += 1
        self.last = result
        return result

    @property
    def persona(self) -> Persona | None:
        """Who the answers are written for (answer.persona), or None."""
        return active_persona(self.settings)

    def set_persona(self, name: str | None) -> None:
        """Write the next answers for ``name``'s reader ("off" or None: no one); an
        unknown name is a UsageError listing the personas."""
        answer = self.settings.answer.model_copy(update={"persona": persona_name(name)})
        self.settings = self.settings.model_copy(update={"answer": answer})
        self.asker.settings = self.settings

    def reset(self) -> None:
        """Start a fresh context: later turns no longer see the earlier ones, which stay
        stored (`finrag sessions show`, `/sources`); a resumed session starts fresh too."""
        if self.stored_turns:
            with self.store.connect() as conn:
                mark_reset(conn, self.conversation_id, self.next_turn - 1)
        self.history, self.pending = [], None

    def forget(self) -> int:
        """Delete this conversation's stored turns (the name stays); the turns deleted."""
        with self.store.connect() as conn:
            deleted = clear_conversation(conn, self.conversation_id)
        self.history, self.pending, self.next_turn, self.last = [], None, 1, None
        self.stored_turns = 0
        return deleted


__all__ = ["ChatSession", "Pending", "new_session_name", "session_names"]
