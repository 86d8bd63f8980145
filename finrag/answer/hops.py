"""Dependent hops answered in order (the plan: finrag.answer.hop_plan): each hop is one
question for the Asker (the facts route first, as any question), it cites, and what it
found fills the next hop's slot. A hop that is refused, or whose answer names nothing
to pass on, stops the chain: the answer gives what was found so far and says where it
stopped. The hops' citations become one numbering, so each [n] of the combined answer
still points at its source."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from finrag.answer.citations import MARK, Citation
from finrag.answer.hop_plan import Hop, HopPlan, has_period, without_period
from finrag.answer.numbers import material, parse_amounts, without_dates
from finrag.answer.result import Answer
from finrag.answer.segments import member_words
from finrag.answer.status import FOUND_IN_SOURCE, NO_NUMBERS, REFUSED, UNSUPPORTED, VERIFIED
from finrag.db import Store
from finrag.errors import FinragError
from finrag.llm import LLMError
from finrag.retrieve import Retriever
from finrag.retrieve.context import ContextChunk

Ask = Callable[[str, Hop], Answer]  # one hop's question -> the Asker's answer
_WEAKEST_FIRST = (UNSUPPORTED, FOUND_IN_SOURCE, VERIFIED)

ANSWERED, REFUSED_HOP, FAILED, SKIPPED = "answered", "refused", "failed", "skipped"


@dataclass
class HopRun:
    hop: Hop
    question: str  # as asked: the slot filled
    status: str = SKIPPED
    answer: Answer | None = None
    entity: str | None = None  # what it passes on ("Compute And Networking", "Netflix")
    phrase: str | None = None  # how the next hop names it ("NVIDIA's Compute And ... segment")
    how: str = ""  # how the entity was read from the answer
    reason: str = ""  # why it stopped the chain
    carried: str = ""  # the period phrase it was given, not one its clause wrote
    repair: str = ""  # the corrected call, when its first try was refused


@dataclass
class Chain:
    answer: Answer  # the combined answer, one numbering of citations
    runs: list[HopRun]
    planner: str
    rows: list[dict[str, Any]] = field(default_factory=list)  # --json's "plan"

    @property
    def stopped_at(self) -> int | None:
        return next((r.hop.n for r in self.runs if r.status in (REFUSED_HOP, FAILED)), None)

    @property
    def partial(self) -> bool:
        """Some hop answered and a later one did not."""
        return self.stopped_at is not None and _found(self.runs[0])


def _found(run: HopRun) -> bool:
    """The hop has an answer to show: answered, or answered with nothing read from it to
    pass on (the chain stops there, but what it found stands, cited)."""
    if run.status == ANSWERED:
        return True
    return run.status == FAILED and run.answer is not None and not run.answer.refused


def run_chain(store: Store, plan: HopPlan, question: str, ask: Ask) -> Chain:
    """Answer the hops in order; stop at the first that fails."""
    runs: list[HopRun] = []
    found: dict[int, HopRun] = {}
    stopped = False
    for hop in plan.hops:
        run = HopRun(hop, hop.question)
        runs.append(run)
        if stopped:
            continue
        run.question = _filled(hop.question, found)
        run.carried = hop.carried
        if hop.depends_on and not has_period(run.question):
            # The question names no period: the hop asks about the one its source answered.
            when = _period_of(found[hop.depends_on[0]].answer)
            if when:
                run.question = f"{run.question.rstrip('?. ')} {when}?"
                run.carried = when
        try:
            run.answer = ask(run.question, hop)
            if run.answer.refused and run.carried:
                _ask_again(run, ask)
        except (LLMError, FinragError) as exc:
            if hop.n == 1:
                raise  # nothing found yet: the error is the command's, as for one question
            run.status, run.reason = FAILED, getattr(exc, "message", str(exc))
            stopped = True
            continue
        if run.answer.refused:
            run.status = REFUSED_HOP
            run.reason = f"refused ({run.answer.refusal})" + (
                f"; {run.repair}" if run.repair else ""
            )
            stopped = True
            continue
        run.status = ANSWERED
        if hop.slot is not None and any(hop.n in h.depends_on for h in plan.hops):
            read = _read_entity(store, run, plan)
            if isinstance(read, str):
                run.status, run.reason = FAILED, read
                stopped = True
                continue
            found[hop.n] = run
    combined = _combined(question, runs)
    chain = Chain(combined, runs, plan.planner)
    chain.rows = [_row(r, combined) for r in runs]
    return chain


def _ask_again(run: HopRun, ask: Ask) -> None:
    """One corrected call for a hop refused for a period it was given, not one it wrote:
    the same question without it (the store's latest for that measure). Its answer states
    its own period; the plan says both tries."""
    first = run.answer
    assert first is not None
    alternate = without_period(run.question, run.carried)
    if alternate == run.question:  # the phrase is not where it was put: nothing to drop
        return
    again = ask(alternate, run.hop)
    tried = f"asked first with “{run.carried}” (refused: {first.refusal})"
    if again.refused:
        run.repair = f"{tried}, then without it (refused: {again.refusal})"
        return
    run.repair = f"{tried}; answered without that period"
    run.question, run.answer = alternate, again
    again.flags.append(f"repaired: {run.repair}")


def _period_of(answer: Answer | None) -> str:
    """The period a facts answer is for, as a question names it: its latest values'."""
    values = [v for v in (answer.fact_values if answer else []) if v.get("fiscal_year")]
    if not values:
        return ""
    year = max(v["fiscal_year"] for v in values)
    latest = [v for v in values if v["fiscal_year"] == year]
    quarters = {v.get("fiscal_quarter") for v in latest if v.get("months") == 3}
    if len(quarters) == 1 and None not in quarters:
        return f"in Q{quarters.pop()} FY{year}"
    return f"in fiscal {year}"


def _filled(template: str, found: dict[int, HopRun]) -> str:
    def fill(m: re.Match) -> str:
        run = found[int(m.group(1))]
        return f"{run.phrase}'s" if m.group(2) else str(run.phrase)

    return re.sub(r"\{(\d)\}('s)?", fill, template)


# ---- what a hop passes on ---------------------------------------------------------


def _read_entity(store: Store, run: HopRun, plan: HopPlan) -> str | None:
    """Set the run's entity from its answer; a string says why none could be read."""
    answer = run.answer
    assert answer is not None
    with store.connect() as conn:
        try:
            return _read(conn, run, plan)
        finally:
            conn.rollback()


def _read(conn, run: HopRun, plan: HopPlan) -> str | None:
    answer = run.answer
    assert answer is not None
    filters = Retriever.filters_for(conn, run.question, None)
    if run.hop.slot == "company":
        return _read_company(conn, run, filters)
    noun = run.hop.noun or "segment"
    by_value = _member_values(conn, answer)
    if len(by_value) >= 2 and run.hop.pick:
        # The values the hop cites rank the members, whatever order the answer lists
        # them in ("weakest" or "lower" is listed largest first by the segments route).
        name = (max if run.hop.pick == "max" else min)(by_value, key=by_value.__getitem__)
        extreme = "highest" if run.hop.pick == "max" else "lowest"
        listed = ", ".join(f"{m} {_number(v)}" for m, v in by_value.items())
        how = f"the {extreme} cited value ({listed})"
    elif run.hop.pick == "min":
        return f"hop {run.hop.n}'s answer gives no one value per {noun} to find the lowest"
    else:
        names = _members_cited(conn, answer) or _members_held(
            conn, [c.id for c in filters.companies]
        )
        name = _first_named(answer.answer, names)
        how = f"the first {noun} the answer names"
    if name is None:
        return f"hop {run.hop.n}'s answer names no {noun} to ask about"
    owner = plan.owner or next(iter(filters.matched.get("company", [])), None)
    run.entity = name
    # "Boeing Defense Space Security" names its owner already: no "Boeing's Boeing ...".
    named = owner and not name.lower().startswith(owner.lower())
    run.phrase = f"{owner}'s {name} {noun}" if named else f"the {name} {noun}"
    run.how = how
    return None


def _read_company(conn, run: HopRun, filters) -> str | None:
    """The company a ranking picks: by the values the hop computed when each company has
    one (the facts route's), else the first the answer names (a model's wording)."""
    answer = run.answer
    assert answer is not None
    named = list(zip(filters.matched.get("company", []), filters.companies, strict=False))
    if len(named) < 2:
        return f"hop {run.hop.n} names fewer than two companies to choose from"
    extreme = "highest" if run.hop.pick == "max" else "lowest"
    by_value = _company_values(conn, answer, {c.id for _, c in named})
    where = "stored"
    if len(by_value) < len(named):  # a model's answer: the one amount it gives each
        rate = bool(_RATE.search(run.question))
        by_value, where = _values_in_text(answer.answer, named, rate), "stated"
    if len(by_value) == len(named) and run.hop.pick:
        best = (max if run.hop.pick == "max" else min)(by_value, key=by_value.__getitem__)
        run.entity = run.phrase = next(w for w, c in named if c.id == best)
        listed = ", ".join(f"{w} {_number(by_value[c.id])}" for w, c in named)
        run.how = f"the {extreme} {where} value ({listed})"
        return None
    if not re.match(r"which\b", run.question, re.I):
        return f"hop {run.hop.n}'s answer gives no one value per company to find the {extreme}"
    # "Which had the higher ...?": the answer's verdict names the company first.
    candidates = {w: w for w, _ in named} | {c.name: w for w, c in named}
    words = _first_named(answer.answer, list(candidates))
    if words is None:
        return f"hop {run.hop.n}'s answer names none of the companies it compared"
    run.entity = run.phrase = candidates[words]
    run.how = "the first company the answer names"
    return None


# A measure that is a rate ranks by the percentages an answer states, anything else by
# its other amounts ("revenue grew 12% to $9.6 billion": $9.6 billion for revenue).
_RATE = re.compile(r"\b(?:growth|grew|margin|rate|return|yield|percent\w*|share)\b", re.I)


def _values_in_text(text: str, named: list, rate: bool) -> dict[int, Decimal]:
    """Each company's one amount in a written answer: the first amount of the measure's
    kind in each clause that names that company alone; empty for a company with none or
    with different ones."""
    found: dict[int, set[Decimal]] = {}
    plain = MARK.sub("", text)
    for clause in re.split(r"[.;]\s+|,\s+(?:and|while|whereas|but|compared with)\s+", plain):
        owners = [c.id for w, c in named if _first_named(clause, [w, c.name]) is not None]
        amounts = [a for a in material(parse_amounts(without_dates(clause))) if a.percent == rate]
        if len(set(owners)) == 1 and amounts:
            found.setdefault(owners[0], set()).add(Decimal(str(amounts[0].value)))
    return {k: next(iter(v)) for k, v in found.items() if len(v) == 1}


def _company_values(conn, answer: Answer, ids: set[int]) -> dict[int, Decimal]:
    """One value per company from a facts answer: each company's calculation result (a
    ratio), or its one stored value; empty when a company has none or several."""
    company_of_doc = dict(
        conn.execute(
            "SELECT id, company_id FROM documents WHERE id = ANY(%s)",
            ([v.get("document_id") for v in answer.fact_values if v.get("document_id")],),
        ).fetchall()
    )
    company_of_n = {
        v["n"]: company_of_doc.get(v.get("document_id")) for v in answer.fact_values if "n" in v
    }
    values: dict[int, list[Decimal]] = {}
    calculations = [c for c in answer.calculations if c.result is not None]
    if calculations:
        for c in calculations:
            owners = {company_of_n.get(s) for i in c.inputs for s in i.get("sources", [])}
            if len(owners) == 1 and (owner := owners.pop()) in ids:
                values.setdefault(owner, []).append(Decimal(str(c.result)))
    else:
        values = _cited_values(answer, {n: c for n, c in company_of_n.items() if c in ids})
    return {k: v[0] for k, v in values.items() if len(v) == 1}


def _cited_values(answer: Answer, owner_of_n: dict) -> dict:
    """The answer's cited values grouped by owner (a company, a member), through the map
    from a value's number to its owner; values of no owner, or no number, are left out."""
    values: dict = {}
    for v in answer.fact_values:
        owner = owner_of_n.get(v.get("n"))
        if owner is None:
            continue
        try:
            value = Decimal(str(v.get("value")))
        except InvalidOperation:
            continue
        values.setdefault(owner, []).append(value)
    return values


def _member_values(conn, answer: Answer) -> dict[str, Decimal]:
    """One value per breakdown member from a facts answer: each member's calculation
    result (a growth rate, a margin), or its one cited value; empty unless every member
    the answer cites has exactly one."""
    ids = [v["fact_id"] for v in answer.fact_values if v.get("fact_id")]
    if not ids:
        return {}
    dimensions = dict(
        conn.execute("SELECT id, dimensions FROM facts WHERE id = ANY(%s)", (ids,)).fetchall()
    )
    member_of_n: dict[int, str] = {}
    for v in answer.fact_values:
        names = _names([(dimensions.get(v.get("fact_id")) or [],)])
        if "n" in v and len(names) == 1:
            member_of_n[v["n"]] = names[0]
    values: dict[str, list[Decimal]] = {}
    calculations = [c for c in answer.calculations if c.result is not None]
    if calculations:
        for c in calculations:
            owners = {
                member_of_n[s] for i in c.inputs for s in i.get("sources", []) if s in member_of_n
            }
            if len(owners) == 1:
                values.setdefault(owners.pop(), []).append(Decimal(str(c.result)))
    else:
        values = _cited_values(answer, member_of_n)
    one = {k: v[0] for k, v in values.items() if len(v) == 1}
    return one if set(one) == set(member_of_n.values()) else {}


def _members_cited(conn, answer: Answer) -> list[str]:
    """The breakdown members (segments, regions, products) of the facts the answer cites."""
    ids = [v["fact_id"] for v in answer.fact_values if v.get("fact_id")]
    if not ids:
        return []
    rows = conn.execute("SELECT dimensions FROM facts WHERE id = ANY(%s)", (ids,)).fetchall()
    return _names(rows)


def _members_held(conn, company_ids: list[int]) -> list[str]:
    """Every breakdown member the companies' facts hold: the names a model-written answer
    may give."""
    if not company_ids:
        return []
    rows = conn.execute(
        "SELECT DISTINCT dimensions FROM facts WHERE company_id = ANY(%s) "
        "AND jsonb_array_length(dimensions) BETWEEN 1 AND 2",
        (company_ids,),
    ).fetchall()
    return _names(rows)


def _names(rows) -> list[str]:
    names = []
    for (dimensions,) in rows:
        for _axis, member in dimensions:
            if not member.startswith("us-gaap:OperatingSegments"):
                names.append(member_words(member))
    return list(dict.fromkeys(names))


def _first_named(text: str, names: list[str]) -> str | None:
    """The name the text gives first (the longer on a tie: 'Rest Of Asia Pacific' over
    'Asia Pacific')."""
    lowered = text.lower()
    best: tuple[int, int, str] | None = None
    for name in names:
        parts = [re.escape(w) for w in name.lower().split()]
        if not parts:
            continue
        m = re.search(r"(?<![a-z0-9])" + r"\s+".join(parts) + r"(?![a-z0-9])", lowered)
        if m and (best is None or (m.start(), -len(name)) < (best[0], best[1])):
            best = (m.start(), -len(name), name)
    return best[2] if best else None


def _number(value: Decimal) -> str:
    return f"{value:,.3f}".rstrip("0").rstrip(".")


# ---- one answer from the hops -----------------------------------------------------


class _Numbering:
    """One numbering over the hops' citations; the same source keeps one number."""

    def __init__(self) -> None:
        self.citations: list[Citation] = []
        self._keys: dict[tuple, int] = {}

    def add(self, c: Citation) -> int:
        key = (c.document, tuple(c.pages), c.chunk_id, c.quote)
        if key not in self._keys:
            self._keys[key] = len(self.citations) + 1
            self.citations.append(replace(c, n=self._keys[key]))
        return self._keys[key]


def _renumbered(text: str, mapping: dict[int, int]) -> str:
    def sub(m: re.Match) -> str:
        numbers = [int(n) for n in re.split(r"\s*[,;]\s*", m.group(1))]
        kept = [str(mapping[n]) for n in numbers if n in mapping]
        return f"[{', '.join(dict.fromkeys(kept))}]" if kept else ""

    return re.sub(r"\s+(?=[.,;])", "", MARK.sub(sub, text))


def _combined(question: str, runs: list[HopRun]) -> Answer:
    numbering = _Numbering()
    combined = Answer(question=question, answer="", route="multihop")
    lines, statuses = [], []
    for run in runs:
        a, n = run.answer, run.hop.n
        if run.status == SKIPPED:
            needs = ", ".join(map(str, run.hop.depends_on)) or "an earlier hop"
            lines.append(f"({n}) {run.question} Not asked: it needs the answer of hop {needs}.")
            continue
        if a is None:  # the hop raised: no answer to show
            lines.append(f"({n}) {run.question} Not answered: {run.reason}.")
            continue
        mapping = {c.n: numbering.add(c) for c in a.citations} if not a.refused else {}
        text = _renumbered(a.answer, mapping)
        run.answer = a = _mapped(a, mapping, text)
        if _found(run):
            lines.append(f"({n}) {run.question} {text}")
            statuses.append(a.status)
        else:
            lines.append(f"({n}) {run.question} Not answered: {text}")
        if run.status == FAILED:
            lines[-1] += f" The chain stopped here: {run.reason}."
        combined.citations = numbering.citations
        combined.calculations += a.calculations
        combined.facts += a.facts
        combined.fact_values += a.fact_values
        combined.numbers += a.numbers
        combined.chunks += a.chunks
        combined.flags += [f"hop {n}: {f}" for f in a.flags]
        combined.warnings += [f"hop {n}: {w}" for w in a.warnings]
        combined.fallbacks += a.fallbacks
        combined.backend = combined.backend or a.backend
        combined.model = combined.model or a.model
        for key, count in a.tokens.items():
            combined.tokens[key] = combined.tokens.get(key, 0) + count
        for key, seconds in a.timings.items():
            combined.timings[key] = round(combined.timings.get(key, 0) + seconds, 3)
    stop = next((r for r in runs if r.status in (REFUSED_HOP, FAILED)), None)
    if stop is not None:
        got = [r.hop.n for r in runs if _found(r)]
        so_far = (
            f"what hop{'s' if len(got) > 1 else ''} {', '.join(map(str, got))} found is above"
            if got
            else "nothing was found"
        )
        lines.append(f"The chain stopped at hop {stop.hop.n} of {len(runs)}: {so_far}.")
    combined.answer = "\n".join(lines)
    combined.flags.insert(0, f"answered in {len(runs)} dependent hops")
    combined.refused = not _found(runs[0])
    if combined.refused:
        first = runs[0].answer
        combined.refusal = first.refusal if first is not None else "hop-failed"
        combined.status = REFUSED
    else:
        combined.status = min(
            (s for s in statuses if s in _WEAKEST_FIRST),
            key=_WEAKEST_FIRST.index,
            default=NO_NUMBERS,
        )
    combined.retrieval = {"hops": [r.answer.retrieval if r.answer else {} for r in runs]}
    return combined


def _mapped(a: Answer, mapping: dict[int, int], text: str) -> Answer:
    """The hop's answer in the combined numbering."""

    def marks(s: str) -> str:
        return _renumbered(s, mapping) if s else s

    return replace(
        a,
        answer=text,
        citations=[replace(c, n=mapping[c.n]) for c in a.citations if c.n in mapping],
        calculations=[
            replace(
                c,
                inputs=[
                    {**i, "sources": [mapping[s] for s in i.get("sources", []) if s in mapping]}
                    for i in c.inputs
                ],
            )
            for c in a.calculations
        ],
        facts=[replace(f, source=mapping[f.source]) for f in a.facts if f.source in mapping],
        fact_values=[{**v, "n": mapping[v["n"]]} for v in a.fact_values if v.get("n") in mapping],
        numbers=[
            {**x, "source": marks(x.get("source", "")), "sentence": marks(x.get("sentence", ""))}
            for x in a.numbers
        ],
        chunks=[ContextChunk(mapping[c.n], c.hit) for c in a.chunks if c.n in mapping],
    )


def _row(run: HopRun, combined: Answer) -> dict[str, Any]:
    a = run.answer
    row: dict[str, Any] = {
        "hop": run.hop.n,
        "question": run.question,
        "depends_on": run.hop.depends_on,
        "answer": a.answer if a is not None and run.status != SKIPPED else None,
        "citations": [c.as_dict() for c in a.citations] if a is not None else [],
        "status": run.status,
        "route": a.route if a is not None else None,
    }
    if run.entity is not None:
        row["passes_on"] = {"slot": run.hop.slot, "value": run.entity, "read_as": run.how}
    if run.repair:
        row["repair"] = run.repair
    if run.reason:
        row["reason"] = run.reason
    return row
