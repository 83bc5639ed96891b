"""Numeric formats: effective storage bits per element and the hardware peak each runs at.

Weights, KV cache, activations and compute each take their own format (``W4A8``, ``FP8 KV``...).
A block-scaled format stores one shared scale per block of elements, which costs
``scale_bits / block_size`` extra bits per element:

.. math:: b_\\mathrm{eff} = b_\\mathrm{element} + b_\\mathrm{scale} / n_\\mathrm{block}

=============  =======  ======  =====  ========  ==============================================
name           element  block   scale  eff bits  reference
=============  =======  ======  =====  ========  ==============================================
fp32           32       -       -      32        IEEE 754
tf32           32 (st)  -       -      32        stored as FP32; tensor cores read 19 bits
bf16, fp16     16       -       -      16        IEEE 754 / Google brain float
fp8_e4m3/e5m2  8        -       -      8         OCP 8-bit FP spec (per-tensor scale ignored)
mxfp8          8        32      8      8.25      OCP Microscaling Formats (MX) v1.0, E8M0 scale
mxfp6          6        32      8      6.25      OCP MX v1.0
mxfp4          4        32      8      4.25      OCP MX v1.0
nvfp4          4        16      8      4.5       NVIDIA NVFP4: E4M3 scale per 16 (S17)
int8           8        -       -      8         per-channel scales ignored
int4           4        -       -      4         no scales (a lower bound)
int4_g128      4        128     16     4.125     GPTQ/AWQ style FP16 scale per 128 weights
int4_g32       4        32      16     4.5       FP16 scale per 32 weights
=============  =======  ======  =====  ========  ==============================================

References
----------
.. [1] Open Compute Project, "OCP Microscaling Formats (MX) Specification v1.0", 2023.
   https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf
.. [2] NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference", 2025.
   https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenomics.core.errors import UnknownEntryError


@dataclass(frozen=True)
class DType:
    """A numeric format.

    Attributes
    ----------
    name : str
        Canonical lowercase name.
    element_bits : float
        Bits per stored element, scales excluded [bit].
    block_size : int
        Elements sharing one scale (0 for none).
    scale_bits : float
        Bits of each shared scale [bit].
    peak : str
        Key of the hardware compute table this format runs at when it is the compute format
        (``"bf16"``, ``"fp8"``, ``"fp4"``...).
    description : str
    """

    name: str
    element_bits: float
    block_size: int
    scale_bits: float
    peak: str
    description: str

    @property
    def bits(self) -> float:
        """Effective bits per element including block scales [bit]."""
        if self.block_size:
            return self.element_bits + self.scale_bits / self.block_size
        return self.element_bits

    @property
    def bytes(self) -> float:
        """Effective bytes per element including block scales [B] (bits / 8, never //)."""
        return self.bits / 8.0


_FORMATS: dict[str, DType] = {
    d.name: d
    for d in [
        DType("fp32", 32, 0, 0, "fp32", "IEEE single precision"),
        DType("tf32", 32, 0, 0, "tf32", "stored as FP32, multiplied as TF32 on tensor cores"),
        DType("bf16", 16, 0, 0, "bf16", "bfloat16"),
        DType("fp16", 16, 0, 0, "fp16", "IEEE half precision"),
        DType("fp8_e4m3", 8, 0, 0, "fp8", "OCP FP8 E4M3 (per-tensor or per-channel scale)"),
        DType("fp8_e5m2", 8, 0, 0, "fp8", "OCP FP8 E5M2"),
        DType("mxfp8", 8, 32, 8, "fp8", "OCP MX FP8: E8M0 scale per 32 elements"),
        DType("mxfp6", 6, 32, 8, "fp6", "OCP MX FP6: E8M0 scale per 32 elements"),
        DType("mxfp4", 4, 32, 8, "fp4", "OCP MX FP4 (E2M1): E8M0 scale per 32 elements"),
        DType("nvfp4", 4, 16, 8, "fp4", "NVIDIA NVFP4 (E2M1): E4M3 scale per 16 elements"),
        DType("int8", 8, 0, 0, "int8", "8-bit integer (per-channel scales ignored)"),
        DType("int4", 4, 0, 0, "int4", "4-bit integer, scales ignored (lower bound)"),
        DType("int4_g128", 4, 128, 16, "int4", "4-bit integer, FP16 scale per 128"),
        DType("int4_g32", 4, 32, 16, "int4", "4-bit integer, FP16 scale per 32"),
    ]
}

_ALIASES = {
    "fp8": "fp8_e4m3",
    "e4m3": "fp8_e4m3",
    "e5m2": "fp8_e5m2",
    "float8_e4m3fn": "fp8_e4m3",
    "float32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float": "fp32",
    "fp4": "nvfp4",
    "mxfp6_e2m3": "mxfp6",
    "mxfp6_e3m2": "mxfp6",
    "int4-g128": "int4_g128",
    "int4-g32": "int4_g32",
    "w4": "int4_g128",
}

#: Compute-table keys a hardware catalog may list.
PEAK_KEYS = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "int4")


def dtype(name: str | DType) -> DType:
    """Return the :class:`DType` for a format name (case-insensitive; aliases accepted).

    Parameters
    ----------
    name : str or DType
        e.g. ``"bf16"``, ``"fp8"`` (= E4M3), ``"mxfp4"``, ``"nvfp4"``, ``"int4_g128"``.

    Returns
    -------
    DType

    Raises
    ------
    UnknownEntryError
        If the name is not a known format; the message lists the known ones.

    Examples
    --------
    >>> dtype("nvfp4").bits, dtype("mxfp4").bits, dtype("int4_g128").bits
    (4.5, 4.25, 4.125)
    >>> dtype("FP8").name
    'fp8_e4m3'
    """
    if isinstance(name, DType):
        return name
    hit = _FORMATS.get(name) if isinstance(name, str) else None
    if hit is not None:                   # a canonical name: the common case, on every step
        return hit
    if not isinstance(name, str):
        raise UnknownEntryError(f"a format name must be a string, got {name!r}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return _FORMATS[key]
    except KeyError:
        known = ", ".join(sorted(_FORMATS) + sorted(_ALIASES))
        raise UnknownEntryError(f"unknown numeric format {name!r}; known: {known}") from None


def bytes_per_element(name: str | DType) -> float:
    """Effective bytes per element of a format, block scales included [B].

    Parameters
    ----------
    name : str or DType
        A format name or alias (``"bf16"``, ``"fp8"``, ``"nvfp4"``, ``"mxfp4"``).

    Returns
    -------
    float
        :math:`\\text{bits} / 8`, where the bits count each block's scale spread over its
        elements (MXFP4: 4 + 8/32 = 4.25 bits = 0.53125 B).

    Examples
    --------
    >>> bytes_per_element("bf16"), bytes_per_element("mxfp4")
    (2.0, 0.53125)
    """
    return dtype(name).bytes


def formats() -> list[DType]:
    """All known formats, in table order."""
    return list(_FORMATS.values())
