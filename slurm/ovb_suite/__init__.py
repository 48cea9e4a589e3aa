"""ovb-suite: runs OverlapBench's named steps into one results folder, resumably, under a watchdog
(see slurm/README.md). Python 3 standard library only, so it runs on any login or compute node."""

__version__ = "0.1.0"
