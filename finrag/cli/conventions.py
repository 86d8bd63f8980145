"""The house conventions, applied to the whole command tree in one place.

Every command gets an ``Examples:`` section, placeholders that read as words (``PATH...``,
``QUESTION``, ``--input FILE``, never ``<list[Path]>``), the common short flags, the
full first line of its description in its group's command list, and shell completion
of company, document and session names. The root's flags (``--debug``, ``--quiet``,
``--config``) are accepted after a subcommand too (:func:`hoist_global_flags`).
Commands added later get all of this without touching their modules; a command missing
from ``EXAMPLES`` fails ``tests/test_cli_help.py``.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from typer import _click as click
from typer.core import TyperArgument, TyperOption

from finrag.errors import NothingFound

# ---- nothing found -------------------------------------------------------------------


def nothing_found(what: str, hint: str | None = None) -> NoReturn:
    """How every data command (facts, kpi, search, graph, market, ask) ends when it found
    nothing to show: "nothing found: WHAT" and the hint on stderr (--quiet keeps them),
    exit 7. What --json or --csv asked for is printed first, empty: a script reads both."""
    raise NothingFound(what, hint=hint)


def confirm_removal(refusal: str, question: str, *, hint: str, kept: str) -> None:
    """Ask before a removal (`docs rm`, `sessions rm`); without a terminal, refuse with
    ``refusal`` and ``hint`` (a script gets no question it cannot answer). A "no" prints
    ``kept`` and exits 1."""
    import sys

    import typer

    from finrag.cli.render import err
    from finrag.errors import ExitCode, UsageError

    if not sys.stdin.isatty():
        raise UsageError(refusal, hint=hint)
    if not typer.confirm(question):
        err.print(kept)
        raise typer.Exit(ExitCode.FAILED)


# ---- examples ------------------------------------------------------------------------

SAMPLE = "BESTBUY_2024Q2_10Q.pdf"

# Keyed by the command's path below `finrag`. Each entry: (command line, what it does).
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (
        ("finrag ingest ~/filings", "store every filing in a folder"),
        ('finrag ask "What was Best Buy\'s revenue in Q2 FY2024?"', "a cited answer"),
        ("finrag docs list --debug", "global flags go before or after the command"),
    ),
    "ingest": (
        ("finrag ingest ~/filings", "every PDF, HTML, Markdown and text file below it"),
        (
            f'finrag ingest {SAMPLE} -c "Best Buy" --form 10-Q --year 2024 --quarter 2',
            "say what a file is when its name and cover page do not",
        ),
        ("finrag ingest ~/filings --rebuild -j", "re-embed all, a JSON report on stdout"),
        ("finrag ingest ~/filings --watch", "keep the store in step as files come and go"),
    ),
    "fetch": (
        (
            "finrag fetch AAPL MSFT --forms 10-K,10-Q --since 2022",
            "download from SEC EDGAR, then ingest",
        ),
        ("finrag fetch 320193 --forms 10-K --no-ingest -j", "by CIK, download only, as JSON"),
        (
            'FINRAG_FETCH__USER_AGENT="Jane Doe jane@example.com" finrag fetch NVDA',
            "who you are to the SEC (or fetch.user_agent in config.toml)",
        ),
    ),
    "search": (
        ('finrag search "Best Buy revenue Q2 2024"', "filters read from the question"),
        ('finrag search "gross margin" -c "Best Buy" -k 5', "top 5 pages of one company"),
        ('finrag search "inventory" -j | jq ".hits[0]"', "JSON for scripts"),
    ),
    "grep": (
        ('finrag grep "going concern"', "every filing and page that says it, with counts"),
        (
            'finrag grep --near "covenant*" "waiver*" --within sentence',
            "two phrases in one sentence",
        ),
        ("finrag grep --regex 'material weakness(es)?' --counts --csv", "counts only, as CSV"),
    ),
    "ask": (
        ('finrag ask "What was Best Buy\'s gross margin in Q2 FY2024?"', "a cited answer"),
        ('finrag ask "Best Buy revenue Q2 2024" --no-llm', "facts or excerpts, no model"),
        (
            'finrag ask "Revenue in Q2?" -c "Best Buy" --year 2024 -j | jq .answer',
            "JSON for scripts",
        ),
        (
            'finrag ask "Best Buy revenue Q2 FY2024" --format md > answer.md',
            "the answer and its sources as Markdown",
        ),
        (
            "finrag ask \"Which of Best Buy's segments had the largest revenue in Q2 FY2024, "
            'and what was its operating income?" -j | jq .plan',
            "dependent hops: the second asks about what the first found",
        ),
    ),
    "chat": (
        ("finrag chat", "a new conversation (/help lists its commands)"),
        ("finrag chat -s bby-margins", "resume (or start) the conversation named bby-margins"),
        ("finrag chat --input questions.txt -j", "one question a line, one JSON a turn"),
    ),
    "analyze": (
        ("finrag analyze AAPL NFLX", "credit, equity and ESG findings and where they disagree"),
        ("finrag analyze BBY --persona credit,equity --no-llm", "facts only, no model"),
        ("finrag analyze AAPL -j | jq .synthesis.disagreements", "JSON for scripts"),
    ),
    "research": (
        ('finrag research "How exposed is Boeing to China?"', "a cited Markdown memo"),
        (
            'finrag research "How exposed is Apple to China?" --rounds 2 --no-llm',
            "bounded rounds, no model",
        ),
        ('finrag research "Boeing supply chain risk" --out memo.md -j', "memo to a file, JSON"),
    ),
    "facts": (
        ('finrag facts "Best Buy"', "the income statement by period"),
        ("finrag facts BBY --statement balance --year 2024", "the balance sheet of a year"),
        ("finrag facts BBY --metric revenue --csv", "one line item, as CSV"),
    ),
    "kpi": (
        ('finrag kpi "Best Buy"', "the default KPIs for every period stored"),
        ("finrag kpi BBY AAPL --years 2022-2024 --kpi gross_margin,roe", "two companies"),
        ("finrag kpi BBY --quarterly -j", "quarters, every value with its inputs, as JSON"),
    ),
    "market": (
        ("finrag market BBY --period 2024Q2", "Best Buy's fiscal Q2 FY2024: price, volatility"),
        ("finrag market BBY --period 2024Q2 --offline -j", "from the cache only, as JSON"),
        ("finrag market BBY --periods 2024Q1,2024Q2 --questions q.jsonl", "yes/no eval set"),
    ),
    "graph": (
        ('finrag graph "Best Buy"', "segments, auditor, officers, ... and where each is stated"),
        ("finrag graph GLW -j | jq '.entities.subsidiary'", "Corning's subsidiaries, as JSON"),
        ("finrag graph BBY --rebuild", "extract it again from the stored chunks"),
        ("finrag graph GLW --rebuild --llm", "the LLM reads them too: competitors, customers"),
    ),
    "open": (
        (f"finrag open '{SAMPLE}#page=4'", "a citation's ref from ask/search --json"),
        ("finrag open BESTBUY_2024Q2_10Q -p 16 | grep -i revenue", "a page's text, piped"),
        ("finrag open 1 -p 4 -j", "by document id, as JSON"),
        (f"finrag open {SAMPLE}:p4 --viewer", "that page in the system viewer"),
    ),
    "serve": (
        ("finrag serve", "the local API on http://127.0.0.1:8765 (OpenAPI page: /api/docs)"),
        (
            'curl -s localhost:8765/ask -d \'{"question": "Best Buy revenue Q2 FY2024", '
            '"no_llm": true}\'',
            "the JSON of `finrag ask --json`",
        ),
        ('finrag serve --host 0.0.0.0 --token "$TOKEN"', "beyond this machine: a token"),
    ),
    "mcp": (
        ("finrag mcp", "ask, search and facts as MCP tools over stdio"),
        ("claude mcp add finrag -- finrag mcp", "give an agent the store"),
    ),
    "doctor": (
        ("finrag doctor", "what works and what to fix"),
        ("finrag doctor -j", "the same as JSON"),
    ),
    "sessions": (
        ("finrag sessions list", "the stored conversations, newest first"),
        ("finrag sessions export bby-margins -o bby.md", "a conversation as Markdown"),
    ),
    "sessions list": (
        ("finrag sessions list", "name, turns, last question"),
        ("finrag sessions list -j | jq -r '.[].name'", "just the names"),
    ),
    "sessions show": (
        ("finrag sessions show bby-margins", "every turn with its sources"),
        ("finrag sessions show bby-margins -j", "with traces, as JSON"),
    ),
    "sessions export": (
        ("finrag sessions export bby-margins", "Markdown on stdout"),
        ("finrag sessions export bby-margins -o bby.md", "into a file"),
    ),
    "sessions rm": (
        ("finrag sessions rm bby-margins", "asks first"),
        ("finrag sessions rm bby-margins -y", "no question (scripts)"),
    ),
    "cache": (
        ("finrag cache stats", "cached answers and hits"),
        ("finrag cache clear", "empty it"),
    ),
    "cache stats": (
        ("finrag cache stats", "in words"),
        ("finrag cache stats -j", "JSON"),
    ),
    "cache clear": (
        ("finrag cache clear", "the filings stay"),
        ("finrag cache clear -j", "how many were removed, as JSON"),
    ),
    "docs": (
        ("finrag docs list", "what the store holds"),
        (f"finrag docs rm {SAMPLE}", "remove one filing"),
    ),
    "docs list": (
        ("finrag docs list", "a table on a terminal, tab-separated rows when piped"),
        ("finrag docs list | cut -f1", "the first column"),
        ("finrag docs list -j", "JSON"),
    ),
    "docs show": (
        (f"finrag docs show {SAMPLE}", "metadata and where each field came from"),
        ("finrag docs show 3 -j", "by id, as JSON"),
    ),
    "docs rm": (
        (f"finrag docs rm {SAMPLE}", "asks, then removes it and everything made from it"),
        ("finrag docs rm 3 4 --yes", "by ids, without asking (scripts)"),
    ),
    "eval": (
        ("finrag eval retrieval questions.jsonl", "hit@k and MRR"),
        ("finrag eval answers questions.jsonl --no-llm", "answer accuracy without a model"),
    ),
    "eval retrieval": (
        ("finrag eval retrieval questions.jsonl -k 1,5,10", "hit@k and MRR at these cut-offs"),
        ("finrag eval retrieval questions.jsonl --compare dense,hybrid", "variants side by side"),
        ("finrag eval retrieval questions.jsonl -o runs/retrieval", "JSON, CSV and Markdown"),
    ),
    "eval fundamentals": (
        ("finrag eval fundamentals fund.jsonl", "yes/no questions from verified stored facts"),
        ("finrag eval answers fund.jsonl --no-llm", "then score ask's answers on them"),
    ),
    "eval answers": (
        ("finrag eval answers questions.jsonl --limit 20", "the first 20 questions"),
        ("finrag eval answers questions.jsonl --judge -o runs/answers", "graded by the LLM"),
    ),
    "config": (("finrag config show", "every setting and where it came from"),),
    "config show": (
        ("finrag config show", "every setting and where it came from"),
        ("finrag --config my.toml config show -j", "another settings file, as JSON"),
    ),
    "db": (
        ("finrag db status", "which database, and whether it is up"),
        ("finrag db start", "keep the embedded server up between commands"),
    ),
    "db status": (
        ("finrag db status", "starts nothing"),
        ("finrag db status -j", "as JSON"),
    ),
    "db start": (("finrag db start", "start the embedded server and keep it up"),),
    "db stop": (
        ("finrag db stop", "stop it once no command uses it"),
        ("finrag db stop --force", "stop it now"),
    ),
    "db url": (
        ("finrag db url", "the connection URL, password hidden"),
        ('psql "$(finrag db url --show-password)"', "for another client"),
    ),
    "db psql": (("finrag db psql", "a psql shell on the store"),),
    "db reset": (
        ("finrag db reset", "asks first: deletes every document, chunk and session"),
        ("finrag db reset -y", "no question (scripts)"),
    ),
    "db summarize": (
        ("finrag db summarize", "build summary nodes for every document"),
        ("finrag db summarize --missing", "only where they are missing"),
    ),
}


def examples_text(path: str) -> str | None:
    """The ``Examples:`` section of the command at ``path`` ("" is the root)."""
    rows = EXAMPLES.get(path)
    if not rows:
        return None
    lines = [f"  # {what}\n  {line}" for line, what in rows]
    return "Examples:\n" + "\n\n".join(lines)


# ---- placeholders and short flags ----------------------------------------------------

# Arguments by parameter name: the word shown in usage and help.
ARGUMENT_WORDS = {
    "paths": "PATH",
    "question": "QUESTION",
    "company": "COMPANY",
    "companies": "COMPANY",
    "name": "NAME",
    "ref": "DOC",
    "refs": "DOC",
    "dataset": "FILE",
    "target": "CITATION|DOC",
    "tickers": "TICKER",
}

# Options by long flag, where the type alone would not say what is expected.
OPTION_WORDS = {
    "--config": "FILE",
    "--company": "NAME",
    "--ticker": "TICKER",
    "--form": "FORM",
    "--year": "YEAR",
    "--years": "YEARS",
    "--quarter": "Q",
    "--parser": "NAME",
    "--workers": "N",
    "--k": "N",
    "--fusion": "METHOD",
    "--reranker": "NAME",
    "--variant": "STAGES",
    "--backend": "NAME",
    "--session": "NAME",
    "--input": "FILE",
    "--statement": "NAME",
    "--metric": "NAME",
    "--kpi": "NAME",
    "--compare": "VARIANTS",
    "--limit": "N",
    "--out": "PATH",
    "--tolerance": "FRACTION",
    "--timeout": "SECONDS",
    "--format": "FORMAT",
    "--page": "N",
    "--png": "PATH",
    "--host": "ADDRESS",
    "--port": "N",
    "--token": "TOKEN",
    "--forms": "FORMS",
    "--since": "YEAR|DATE",
    "--dest": "DIR",
}
# Per command where a flag means something else there.
COMMAND_OPTION_WORDS = {("eval retrieval", "--k"): "LIST", ("chat", "--input"): "FILE"}

# The common options' short flags, the same letter everywhere. `-h` is help, `-q` quiet,
# `-y` answers a confirmation (sessions rm, db reset): --year keeps no short flag.
SHORT_FLAGS = {
    "--k": "-k",
    "--json": "-j",
    "--company": "-c",
    "--session": "-s",
    "--out": "-o",
    "--yes": "-y",
    "--page": "-p",
}

# The root's flags, also accepted after a subcommand: flag -> takes a value.
GLOBAL_FLAGS = {"--debug": False, "--quiet": False, "-q": False, "--config": True}


def _type_word(param: click.Parameter) -> str:
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    name = getattr(annotation, "__name__", str(annotation))
    if "int" in name:
        return "N"
    if "float" in name:
        return "NUMBER"
    if "Path" in name:
        return "PATH"
    return (param.name or "value").upper().replace("_", "-")


def option_word(command_path: str, param: click.Parameter) -> str:
    long = next((o for o in param.opts if o.startswith("--")), param.opts[0])
    return (
        COMMAND_OPTION_WORDS.get((command_path, long))
        or OPTION_WORDS.get(long)
        or _type_word(param)
    )


class WordArgument(TyperArgument):
    """An argument shown as a word (``PATH...``), without typer's ``<list[Path]>``."""

    def display_type_rich(self, ctx: click.Context) -> str | None:
        return None

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


