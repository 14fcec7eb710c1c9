"""Roofline compute model for GEMMs (instead of SCALE-Sim): time = max(flops / peak, bytes / bandwidth)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Roofline:
    """An accelerator: peak TFLOPS, memory bandwidth (GB/s = bytes/ns) and bytes per element."""

    peak_tflops: float = 312.0
    memory_GBps: float = 2039.0
    bytes_per_element: int = 2

    def op_ns(self, flops: float, traffic_bytes: float) -> float:
        """An operation of `flops` that moves `traffic_bytes` to and from memory: bound by compute or by
        memory, whichever is slower (ASTRA-sim's roofline: flops / min(peak, bandwidth x intensity))."""
        return max(flops / (self.peak_tflops * 1e3), traffic_bytes / self.memory_GBps)

    def gemm_ns(self, m: int, n: int, k: int) -> float:
        """C[m,n] = A[m,k] @ B[k,n]: 2mnk flops; reads A and B, writes C once."""
        return self.op_ns(2.0 * m * n * k, (m * k + k * n + m * n) * self.bytes_per_element)

    def passes_ns(self, m: int, n: int, k: int) -> tuple[float, float, float]:
        """(forward, input gradient, weight gradient) of a linear layer with GEMM shape (m, n, k):
        dA[m,k] = dC[m,n] @ B^T and dB[k,n] = A^T @ dC[m,n]."""
        return self.gemm_ns(m, n, k), self.gemm_ns(m, k, n), self.gemm_ns(k, n, m)
