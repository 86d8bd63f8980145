"""The `finrag` command: root options, command groups, and the one error boundary."""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from typer import _click as click

from finrag import __version__
from finrag.cli.conventions import GLOBAL_FLAGS, apply_conventions, hoist_global_flags
from finrag.cli.render import log_warnings, print_error, problems, set_quiet
from finrag.cli.state import AppState
from finrag.errors import ExitCode, FinragError
from finrag.llm.interrupt import stop_model_calls_on_signals

app = typer.Typer(
    name="finrag",
    help="Grounded, cited answers over financial filings, local and offline.\n\n"
    "--config, --debug and -q/--quiet go before or after the command; each command's "
    "--help ends with examples. Shell completion (--install-completion) also completes "
    "company names, documents and sessions from the store.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,  # main() is the error boundary
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
# Each command's module (and what it imports) loads only when that command runs, or for
# help and completion, which list them all: `finrag ask` does not pay for `eval`'s imports.
# name -> (module in finrag.cli, attribute, a group of subcommands); in help's order.
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "ingest": ("ingest_cmd", "ingest_command", False),
    "fetch": ("fetch_cmd", "fetch_command", False),
    "search": ("search_cmd", "search_command", False),
    "grep": ("grep_cmd", "grep_command", False),
    "ask": ("ask_cmd", "ask_command", False),
    "chat": ("chat_cmd", "chat_command", False),
    "analyze": ("analyze_cmd", "analyze_command", False),
    "research": ("research_cmd", "research_command", False),
    "facts": ("facts_cmd", "facts_command", False),
    "kpi": ("kpi_cmd", "kpi_command", False),
    "market": ("market_cmd", "market_command", False),
    "graph": ("graph_cmd", "graph_command", False),
    "open": ("open_cmd", "open_command", False),
    "sessions": ("sessions_cmd", "app", True),
    "docs": ("docs_cmd", "app", True),
    "eval": ("eval_cmd", "app", True),
    "config": ("config_cmd", "app", True),
    "db": ("db_cmd", "app", True),
    "cache": ("cache_cmd", "app", True),
    "doctor": ("doctor_cmd", "doctor", False),
    "serve": ("serve_cmd", "serve_command", False),
    "mcp": ("serve_cmd", "mcp_command", False),
}
_registered: set[str] = set()


def register(names: list[str] | None = None) -> None:
    """Add the named commands (default: all) to ``app``, importing their modules."""
    for name in COMMANDS if names is None else names:
        if name in _registered:
            continue
        module_name, attribute, group = COMMANDS[name]
        target = getattr(importlib.import_module(f"finrag.cli.{module_name}"), attribute)
        if group:
            app.add_typer(target, name=name)
        else:
            app.command(name)(target)
        _registered.add(name)


def commands_needed(argv: list[str]) -> list[str] | None:
    """The command ``argv`` runs, alone; [] for ``--version`` alone; None (all of them) for
    help, completion, no command or a name that is none of ours."""
    if any(key.endswith("_COMPLETE") for key in os.environ):
        return None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            break
        if arg.startswith("-"):
            flag, inline, _ = arg.partition("=")
            i += 2 if GLOBAL_FLAGS.get(flag) and not inline else 1
            continue
        return [arg] if arg in COMMANDS else None
    helping = {"-h", "--help"} & set(argv)
    return [] if "--version" in argv and not helping else None


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"finrag {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", help="Settings file (TOML). Default: ~/.config/finrag/config.toml."
        ),
    ] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks and debug logs on stderr.")
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No progress, timings or notes on stderr (errors still show)."
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    ctx.obj = AppState(config_file=config, debug=debug)
    set_quiet(quiet)
    if debug:
        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s", stream=sys.stderr)
    else:
        log_warnings()


def _terminate(signum: int, _frame: object) -> None:
    # SystemExit runs atexit hooks: the embedded server's client count stays right.
    raise SystemExit(128 + signum)


def build_command(names: list[str] | None = None) -> click.Command:
    """The click command tree (the named commands, default all) with the house conventions
    (examples, placeholders as words, short flags, completion) applied: conventions.py."""
    register(names)
    return apply_conventions(typer.main.get_command(app))


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and map every failure to a message and an exit code."""
    signal.signal(signal.SIGTERM, _terminate)
    # Both then stop an embedded model mid-prompt, not when its llama.cpp call returns.
    stop_model_calls_on_signals(signal.SIGINT, signal.SIGTERM)
    argv = list(argv if argv is not None else sys.argv[1:])
    command = build_command(commands_needed(argv))
    # The root's flags work after a subcommand too (`finrag docs list --debug`).
    argv = hoist_global_flags(command, argv)
    debug = "--debug" in argv
    # Belt and braces for files made without an explicit mode (readline's history, lock
    # files): whatever finrag writes is its user's alone.
    os.umask(0o077)
    try:
        # Outside standalone mode click *returns* the code of a typer.Exit.
        result = command.main(args=argv, prog_name="finrag", standalone_mode=False)
    except FinragError as exc:
        if debug:
            traceback.print_exc()
        print_error(exc.message, exc.hint, label=exc.label)
        sys.exit(int(exc.exit_code))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.TyperException as exc:  # usage errors: bad option, unknown command
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        else:
            print_error(str(exc))
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        problems.print("interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except UnicodeEncodeError as exc:
        if "surrogates" not in exc.reason:
            _internal_error(exc, debug)
        # Bytes that are not UTF-8 in an argument or a file name reach Postgres this way.
        print_error(
            "the input holds bytes that are not UTF-8 text",
            "finrag stores text as UTF-8: re-encode the input (or rename the file)",
        )
        sys.exit(ExitCode.USAGE)
    except OSError as exc:
        if exc.filename is None:
            _internal_error(exc, debug)
        # The machine said no (a permission, a full disk, a missing path): not a bug.
        if debug:
            traceback.print_exc()
        print_error(
            f"{exc.strerror or type(exc).__name__}: {exc.filename}",
            "check that path: its permissions, free space, or the setting that named it",
        )
        sys.exit(ExitCode.FAILED)
    except Exception as exc:
        _internal_error(exc, debug)
    sys.exit(result if isinstance(result, int) else ExitCode.OK)


def _internal_error(exc: Exception, debug: bool) -> NoReturn:
    """A bug: say so plainly, never dump locals."""
    if debug:
        traceback.print_exc()
    print_error(
        f"{type(exc).__name__}: {exc}",
        "rerun with --debug for the traceback, and report it",
        label="internal error",
    )
    sys.exit(ExitCode.FAILED)
