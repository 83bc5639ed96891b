"""A deployment: a model served on a group of identical devices, with its formats and layout.

A :class:`Deployment` names the model and hardware (catalog ids resolve through
:mod:`tokenomics.data.catalog`), the tensor/pipeline/expert/attention-data parallel layout,
the weight, KV, activation and compute formats, the memory budget and the efficiencies. It
rejects at construction any layout the model or the hardware's links cannot run
(:mod:`tokenomics.data.interconnect`), so every later stage may take it as valid. The compute
peak is checked lazily (:meth:`Deployment.compute_peak_flop_per_s`): a device that publishes
only its memory bandwidth (HyperAccel Bertha, Vera Rubin, Cerebras) still gets a
memory-bound decode time, while prefill, ridge points and anything else that needs the peak
raise :class:`~tokenomics.core.errors.NotPublishedError` naming the missing figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tokenomics.core.dtypes import dtype
from tokenomics.core.errors import NotPublishedError, TokenomicsError
from tokenomics.core.units import coerce_fields
from tokenomics.data import catalog
from tokenomics.data.display import deployment_repr, entry_html
from tokenomics.data.interconnect import ALGORITHMS, topology
from tokenomics.data.specs import ROOFLINE, Efficiency, Hardware, Model

#: How an expert-parallel step exchanges tokens (:attr:`Deployment.ep_exchange`).
EP_EXCHANGES = ("alltoall", "allgather")


def check_deployment(dep: Any, where: str) -> None:
    """Raise a :class:`TokenomicsError` unless ``dep`` is a :class:`Deployment`.

    A model or hardware id alone does not say the layout, so it is refused with the way to
    build one: ``tk.Deployment("llama-3.1-8b", "h100-sxm", tp=...)``.
    """
    if not isinstance(dep, Deployment):
        hint = (f"; build one with tk.Deployment({dep!r}, <hardware id>, tp=...)"
                if isinstance(dep, str) else "; build one with tk.Deployment(model, hardware)")
        raise TokenomicsError(f"{where} needs a Deployment, got {type(dep).__name__} "
                              f"{str(dep)[:60]!r}{hint}")


def _number(v: Any, name: str) -> None:
    """Raise unless ``v`` is a real number (a bool, a string or an array is not)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TokenomicsError(f"{name} must be a number, got {v!r}")


