"""The catalog's conf files as strict, frozen models: search profiles and enrichments.

Model aliases (`conf/models.yaml`) use `memseek.models.config.ModelDecl`; the rank default
(`conf/rank_default.yaml`) uses `memseek.catalog.rank.RankDefault`.

How a catalog's conf files combine with the shipped ones (`conf/*.yaml` of the project):
`search_profiles.yaml`, `models.yaml` and `enrichments.yaml` MERGE over the shipped files — an
entry the catalog declares replaces the shipped entry of the same name, every other shipped
entry stays available. `rank_default.yaml` REPLACES the shipped formula of each mode it
defines (a formula is one reviewed unit, never merged node by node); a mode it leaves out keeps
the shipped formula, and `candidates` falls back to the shipped value.
"""

from __future__ import annotations

from typing import Annotated
from typing import Literal

from pydantic import Field
from pydantic import StrictBool
from pydantic import field_validator

from memseek.catalog.base import Capability
from memseek.catalog.base import Name
from memseek.catalog.base import NonBlank
from memseek.catalog.base import Number
from memseek.catalog.base import Strict
from memseek.catalog.base import Unique

ALL_CAPABILITIES: frozenset[Capability] = frozenset({"vector", "text", "recent", "structured"})


class PgProfile(Strict):
    """The built-in PostgreSQL search: every mode, no options."""

    backend: Literal["pg"]

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What this engine can do: everything."""
        return ALL_CAPABILITIES


class TurbopufferProfile(Strict):
    """An external turbopuffer index proposing candidates; Postgres still re-checks and ranks."""

    backend: Literal["turbopuffer"]
    layout: Literal["shared", "per_collection"] = Field(
        "shared", description="One namespace or one per collection."
    )
    consistency: Literal["strong", "eventual"] = Field("strong", description="Read consistency requested.")
    enabled_if_credentials: StrictBool = Field(False, description="Only active when credentials exist.")

    @property
    def capabilities(self) -> frozenset[Capability]:
        """Turbopuffer proposes by vector and full-text only: no recent or structured listings."""
        return frozenset({"vector", "text"})


SearchProfile = Annotated[PgProfile | TurbopufferProfile, Field(discriminator="backend")]


class LlmScore(Strict):
    """The model rates each record's text → `scores[name]`, a number within `range`."""

    kind: Literal["llm_score"]
    instructions: NonBlank = Field(description="What the model is asked to rate.")
    range: tuple[Number, Number] = Field(description="[lowest, highest].")
    model: Name = Field("cheap", description="The chat model alias from conf/models.yaml.")

    @field_validator("range")
    @classmethod
    def _ordered(cls, value: tuple[float, float]) -> tuple[float, float]:
        if value[0] >= value[1]:
            raise ValueError("the lowest value must be below the highest")
        return value


class LlmLabel(Strict):
    """The model picks one label per record → `annotations[name] = {"label": ...}`."""

    kind: Literal["llm_label"]
    labels: Annotated[tuple[NonBlank, ...], Unique] = Field(
        min_length=1, description="The allowed labels, unique."
    )
    instructions: NonBlank | None = Field(None, description="Extra guidance for the model.")
    model: Name = Field("cheap", description="The chat model alias from conf/models.yaml.")


class ClientEnrichment(Strict):
    """The writer supplies `annotations[name]` itself; nothing is computed."""

    kind: Literal["client"]
    description: NonBlank | None = None


Enrichment = Annotated[LlmScore | LlmLabel | ClientEnrichment, Field(discriminator="kind")]
