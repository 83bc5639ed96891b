"""Terminal output: help text without markup, a progress bar that keeps pipes clean."""

from __future__ import annotations

from tokenomics.surfaces.terminal import ProgressBar, plain_help


def test_plain_help_drops_rst_markup_and_keeps_the_examples():
    doc = """The ``tokenomics`` command line.

    Examples
    --------
    ::

        tokenomics hardware     # see :func:`tokenomics.hardware_table`
    """
    out = plain_help(doc)
    assert "``" not in out and "--" not in out and ":func:" not in out
    assert "Examples:" in out and "tokenomics hardware" in out
    assert "tokenomics.hardware_table" in out


def test_progress_bar_is_silent_off_a_terminal(capsys):
    with ProgressBar("fits") as step:
        for i in range(1, 4):
            step(i, 3, f"group={i}")
    assert capsys.readouterr().err == ""     # pytest's stderr is not a terminal
