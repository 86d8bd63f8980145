"""The local HTTP API (FastAPI): the CLI's data commands as routes, their JSON as replies.

Each route validates its request against the fields of its CLI command (fields.py), calls
the function that command calls, and sends the JSON --json prints, with the command's exit
code in the ``X-Finrag-Exit-Code`` header (7: nothing found, 8: a number unchecked: the
data is still the answer). An error is the error's JSON (``FinragError.as_dict``) with an
HTTP status for its exit code. The routes share the one store the server opened.
"""

# No `from __future__ import annotations`: FastAPI reads the request models built at run
# time from the routes' annotations, which must be the classes themselves.

import asyncio
import contextlib
import json
import logging
import secrets
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from starlette.middleware.trustedhost import TrustedHostMiddleware

from finrag import __version__
from finrag.cli.ask_cmd import STAGE_WORDS, ask_command, ask_outcome
from finrag.cli.docs_cmd import document_details, documents
from finrag.cli.facts_cmd import facts_command, facts_outcome
from finrag.cli.kpi_cmd import kpi_command, kpi_json, kpi_outcome, kpi_problem
from finrag.cli.render import json_text
from finrag.cli.report import Report
from finrag.cli.search_cmd import search_command, search_report
from finrag.config import Settings
from finrag.db import Store
from finrag.errors import ExitCode, FinragError, UsageError
from finrag.serve.fields import call_options, command_fields, request_model

# An exit code's HTTP status: bad input is the client's (4xx), a missing database or model
# is the service's (503), a bug is a 500.
HTTP_STATUS = {
    ExitCode.USAGE: 400,
    ExitCode.NO_ANSWER: 404,
    ExitCode.CONFIG: 500,
    ExitCode.DATABASE: 503,
    ExitCode.MODEL: 503,
    ExitCode.INTERRUPTED: 503,
}
EXIT_HEADER = "X-Finrag-Exit-Code"

ASK_FIELDS = command_fields(ask_command)
SEARCH_FIELDS = command_fields(search_command)
FACTS_FIELDS = command_fields(facts_command)
KPI_FIELDS = command_fields(kpi_command)
AskRequest = request_model(
    "AskRequest",
    ASK_FIELDS,
    stream=(bool, False),  # not a CLI option: server-sent events instead of one reply
)
SearchRequest = request_model("SearchRequest", SEARCH_FIELDS)
FactsRequest = request_model("FactsRequest", FACTS_FIELDS)
KpiRequest = request_model("KpiRequest", KPI_FIELDS)


def error_response(exc: FinragError, status: int | None = None) -> JSONResponse:
    code = status or HTTP_STATUS.get(exc.exit_code, 500)
    return JSONResponse(exc.as_dict(), status_code=code, headers={EXIT_HEADER: str(exc.exit_code)})


def internal_error(exc: BaseException) -> FinragError:
    """A bug, said as the CLI says it (never a traceback to the client)."""
    error = FinragError(
        f"{type(exc).__name__}: {exc}",
        hint="rerun `finrag serve --debug` for the traceback, and report it",
    )
    error.label = "internal error"
    return error


def json_reply(report: Report) -> Response:
    """The data --json prints, the exit code beside it; a problem said after the data in
    the CLI (nothing found) is a header here, the data being the answer."""
    headers = {EXIT_HEADER: str(report.code)}
    if report.problem is not None:
        headers["X-Finrag-Note"] = report.problem.message.encode("ascii", "replace").decode()
    return Response(json_text(report.data), media_type="application/json", headers=headers)


_log = logging.getLogger(__name__)

# The Host names a token-less server answers: its loopback addresses and names.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


