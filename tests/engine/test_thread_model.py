

def test_title_line_cuts_at_a_word_with_an_ellipsis():
    from engine.thread.model import title_line

    text = "Work on bead spotter-a0y. Run bd show spotter-a0y to see the issue details and bd ready to find more."
    assert title_line(text) == "Work on bead spotter-a0y. Run bd show spotter-a0y to see the issue details and…"
    assert len(title_line(text)) <= 80
    assert title_line("\n\n  first line  \nsecond") == "first line"
    assert title_line("a" * 200) == "a" * 79 + "…"  # one unbroken token is cut where it stands
    assert title_line("x" * 80) == "x" * 80
    assert title_line("one, two, three", 10) == "one, two…"
    assert title_line("") == ""
