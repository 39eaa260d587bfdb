"""One Protocol per concern. Implementations are registered by name in
`policies.registry` and chosen in `config.yaml`; the proxy only sees these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from policies.types import AssembledContext, Extraction, ExtractionContext, SummaryChunk, Turn

if TYPE_CHECKING:
    from policies.assemble.assembly_input import AssemblyInput
    from policies.assemble.summary import DatedTurn


class ExtractionPolicy(Protocol):
    """Turns one incoming message into memory operations.

    Must be deterministic for a given (turn, ctx) and must not mutate ctx.items:
    the proxy applies the returned ops with `policies.memory.reducer.apply_extraction`.
    Assistant and tool messages may only produce `inferred`/data items.
    """

    name: str

    def extract(self, turn: Turn, ctx: ExtractionContext) -> Extraction: ...


class AssemblyPolicy(Protocol):
    """Builds the forwarded messages under the budget and explains every choice.

    Must never drop the system prompt or the current input, never split a tool
    call from its results, and stay within `inp.budget` unless the mandatory
    part alone exceeds it (then forward only that, with `over_budget=True`).
    A function of its input and its own parameters (no clock, no state of its
    own): the proxy hands out the last context again for an equal input
    (`policies.assemble.assembly_input.input_key`).
    """

    name: str

    def assemble(self, inp: AssemblyInput) -> AssembledContext: ...


class SummarizationPolicy(Protocol):
    """Writes the next chunk of a session's rolling summary.

    Incremental: it gets the chunks so far (context only, never rewritten)
    and the turns that leave the recent window, and returns the chunk that
    covers exactly [start, upto). Text with numbers, dates, IDs, names or
    negations must survive verbatim.
    """

    name: str

    def summarize(
        self, previous: Sequence[SummaryChunk], turns: Sequence[DatedTurn], start: int, upto: int
    ) -> SummaryChunk: ...
