"""Campaign presets of ovb-suite: fixed step lists that reproduce a committed set of results (the
GPU campaigns under results/), each in one module (see common.py for what a module defines).
`ovb-suite run --preset NAME` runs one; `ovb-suite list --preset NAME` prints its steps.
"""

from . import (baselines, gpt4d_gpu, gpu_check, h100_single, llama_gpu, microbench_gpu,
               model_pipeline, multirank, overlap_matters, profile_13b, profiling_gpu)
from .common import build, default_budget, parse_params

CAMPAIGNS = {m.NAME: m for m in (h100_single, multirank, microbench_gpu, gpt4d_gpu, profiling_gpu,
                                 model_pipeline, baselines, overlap_matters, profile_13b,
                                 llama_gpu, gpu_check)}

__all__ = ["CAMPAIGNS", "build", "default_budget", "parse_params"]