def range_words(low: float | None, high: float | None) -> str | None:
    """A number range as words: "1 to 200", "at least 0"."""
    if low is not None and high is not None:
        return f"{low} to {high}"
    if low is not None:
        return f"at least {low}"
    return None if high is None else f"at most {high}"


class WordOption(TyperOption):
    """An option whose range reads "1 to 200", not "1<=x<=200"."""

    def _get_number_range_help_str(self) -> str | None:
        if self.count and self.min == 0 and self.max is None:
            return None
        return range_words(self.min, self.max)


def words(value: object) -> str:
    """A value as a person reads it in human output: never a Python repr."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {words(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple, set)):
        return ", ".join(words(v) for v in value) or "none"
    return str(value)


def setting_words(value: object) -> str:
    """A setting's value as config.toml spells it (true, false), "not set" for None."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    return words(value)


# ---- help text -----------------------------------------------------------------------


def first_paragraph(help_text: str | None) -> str:
    """A command's description in its group's list: its first paragraph, whole."""
    text = inspect.cleandoc(help_text or "").partition("\f")[0]
    return " ".join(text.split("\n\n")[0].split())


def _format_epilog(self: click.Command, ctx: click.Context, formatter: Any) -> None:
    # Example lines keep their layout: click would re-wrap them as a paragraph.
    if self.epilog:
        formatter.write_paragraph()
        for line in self.epilog.splitlines():
            formatter.write(f"{'':>{formatter.current_indent}}{line}\n")


