from word_count import run


def test_counts_words():
    assert run("the quick brown fox") == "4"


def test_empty_text_has_no_words():
    assert run("") == "0"


def test_whitespace_runs_count_once():
    assert run("  a \n\t b  ") == "2"
