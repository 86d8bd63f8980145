"""A command's options as the fields of a JSON request, read from the command itself.

`POST /ask {"question": "...", "no_llm": true, "k": 5}`: each field is a long flag without
its dashes (``--no-llm`` -> ``no_llm``) or an argument's name, with the flag's type, range,
default and help. The fields come from the click command the CLI builds, never from a
second list, so a new option of `finrag ask` is a field of `/ask` at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

import typer
from pydantic import BaseModel, ConfigDict, Field, create_model
from typer._click import Command
from typer.core import TyperArgument, TyperOption

# How the CLI prints (the API always answers JSON): these options are not fields.
PRESENTATION = frozenset({"json", "csv", "format", "chart", "png"})


@dataclass(frozen=True)
class RequestField:
    name: str  # the JSON field
    param: str  # the command function's parameter it sets
    annotation: Any
    default: Any
    required: bool
    help: str | None
    low: float | None = None
    high: float | None = None


def click_command(function: Callable[..., Any]) -> Command:
    """The click command typer builds for ``function``, as `finrag` registers it."""
    single = typer.Typer(add_completion=False)
    single.command()(function)
    return typer.main.get_command(single)


def command_fields(function: Callable[..., Any]) -> list[RequestField]:
    """The request fields of the CLI command ``function``: its arguments and options but
    the presentation ones."""
    found = []
    for param in click_command(function).params:
        if isinstance(param, TyperOption):
            long = next((o for o in param.opts if o.startswith("--")), param.opts[0])
            name = long.lstrip("-").replace("-", "_")
        elif isinstance(param, TyperArgument):
            name = param.name or ""
        else:
            continue
        if name in PRESENTATION or not param.expose_value:
            continue
        annotation = _python_type(param.type_descriptor.annotation)
        default = param.default
        if not param.required and default is None:
            annotation = annotation | None
        found.append(
            RequestField(
                name=name,
                param=param.name or name,
                annotation=annotation,
                default=default,
                required=param.required,
                help=getattr(param, "help", None),
                low=param.min,
                high=param.max,
            )
        )
    return found


def _python_type(annotation: Any) -> Any:
    """The JSON-friendly type of an option's annotation: paths arrive as strings."""
    if get_origin(annotation) is list:
        return list[_python_type(get_args(annotation)[0])]
    return str if annotation is Path else annotation


def request_model(
    name: str, fields: list[RequestField], **extra: tuple[Any, Any]
) -> type[BaseModel]:
    """A pydantic model of ``fields`` (plus ``extra`` fields that are no CLI option) for
    validation and the OpenAPI schema; an unknown field is refused, not ignored."""
    spec: dict[str, Any] = {
        f.name: (
            f.annotation,
            Field(
                ... if f.required else f.default,
                description=f.help,
                ge=f.low,
                le=f.high,
            ),
        )
        for f in fields
    }
    return create_model(name, __config__=ConfigDict(extra="forbid"), **spec, **extra)


def call_options(fields: list[RequestField], request: BaseModel) -> dict[str, Any]:
    """The request as the command function's keyword arguments."""
    return {f.param: getattr(request, f.name) for f in fields}
