"""Continuous batching in time: arrivals, admission, KV growth, preemption (S53).

A serving replica runs one forward step after another. Each step decodes one token for every
running sequence and prefills the prompts admitted to it; a sequence leaves when its output,
of a length nobody knows in advance, is done. The KV of the running sequences grows by one
token per sequence per step, so an admission decided on the memory free *now* can run out of
memory later: the engine then preempts the newest sequences (their KV is dropped and they
are recomputed when readmitted, as vLLM does by default). Memory comes free only when
sequences retire (the "retirement gate"), and what the admission controller does with it
decides whether the batch settles or oscillates. :func:`simulate_serving` runs that loop.

Notes
-----
**Engine.** A time-stepped simulation on the engine's own clock: continuous batching is
synchronous by iterations (every admission, token and retirement happens at a step boundary),
so a step is the natural event and a discrete-event library such as SimPy would add a
scheduler without adding resolution. Arrivals are Poisson at ``arrival_rate_per_s``;
output lengths are lognormal with mean :math:`O` and coefficient of variation ``output_cv``
(at least 1 token); prompts are :math:`I` tokens. A step's time is the step engine's mixed
step (:func:`tokenomics.serving.batching.mixed_step_seconds`) of the running decodes at the
workload's mean context :math:`I + O/2` beside the step's prefill tokens, tabulated once
and interpolated linearly in prefill tokens and in the decode batch: every whole batch up to
2,048 sequences is a node, larger ones are 256 geometric nodes up to the most the KV budget
can run, so the table (and the run's memory) stays the same size whatever the capacity.

**Memory.** The KV budget is :math:`K = B_\\max (I + O)` tokens, with
:math:`B_\\max` = :func:`tokenomics.max_batch` at :math:`I + O` tokens. A running
sequence holds its prompt plus the tokens generated so far.

**Admission policies** (:class:`Admission`). Every policy prefills at most
``token_budget`` prompt tokens a step (8,192 by default, TensorRT-LLM's default
``max_num_tokens``); a longer prompt takes several steps.

``"naive"``
    A gate with hysteresis: while open, admit waiting requests first come, first served as
    long as the KV in use (running sequences and prompts in prefill) plus the new prompt
    fits :math:`K`; when requests are left waiting (memory ran out) the gate shuts, and it
    opens again only when retirements bring the KV below ``gate_fraction`` (0.9) x
    :math:`K`. Nothing is reserved for the running sequences' growth, so a burst admitted
    into freed memory is preempted later, readmitted, preempted again: the over-correction
    of S53.
``"ready_buffer"``
    No gate: admit continuously, at most one step's prefill (``token_budget`` / :math:`I`
    + 1 prompts) in flight at a time (the ready buffer), with ``buffer_fraction`` x
    :math:`K` held back from admission for growth.
``"smoothed"``
    Admission reserves each sequence's expected final KV (prompt plus mean output; for a
    running sequence the larger of that and what it holds) and admits at most the smoothed
    (exponentially weighted, time constant ``smoothing_steps``) retirement rate plus one per
    step.
``"layered"``
    ``"smoothed"`` inside two more loops at other time scales: a fast one, per step, the
    ready buffer's cap, and a slow one that every ``slow_steps`` steps scales the
    reservation's ceiling (from 1 x :math:`K`, between 0.5 and 1.1) down by 10% after a
    preemption and up by 0.005 otherwise (additive increase, multiplicative decrease): the
    reservation counts every sequence at its expected final length, more than the running
    ones hold on average, so the slow loop finds how far it may over-subscribe.

**Oscillation.** :attr:`ServingTrace.oscillation` is the coefficient of variation of the
decode batch over the second half of the run (the first half is the start-up transient);
:attr:`ServingTrace.period_s` the lag of the first peak of its autocorrelation.

References
----------
.. [1] Seed digest S53: "retirement-gate oscillation": unpredictable decode times cause
   prefill backlog and over-correction; mitigated by ready buffers, smoothed admission
   control and layered control time scales (SemiAnalysis, as reported in the 000 seed).
.. [2] W. Kwon et al., "Efficient Memory Management for Large Language Model Serving with
   PagedAttention", SOSP 2023 (preemption by recomputation).
.. [3] A. Agrawal et al., Sarathi-Serve, OSDI 2024 (a prefill token budget per step).
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tokenomics.core import checks as V
from tokenomics.core.errors import TokenomicsError
from tokenomics.core.units import ReadableRepr
from tokenomics.data.boundary import inputs
from tokenomics.data.deployment import Deployment, check_deployment
from tokenomics.physics.memory import max_batch
from tokenomics.serving.batching import mixed_step_seconds

ADMISSION_POLICIES = ("naive", "ready_buffer", "smoothed", "layered")
#: The slow loop's ceiling on reserved KV over the budget: the reservation counts every
#: sequence at its expected final length, more than the running sequences hold on average.
_MAX_HEADROOM = 1.1
#: Most steps one run may take: the loop is linear in steps (45-120 us each on a CI core), so
#: this bounds a call at about 5-12 s; a longer horizon is the same steady state, so run
#: several seeds instead.
_MAX_STEPS = 100_000
_MAX_CV = 10.0
_MAX_ARRIVALS = 2_000_000


@dataclass(frozen=True)
class Admission:
    """An admission controller for :func:`simulate_serving` (module notes).

    Attributes
    ----------
    policy : {"naive", "ready_buffer", "smoothed", "layered"}
    gate_fraction : float
        Share of the KV budget below which the naive gate opens again [fraction].
    buffer_fraction : float
        Share of the KV budget held back from admission (``"ready_buffer"``) [fraction].
    smoothing_steps : float
        Time constant of the smoothed retirement rate (``"smoothed"``, ``"layered"``)
        [steps], >= 1.
    token_budget : int
        Prompt tokens prefilled per step, every policy [token] (default 8,192,
        TensorRT-LLM's default ``max_num_tokens``).
    slow_steps : int
        Period of the slow loop (``"layered"``) [steps], >= 1.
    """

    policy: str = "naive"
    gate_fraction: float = 0.9
    buffer_fraction: float = 0.1
    smoothing_steps: float = 50.0
    token_budget: int = 8192
    slow_steps: int = 200

    def __post_init__(self) -> None:
        V.choice(self.policy, "Admission.policy", ADMISSION_POLICIES)
        g = float(V.fraction(self.gate_fraction, "Admission.gate_fraction",
                             upper_open=True).reshape(()))
        object.__setattr__(self, "gate_fraction", g)
        f = float(V.fraction(self.buffer_fraction, "Admission.buffer_fraction",
                             upper_open=True).reshape(()))
        object.__setattr__(self, "buffer_fraction", f)
        s = V.single_amount(V.positive(self.smoothing_steps, "Admission.smoothing_steps",
                                       "count"), "Admission.smoothing_steps", "count")
        if s < 1:
            raise TokenomicsError(f"Admission.smoothing_steps must be >= 1 step, got {s:g}")
        object.__setattr__(self, "smoothing_steps", s)
        object.__setattr__(self, "slow_steps",
                           V.single_whole(self.slow_steps, "Admission.slow_steps"))
        object.__setattr__(self, "token_budget", V.single_whole(
            self.token_budget, "Admission.token_budget", unit="token"))


def as_admission(admission: Any) -> Admission:
    """An :class:`Admission` from itself or a policy name."""
    if isinstance(admission, Admission):
        return admission
    if isinstance(admission, str):
        return Admission(policy=admission)
    raise TokenomicsError(f"admission must be a policy name {ADMISSION_POLICIES} or a tk.Admission, "
                          f"got {admission!r}")


@dataclass(frozen=True, repr=False)
class ServingTrace(ReadableRepr):
    """A serving replica's time series under an admission policy (:func:`simulate_serving`).

    Attributes
    ----------
    time_s : ndarray
        End of each step [s].
    step_time_s : ndarray
        Each step's duration [s].
    decode_batch : ndarray
        Sequences decoding in the step [sequence].
    queue : ndarray
        Requests waiting for admission after the step [request].
    prefill_tokens : ndarray
        Prompt tokens computed in the step, recomputation included [token].
    preempted : ndarray
        Sequences preempted at the end of the step [sequence].
    output_tokens : ndarray
        Tokens emitted in the step [token].
    ttft_s, tpot_s : ndarray
        Per finished request: time to first token and mean time per later token [s].
    policy : str
    kv_budget_tokens : float
        :math:`K` [token].
    """

    time_s: Any
    step_time_s: Any
    decode_batch: Any
    queue: Any
    prefill_tokens: Any
    preempted: Any
    output_tokens: Any
    ttft_s: Any = field(default_factory=lambda: np.zeros(0))
    tpot_s: Any = field(default_factory=lambda: np.zeros(0))
    policy: str = "naive"
    kv_budget_tokens: float = 0.0

    def _late(self) -> slice:
        return slice(len(self.time_s) // 2, None)

    @property
    def throughput_tokens_per_s(self) -> float:
        """Output tokens per second over the second half of the run [token/s]."""
        s = self._late()
        return float(self.output_tokens[s].sum() / self.step_time_s[s].sum())

    @property
    def oscillation(self) -> float:
        """Coefficient of variation of the decode batch over the second half [fraction]."""
        b = self.decode_batch[self._late()]
        return float(b.std() / b.mean()) if b.mean() > 0 else 0.0

    @property
    def period_s(self) -> float:
        """Lag of the decode batch's first autocorrelation peak over the second half [s]
        (NaN when it has none above 0.2)."""
        s = self._late()
        b = self.decode_batch[s] - self.decode_batch[s].mean()
        if not b.any():
            return math.nan
        ac = np.correlate(b, b, "full")[len(b) - 1:] / (b @ b)
        below = np.flatnonzero(ac < 0)
        if not below.size:
            return math.nan
        k = below[0] + int(np.argmax(ac[below[0]:]))
        return float(k * self.step_time_s[s].mean()) if ac[k] > 0.2 else math.nan

    @property
    def preemptions(self) -> int:
        """Sequences preempted over the run."""
        return int(self.preempted.sum())

    def to_frame(self) -> pd.DataFrame:
        """One row per step: ``time_s``, ``step_time_s``, ``decode_batch``, ``queue``,
        ``prefill_tokens``, ``preempted``, ``output_tokens``."""
        return pd.DataFrame({k: getattr(self, k) for k in (
            "time_s", "step_time_s", "decode_batch", "queue", "prefill_tokens", "preempted",
            "output_tokens")})

    def summary(self) -> dict[str, float]:
        """Throughput, oscillation, preemptions and the TTFT/TPOT means and spreads.

        ``ttft_*`` are NaN when no request finished in the run and ``tpot_*`` when none
        emitted a second token (one-token outputs have no time per later token), as
        ``period_s`` is NaN without a periodic decode batch.
        """
        def stats(x: np.ndarray) -> tuple[float, float]:
            return (float(np.mean(x)), float(np.std(x))) if len(x) else (math.nan, math.nan)
        (tm, ts), (pm, ps) = stats(self.ttft_s), stats(self.tpot_s)
        return dict(policy=self.policy, throughput_tokens_per_s=self.throughput_tokens_per_s,
                    oscillation=self.oscillation, period_s=self.period_s,
                    preemptions=self.preemptions, ttft_mean_s=tm, ttft_std_s=ts,
                    tpot_mean_s=pm, tpot_std_s=ps)


#: Decode batches tabulated one by one; beyond, geometric nodes (module notes).
_EXACT_BATCHES = 2048
_GEOMETRIC_NODES = 256


class _StepTable:
    """Mixed-step time over decode batches x prefill tokens, tabulated once [s].

    Every whole batch up to :data:`_EXACT_BATCHES` is a node; above it, up to ``b_max``,
    :data:`_GEOMETRIC_NODES` geometric nodes (steps of under 4% up to ten million
    sequences), so the table's size does not grow with the KV capacity; a batch between
    nodes is interpolated linearly, as prefill tokens are.
    """

    def __init__(self, dep: Deployment, b_max: int, ctx: float, prompt: float,
                 max_prefill: float):
        self.tokens = np.unique(np.concatenate([[0.0], np.geomspace(1.0, max(max_prefill, 2.0),
                                                                     48)]))
        exact = np.arange(min(b_max, _EXACT_BATCHES) + 1, dtype=float)
        if b_max > _EXACT_BATCHES:
            exact = np.unique(np.concatenate([exact, np.rint(np.geomspace(
                _EXACT_BATCHES, b_max, _GEOMETRIC_NODES))]))
        self.batches = exact
        B, T = np.meshgrid(self.batches, self.tokens, indexing="ij")
        n_pre = T / prompt                     # prompts of I tokens (fractional: an average)
        self.table = np.asarray(mixed_step_seconds(dep, B, ctx, prompt, 0.0, n_pre), float)

    def _row(self, b: int) -> np.ndarray:
        if b <= min(len(self.batches) - 1, _EXACT_BATCHES):
            return self.table[b]
        if b >= self.batches[-1]:
            return self.table[-1]
        j = int(np.searchsorted(self.batches, b))
        lo, hi = self.batches[j - 1], self.batches[j]
        w = (b - lo) / (hi - lo)
        return (1.0 - w) * self.table[j - 1] + w * self.table[j]

    def __call__(self, b: int, tokens: float) -> float:
        row = self._row(b)
        if tokens > self.tokens[-1]:           # beyond the table: linear in the last piece
            slope = (row[-1] - row[-2]) / (self.tokens[-1] - self.tokens[-2])
            return float(row[-1] + slope * (tokens - self.tokens[-1]))
        return float(np.interp(tokens, self.tokens, row))


class _Engine:
    """The replica's state between steps (arrays indexed by request id)."""

    def __init__(self, rng: np.random.Generator, inp: float, out: float, cv: float,
                 kv_budget: float):
        self.rng, self.I, self.O, self.K = rng, inp, out, kv_budget
        s2 = math.log1p(cv * cv)
        self._mu, self._sigma = math.log(out) - s2 / 2, math.sqrt(s2)
        self.n = 0                                       # requests arrived so far
        self.t_steps = 0                                 # steps run so far
        self.arrival = np.zeros(0)
        self.out_len = np.zeros(0, int)
        self.gen = np.zeros(0, int)
        self.first = np.zeros(0)
        self.queue: deque[int] = deque()
        self.prefilling: deque[list[float]] = deque()    # [id, tokens still to prefill]
        self.prefill_kv = 0.0                             # KV the prompts in prefill hold
        # The running sequences, oldest first: ids, and each one's tokens generated so far as
        # an offset from the step counter (generated = ``steps_done + run_off``), so a step
        # advances every sequence without touching the arrays; ``run_fin`` is the counter at
        # which each finishes, and only a step that reaches the earliest looks at them.
        self._runs = np.zeros((3, 1024), int)             # rows: id, run_off, run_fin
        self.n_run = 0
        self.steps_done = 0                               # decode steps advanced so far
        self.off_sum = 0                                  # sum of run_off (exact, an int)
        self.next_fin = math.inf                          # earliest of run_fin
        self.ttft: list[float] = []
        self.tpot: list[float] = []

    def arrive(self, rate: float, t0: float, dt: float) -> None:
        """Queue the Poisson(rate x dt) requests arriving in [t0, t0 + dt) [s]."""
        k = int(self.rng.poisson(rate * dt))
        if not k:
            return
        n = self.n
        if n + k > _MAX_ARRIVALS:
            raise TokenomicsError(
                f"over {_MAX_ARRIVALS:,} requests arrived in {self.t_steps:,} steps (a run "
                f"holds every request's state): give fewer steps or a lower "
                f"arrival_rate_per_s (the replica serves about "
                f"tk.steady_state(dep, 'max', ...).requests_per_s)")
        if n + k > len(self.arrival):            # grow by doubling: appends stay O(1)
            cap = max(2 * len(self.arrival), n + k, 1024)
            self.arrival = np.resize(self.arrival, cap)
            self.out_len = np.resize(self.out_len, cap)
            self.gen = np.resize(self.gen, cap)
            self.first = np.resize(self.first, cap)
        lengths = np.exp(self._mu + self._sigma * self.rng.standard_normal(k))
        self.arrival[n:n + k] = t0 + dt * self.rng.random(k)
        self.out_len[n:n + k] = np.maximum(1, np.rint(lengths)).astype(int)
        self.gen[n:n + k] = 0
        self.first[n:n + k] = np.nan
        self.n = n + k
        self.queue.extend(range(n, n + k))

    @property
    def run(self) -> np.ndarray:
        """The running sequences' ids, oldest first (a view)."""
        return self._runs[0, :self.n_run]

    @property
    def run_off(self) -> np.ndarray:
        return self._runs[1, :self.n_run]

    @property
    def run_fin(self) -> np.ndarray:
        return self._runs[2, :self.n_run]

    @property
    def run_gen(self) -> np.ndarray:
        """Tokens each running sequence has generated so far [token]."""
        return self.steps_done + self.run_off

    def kv_running(self) -> float:
        """KV held by the running sequences [token]."""
        n = self.n_run
        return float(self.I * n + self.steps_done * n + self.off_sum)

    def kv_in_use(self) -> float:
        """KV held or promised: running sequences and prompts in prefill [token]."""
        return self.kv_running() + self.prefill_kv

    def expected_final_kv(self) -> float:
        # sum of max(I + generated, I + O) over the running, in exact integers
        g, n = self.steps_done, self.n_run
        held = (self.I + g) * n + int(np.maximum(self.run_off, self.O - g).sum()) if n else 0
        return float(held) + (self.I + self.O) * len(self.prefilling)

    def admit(self, n: int, budget: float, reserve: float | None = None) -> list[int]:
        """Up to ``n`` queued requests, first come first served, while each one's cost
        (its prompt and regenerated tokens, or ``reserve`` tokens) fits ``budget``."""
        out: list[int] = []
        if reserve is not None:                      # one cost each: count what fits
            m = min(n, len(self.queue))
            fits = 0 if budget < reserve or m <= 0 else min(m, int(budget // reserve))
            while fits < m and reserve * (fits + 1) <= budget:
                fits += 1
            while fits and reserve * fits > budget:
                fits -= 1
            out = [self.queue.popleft() for _ in range(fits)]
            n = 0
        while self.queue and len(out) < n:           # in chunks: vectorised, in order
            head = np.fromiter(itertools.islice(self.queue, min(n - len(out), 4096)), int)
            cost = (self.I + self.gen[head]) if reserve is None else np.full(len(head), reserve)
            fits = int(np.searchsorted(np.cumsum(cost), budget, side="right"))
            budget -= float(cost[:fits].sum())
            out.extend(self.queue.popleft() for _ in range(fits))
            if fits < len(head):
                break
        if out:
            kv = self.I + self.gen[np.asarray(out, int)]
            self.prefilling.extend([i, float(c)] for i, c in zip(out, kv.tolist(), strict=True))
            self.prefill_kv += float(kv.sum())
        return out

    def prefill(self, token_budget: float) -> tuple[float, list[int]]:
        """Prompt tokens computed this step and the requests whose prefill completes."""
        spent, done = 0.0, []
        while self.prefilling and spent < token_budget:   # first come, first prefilled
            item = self.prefilling[0]
            take = min(item[1], token_budget - spent)
            item[1] -= take
            spent += take
            if item[1] > 0:
                break
            done.append(int(item[0]))
            self.prefilling.popleft()
        if done:
            self.prefill_kv -= float((self.I + self.gen[np.asarray(done, int)]).sum())
        return spent, done

    def advance(self, done: list[int], t_end: float) -> tuple[int, int]:
        """Decode one token for every running sequence, start the prefilled ones, retire
        the finished; returns (tokens emitted, sequences retired)."""
        emitted = self.n_run + len(done)
        self.steps_done += 1
        g = self.steps_done
        if done:
            new = np.asarray(done, int)
            fresh = new[np.isnan(self.first[new])]
            self.first[fresh] = t_end
            off = self.gen[new] + 1 - g                  # each has generated gen + 1 tokens
            fin = self.out_len[new] - off
            a, b = self.n_run, self.n_run + len(new)
            if b > self._runs.shape[1]:                  # grow by doubling
                grown = np.zeros((3, max(2 * self._runs.shape[1], b)), int)
                grown[:, :a] = self._runs[:, :a]
                self._runs = grown
            self._runs[0, a:b], self._runs[1, a:b], self._runs[2, a:b] = new, off, fin
            self.n_run = b
            self.off_sum += int(off.sum())
            self.next_fin = min(self.next_fin, int(fin.min()))
        if g < self.next_fin:
            return emitted, 0
        fin = self.run_fin <= g                          # generated >= output length
        f = self.run[fin]
        self.gen[f] = g + self.run_off[fin]
        self.ttft.extend((self.first[f] - self.arrival[f]).tolist())
        later = f[self.out_len[f] > 1]
        self.tpot.extend(((t_end - self.first[later]) / (self.out_len[later] - 1)).tolist())
        self._keep(~fin)
        return emitted, len(f)

    def _keep(self, keep: Any) -> None:
        """Keep only the running sequences where ``keep`` (a mask, or a count of the
        oldest), in order."""
        if isinstance(keep, np.ndarray):
            kept = self._runs[:, :self.n_run][:, keep]
            self.n_run = kept.shape[1]
            self._runs[:, :self.n_run] = kept
        else:
            self.n_run = int(keep)
        self.off_sum = int(self.run_off.sum())
        self.next_fin = int(self.run_fin.min()) if self.n_run else math.inf

    def preempt(self) -> int:
        """Drop the newest running sequences until the KV fits; they wait at the front of
        the queue, oldest first, to be recomputed."""
        over = self.kv_in_use() - self.K
        if over <= 0 or not self.n_run:
            return 0
        gen = self.run_gen
        freed = np.cumsum(self.I + gen[::-1])            # newest first
        k = min(int(np.searchsorted(freed, over, side="left")) + 1, self.n_run)
        drop = self.run[-k:]
        self.gen[drop] = gen[-k:]
        self.queue.extendleft(drop[::-1].tolist())
        self._keep(self.n_run - k)
        return k


class _Controller:
    """The admission policy's state: the smoothed retirement rate and the slow loop's
    headroom target."""

    def __init__(self, adm: Admission, prompt: float):
        self.adm, self.rate, self.headroom, self.window_preempted = adm, 0.0, 1.0, 0
        self.open = True
        self.budget = float(adm.token_budget)
        self.ready = int(math.ceil(self.budget / prompt)) + 1   # one step's prefill, + 1

    def admit(self, eng: _Engine) -> None:
        p = self.adm.policy
        if p == "naive":        # a gate: shuts when memory runs out, opens below the low mark
            used = eng.kv_in_use()
            self.open = self.open or used < eng.K * self.adm.gate_fraction
            if self.open:
                eng.admit(len(eng.queue), eng.K - used)
                self.open = not eng.queue          # requests left over: memory ran out
            return
        room = max(0, self.ready - len(eng.prefilling))
        if p == "ready_buffer":
            eng.admit(room, eng.K * (1.0 - self.adm.buffer_fraction) - eng.kv_in_use())
            return
        n = int(math.ceil(self.rate)) + 1
        if p == "layered":
            n = min(n, room)
        eng.admit(n, eng.K * self.headroom - eng.expected_final_kv(), reserve=eng.I + eng.O)

    def observe(self, step: int, retired: int, preempted: int) -> None:
        self.rate += (retired - self.rate) / self.adm.smoothing_steps
        self.window_preempted += preempted
        if self.adm.policy == "layered" and (step + 1) % self.adm.slow_steps == 0:
            self.headroom = max(0.5, self.headroom * 0.9) if self.window_preempted \
                else min(_MAX_HEADROOM, self.headroom + 0.005)
            self.window_preempted = 0


@inputs(dep="deployment")
def simulate_serving(dep: Deployment, arrival_rate_per_s: float, input_tokens: int,
                     output_tokens: int, *, admission: Any = "naive", steps: int = 20_000,
                     output_cv: float = 0.5, seed: int = 0) -> ServingTrace:
    """Run a replica step by step under an admission policy (module notes; S53).

    Parameters
    ----------
    dep : Deployment
        One replica, ``pp`` 1.
    arrival_rate_per_s : float
        Poisson arrival rate [request/s], > 0.
    input_tokens, output_tokens : int
        Prompt length :math:`I` and mean output length :math:`O` [token].
    admission : str or Admission
        ``"naive"``, ``"ready_buffer"``, ``"smoothed"``, ``"layered"`` or an
        :class:`Admission` with its knobs.
    steps : int
        Forward steps simulated, >= 100 and at most 100,000 (a call's time is bounded by
        it: about 5-12 s at the maximum; for more samples of the same steady state run
        several seeds); the run holds the state of
        every request that arrives, at most 2,000,000. The run is one loop iteration per step
        (admission, prefill, decode, retirement and preemption are decisions of each step on
        the last one's state): measured at 45-120 us per step on one 2-core CI machine's core
        (more with a larger running batch), so the default 20,000 steps take about 1-2.5 s and
        the time grows linearly with ``steps``.
    output_cv : float
        Coefficient of variation of the lognormal output length, > 0 (default 0.5).
    seed : int
        Random seed (arrivals and lengths); the same seed gives the same trace.

    Returns
    -------
    ServingTrace
        Per-step series (queue, decode batch, step time, prefill tokens, preemptions,
        tokens out), per-request TTFT and TPOT, and the oscillation measures.

    Raises
    ------
    TokenomicsError
        For a bad argument, a deployment that cannot hold one request of
        :math:`I + O` tokens, or more than 2,000,000 requests arriving in the run (raised
        before it starts when even the emptiest steps would bring them, else when they
        arrive).

    Examples
    --------
    >>> import tokenomics as tk
    >>> d = tk.Deployment("llama-3.1-8b", "h100-sxm")
    >>> tr = simulate_serving(d, 20.0, 1024, 256, steps=2000)
    >>> bool(tr.throughput_tokens_per_s > 0)
    True
    """
    check_deployment(dep, "simulate_serving")
    if dep.pp != 1:
        raise TokenomicsError("simulate_serving models a single pipeline stage; use pp=1")
    lam = V.single_amount(V.positive(arrival_rate_per_s, "arrival_rate_per_s", "1/s"),
                          "arrival_rate_per_s", "1/s")
    isl = V.single_whole(input_tokens, "input_tokens", unit="token")
    osl = V.single_whole(output_tokens, "output_tokens", unit="token")
    n_steps = V.single_whole(steps, "steps", minimum=100)
    if n_steps > _MAX_STEPS:
        raise TokenomicsError(f"steps must be at most {_MAX_STEPS:,} (one loop iteration per "
                              f"step, 45-120 us each: about 5-12 s at the maximum), got "
                              f"{n_steps:,}; for more samples of the same steady state, run "
                              f"several seeds")
    cv = V.single_amount(V.positive(output_cv, "output_cv", "count"), "output_cv", "count")
    rng = np.random.default_rng(V.seed(seed))
    if cv > _MAX_CV:
        raise TokenomicsError(f"output_cv must be at most {_MAX_CV:g} (a lognormal that wide "
                              f"has no usable sample mean), got {cv:g}")
    adm = as_admission(admission)
    b_max = int(max_batch(dep, isl + osl))
    if b_max < 1:
        raise TokenomicsError(f"{dep.model.id} on {dep.n_devices} x {dep.hardware.id} cannot "
                              f"hold one request of {isl + osl} tokens")
    K = float(b_max * (isl + osl))
    # the running batch is at most K / (I + 1) sequences (each holds its prompt and a token)
    table = _StepTable(dep, int(K // (isl + 1)) + 1, isl + osl / 2.0, float(isl),
                       float(2 * b_max * isl))
    if lam * n_steps * table(0, 0.0) > _MAX_ARRIVALS:   # every step takes at least this
        raise TokenomicsError(
            f"arrival_rate_per_s {lam:g} would bring over {_MAX_ARRIVALS:,} requests in "
            f"{n_steps:,} steps of at least {table(0, 0.0):.3g} s (a run holds every "
            f"request's state); give fewer steps or a rate near the replica's capacity "
            f"(tk.steady_state(dep, 'max', ...).requests_per_s)")
    eng, ctl = _Engine(rng, isl, osl, cv, K), _Controller(adm, isl)
    return _run(eng, ctl, table, lam, n_steps, adm.policy)


def _run(eng: _Engine, ctl: _Controller, table: _StepTable, lam: float, n_steps: int,
         policy: str) -> ServingTrace:
    rec = np.zeros((n_steps, 7))
    clock, dt = 0.0, table(1, 0.0)
    for n in range(n_steps):
        eng.t_steps = n
        eng.arrive(lam, clock - dt, dt)
        ctl.admit(eng)
        pre, done = eng.prefill(ctl.budget)
        batch = eng.n_run
        dt = table(batch, pre)
        clock += dt
        emitted, retired = eng.advance(done, clock)
        k = eng.preempt()
        ctl.observe(n, retired, k)
        rec[n] = (clock, dt, batch, len(eng.queue), pre, k, emitted)
    c = rec.T
    return ServingTrace(time_s=c[0], step_time_s=c[1], decode_batch=c[2], queue=c[3],
                        prefill_tokens=c[4], preempted=c[5], output_tokens=c[6],
                        ttft_s=np.asarray(eng.ttft), tpot_s=np.asarray(eng.tpot),
                        policy=policy, kv_budget_tokens=eng.K)