@dataclass(frozen=True)
class Deployment:
    """A model served on a group of identical devices.

    Parameters
    ----------
    model : Model or str
        A :class:`Model` or a catalog id.
    hardware : Hardware or str
        A :class:`Hardware` or a catalog id.
    tp, pp : int
        Devices per pipeline stage and pipeline stages; the replica spans ``tp * pp``
        devices. Within a stage, the dense layers are tensor-parallel over ``tp``.
    ep : int
        Expert parallelism: 1 (routed experts tensor-parallel over ``tp``, an all-reduce per
        MoE layer) or ``tp`` (each device of the stage holds ``E / tp`` whole experts; tokens
        travel by all-to-all dispatch and combine). Must divide the expert count.
    dp_attention : int
        Attention data parallelism inside a stage (divides ``tp``): attention runs
        tensor-parallel over ``tp / dp_attention`` devices, each such group serving its own
        ``1 / dp_attention`` of the sequences with its own copy of the attention weights (as
        DeepSeek-style deployments run MLA beside expert-parallel MoE). **Batch convention:**
        every ``batch`` / ``concurrency`` argument of the library counts the sequences of the
        whole replica, never of one attention rank; each rank serves ``batch / dp_attention``
        of them (DeepSeek's decode on EP144: ~88 sequences per GPU is ``batch=12_700``).
    mlp_data_parallel : bool
        With attention data parallelism, run the dense FFN layers, the shared experts and the
        router data-parallel too (default False): each attention group holds them whole
        (split over its ``tp / dp_attention`` devices) and runs them on its own sequences,
        so they need no all-reduce over the stage but take ``dp_attention`` times the
        memory and are read once per group. TensorRT-LLM runs them so whenever attention DP
        is on (its DeepSeek-V3 layers: "If using attention DP, the MLP also uses DP instead
        of TP"; its Llama 4 shared expert and dense MLPs: ``overridden_tp_size=1``). Needs
        ``dp_attention > 1``.
    ep_exchange : {"alltoall", "allgather"}
        How an expert-parallel step moves tokens to their experts and back (default
        ``"alltoall"``): each token's hidden state to the ranks of its :math:`k` experts and
        back (DeepEP, NVLink one- and two-sided all-to-all), or, with attention data
        parallelism, ``"allgather"``: every rank gathers all ranks' tokens, runs its own
        experts on them and reduce-scatters the outputs (each device receives
        :math:`\frac{ep-1}{ep} N h` bytes each way, :math:`ep/k` times an all-to-all's).
        TensorRT-LLM exchanges so wherever its all-to-all kernels cannot run: without NVLink
        between the devices (``MnnvlMemory.supports_mnnvl``), and in its first wide-EP
        releases unless ``ep > top_k``. Needs ``ep > 1`` and ``dp_attention > 1``.
    weight_dtype : str, optional
        Weight format; default the model's released format.
    expert_dtype : str, optional
        Routed-expert weight format; default the model's (e.g. gpt-oss MXFP4), else
        ``weight_dtype``.
    embedding_dtype : str, optional
        Format of the token embedding and LM head; default their released format (the
        model's ``embedding_dtype``, else its ``weight_dtype``), whatever ``weight_dtype`` is:
        weight quantization recipes convert only the linear layers of the transformer blocks
        and keep the embedding and LM head at the checkpoint's format (Neural Magic's
        Llama 3.1 FP8 checkpoints; DeepSeek-V3's FP8 release).
    kv_dtype : str
        KV-cache format (default ``"bf16"``).
    act_dtype : str
        Activation format (default ``"bf16"``).
    compute_dtype : str, optional
        Format the matrix units run at (selects the hardware peak); default ``act_dtype``.
        Weight-only quantisation (W4A16) computes at the activation format.
    efficiency : Efficiency
        Default :data:`ROOFLINE` (the bound).
    usable_memory_fraction : float
        Fraction of device memory the serving engine may use, (0, 1]. Default 0.9, vLLM's
        ``gpu_memory_utilization`` default.
    runtime_reserve_bytes : float
        Memory per device held by the runtime outside the engine's pool (CUDA context,
        NCCL buffers) [B]. Default 0.
    workspace_bytes : float, optional
        Activation workspace per device [B]. Default: estimated by
        :func:`tokenomics.physics.memory.activation_workspace_bytes` for the step being sized.
    allow_beyond_max_context : bool
        Permit contexts longer than the model's ``max_position_embeddings``.
    redundant_experts : int
        Extra copies of routed experts spread over the ``ep`` devices (>= 0, default 0), as
        DeepSeek's expert-parallel load balancer places the hottest experts twice: the
        ``E + r`` physical experts must divide evenly over ``ep``, so EP degrees that do not
        divide ``E`` become possible (DeepSeek-V3: 256 + 32 = 288 over EP144, EP72, EP48 or
        EP32). Each device holds ``(E + r) / ep`` experts; a step reads the distinct
        physical experts its tokens reach (the copies share the load evenly).
    comm_overlap : float
        Fraction of communication time hidden behind compute, [0, 1] (default 0: none). At
        most the step's compute-and-memory time can be hidden.
    engine : str, optional
        The serving engine (``"trtllm"``, ``"vllm"``, ``"sglang"``...). With an efficiency
        fitted per stack (the calibrated preset), the deployment takes the values of its
        stack, ``"<vendor>-<engine>"``, on its hardware's family
        (:meth:`~tokenomics.data.specs.Efficiency.for_stack`); None (default) or a stack the
        calibration has not seen takes the pooled values. The roofline bound does not
        depend on it.
    allreduce_algorithm : {"auto", "ring", "tree", "one_shot", "two_shot"}
        All-reduce algorithm (see :mod:`tokenomics.physics.collectives`); ``"auto"`` takes the fastest.
    kv_shard : {"heads", "all"}
        How the KV cache is split over the ``tp`` devices. ``"heads"`` (default, Megatron-style
        tensor parallelism): by KV head, so a ``tp`` above the KV-head count replicates heads
        and MLA's single latent is replicated on every rank. ``"all"``: evenly over all
        devices (by sequence or batch, as the scaling book's fully sharded layouts and
        attention data parallelism do), no replication.

    References
    ----------
    .. [1] Neural Magic, "Meta-Llama-3.1-70B-Instruct-FP8" model card, Hugging Face, 2024
       (https://huggingface.co/neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8): the FP8
       recipe converts the linear layers inside the transformer blocks only, so the
       embedding and LM head keep the release format (the ``embedding_dtype`` default).
    """

    model: Model
    hardware: Hardware
    tp: int = 1
    pp: int = 1
    ep: int = 1
    # None selects the documented default; after construction each is a canonical name.
    weight_dtype: str = None  # type: ignore[assignment]
    expert_dtype: str = None  # type: ignore[assignment]
    embedding_dtype: str = None  # type: ignore[assignment]
    kv_dtype: str = "bf16"
    act_dtype: str = "bf16"
    compute_dtype: str = None  # type: ignore[assignment]
    efficiency: Efficiency = ROOFLINE
    usable_memory_fraction: float = 0.9
    runtime_reserve_bytes: float = 0.0
    workspace_bytes: float | None = None
    allow_beyond_max_context: bool = False
    kv_shard: str = "heads"
    dp_attention: int = 1
    comm_overlap: float = 0.0
    allreduce_algorithm: str = "auto"
    redundant_experts: int = 0
    engine: str | None = None
    mlp_data_parallel: bool = False
    ep_exchange: str = "alltoall"

    def __repr__(self) -> str:
        return deployment_repr(self)

    def _repr_html_(self) -> str:
        return entry_html(self)

    def __post_init__(self) -> None:
        coerce_fields(self, {"runtime_reserve_bytes": "B", "workspace_bytes": "B"})
        if not isinstance(self.allow_beyond_max_context, (bool, np.bool_)):
            raise TokenomicsError(f"allow_beyond_max_context must be True or False, got "
                                  f"{self.allow_beyond_max_context!r}")
        if not isinstance(self.kv_shard, str) or self.kv_shard not in ("heads", "all"):
            raise TokenomicsError(f"kv_shard must be 'heads' or 'all', got {self.kv_shard!r}")
        self._resolve_catalog_ids()
        if not isinstance(self.efficiency, Efficiency):
            raise TokenomicsError(f"efficiency must be an Efficiency (tk.ROOFLINE, "
                                  f"tk.efficiency_presets(), tk.Efficiency(...)), got "
                                  f"{self.efficiency!r}")
        self._resolve_stack()
        self._check_parallel_sizes()
        self._check_layout()
        self._check_communication()
        self._resolve_formats()
        self._check_memory_budget()
        self._check_compute_format()

    @property
    def mlp_copies(self) -> int:
        """Copies of the dense FFN, shared experts and router the stage holds:
        ``dp_attention`` with :attr:`mlp_data_parallel`, else 1."""
        return self.dp_attention if self.mlp_data_parallel else 1

    @property
    def stack(self) -> str:
        """``"<vendor>-<engine>"`` (e.g. ``"nvidia-trtllm"``), or ``""`` without an engine."""
        return f"{self.hardware.vendor.lower()}-{self.engine}" if self.engine else ""

    def _resolve_stack(self) -> None:
        """Check ``engine`` and give the efficiency its stack's values (when it has any)."""
        e = self.engine
        if e is not None and (not isinstance(e, str) or not e or e != e.strip().lower()):
            raise TokenomicsError(f"engine must be a lowercase engine name such as 'trtllm', "
                                  f"'vllm' or 'sglang', or None, got {e!r}")
        if self.efficiency.stacks:
            object.__setattr__(self, "efficiency",
                               self.efficiency.for_stack(self.stack, self.hardware.id))

    @property
    def comm_hidden_share(self) -> float:
        r"""Share of the step's collective time hidden behind its roofline time, [0, 1]:
        :math:`1 - (1 - \omega_\mathrm{layout})(1 - \omega_\mathrm{eff})` from the layout's
        ``comm_overlap`` and the efficiency's ``collective_overlap`` (1 at the bound)."""
        return 1.0 - (1.0 - self.comm_overlap) * (1.0 - self.efficiency.collective_overlap)

    def _resolve_catalog_ids(self) -> None:
        """Replace a model or hardware given as a catalog id by its catalog entry."""
        if not isinstance(self.model, Model):    # an id; anything else: the lookup's error
            object.__setattr__(self, "model", catalog.model(self.model))
        if not isinstance(self.hardware, Hardware):   # an id, or a System (its own device)
            object.__setattr__(self, "hardware", catalog.hardware(self.hardware))

    def _check_parallel_sizes(self) -> None:
        """Each parallel degree (tp, pp, ep, dp_attention) is a positive integer, not a bool."""
        for name in ("tp", "pp", "ep", "dp_attention"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise TokenomicsError(f"{name} must be a positive integer, got {v!r}")
        r = self.redundant_experts
        if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or r < 0:
            raise TokenomicsError(f"redundant_experts must be a whole number >= 0, got {r!r}")

    def _check_communication(self) -> None:
        """``comm_overlap`` in [0, 1] and a known all-reduce algorithm (or ``"auto"``)."""
        _number(self.comm_overlap, "comm_overlap")
        if not (0.0 <= self.comm_overlap <= 1.0):
            raise TokenomicsError(f"comm_overlap must be in [0, 1], got {self.comm_overlap!r}")
        if not isinstance(self.allreduce_algorithm, str) or \
                self.allreduce_algorithm not in ALGORITHMS + ("auto",):
            raise TokenomicsError(
                f"allreduce_algorithm must be one of {', '.join(ALGORITHMS + ('auto',))}, "
                f"got {self.allreduce_algorithm!r}")

    def _resolve_formats(self) -> None:
        """Fill the documented format defaults, then store every format by canonical name.

        Weights default to the model's released format; routed experts to the model's expert
        format while the weights stay at the released format (else to the weight format); the
        embedding and LM head to their released format; compute to the activation format.
        """
        if self.weight_dtype is None:
            object.__setattr__(self, "weight_dtype", self.model.weight_dtype)
        if self.expert_dtype is None:
            object.__setattr__(
                self, "expert_dtype",
                self.model.expert_dtype if self.model.expert_dtype and
                self.weight_dtype == self.model.weight_dtype else self.weight_dtype)
        if self.embedding_dtype is None:
            object.__setattr__(self, "embedding_dtype",
                               self.model.embedding_dtype or self.model.weight_dtype)
        if self.compute_dtype is None:
            object.__setattr__(self, "compute_dtype", self.act_dtype)
        for name in ("weight_dtype", "expert_dtype", "embedding_dtype", "kv_dtype", "act_dtype",
                     "compute_dtype"):
            object.__setattr__(self, name, dtype(getattr(self, name)).name)

    def _check_compute_format(self) -> None:
        """Reject a compute format the chip does not run; a missing peak is checked later.

        A format the catalog marks ``"not supported"`` cannot run on the device, so the
        deployment is invalid. A ``"not published"`` peak only leaves the compute time
        unknown: it is checked where it is used (:meth:`compute_peak_flop_per_s`), so a
        device without a published peak still serves memory-bound decode from its bandwidth.
        """
        key = dtype(self.compute_dtype).peak
        if self.hardware.unavailable.get(f"compute.{key}") == "not supported":
            self.hardware.peak(self.compute_dtype)   # raises the catalog's own message

    def _check_memory_budget(self) -> None:
        """Usable fraction in (0, 1], runtime reserve and workspace finite and >= 0 [B]."""
        _number(self.usable_memory_fraction, "usable_memory_fraction")
        if not (0.0 < self.usable_memory_fraction <= 1.0):
            raise TokenomicsError(
                f"usable_memory_fraction must be in (0, 1], got {self.usable_memory_fraction!r}")
        _number(self.runtime_reserve_bytes, "runtime_reserve_bytes")
        if not (0 <= self.runtime_reserve_bytes < math.inf):
            raise TokenomicsError(
                f"runtime_reserve_bytes must be finite and >= 0 [B], got "
                f"{self.runtime_reserve_bytes!r}")
        if self.workspace_bytes is not None:
            _number(self.workspace_bytes, "workspace_bytes")
            if not (0 <= self.workspace_bytes < math.inf):
                raise TokenomicsError(f"workspace_bytes must be finite and >= 0 [B], got "
                                      f"{self.workspace_bytes!r}")

    def _check_layout(self) -> None:
        """Reject parallel layouts the model or the hardware cannot run."""
        m = self.model
        if self.pp > m.num_layers:
            raise TokenomicsError(f"pp={self.pp} exceeds the model's {m.num_layers} layers")
        if self.tp % self.dp_attention:
            raise TokenomicsError(
                f"dp_attention={self.dp_attention} must divide tp={self.tp}")
        if not isinstance(self.mlp_data_parallel, (bool, np.bool_)):
            raise TokenomicsError(f"mlp_data_parallel must be True or False, got "
                                  f"{self.mlp_data_parallel!r}")
        if self.mlp_data_parallel and self.dp_attention == 1:
            raise TokenomicsError("mlp_data_parallel runs the dense FFN and shared experts "
                                  "data-parallel beside attention data parallelism; it needs "
                                  "dp_attention > 1 (got 1)")
        self._check_ep_exchange()
        for a, _ in m.attention_shapes():     # Gemma 4's full layers have their own
            self._check_heads(a)
        if self.ep > 1 or self.redundant_experts:
            self._check_expert_parallel()
        self._check_links()

    def _check_heads(self, a: Any) -> None:
        """Attention tensor parallelism divides the query heads of shape ``a`` and divides
        its KV heads or is a multiple of them."""
        atp, mid = self.attention_tp, self.model.id
        if a.num_q_heads % atp:
            raise TokenomicsError(
                f"attention tensor parallelism {atp} (tp / dp_attention) must divide "
                f"{mid}'s {a.num_q_heads} query heads")
        if a.kind != "MLA" and a.num_kv_heads % atp and atp % a.num_kv_heads:
            raise TokenomicsError(
                f"attention tensor parallelism {atp} must divide {mid}'s {a.num_kv_heads} KV "
                "heads or be a multiple of them")

    def _check_ep_exchange(self) -> None:
        """``ep_exchange`` is one of :data:`EP_EXCHANGES`; ``"allgather"`` gathers the
        attention-DP ranks' tokens, so it needs ``ep > 1`` and ``dp_attention > 1``."""
        x = self.ep_exchange
        if not isinstance(x, str) or x not in EP_EXCHANGES:
            raise TokenomicsError(f"ep_exchange must be one of {', '.join(EP_EXCHANGES)}, got "
                                  f"{x!r}")
        if x == "allgather" and (self.ep == 1 or self.dp_attention == 1):
            raise TokenomicsError(f"ep_exchange='allgather' gathers every attention-DP rank's "
                                  f"tokens for its experts; it needs ep > 1 and dp_attention "
                                  f"> 1 (got ep={self.ep}, dp_attention={self.dp_attention})")

    def _check_expert_parallel(self) -> None:
        """``ep > 1`` needs a MoE model, ``ep == tp`` and ``ep`` dividing the routed experts
        (redundant copies included)."""
        m = self.model
        if not m.is_moe:
            what = f"ep={self.ep}" if self.ep > 1 else \
                f"redundant_experts={self.redundant_experts!r}"
            raise TokenomicsError(f"{what} but {m.id} has no experts; use ep=1 and "
                                  f"redundant_experts=0")
        r = self.redundant_experts
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 0:
            raise TokenomicsError(f"redundant_experts must be a whole number >= 0, got {r!r}")
        if r and self.ep == 1:
            raise TokenomicsError(f"redundant_experts={r} needs expert parallelism (ep > 1): "
                                  f"with ep=1 every device holds a slice of every expert")
        if self.ep != self.tp:
            raise TokenomicsError(
                f"ep must be 1 (experts tensor-parallel) or tp={self.tp} (whole experts "
                f"spread over the stage), got ep={self.ep}")
        assert m.moe is not None
        if self.physical_experts % self.ep:
            extra = f" + {r} redundant" if r else ""
            raise TokenomicsError(
                f"ep={self.ep} must divide {m.id}'s {m.moe.num_experts}{extra} routed experts;"
                f" add redundant_experts so that E + r is a multiple of ep")

    def _check_links(self) -> None:
        """The tp group and a pipeline replica must fit the hardware's published links."""
        topo = topology(self.hardware)
        if self.tp > 1 and topo.domain_size == 0:
            raise TokenomicsError(
                f"{self.hardware.id}: scale-up domain size not published; give it with "
                "hardware.with_(scale_up_domain_size=...)")
        topo.check(self.tp, f"tp={self.tp}", self.hardware.id)
        if self.pp > 1:
            topo.check(self.n_devices if self.n_devices > max(topo.domain_size, 1) else 1,
                       f"the replica of tp*pp={self.n_devices}", self.hardware.id)

    @property
    def attention_dtype(self) -> str:
        """Format attention's matrix products (scores, weighted values) run at: the wider of
        ``compute_dtype`` and ``kv_dtype``.

        Attention multiplies the queries by the cached keys and values, so it cannot run
        below the cache's format: with NVFP4 weights and an FP8 cache (TensorRT-LLM on
        Blackwell) it runs at FP8, with FP8 weights and a BF16 cache at BF16.
        """
        c, k = dtype(self.compute_dtype), dtype(self.kv_dtype)
        return self.compute_dtype if c.element_bits >= k.element_bits else self.kv_dtype

    def attention_peak_flop_per_s(self) -> float:
        """Dense peak at :attr:`attention_dtype` [FLOP/s]; the compute peak where the
        hardware publishes none for that format."""
        try:
            return self.hardware.peak(self.attention_dtype)
        except NotPublishedError:
            return self.compute_peak_flop_per_s("attention's compute time")

    @property
    def compute_peak_published(self) -> bool:
        """Whether the hardware publishes a dense peak for ``compute_dtype``."""
        return dtype(self.compute_dtype).peak in self.hardware.peak_flop_per_s

    def compute_peak_flop_per_s(self, needed_by: str = "this calculation") -> float:
        """Dense peak of the hardware at ``compute_dtype`` [FLOP/s], checked where it is used.

        Parameters
        ----------
        needed_by : str
            What needs the peak, named in the error (e.g. ``"prefill"``, ``"the ridge point"``).

        Returns
        -------
        float
            ``hardware.peak(compute_dtype)`` [FLOP/s] (integer formats: op/s).

        Raises
        ------
        NotPublishedError
            If the catalog gives no peak for the format; the message names the missing
            figure, what needed it, the formats that have one, and the override
            (``compute_dtype=`` or ``hardware.with_(peak_flop_per_s=...)``).
        """
        try:
            return self.hardware.peak(self.compute_dtype)
        except NotPublishedError as exc:
            raise NotPublishedError(
                f"{needed_by} needs the compute peak: {exc}; pick a compute_dtype with a "
                "published peak or give one with hardware.with_(peak_flop_per_s={...}). "
                "Memory-bound decode works without it (a bandwidth-only lower bound)"
            ) from None

    @property
    def physical_experts(self) -> int:
        """Routed experts held over the replica, redundant copies included: ``E + r``
        (0 for a dense model)."""
        m = self.model.moe
        return 0 if m is None else m.num_experts + self.redundant_experts

    @property
    def attention_tp(self) -> int:
        """Devices one attention head group is split over: ``tp / dp_attention``."""
        return self.tp // self.dp_attention

    @property
    def n_devices(self) -> int:
        """Devices in one model replica, ``tp * pp``."""
        return self.tp * self.pp

    @property
    def kv_replication(self) -> float:
        """Copies of each KV head across the attention tensor-parallel group.

        GQA/MQA with attention TP above the KV-head count replicate each head
        ``attention_tp / num_kv_heads`` times; MLA's shared latent is replicated on every
        attention-TP rank. 1 with ``kv_shard="all"``. A model whose full layers have their
        own shape (``global_attention``) has one figure per shape
        (:meth:`kv_replication_of`); where they differ this raises, since no one figure
        holds for its cache.
        """
        reps = {self.kv_replication_of(a) for a, _ in self.model.attention_shapes()}
        if len(reps) > 1:
            raise TokenomicsError(
                f"{self.model.id} at attention tp {self.attention_tp}: its windowed and full "
                f"layers replicate their KV heads {sorted(reps)} times (they have "
                f"{self.model.attention.num_kv_heads} and "
                f"{self.model.attention_shapes()[-1][0].num_kv_heads} KV heads), so no one "
                "replication holds; use kv_replication_of(shape), or kv_shard='all'")
        return reps.pop()

    def kv_replication_of(self, att: Any) -> float:
        """:attr:`kv_replication` of the layers of one attention shape
        (:class:`~tokenomics.data.specs.Attention`)."""
        if self.kv_shard == "all":
            return 1.0
        atp = self.attention_tp
        if att.kind == "MLA":
            return float(atp)
        return float(atp / min(atp, att.num_kv_heads))

    def with_(self, **changes: Any) -> Deployment:
        """Return a copy with fields replaced."""
        return replace(self, **changes)

    def __getstate__(self) -> dict[str, Any]:
        """The fields only: what the fast paths keep on a deployment (its step plans,
        decode curves and call counts, under names starting with ``_``) is rebuilt where
        the copy is used, not pickled to it (a Dask worker, a copy)."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}