def create_app(settings: Settings, store: Store, *, token: str | None = None) -> FastAPI:
    """The API over ``store`` (opened by the caller, closed by it once the server has
    stopped); with ``token``, every route but the API's own documentation needs
    ``Authorization: Bearer TOKEN``."""
    # One answer at a time: the model runs in one process and takes one call at a time.
    answering = threading.Lock()

    def lent(_settings: Settings) -> contextlib.AbstractContextManager[Store]:
        """The server's store, lent to one request (closing it is the server's job)."""
        return contextlib.nullcontext(store)

    bearer = HTTPBearer(auto_error=False, description="The token `finrag serve` was given.")

    def authorized(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not secrets.compare_digest(given.encode(), token.encode()):
            raise _Unauthorized

    app = FastAPI(
        title="finrag",
        version=__version__,
        description="Grounded, cited answers over financial filings: the JSON of "
        "`finrag ask|search|facts|kpi|docs --json`, the CLI's options as fields.",
        docs_url="/api/docs",  # /docs is the filings list
        redoc_url=None,
        openapi_url="/openapi.json",
        dependencies=[Depends(authorized)],
    )

    app.state.answering = answering  # a test holds it to keep a request in flight
    if token is None:
        # Without a token the server listens on loopback only, and only loopback names may
        # reach it: a web page whose name is made to resolve to 127.0.0.1 (DNS rebinding)
        # is refused, since its requests carry its own name as Host.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(LOOPBACK_HOSTS))

    @app.exception_handler(FinragError)
    async def finrag_error(_request: Request, exc: FinragError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'][1:]) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        error = UsageError(
            f"invalid request: {problems}", hint="GET /openapi.json lists the fields"
        )
        return error_response(error, 422)

    @app.exception_handler(_Unauthorized)
    async def unauthorized(_request: Request, _exc: _Unauthorized) -> JSONResponse:
        error = UsageError(
            "missing or wrong token",
            hint="send the token `finrag serve` was given as 'Authorization: Bearer TOKEN'",
        )
        response = error_response(error, 401)
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    @app.exception_handler(Exception)
    async def bug(_request: Request, exc: Exception) -> JSONResponse:
        return error_response(internal_error(exc), 500)

    @app.get("/health", summary="The server and its store")
    def health() -> dict[str, Any]:
        with store.connect() as conn:
            count = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        return {
            "status": "ok",
            "version": __version__,
            "store": {"kind": store.kind, "url": store.display_url},
            "documents": count,
        }

    @app.post("/ask", summary="finrag ask --json", response_model=None)
    def ask(request: AskRequest) -> Response:  # type: ignore[valid-type]
        if request.stream:
            return stream_answer(request)
        with answering:
            outcome = ask_outcome(settings, opened=lent, **call_options(ASK_FIELDS, request))
        return json_reply(outcome.report)

    @app.post("/ask/stream", summary="finrag ask, as server-sent events", response_model=None)
    def ask_stream(request: AskRequest) -> Response:  # type: ignore[valid-type]
        return stream_answer(request)

    def stream_answer(request: BaseModel) -> StreamingResponse:
        """``stage`` events as the answer goes through its stages, then ``answer`` (the
        JSON of --json) and ``done`` (the exit code), or ``error`` (the error's JSON)."""
        options = call_options(ASK_FIELDS, request)

        def work(emit: Callable[[str, Any], None]) -> None:
            def on_event(stage: str) -> None:
                emit("stage", {"stage": stage, "words": STAGE_WORDS.get(stage, stage)})

            with answering:
                outcome = ask_outcome(settings, opened=lent, on_event=on_event, **options)
            emit("answer", outcome.report.data)
            emit("done", {"exit_code": outcome.report.code})

        return StreamingResponse(
            server_sent_events(work),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache"},
        )

    @app.post("/search", summary="finrag search --json")
    def search(request: SearchRequest) -> Response:  # type: ignore[valid-type]
        _result, report = search_report(
            settings, opened=lent, **call_options(SEARCH_FIELDS, request)
        )
        return json_reply(report)

    @app.post("/facts", summary="finrag facts --json")
    def facts(request: FactsRequest) -> Response:  # type: ignore[valid-type]
        outcome = facts_outcome(settings, opened=lent, **call_options(FACTS_FIELDS, request))
        return json_reply(outcome.report)

    @app.post("/kpi", summary="finrag kpi --json")
    def kpi(request: KpiRequest) -> Response:  # type: ignore[valid-type]
        options = call_options(KPI_FIELDS, request)
        insights = options.pop("insights", True)  # what --json prints beside the values
        found = kpi_outcome(settings, opened=lent, **options)
        return json_reply(Report(kpi_json(found, insights=insights), kpi_problem(found)))

    @app.get("/docs", summary="finrag docs list --json")
    def docs_list() -> Response:
        return json_reply(Report([d.as_dict() for d in documents(settings, opened=lent)]))

    @app.get("/docs/{ref}", summary="finrag docs show DOC --json")
    def docs_show(ref: str) -> Response:
        return json_reply(Report(document_details(settings, ref, opened=lent)))

    return app


class _Unauthorized(Exception):
    """A request without the server's token."""


async def server_sent_events(
    work: Callable[[Callable[[str, Any], None]], None],
) -> AsyncIterator[str]:
    """Run ``work`` in a thread and send each event it emits as it comes; a failure
    becomes an ``error`` event with the error's JSON."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()

    def emit(event: str, data: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (event, data))

    def run() -> None:
        try:
            work(emit)
        except FinragError as exc:
            emit("error", exc.as_dict())
        except Exception as exc:
            # The client gets the error event; the traceback goes to the server's log.
            _log.exception("internal error in a streamed answer")
            emit("error", internal_error(exc).as_dict())
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    runner = loop.run_in_executor(None, run)
    while (item := await queue.get()) is not None:
        event, data = item
        yield f"event: {event}\ndata: {json_text(data, indent=None)}\n\n"
    await runner


def parse_events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """(event, data) from the lines of a server-sent event stream (for clients and tests)."""
    event, data = "message", []
    for line in lines:
        if not line:
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
