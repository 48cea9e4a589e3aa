"""OverlapBench analysis: Megatron-LM comparison, paper-style plots and the HTML/Markdown report.

Run it through the executable ``analysis/ovb-analysis`` (see analysis/README.md).
"""

__version__ = "0.1.0"
