"""Issue 20 in Python: sep.Prior, compress(prior=) and decompress(prior=),
archives identical to `sep --prior FILE`."""

import os
import subprocess

import pytest

import sep

HERE = os.path.dirname(os.path.abspath(__file__))
PAPER1 = os.path.join(HERE, "..", "..", "tests", "corpus", "files", "calgary.paper1")


def _text():
    with open(PAPER1, "rb") as f:
        return f.read()


def _prior_bytes():
    text = _text()
    samples = [text[i : i + 4096] for i in range(0, 40960, 4096)]
    return sep.Prior.train(samples, preset="default")


def test_a_prior_shrinks_a_small_similar_file_and_round_trips():
    prior = sep.Prior(_prior_bytes())
    assert len(prior.id) == 32
    small = _text()[-4096:]
    plain = sep.compress(small, preset="default")
    with_prior = sep.compress(small, prior=prior)
    assert len(with_prior) < len(plain)
    assert sep.decompress(with_prior, prior=prior) == small
    # Without the prior, or with another one: SepError naming the id it needs.
    with pytest.raises(sep.SepError, match=prior.id):
        sep.decompress(with_prior)
    other = sep.Prior(sep.Prior.train([b"abc " * 500], preset="default"))
    with pytest.raises(sep.SepError):
        sep.decompress(with_prior, prior=other)


def test_bad_prior_bytes_are_sep_errors():
    good = _prior_bytes()
    with pytest.raises(sep.SepError):
        sep.Prior(good[: len(good) // 2])
    with pytest.raises(sep.SepError):
        sep.Prior(b"not a prior at all")
    with pytest.raises(TypeError):
        sep.Prior(12)


def test_archives_equal_the_command_lines(tmp_path, sep_bin):
    exe = sep_bin
    prior_file = tmp_path / "p.sepp"
    prior_file.write_bytes(_prior_bytes())
    small = _text()[-4096:]
    src = tmp_path / "x.txt"
    src.write_bytes(small)
    cli = subprocess.run(
        [exe, "-c", "--prior", str(prior_file), str(src)], check=True, capture_output=True
    ).stdout
    assert sep.compress(small, prior=sep.Prior(prior_file.read_bytes())) == cli
