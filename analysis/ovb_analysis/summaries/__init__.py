"""Summaries of the suite's campaign folders (`ovb-analysis summarize KIND DIR`), one module per
campaign preset of slurm/ovb-suite; each has TITLE, JSON_NAME (None: no JSON) and summarize(DIR)
returning a common.Summary."""

from . import (baselines, gpt4d_gpu, gpu_check, h100_single, llama_gpu, microbench_gpu,
               model_pipeline, multirank, overlap_matters, profile_13b, profiling_gpu)

KINDS = {"h100-single": h100_single, "multirank": multirank, "microbench-gpu": microbench_gpu,
         "gpt4d-gpu": gpt4d_gpu, "profiling-gpu": profiling_gpu, "model-pipeline": model_pipeline,
         "baselines": baselines, "overlap-matters": overlap_matters,
         "profile-1.3B": profile_13b, "llama-gpu": llama_gpu,
         "gpu-check": gpu_check}
