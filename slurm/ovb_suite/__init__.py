"""ovb-suite: runs OverlapBench's named steps into one results folder, resumably, under a watchdog
(see slurm/README.md): the built-in suite (presets quick and full: plan.py, presets.py) and the
GPU campaigns (campaign presets: campaigns/). Python 3 standard library only (with the analysis
part's standard-library io_util for atomic writes), so it runs on any login or compute node."""

__version__ = "0.1.0"
