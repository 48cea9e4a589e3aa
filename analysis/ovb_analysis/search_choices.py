"""The gpt4d options that carry what an `ovb-model search` entry chose for its configuration (its
micro-batch, optimizer sharding and, with --tp-chunks auto, tp's chunk count), for
`ovb-analysis pick-configs` and `slurm/emit-sbatch`."""

from . import overlap_flags


def choice_args(config, inputs=None):
    """gpt4d words for one entry of a search's `configs`: `--micro-batch M` when it runs more than
    one micro-step (one micro-step is gpt4d's default), `--shard-optimizer` when sharded. A file
    written before the search chose them has no such keys: the values it was pinned to in
    `inputs` (a number, true), else none."""
    inputs = inputs or {}
    pinned_mb = inputs.get("micro_batch")
    if not isinstance(pinned_mb, int) or isinstance(pinned_mb, bool):
        pinned_mb = 0  # "auto" or absent
    words = []
    if int(config.get("micro_steps", 2)) > 1:
        mb = int(config.get("micro_batch", pinned_mb))
        if mb > 0:
            words += ["--micro-batch", str(mb)]
    if config.get("shard_optimizer", inputs.get("shard_optimizer") is True) is True:
        words.append("--shard-optimizer")
        if config.get("shard_gradients", inputs.get("shard_gradients") is True) is True:
            words.append("--shard-gradients")
    if int(config.get("tp_chunks", 0) or 0) > 0:
        words += ["--tp-chunks", str(int(config["tp_chunks"]))]
    return words


def config_overlap(config, overlap):
    """gpt4d's --overlap for one entry: the search's flags (a comma string), with tp added where
    the entry chose it (`tp_chunks` > 0) and removed where it chose tp off (`tp_chunks` 0); an
    entry without the key (no choice made) keeps the search's flags."""
    if config.get("tp_chunks") is None:
        return overlap
    flags = [f for f in str(overlap).split(",") if f and f not in (overlap_flags.NONE, "tp")]
    if int(config.get("tp_chunks") or 0) > 0:
        flags.append("tp")
    return overlap_flags.text(flags)
