"""What this CPU does with bfloat16: the kind of CPU a speed figure comes from.

Three kinds decide how fast ``manni train`` runs on a CPU (:data:`CPU_KINDS`):

- ``amx``: Intel's AMX tiles multiply bfloat16 matrices (recent Xeons);
- ``avx512_bf16``: AVX-512 BF16 instructions, no AMX (AMD Zen 4 and later, Intel Cooper Lake): on
  AMD 2 to 3.5 times its own float32 matmul rate, on Intel below it (:func:`bf16_outruns_fp32`);
- ``fp32``: no native bfloat16 (most laptops: AVX2, Apple silicon): ``--precision auto`` trains in float32.

oneDNN, which runs torch's CPU matrix products, can be told to use no instructions beyond a level with
the environment variable ``ONEDNN_MAX_CPU_ISA`` (e.g. ``AVX512_CORE_BF16`` on an AMX machine
emulates an Intel CPU without AMX; ``AVX2`` one without bfloat16). :func:`cpu_kind` reads it, and so
does ``--precision auto`` (:func:`manni_train.precision.auto_bf16`).
"""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

CPU_KINDS = ("amx", "avx512_bf16", "fp32")
#: oneDNN's ``ONEDNN_MAX_CPU_ISA`` levels, lowest first (both spellings of the newer ones)
ISA_LEVELS = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI",
              "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX10_1_512", "AVX512_CORE_AMX", "AVX10_1_512_AMX",
              "AVX512_CORE_AMX_FP16", "AVX10_1_512_AMX_FP16")
#: the lowest level with bfloat16 matrix products, and the lowest with AMX
BF16_LEVEL, AMX_LEVEL = ISA_LEVELS.index("AVX512_CORE_BF16"), ISA_LEVELS.index("AVX512_CORE_AMX")
ISA_VARIABLE = "ONEDNN_MAX_CPU_ISA"


@functools.cache
def _cpuinfo(field: str) -> str | None:
    """The value of ``field`` for the first CPU in ``/proc/cpuinfo`` (read once; ``None`` where there
    is none: not Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")[:1_000_000]
    except OSError:
        return None
    return next((line.partition(":")[2].strip() for line in text.splitlines() if line.startswith(field)), None)


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (empty where there is none: not Linux)."""
    return frozenset((_cpuinfo("flags") or "").split())


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``'s, else the platform's)."""
    return _cpuinfo("model name") or platform.processor() or platform.machine() or "unknown"


def isa_cap(environ: dict[str, str] | None = None) -> int | None:
    """The index in :data:`ISA_LEVELS` of the ``ONEDNN_MAX_CPU_ISA`` cap, ``None`` when there is none
    (unset, ``ALL`` or ``DEFAULT``); ``ValueError`` for a value oneDNN does not know."""
    value = (os.environ if environ is None else environ).get(ISA_VARIABLE, "").strip().upper()
    if value in ("", "ALL", "DEFAULT"):
        return None
    if value not in ISA_LEVELS:
        raise ValueError(f"{ISA_VARIABLE}={value[:40]} is not a oneDNN ISA level ({', '.join(ISA_LEVELS)}, ALL)")
    return ISA_LEVELS.index(value)


def cpu_kind(flags: frozenset[str] | None = None, environ: dict[str, str] | None = None) -> str:
    """This CPU's kind (:data:`CPU_KINDS`) as oneDNN will use it: its flags, capped by
    ``ONEDNN_MAX_CPU_ISA``. Without ``/proc/cpuinfo`` the kind is ``fp32`` unless torch reports
    native bfloat16 (then ``avx512_bf16``)."""
    flags = cpu_flags() if flags is None else flags
    cap = isa_cap(environ)
    if not flags:
        import torch

        native = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        return "avx512_bf16" if native and (cap is None or cap >= BF16_LEVEL) else "fp32"
    if "amx_bf16" in flags and (cap is None or cap >= AMX_LEVEL):
        return "amx"
    if {"avx512_bf16", "amx_bf16"} & flags and (cap is None or cap >= BF16_LEVEL):
        return "avx512_bf16"
    return "fp32"


def bf16_outruns_fp32(flags: frozenset[str] | None = None, environ: dict[str, str] | None = None,
                      vendor: str | None = None) -> bool:
    """Whether oneDNN multiplies bfloat16 matrices faster than float32 ones on this CPU: with AMX,
    and with AVX-512 BF16 on any vendor but Intel (AMD Zen 4 on: 2 to 3.5 times). On an Intel CPU
    with AVX-512 BF16 and no AMX (or its AMX capped by ``ONEDNN_MAX_CPU_ISA``) bfloat16 is the slower
    (measured on an AMX Xeon capped to ``AVX512_CORE_BF16``: 156 against 275 GFLOP/s; likely because
    one ``VDPBF16PS`` a cycle does the work of float32's two FMAs, and the conversions cost on top)."""
    kind = cpu_kind(flags, environ)
    vendor = _cpuinfo("vendor_id") if vendor is None else vendor
    return kind == "amx" or (kind == "avx512_bf16" and vendor != "GenuineIntel")


def describe() -> dict[str, str]:
    """What a benchmark records of the CPU: model, kind and the ISA cap in force."""
    return {"cpu_model": cpu_model(), "cpu_kind": cpu_kind(),
            "onednn_max_cpu_isa": os.environ.get(ISA_VARIABLE, "") or "unset"}