_classes: dict[type, type] = {}


def _with_epilog_as_written(command: click.Command) -> None:
    cls = type(command)
    if cls not in _classes:
        _classes[cls] = type(cls.__name__, (cls,), {"format_epilog": _format_epilog})
    command.__class__ = _classes[cls]


# ---- the walk --------------------------------------------------------------------------


def walk(command: click.Command, path: str = "") -> Iterator[tuple[str, click.Command]]:
    """Every command below ``command`` (itself first), with its path ("docs list")."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from walk(sub, f"{path} {name}".strip())


def apply_conventions(root: click.Command) -> click.Command:
    """Apply the house conventions to ``root`` and every command below it."""
    from finrag.cli import completion

    for path, command in walk(root):
        help_text = command.help or ""
        if "Examples:" not in help_text and (examples := examples_text(path)):
            command.epilog = examples
            _with_epilog_as_written(command)
        if path and not command.short_help:
            command.short_help = first_paragraph(help_text)
        taken = {opt for param in command.params for opt in param.opts + param.secondary_opts}
        for param in command.params:
            if isinstance(param, TyperArgument):
                if param.metavar is None:
                    param.metavar = ARGUMENT_WORDS.get(param.name or "", (param.name or "").upper())
                param.__class__ = WordArgument
                complete = completion.FOR_ARGUMENT.get((path.split(" ")[0], param.name or ""))
            elif isinstance(param, TyperOption):
                param.__class__ = WordOption
                if not param.is_flag and param.metavar is None:
                    param.metavar = option_word(path, param)
                for long, short in SHORT_FLAGS.items():
                    if long in param.opts and short not in taken:
                        param.opts.insert(0, short)
                        taken.add(short)
                complete = next(
                    (completion.FOR_OPTION[o] for o in param.opts if o in completion.FOR_OPTION),
                    None,
                )
            else:
                complete = None
            if complete is not None and param._custom_shell_complete is None:
                param._custom_shell_complete = _quiet(complete)
    return root


def _quiet(complete: Callable[[click.Context, str], list[str]]) -> Callable[..., list[str]]:
    """A completion that never prints and never fails (nothing, rather than an error)."""

    def shell_complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
        logging.disable(logging.CRITICAL)
        with contextlib.suppress(Exception):
            return complete(ctx, incomplete)
        return []

    return shell_complete


# ---- global flags after the subcommand -----------------------------------------------


def hoist_global_flags(root: click.Command, argv: list[str]) -> list[str]:
    """``argv`` with the root's flags found after a subcommand moved to the front
    (``finrag docs list --debug`` = ``finrag --debug docs list``). A subcommand's own
    option of the same name, an option's value, anything after ``--`` and the arguments
    of a command that passes them on (``db psql``) stay put."""
    command, moved, rest = root, [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--" or command.context_settings.get("ignore_unknown_options"):
            rest.extend(argv[i:])  # the rest is the command's own (`db psql -q` is psql's)
            break
        flag, _, inline = arg.partition("=")
        takes_value = _takes_value(command, flag)
        if command is not root and flag in GLOBAL_FLAGS and takes_value is None:
            if GLOBAL_FLAGS[flag] and not inline and i + 1 < len(argv):
                moved.extend(argv[i : i + 2])
                i += 2
                continue
            moved.append(arg)
        else:
            rest.append(arg)
            if takes_value and not inline and i + 1 < len(argv):
                rest.append(argv[i + 1])
                i += 1
            elif not arg.startswith("-"):
                command = getattr(command, "commands", {}).get(arg, command)
        i += 1
    return moved + rest


def _takes_value(command: click.Command, flag: str) -> bool | None:
    """Whether ``flag`` is an option of ``command`` that takes a value; None when it is
    not one of its options."""
    if not flag.startswith("-"):
        return False
    for param in command.params:
        if isinstance(param, TyperOption) and flag in param.opts + param.secondary_opts:
            return not param.is_flag and not param.count
    return None
