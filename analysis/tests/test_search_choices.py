"""The gpt4d options that carry a search entry's choices: micro-batch, sharded optimizer and
sharded gradients, from the entry or, for older files, from what the inputs pinned."""
from ovb_analysis.search_choices import choice_args, config_overlap


def test_chosen_sharding_levels_become_gpt4d_options():
    inputs = {"micro_batch": "auto", "shard_optimizer": "auto", "shard_gradients": True}
    zero2 = {"micro_batch": 1, "micro_steps": 2, "shard_optimizer": True, "shard_gradients": True}
    zero1 = {"micro_batch": 2, "micro_steps": 1, "shard_optimizer": True, "shard_gradients": False}
    off = {"micro_batch": 2, "micro_steps": 1, "shard_optimizer": False, "shard_gradients": False}
    assert choice_args(zero2, inputs) == ["--micro-batch", "1", "--shard-optimizer",
                                          "--shard-gradients"]
    assert choice_args(zero1, inputs) == ["--shard-optimizer"]
    assert choice_args(off, inputs) == []


def test_older_files_take_the_pinned_inputs():
    assert choice_args({}, {"micro_batch": 2, "shard_optimizer": True, "shard_gradients": True}) == [
        "--micro-batch", "2", "--shard-optimizer", "--shard-gradients"]
    assert choice_args({}, {"shard_optimizer": True}) == ["--shard-optimizer"]
    assert choice_args({}, {}) == []


def test_chosen_tp_chunks_become_the_overlap_flag_and_its_count():
    chosen = {"micro_batch": 2, "micro_steps": 1, "tp_chunks": 4}
    off = {"micro_batch": 2, "micro_steps": 1, "tp_chunks": 0}
    assert choice_args(chosen, {}) == ["--tp-chunks", "4"]
    assert choice_args(off, {}) == []
    assert config_overlap(chosen, "oar,ors,oag") == "oar,ors,oag,tp"
    assert config_overlap(chosen, "none") == "tp"
    assert config_overlap(off, "oar,ors,oag,tp") == "oar,ors,oag"
    assert config_overlap(off, "tp") == "none"
    assert config_overlap({}, "oar,tp") == "oar,tp"  # no choice recorded: the search's flags
