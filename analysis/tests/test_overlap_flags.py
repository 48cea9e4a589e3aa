"""ovb_analysis.overlap_flags: every --overlap value from the one list of flags (gpt4d's table is
pinned to it by slurm/tests/config_parity.py, ctest gpt4d.config_parity)."""

from ovb_analysis import overlap_flags


def test_all_and_subsets_from_the_flags():
    assert overlap_flags.FLAGS == ("oar", "ors", "oag")
    assert overlap_flags.ALL == "oar,ors,oag"
    assert overlap_flags.OPT_IN == ("tp",)  # not in ALL nor in subsets()
    assert overlap_flags.subsets() == ("none", "oar", "ors", "oag", "oar,ors", "oar,oag",
                                       "ors,oag", "oar,ors,oag")


def test_text_of_a_runs_flags():
    assert overlap_flags.text(["oar", "oag"]) == "oar,oag"
    assert overlap_flags.text([]) == "none" and overlap_flags.text(None) == "none"
