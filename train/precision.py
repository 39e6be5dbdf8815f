"""``--precision auto|fp32|bf16``: the arithmetic of the vector trainers' networks.

With ``bf16`` the hidden layers of the actor and the critic run under :func:`torch.autocast` in
bfloat16 (weights, gradients, the optimizer's state and the checkpoints stay float32; the output
heads and the losses run in float32): the warm start, the rollouts' forward passes and the PPO
update. ``auto`` takes bf16 where the device runs it natively and faster than fp32 (a CPU with AMX,
or with AVX-512 BF16 unless it is Intel's: :func:`manni_train.cpu.bf16_outruns_fp32`; a GPU that
supports bfloat16; not where ``ONEDNN_MAX_CPU_ISA`` caps oneDNN below bfloat16) and fp32
elsewhere; ``bf16`` asked for explicitly runs anywhere, slowly where it is emulated. Under bf16
the batches are padded to a multiple of :data:`PAD_ROWS` rows (:func:`run_padded`), so that few
distinct shapes reach the bf16 kernels.
"""

from __future__ import annotations

import torch

from manni_train.cpu import bf16_outruns_fp32

PRECISIONS = ("auto", "fp32", "bf16")
#: under bf16 a batch's rows are padded to a multiple of this: oneDNN compiles kernels for every new
#: batch shape (each compile costs several times the product itself), and rollout and minibatch
#: sizes vary from call to call
PAD_ROWS = 32


def auto_bf16(device: torch.device) -> bool:
    """Whether ``--precision auto`` computes in bfloat16 on ``device``: where it multiplies bfloat16
    matrices natively and faster than float32 ones."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type == "cpu":  # ONEDNN_MAX_CPU_ISA below AVX512_CORE_BF16 emulates a CPU without it
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()) and bf16_outruns_fp32()
    return False


def compute_dtype(precision: str, device: torch.device | str = "cpu") -> torch.dtype:
    """The dtype of the hidden layers' arithmetic for ``--precision`` on ``device``."""
    if precision not in PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "auto":
        return torch.bfloat16 if auto_bf16(torch.device(device)) else torch.float32
    return torch.bfloat16 if precision == "bf16" else torch.float32


def autocast(dtype: torch.dtype, device: torch.device | str = "cpu") -> torch.autocast:
    """The autocast context of ``dtype`` on ``device`` (disabled for float32)."""
    device = torch.device(device)
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=dtype == torch.bfloat16)


def full_precision(x: torch.Tensor) -> torch.autocast:
    """A block computed in float32 even inside :func:`autocast` (the heads, the losses)."""
    return torch.autocast(x.device.type, enabled=False)


def padded_rows(rows: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Row indices ``rows``; under bf16 followed by copies of the first to a multiple of
    :data:`PAD_ROWS` (a gather with them pads the batch without a second copy, as :func:`run_padded` does)."""
    pad = (-rows.numel()) % PAD_ROWS if dtype == torch.bfloat16 and rows.numel() else 0
    return torch.cat([rows, rows[:1].expand(pad)]) if pad else rows


def run_padded(fn, dtype: torch.dtype, *tensors: torch.Tensor) -> torch.Tensor:
    """``fn(*tensors)`` (tensors of equal row counts); under bf16 with the rows padded by copies of
    the first row to a multiple of :data:`PAD_ROWS`, and only the real rows of the result kept."""
    n = tensors[0].shape[0]
    pad = (-n) % PAD_ROWS if dtype == torch.bfloat16 and n else 0
    if not pad:
        return fn(*tensors)
    return fn(*(torch.cat([t, t[:1].expand(pad, *t.shape[1:])]) for t in tensors))[:n]
