"""Parameters without pydantic for the values that need no conversion.

typer 0.29 coerces every parameter that is not a flag through a pydantic TypeAdapter, built on first use: any
command with a string argument, or an option left at None, imports pydantic (about a hundred modules, a third of
``lakelet repo list``'s start) to hand back the value it was given. Here a parameter's coercion is built only
when a value needs one: absent values are settled by typer before coercion (as before), plain strings for
``str`` parameters are returned as they are (what typer's str adapter returns for them), and every other value
(numbers, paths, dates, choices, lists, files) still goes through typer's own coercion, so its checks and its
messages are unchanged.
"""

from dataclasses import dataclass, field
from typing import Any

from typer import core

# The one private import of typer kept on purpose: this module replaces how typer builds a parameter's coercion,
# which typer has no public hook for; typer is pinned exactly (requirements-cli.txt), and tests/cli runs every
# kind of parameter through it, so a typer upgrade that moves these names fails there first.
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param


@dataclass(frozen=True)
class LazyRuntimeParam(RuntimeParam):
    descriptor: TypeDescriptor = field(default=None)  # type: ignore[assignment]  # always given
    _built: list[RuntimeParam] = field(default_factory=list)

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        d = self.descriptor
        if type(value) is str and d.annotation is str and d.file_annotation is None and d.parameter_info.parser is None:
            return value
        if not self._built:
            self._built.append(build_runtime_param(d))
        return self._built[0]._coerce_value(value, param=param, ctx=ctx)


def _get_runtime_param(self: core._TyperParameter) -> RuntimeParam:
    if self._runtime_param is None:
        d = self.type_descriptor
        self._runtime_param = LazyRuntimeParam(parameter_info=d.parameter_info, annotation=d.annotation, descriptor=d)
    return self._runtime_param


def install() -> None:
    """Replace typer's eager builder (typer is pinned: requirements-cli.txt)."""
    core._TyperParameter.get_runtime_param = _get_runtime_param  # type: ignore[method-assign]
