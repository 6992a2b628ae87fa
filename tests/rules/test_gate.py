"""Each rule family with queries it must and must not catch."""

from __future__ import annotations

from pathlib import Path

import pytest

from rules.gate import Gate
from rules.patterns import RuleFileError, load_all


@pytest.fixture(scope="module")
def gate() -> Gate:
    return Gate()


@pytest.mark.parametrize("query", [
    "biology chapter 5 notes", "psych 101 syllabus", "organic chemistry lab report", "login",
    "photosynthesis", "asdfghjkl", "qwrtpsdfg", "!!! ???",
])
def test_not_questions(gate, query):
    result = gate.classify(query)
    assert result.intent == "not_question" and not result.answerable


@pytest.mark.parametrize("query", [
    "Why is the sky blue?", "what causes tides", "Explain how vaccines work",
    "Is water a compound or an element", "Alzheimer's leads to the accumulation of ____ in the brain.",
    "The process by which cells divide to make gametes is called the:",
    "Using the data given, calculate the mean of 3, 5 and 7.",
])
def test_complete_free_response_questions(gate, query):
    result = gate.classify(query)
    assert (result.intent, result.type, result.complete) == ("question", "frq", True), result.rules


@pytest.mark.parametrize("query, options", [
    ("Which of the following organelles is the site of photosynthesis? A. mitochondrion B. chloroplast "
     "C. nucleus D. ribosome", ("mitochondrion", "chloroplast", "nucleus", "ribosome")),
    ("Which is a mammal?\na) shark\nb) whale\nc) trout", ("shark", "whale", "trout")),
    ("Which of these is a noble gas? (1) oxygen (2) neon (3) nitrogen", ("oxygen", "neon", "nitrogen")),
    ("What is the powerhouse of the cell? Options: nucleus; mitochondria; ribosome",
     ("nucleus", "mitochondria", "ribosome")),
    ("True or false: the sun is a star.", ("True", "False")),
    ("All of the following are noble gases EXCEPT\nA. helium\nB. neon\nC. chlorine\nD. argon",
     ("helium", "neon", "chlorine", "argon")),
])
def test_mcq_options_in_any_layout(gate, query, options):
    result = gate.classify(query)
    assert result.type == "mcq" and result.complete, result.rules
    assert result.options == options


@pytest.mark.parametrize("query", [
    "Which of the following does not occur during Sprint execution?",
    "Which of the following is a renewable resource?",
    "What is the correct answer?",
    "Which of the following is true? A. the earth is flat",
    "All of the above are examples of what?",
])
def test_mcq_without_options_is_blocked(gate, query):
    result = gate.classify(query)
    assert result.reason == "mcq_missing_options" and not result.complete
    assert any(rule.startswith("cue.") for rule in result.rules)


@pytest.mark.parametrize("query", ["What is the", "Using the data in the table, calculate",
                                   "Describe the role of the", "How does temperature affect,"])
def test_truncated_questions_are_blocked(gate, query):
    assert gate.classify(query).reason == "truncated"


@pytest.mark.parametrize("query, thing", [
    ("What does the graph in Figure 2 show about enzyme activity?", "figure"),
    ("Based on the passage, what is the author's main argument?", "passage"),
    ("According to the table below, which planet is largest?", "table"),
])
def test_questions_about_missing_context_are_blocked(gate, query, thing):
    result = gate.classify(query)
    assert result.reason == "missing_context"
    assert thing in result.message


@pytest.mark.parametrize("query, math", [
    ("What is 3 + 4 * 2?", True),
    ("Solve for x: 2x + 3 = 11", True),
    ("Natalia sold clips to 48 of her friends in April and half as many in May. "
     "How many clips did she sell altogether?", True),
    ("What is the derivative of x^2?", True),
    ("Why is the sky blue?", False),
    ("What organelle makes ATP?", False),
])
def test_math_detection(gate, query, math):
    assert gate.classify(query).math is math


def test_subject_from_the_request_wins(gate):
    assert gate.classify("What is a prime number?", subject="math").math is True


def test_every_decision_names_its_rules(gate):
    result = gate.classify("What is the")
    assert result.reason == "truncated"
    assert "dangling.dangling_function_word" in result.rules
    assert "interrogative.interrogative_sentence" in result.rules


@pytest.mark.parametrize("query, kind, complete", [
    ("¿Cuál de los siguientes es un mamífero? A. tiburón B. ballena C. trucha", "mcq", True),
    ("Welches Organell betreibt Photosynthese? A. Mitochondrium B. Chloroplast", "mcq", True),
    ("Which is a fruit? A. manzana B. perro C. casa", "mcq", True),
    ("What is Δx if x₁ = 3 and x₂ = 7?", "frq", True),
    ("Why does ice float on water — explain in terms of density?", "frq", True),
    ("光合作用发生在哪里？", "frq", True),
])
def test_unicode_and_other_languages(gate, query, kind, complete):
    result = gate.classify(query)
    assert (result.intent, result.type, result.complete) == ("question", kind, complete), result.rules


def test_empty_options_count_as_missing(gate):
    result = gate.classify("Which of the following is a gas? A. B. C. D.")
    assert result.reason == "mcq_missing_options"


def test_a_single_option_is_not_enough(gate):
    result = gate.classify("Which of the following is a noble gas? A. neon")
    assert result.reason == "mcq_missing_options" and result.options == ("neon",)


def test_a_sentence_after_a_letter_is_not_an_option(gate):
    result = gate.classify("Vitamin A. What does it do for vision?")
    assert result.type == "frq" and result.complete


def test_very_long_input_is_classified(gate):
    passage = "The cell is the basic unit of life. " * 1500
    result = gate.classify(passage + "Which organelle makes ATP? A. nucleus B. mitochondrion C. ribosome")
    assert result.complete and result.options[1] == "mitochondrion"
    assert gate.classify("why " * 20000 + "?").intent == "question"


@pytest.mark.parametrize("query, reason", [
    ("The combined masses of the products after fission are", "mcq_missing_options"),
    ("Glycolysis is the name given to the pathway involving the conversion of:", "mcq_missing_options"),
    ("If 20% of a number is 12, the number is:", None),
])
def test_statements_to_complete_need_options_unless_math(gate, query, reason):
    assert gate.classify(query).reason == reason


def test_navigational_keywords_win_over_a_dangling_ending(gate):
    assert gate.classify("sign in").intent == "not_question"
    assert gate.classify("notes on the").intent == "not_question"


def test_upper_case_in_a_case_insensitive_pattern_is_refused(tmp_path: Path):
    (tmp_path / "upper.toml").write_text('[[cue]]\nname = "shout"\npattern = \'WHICH\'\nwhy = "x"\n')
    with pytest.raises(RuleFileError, match="write it in lower case"):
        load_all(tmp_path)


def test_a_bad_pattern_stops_start_up_with_file_and_line(tmp_path: Path):
    (tmp_path / "broken.toml").write_text(
        '# comment\n[[cue]]\nname = "unclosed"\npattern = \'(abc\'\nwhy = "broken on purpose"\n')
    with pytest.raises(RuleFileError, match=r"broken.toml:3: rule 'unclosed' has a bad pattern"):
        load_all(tmp_path)
