"""Parameters of the assemblers (one pydantic model per preset), validated at start-up.

They live in `memory.policy_params.<preset>` in config.yaml. Shares are of the
*history budget*: the budget minus the system prompt and the current input.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from policies.assemble.summary import SummaryParams
from policies.memory.forgetting import ForgettingParams
from policies.memory.scoring import ScoringParams


class _CacheParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Quantise where a *sliding* recent window starts to steps of this share
    # of the budget (window preset; the summary presets compact in steps with
    # the water marks below instead). Off by default: the window only holds
    # still while the conversation grows by less than a step, and on the eval
    # scenarios 0.3 lifted the cached prefix share from 26% to 44% but left
    # ~10% of the budget unused.
    cache_step_share: float = Field(default=0.0, ge=0, lt=0.5)


class RecallParams(BaseModel):
    """Lexical recall of older turns (BM25 over the session's turns)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_hits: int = Field(default=14, ge=0, le=64)
    # BM25 score a turn needs to be recalled: about one rare shared term.
    # (On LoCoMo at a 2,000-token budget, 2.0 instead of 4.0 lifted the share
    # of questions whose evidence reached the model from 0.40 to 0.44.)
    min_score: float = Field(default=2.0, ge=0)
    # A recalled turn longer than this is cut to its most relevant sentences.
    snippet_chars: int = Field(default=400, ge=40)
    # Show a recalled question with the start of its reply, and a recalled
    # answer with the question before it: the words that match are often in
    # one half of the exchange, the answer in the other.
    exchanges: bool = True


class LayeredParams(_CacheParams):
    # Compaction in steps (DESIGN "Prompt caching"): the recent window keeps
    # every turn since the last compaction until it would exceed this share
    # of its room (high-water mark); then its oldest turns are summarised
    # until it is down to `low_water` of the room. Between compactions each
    # prompt is the previous one plus the new turns. A wider gap means fewer
    # compactions (more cache hits) but fewer verbatim turns on average.
    high_water: float = Field(default=1.0, gt=0, le=1)
    summary_share: float = Field(default=0.3, ge=0, le=1)
    low_water: float = Field(default=0.5, gt=0, le=1)
    # Most of the history budget recalled turns may take; beyond the reserve
    # (held back from the recent turns whatever the input) they only get what
    # the recent turns leave.
    recall_share: float = Field(default=0.2, ge=0, le=1)
    recall_reserve: float = Field(default=0.0, ge=0, le=1)
    # Where recalled turns go. DESIGN's order puts them before the recent
    # turns; they change with every input, so there they would cut the cached
    # prefix at that point on every request. "late" puts them after the recent
    # turns (next to the input), keeping the prefix: the default.
    recall_position: Literal["late", "before_recent"] = "late"
    # Late sections stay where they went (`policies.assemble.placed`): forwarded again,
    # byte-identical, while their turn is in the recent window, so the next
    # prompt is this one plus new turns and new late sections. Off: every
    # request lays them out anew next to its input.
    keep_late_in_place: bool = True
    recall: RecallParams = RecallParams()
    summarizer: SummaryParams = SummaryParams()


class WindowParams(_CacheParams):
    pass


class SummaryBufferParams(LayeredParams):
    # Most of the history budget the rolling summary may take: with no item
    # memory, the summary is what carries the older requirements.
    summary_share: float = Field(default=0.45, ge=0, le=1)
    recall_share: float = Field(default=0.2, ge=0, le=1)


class FullParams(LayeredParams):
    # Frozen, so one shared default instance is safe.
    scoring: ScoringParams = ScoringParams()
    memory_share: float = Field(default=0.4, ge=0, le=1)  # anchors + working memory
    # When the user's items do not fit `memory_share`, the block may take up
    # to this much more, out of the recall share (and its reserve): items are
    # what was distilled from the turns, recalled snippets only quote them.
    # On the fresh2 held-out set (budgets of ~20% of the conversation) the
    # block held 7 of 15 items at 0.4. At 400-700-token budgets (fresh4, fresh6)
    # 0.3 left items out with room unused (the summary and recent turns took less
    # than their shares): 0.6 lets the block take what the rest leaves. Probe
    # recall 0.833 -> 0.972 (fresh4), 0.769 -> 0.925 (fresh6); unchanged where
    # items fit (dev, fresh11-13; LoCoMo's quick run identical).
    memory_borrow_share: float = Field(default=0.6, ge=0, le=1)
    # Of the block, what incidental items (plain facts and preferences with no
    # value in them: `policies.memory.standing`) may take; rules and values do not
    # count against it.
    incidental_share: float = Field(default=0.1, ge=0, le=1)
    # Items added since the memory block was laid out, shown late; when they
    # outgrow this share the block is laid out again with them in it.
    delta_share: float = Field(default=0.1, ge=0, le=1)
    replay_share: float = Field(default=0.1, ge=0, le=1)  # replay + conflict notes
    summary_share: float = Field(default=0.25, ge=0, le=1)
    # Recall only takes what the recent turns and the other sections leave,
    # so a large share costs nothing when there is no room. At 0.2, a block
    # that borrowed its 0.3 left no recall at all: on LoCoMo (questions about
    # sessions long gone, 2,000 tokens) the answer was in the context for
    # 0.180 of the items, 0.257 at 0.4 (dev scenarios: +7% tokens per round).
    recall_share: float = Field(default=0.4, ge=0, le=1)
    # Held back from the recent turns for recall. Recalled turns answer about
    # ten times more LoCoMo questions per token than the recent window; 0.15
    # instead of 0.1 took full's answer-in-context share at 2,000 tokens from
    # 0.806 to 0.828 of raw's, at the cost of more frequent compaction (dev
    # scenarios' prefix share 0.453 -> 0.440).
    recall_reserve: float = Field(default=0.15, ge=0, le=1)
    max_anchors: int = Field(default=4, ge=0)
    min_anchors: int = Field(default=2, ge=0)
    anchor_min_importance: float = Field(default=0.8, ge=0)
    replay_max: int = Field(default=3, ge=0, le=3)
    # Cosine over terms; one shared CJK bigram between a 13-term rule and a
    # 15-term question ("花生" in 花生酱 vs 花生也算) is ~0.07 and should count.
    replay_threshold: float = Field(default=0.06, ge=0, le=1)
    include_inferred: bool = True
    forgetting: ForgettingParams = ForgettingParams()
