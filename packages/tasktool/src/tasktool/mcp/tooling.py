"""How a tasktool MCP tool is made: a function of one typed arguments object.

Each tool is ``def tool(args: SomeArguments) -> dict[str, Any]`` and its input schema is
``SomeArguments``' JSON schema, flat: the model's fields are the tool's arguments, as the
client sends them. The SDK's own ``Tool.from_function`` builds the schema from a function's
parameters, so a tool with many options (``set`` has 29) would need as many parameters,
and a model parameter would nest every argument under its name on the wire. Here the
model is handed to the SDK as the argument model itself; the SDK validates the call
against it, and the function gets the validated object.

Unknown arguments are refused by name (:class:`StrictTool`), tasktool errors become tool
errors ending with their code (:func:`tool_errors`).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata, func_metadata
from mcp.types import ToolAnnotations
from pydantic import ConfigDict

from mtcommon import CodedError, render_line

__all__ = ["READ", "WRITE", "Arguments", "F", "Register", "StrictTool", "make_tool", "tool_errors"]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


class Arguments(ArgModelBase):
    """A tool's arguments; the schema says ``additionalProperties: false``, as the tool
    refuses what it does not take."""

    model_config = ConfigDict(extra="forbid")


A = TypeVar("A", bound=Arguments)
F = TypeVar("F", bound=Callable[..., Any])


class Register(Protocol):
    """The server's registrar: ``@tool(name, annotations)`` over a tool function."""

    def __call__(self, name: str, annotations: ToolAnnotations, /) -> Callable[[F], F]: ...


@contextmanager
def tool_errors() -> Iterator[None]:
    """A tasktool (or file) error becomes a tool error the agent reads: ``message [code]``."""
    try:
        yield
    except CodedError as exc:
        raise ToolError(render_line(exc).removeprefix("error: ")) from None
    except OSError as exc:
        raise ToolError(f"{exc.strerror or exc}: {exc.filename or ''} [os.error]") from None


class StrictTool(Tool):
    """A tool that refuses arguments it does not take, naming them. The SDK's argument
    model would report a typo (``add_tag`` for ``add_tags``) as a bare validation error,
    or without ``extra="forbid"`` drop it silently."""

    async def run(
        self, arguments: dict[str, Any], context: Context[Any, Any], convert_result: bool = False
    ) -> Any:
        known = self.parameters.get("properties", {})
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            hints = [
                f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name)
                for name in unknown
                for close in [difflib.get_close_matches(name, known, n=1)]
            ]
            raise ToolError(
                f"{self.name} does not take {', '.join(hints)}; its arguments: "
                f"{', '.join(known) or 'none'} [usage]"
            )
        return await super().run(arguments, context, convert_result)


def make_tool(
    function: Callable[[A], Any], *, name: str, annotations: ToolAnnotations
) -> StrictTool:
    """The tool ``name`` running ``function``, whose one parameter's type (an
    :class:`Arguments` model) is the tool's input schema; its docstring is the description
    and its return type the output schema, as the SDK derives them."""
    (parameter,) = inspect.signature(function, eval_str=True).parameters.values()
    model: type[A] = parameter.annotation
    derived = func_metadata(function)  # the output half; its argument half would nest

    def call(**fields: Any) -> Any:
        return function(model.model_construct(**fields))  # fields validated by the SDK

    return StrictTool(
        fn=call,
        name=name,
        title=None,
        description=function.__doc__ or "",
        parameters=model.model_json_schema(by_alias=True),
        fn_metadata=FuncMetadata(
            arg_model=model,
            output_schema=derived.output_schema,
            output_model=derived.output_model,
            wrap_output=derived.wrap_output,
        ),
        is_async=False,
        context_kwarg=None,
        annotations=annotations,
    )
