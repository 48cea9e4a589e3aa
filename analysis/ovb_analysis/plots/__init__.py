"""One module per plot kind, each with TITLE, DESCRIPTION and make(results, outdir, options) ->
list of Output; a kind without data raises NoData with the reason (the report lists it)."""

from dataclasses import dataclass, field


class NoData(Exception):
    """The result set has no data for this plot; the message says what is missing."""


@dataclass
class Output:
    stem: str
    title: str
    caption: str
    files: list = field(default_factory=list)
    size_in: tuple = None   # (width, height) of the figure in inches; the PNG is size * PNG_DPI


@dataclass
class Options:
    warmup: int = None   # warm-up iterations to drop (None: stats.default_warmup)
    peak: float = None   # peak TFLOP/s per GPU for runs whose files do not carry one


def kinds():
    """Plot kinds in report order: name -> module."""
    from . import breakdown, collective, gemm, model, overlap, scaling
    return {"collective": collective, "gemm": gemm, "overlap": overlap, "breakdown": breakdown,
            "model": model, "scaling": scaling}
