"""One Protocol per concern. Implementations are registered by name in
`policies.registry` and chosen in `config.yaml`; the proxy only sees these."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from policies.types import AssembledContext, Extraction, ExtractionContext, Turn

if TYPE_CHECKING:
    from policies.assembly import AssemblyInput


class ExtractionPolicy(Protocol):
    """Turns one incoming message into memory operations.

    Must be deterministic for a given (turn, ctx) and must not mutate ctx.items:
    the proxy applies the returned ops with `policies.memory.apply_extraction`.
    Assistant and tool messages may only produce `inferred`/data items.
    """

    name: str

    def extract(self, turn: Turn, ctx: ExtractionContext) -> Extraction: ...


class AssemblyPolicy(Protocol):
    """Builds the forwarded messages under the budget and explains every choice.

    Must never drop the system prompt or the current input, never split a tool
    call from its results, and stay within `inp.budget` unless the mandatory
    part alone exceeds it (then forward only that, with `over_budget=True`).
    """

    name: str

    def assemble(self, inp: AssemblyInput) -> AssembledContext: ...
