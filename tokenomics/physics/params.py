"""Parameter counts computed from the architecture: the public, id-accepting forms.

The counting itself is :mod:`tokenomics.data.counts` (pure functions of a :class:`Model`'s
fields, in the data stage so that the loader can check a file's stated totals against it);
the per-layer counts are imported here so that ``tokenomics.params.<name>`` keeps working.

Counts follow the weight tensors a checkpoint stores (biases and norm scales included); the
formulas per component are listed in :mod:`tokenomics.data.counts`. The test suite holds every
catalog model within 2% of its official total and active counts.

References
----------
.. [1] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, 2024 (MLA, 671B/37B).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokenomics.data.boundary import inputs
from tokenomics.data.counts import (  # noqa: F401  (the 0.2 paths tokenomics.params.<name>)
    OFFICIAL_PARAMS_TOLERANCE,
    attention_params,
    attention_params_per_layer,
    check_official_params,
    component_params,
    counted_params,
    dsa_indexer_params_per_layer,
    expert_params,
    ffn_params,
    latent_projection_params_per_layer,
    linear_attention_params_per_layer,
    per_layer_embedding_params,
    router_params_per_layer,
)
from tokenomics.data.specs import Model

if TYPE_CHECKING:
    import pandas as pd


class ParamBreakdown(dict):
    """Parameters per component [parameters]: a ``dict`` that also tabulates.

    ``b["attention"]`` reads one component; :meth:`to_frame` gives the table.
    """

    def to_series(self) -> pd.Series:
        """The components as a float Series named ``parameters``."""
        import pandas as pd

        return pd.Series(dict(self), name="parameters", dtype=float)

    def to_frame(self) -> pd.DataFrame:
        """One row per component (index ``component``): ``parameters`` and ``share`` of the
        total (a fraction; 0 for an empty model)."""
        import pandas as pd

        s = self.to_series()
        tot = float(s.sum())
        df = pd.DataFrame({"parameters": s, "share": s / tot if tot else 0.0 * s})
        df.index.name = "component"
        return df


@inputs(model="model")
def param_breakdown(model: Model) -> ParamBreakdown:
    """Parameters per component of the main model (MTP modules excluded) [parameters].

    Parameters
    ----------
    model : Model
        The architecture (a catalog entry or one built from a config).

    Returns
    -------
    ParamBreakdown
        A dict (with ``to_frame()``): ``embedding`` (token + learned position tables),
        ``lm_head`` (0 when tied),
        ``attention`` (softmax-attention layers), ``linear_attention`` (Gated DeltaNet
        layers), ``norms``, ``dense_ffn``, ``router``, ``shared_experts``,
        ``routed_experts`` (all experts of all MoE layers), ``latent_projections`` (a latent
        MoE's projections into and out of its expert width), ``per_layer_embedding`` and
        ``per_layer_projection`` (Gemma 4 E2B/E4B's per-layer embeddings; 0 elsewhere).

    References
    ----------
    .. [1] Hugging Face transformers modelling code of each architecture (tensor shapes).
    """
    return ParamBreakdown(component_params(model))


@inputs(model="model")
def param_count(model: Model, active: bool = False, include_embedding: bool = True,
                include_lm_head: bool = True, include_per_layer_embedding: bool = True) -> float:
    """Number of parameters of the main model [parameters].

    Parameters
    ----------
    model : Model
    active : bool
        If True, parameters used per token: routed experts counted ``top_k`` of
        ``num_experts`` times per MoE layer (the vendors' "active" convention).
    include_embedding : bool
        Count the input embedding table (default True, as vendors' totals do). Its rows are
        gathered, not multiplied, so it adds no FLOPs.
    include_lm_head : bool
        Count the (untied) LM head (default True); False for vendors' active counts that
        leave it out (Qwen3-Next, GLM-4.5).
    include_per_layer_embedding : bool
        Count a per-layer embedding table (Gemma 4 E2B/E4B; default True); False for
        Google's "effective" parameters, which leave it out.

    Returns
    -------
    float
        Parameters.

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, 2024 (671B/37B).

    Examples
    --------
    >>> from tokenomics.data.catalog import model
    >>> round(param_count(model("llama-3.1-405b")) / 1e9, 1)  # Meta: 405B
    405.9
    """
    return counted_params(model, active, include_embedding, include_lm_head,
                          include_per_layer_embedding)
