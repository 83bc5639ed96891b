"""Efficiencies: the achieved fractions of peak and the fixed overheads that separate a
serving stack from the roofline bound (:data:`ROOFLINE`, every factor at its bound)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import coerce_fields


# --------------------------------------------------------------------------------------------
# Efficiencies
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Efficiency:
    r"""Achieved fractions of peak and fixed overheads.

    With every factor at its default (1, 1, 0, 0) results are the pure roofline bound.

    Attributes
    ----------
    mfu : float
        Achieved fraction of the dense peak FLOP/s in compute-bound operators, (0, 1]; with
        ``achievable_peaks`` 1, of the device's measured achievable matmul rate instead.
    achievable_peaks : float
        How much of a device's measured matmul shortfall applies, [0, 1]: the compute peak
        is the datasheet's times :meth:`Hardware.achievable_share` to this power. 0 (default,
        the bound): the datasheet peak; 1 (the calibrated forecast): the rate a tuned GEMM
        reaches on that chip (MI300X BF16: 51% of its datasheet, H100: 80%), so ``mfu`` is
        the engine's share of what the chip can do.
    mbu : float
        Achieved fraction of peak memory bandwidth in memory-bound operators, (0, 1].
    step_overhead_s : float
        Fixed time per forward step (launches, scheduling, sampling) [s].
    layer_overhead_s : float
        Fixed time per layer per step (kernel launches that CUDA graphs do not hide) [s].
    token_overhead_s : float
        Host time per sampled token per step of one scheduler [s] (sampling, detokenising,
        building the next batch: work that grows with the sequences a step samples); each
        attention-data-parallel rank runs its own, so a step of :math:`R` sampled rows over
        :math:`d` ranks adds :math:`t_\mathrm{tok} R / d`. Default 0.
    link_efficiency : float
        Achieved fraction of scale-up and scale-out link bandwidth in collectives, (0, 1].
    collective_overhead_s : float
        Fixed software time per collective call on top of the links' latency floors [s].
    overlap : float
        Fraction of the shorter of an operator's compute and memory times hidden behind the
        longer, [0, 1]: the operator takes :math:`\max(t_c, t_m) + (1 - o)\min(t_c, t_m)`.
        1 (default) is the roofline's perfect overlap; 0 runs the two in series.
    expert_half_tokens : float
        Tokens per routed expert at which a grouped expert GEMM reaches half of ``mfu``
        [token], >= 0: at :math:`m` tokens per expert it runs at
        :math:`\mathrm{mfu}\, m / (m + m_{1/2})`. 0 (default): full ``mfu`` at any size.
    expert_tile_tokens : float
        Rows of the tile a grouped expert GEMM computes in [token], >= 0: an expert that
        receives :math:`m` tokens is computed as if it had
        :math:`m_\mathrm{eff} = (m^4 + T^4)^{1/4}` (about :math:`\max(m, T)`: a tile of
        :math:`T` rows runs whole however few of them are filled), so its compute runs at
        :math:`\mathrm{mfu}\, m / m_\mathrm{eff}` and at a few tokens per expert the
        operator is bound by reading the experts' weights, as measured; far above :math:`T`
        the penalty vanishes. 0 (default): full ``mfu`` at any size.
    expert_mfu_scale : float
        Routed experts' grouped GEMMs' fraction of ``mfu`` however many tokens each expert
        receives, (0, 1]: a grouped GEMM also permutes its tokens into expert order and back
        and runs many smaller products of uneven sizes, so even full tiles reach a smaller
        share of peak than one dense GEMM of the same FLOPs. Default 1.
    attention_mfu_scale : float
        Attention kernels' (scores and weighted values) fraction of peak relative to ``mfu``,
        > 0; ``mfu x attention_mfu_scale`` must not exceed 1. Default 1.
    request_overhead_s : float
        Fixed time a request spends outside the forward steps before its first token
        (HTTP, tokenisation, scheduling) [s], added to TTFT by
        :func:`tokenomics.serving.steady.steady_state`. Default 0.
    fp4_mfu_scale : float
        Matrix products at a 4-bit floating-point compute format (NVFP4, MXFP4) run at
        ``mfu x fp4_mfu_scale``, (0, 1]: block-scaled FP4 GEMMs reach a smaller share of
        their (doubled) peak than FP8 and BF16 ones. Default 1.
    mixed_input_mfu_scale : float
        Matrix products whose weights are stored narrower than their compute format
        (weight-only quantisation: MXFP4 or INT4 weights computed at BF16) run at
        ``mfu x mixed_input_mfu_scale``, (0, 1]: every tile is dequantised in the kernel
        before it is multiplied. Default 1.
    expert_imbalance : float
        Under expert parallelism (``ep > 1``) the busiest rank's routed-expert tokens exceed
        the mean rank's by this fraction, >= 0, and that rank sets the step: the routed
        experts' FLOPs and activation bytes are multiplied by :math:`1 + \iota` (their
        weight bytes are not: every rank reads its own experts). Real routers are not
        uniform (DeepSeek's EPLB exists to even out hot experts). Default 0.
    collective_overlap : float
        Fraction of the step's collective time the engine hides behind its compute and
        memory time (communication on its own streams, overlapped kernels), [0, 1]. It
        combines with the layout's published overlap (the deployment's ``comm_overlap``, e.g.
        a two-batch overlap) into the hidden share
        :math:`\omega = 1 - (1 - \omega_\mathrm{layout})(1 - \omega_\mathrm{eff})`, of which
        at most the roofline time is hidden. 1 (default) is the bound's: a step takes
        :math:`\max(t_\mathrm{roof}, t_\mathrm{comm})`, what no implementation can beat;
        0 runs the collectives after the kernels, as most engines do without a published
        overlap scheme.
    name : str
        The preset's name (``"calibrated"`` for the committed fit); not compared. Every
        result carries :attr:`label` so that a table says what produced it.
    stack : str
        The serving stack these values are for (``"nvidia-trtllm"``, ``"amd-vllm"``...),
        ``"pooled"`` for the pooled fit of a stack the calibration did not see, or ``""``
        (not stack-specific); not compared.
    stacks : mapping, optional
        Values of a calibration fitted with partial pooling by serving stack and hardware
        family: ``"<stack>|<hardware family>" -> {field: value}``, with ``""`` for a stack
        or family the fit did not see (the pooled values under ``"|"``). A
        :class:`~tokenomics.Deployment` takes its own values from such an efficiency
        (:meth:`for_stack`); not compared.
    families : mapping, optional
        Hardware id -> hardware family, for :attr:`stacks`; not compared.

    Notes
    -----
    **The library's one default is the bound.** A :class:`~tokenomics.Deployment` takes
    :data:`ROOFLINE` unless given an efficiency, and every function (``decode``,
    ``steady_state``, ``frontier``, ``best_at``, ``cheapest_at``) and every CLI command uses
    the deployment's: the calibrated forecast is asked for by name
    (``efficiency=tk.efficiency_presets()["calibrated"]``, ``efficiency="calibrated"``,
    ``--efficiency calibrated``). A bound has no fitted parameter that a refit can move.
    """

    mfu: float = 1.0
    mbu: float = 1.0
    achievable_peaks: float = 0.0
    step_overhead_s: float = 0.0
    layer_overhead_s: float = 0.0
    token_overhead_s: float = 0.0
    link_efficiency: float = 1.0
    collective_overhead_s: float = 0.0
    overlap: float = 1.0
    expert_half_tokens: float = 0.0
    expert_tile_tokens: float = 0.0
    attention_mfu_scale: float = 1.0
    request_overhead_s: float = 0.0
    fp4_mfu_scale: float = 1.0
    mixed_input_mfu_scale: float = 1.0
    expert_mfu_scale: float = 1.0
    expert_imbalance: float = 0.0
    collective_overlap: float = 1.0
    name: str = field(default="", compare=False)
    stack: str = field(default="", compare=False)
    stacks: Any = field(default=None, compare=False, repr=False)
    families: Any = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        """What produced a result: the preset's ``name`` (``"calibrated"`` for the committed
        fit), ``"roofline"`` for the bound, else ``"custom"``."""
        if self.name:
            return self.name
        return "roofline" if self == ROOFLINE else "custom"

    def for_stack(self, stack: str, hardware: str = "") -> Efficiency:
        """The values for a serving stack (``"<vendor>-<engine>"``) on a device (its catalog
        id): the fit's own for the stack and the device's family where :attr:`stacks` has
        them, the pooled ones for what it has not seen; without :attr:`stacks`, this
        efficiency unchanged. :attr:`stack` then names what was used
        (``"<stack>|<family>"``, an unseen part empty).

        Examples
        --------
        >>> e = Efficiency(mbu=0.8, stacks={"|": {"mbu": 0.8}, "amd-vllm|": {"mbu": 0.6}})
        >>> e.for_stack("amd-vllm").mbu, e.for_stack("intel-tgi").stack
        (0.6, '|')
        """
        if not self.stacks:
            return self
        if not isinstance(stack, str) or not isinstance(hardware, str):
            raise TokenomicsError(f"a stack is a string '<vendor>-<engine>' and a hardware a "
                                  f"catalog id, got {stack!r}, {hardware!r}")
        fam = (self.families or {}).get(hardware, "")
        for key in (f"{stack}|{fam}", f"{stack}|", f"|{fam}", "|"):
            if key in self.stacks:
                return replace(self, **self.stacks[key], stack=key)
        raise TokenomicsError("efficiency stacks has no pooled values (key '|')")

    def __post_init__(self) -> None:
        coerce_fields(self, {"step_overhead_s": "s", "layer_overhead_s": "s",
                       "token_overhead_s": "s",
                       "collective_overhead_s": "s", "request_overhead_s": "s"})
        if not isinstance(self.name, str):
            raise TokenomicsError(f"efficiency name must be a string, got {self.name!r}")
        if not isinstance(self.stack, str):
            raise TokenomicsError(f"efficiency stack must be a string, got {self.stack!r}")
        self._check_stacks()
        for f in fields(self):
            if f.name in ("name", "stack", "stacks", "families"):
                continue
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TokenomicsError(f"efficiency {f.name} must be a number, got {v!r}")
        self._check_ranges()

    def _check_stacks(self) -> None:
        """``stacks`` maps ``"<stack>|<family>"`` to known fields (the pooled under ``"|"``)."""
        if self.stacks is not None:
            if not isinstance(self.stacks, Mapping) or "|" not in self.stacks or not all(
                    isinstance(k, str) and isinstance(v, Mapping)
                    for k, v in self.stacks.items()):
                raise TokenomicsError("efficiency stacks must map each '<stack>|<family>' "
                                      "to a mapping of field values, the pooled ones "
                                      "under '|'")
            known = {f.name for f in fields(self)} - {"name", "stack", "stacks", "families"}
            bad = {k for v in self.stacks.values() for k in v} - known
            if bad:
                raise TokenomicsError(f"efficiency stacks name unknown fields: "
                                      f"{', '.join(sorted(bad))}")
            object.__setattr__(self, "stacks", {k: dict(v) for k, v in self.stacks.items()})
        if self.families is not None:
            if not isinstance(self.families, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in self.families.items()):
                raise TokenomicsError(f"efficiency families must map hardware ids to hardware "
                                      f"families (str -> str, e.g. {{'h200': 'h200'}}), got "
                                      f"{type(self.families).__name__}")
            object.__setattr__(self, "families", dict(self.families))

    def _check_ranges(self) -> None:
        """Every field within its physical range (fractions, times, counts)."""
        for name in ("mfu", "mbu", "link_efficiency", "fp4_mfu_scale", "mixed_input_mfu_scale",
                     "expert_mfu_scale"):
            v = getattr(self, name)
            if not (0.0 < v <= 1.0):
                raise TokenomicsError(f"efficiency {name} must be in (0, 1], got {v!r}")
        if not (0.0 <= self.overlap <= 1.0):
            raise TokenomicsError(f"efficiency overlap must be in [0, 1] (1: the roofline's "
                                  f"perfect overlap), got {self.overlap!r}")
        if not (0.0 <= self.achievable_peaks <= 1.0):
            raise TokenomicsError(f"efficiency achievable_peaks must be in [0, 1] (0: datasheet "
                                  f"peaks, 1: measured achievable matmul rates), got "
                                  f"{self.achievable_peaks!r}")
        if not (0.0 <= self.collective_overlap <= 1.0):
            raise TokenomicsError(f"efficiency collective_overlap must be in [0, 1] (1: the "
                                  f"bound hides every collective behind compute), got "
                                  f"{self.collective_overlap!r}")
        if not (0.0 < self.attention_mfu_scale and self.mfu * self.attention_mfu_scale <= 1.0):
            raise TokenomicsError(
                f"efficiency attention_mfu_scale must be > 0 with mfu x attention_mfu_scale "
                f"<= 1, got {self.attention_mfu_scale!r} at mfu {self.mfu!r}")
        for name in ("step_overhead_s", "layer_overhead_s", "collective_overhead_s",
                     "request_overhead_s", "token_overhead_s"):
            v = getattr(self, name)
            if not (v >= 0.0 and math.isfinite(v)):
                raise TokenomicsError(f"efficiency {name} must be >= 0 seconds, got {v!r}")
        if not (self.expert_imbalance >= 0.0 and math.isfinite(self.expert_imbalance)):
            raise TokenomicsError(f"efficiency expert_imbalance must be >= 0 (the busiest "
                                  f"expert-parallel rank's excess load over the mean), got "
                                  f"{self.expert_imbalance!r}")
        if not (self.expert_tile_tokens >= 0.0 and math.isfinite(self.expert_tile_tokens)):
            raise TokenomicsError(f"efficiency expert_tile_tokens must be >= 0 tokens, got "
                                  f"{self.expert_tile_tokens!r}")
        if not (self.expert_half_tokens >= 0.0 and math.isfinite(self.expert_half_tokens)):
            raise TokenomicsError(f"efficiency expert_half_tokens must be >= 0 tokens, got "
                                  f"{self.expert_half_tokens!r}")


#: The pure roofline bound: every efficiency at 1, no overhead.
ROOFLINE = Efficiency()
