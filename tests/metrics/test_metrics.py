"""Metrics against their reference implementations and hand-computed values.

sacrebleu, rouge-score, nltk's METEOR and bert-score are called directly on the same fixtures;
SQuAD v2 and the MADC metrics are checked against values computed by hand from the published
rules and examples (evaluate's squad_v2 needs the hub, so it is not used here).
"""

from __future__ import annotations

import math

import pytest

from madeval.core.item import Item
from madeval.core.plugins import registries
from madeval.core.transcript import Agent, Message, Persona, Transcript
from madeval.errors import UsageError
from madeval.metrics.aggregate import task_scores
from madeval.metrics.debate import entropy_bits, mean_pairwise_cosine
from madeval.metrics.math import integer_value, last_boxed, math_equal
from madeval.metrics.squad import exact_match, normalize_answer, squad_v2_scores, token_f1
from madeval.metrics.view import DebateView
from madeval.testing import core_registries

METRICS = core_registries().metrics

SUMMARIES = [
    ("The cat sat on the mat.", ["The cat lay on the mat."]),
    ("A large house was sold for a record price on Monday.", ["A big house sold for a record price.",
                                                                "Record price paid for a house."]),
    ("Police arrested two men after the robbery in Leeds.", ["Two men have been arrested after a robbery in Leeds."]),
    ("Completely unrelated words here.", ["The council approved the new water park plans."]),
]


def text_item(references):
    return Item("t", "document", list(references))


@pytest.mark.parametrize(("prediction", "references"), SUMMARIES)
def test_metric_bleu_equals_sacrebleu(prediction, references):
    import sacrebleu

    expected = sacrebleu.sentence_bleu(prediction, references).score / 100
    assert METRICS.create("bleu").score(prediction, text_item(references)) == pytest.approx(expected, abs=1e-12)


def test_metric_bleu_identical_is_one_and_empty_is_zero():
    bleu = METRICS.create("bleu")
    assert bleu.score("the cat sat on the mat", text_item(["the cat sat on the mat"])) == pytest.approx(1.0)
    assert bleu.score(None, text_item(["the cat sat on the mat"])) == 0.0


@pytest.mark.parametrize(("prediction", "references"), SUMMARIES)
def test_metric_rouge_equals_rouge_score(prediction, references):
    from rouge_score import rouge_scorer

    types = ["rouge1", "rouge2", "rouge3", "rougeL"]
    reference = rouge_scorer.RougeScorer(types).score_multi(references, prediction)
    scores = METRICS.create("rouge").score(prediction, text_item(references))
    assert scores == {name: pytest.approx(reference[name].fmeasure, abs=1e-12) for name in types}


def test_metric_rouge_hand_computed():
    # ref "the cat sat on the mat", hyp "the cat lay on the mat": 5 of 6 unigrams shared,
    # bigrams the-cat, on-the, the-mat shared of 5, LCS "the cat on the mat" = 5 tokens.
    scores = METRICS.create("rouge").score("the cat lay on the mat", text_item(["the cat sat on the mat"]))
    assert scores["rouge1"] == pytest.approx(5 / 6)
    assert scores["rouge2"] == pytest.approx(3 / 5)
    assert scores["rouge3"] == pytest.approx(1 / 4)  # "on the mat" of 4 trigrams
    assert scores["rougeL"] == pytest.approx(5 / 6)


@pytest.mark.parametrize(("prediction", "references"), SUMMARIES)
def test_metric_meteor_equals_nltk(prediction, references):
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.translate.meteor_score import meteor_score

    from madeval.metrics.wordnet import wordnet

    tokenize = NLTKWordTokenizer().tokenize
    expected = meteor_score([tokenize(r) for r in references], tokenize(prediction), wordnet=wordnet())
    assert METRICS.create("meteor").score(prediction, text_item(references)) == pytest.approx(expected, abs=1e-12)


def test_metric_meteor_offline_wordnet_matches_nltk_documentation_and_hand_values():
    from nltk.translate.meteor_score import meteor_score

    from madeval.metrics.wordnet import wordnet

    # nltk's own doctest (nltk/translate/meteor_score.py): 0.6944.
    hypothesis = ("It is a guide to action which ensures that the military always obeys "
                  "the commands of the party").split()
    reference = "It is a guide to action that ensures that the military will forever heed Party commands".split()
    assert round(meteor_score([reference], hypothesis, wordnet=wordnet()), 4) == 0.6944
    # "car" matches "auto" only through WordNet synonyms: 4 of 4 words matched in one chunk,
    # score = 1 * (1 - 0.5 * (1/4)^3) = 0.99219; without synonyms 3 of 4 words in 2 chunks give
    # 0.75 * (1 - 0.5 * (2/3)^3) = 0.63889.
    score = METRICS.create("meteor").score("the car is red", text_item(["the auto is red"]))
    assert score == pytest.approx(1 - 0.5 * (1 / 4) ** 3, abs=1e-6)


def test_metric_bertscore_equals_bert_score_with_the_local_model():
    from bert_score import score

    from madeval.metrics.models import DEFAULT_MODEL_LAYERS, default_model_path

    metric = METRICS.create("bertscore")
    for prediction, refs in SUMMARIES:
        # one pair per call, as madeval scores items: bert-score's padding in larger batches
        # shifts scores by up to about 1e-3
        precision, recall, f1 = score([prediction], [refs], model_type=default_model_path(),
                                      num_layers=DEFAULT_MODEL_LAYERS)
        got = metric.score(prediction, text_item(refs))
        assert got["bertscore_f1"] == pytest.approx(float(f1[0]), abs=1e-6)
        assert got["bertscore_precision"] == pytest.approx(float(precision[0]), abs=1e-6)
        assert got["bertscore_recall"] == pytest.approx(float(recall[0]), abs=1e-6)
    assert metric.score("same words", text_item(["same words"]))["bertscore_f1"] == pytest.approx(1.0, abs=1e-5)


def test_metric_huggingface_evaluate_offline_fails_with_one_line(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(UsageError, match="cannot load Hugging Face evaluate metric 'no_such_metric_x'"):
        METRICS.create("evaluate", {"id": "no_such_metric_x"})


# SQuAD v2: hand-computed from the official rules.
def test_metric_squad_normalisation_exact_and_f1():
    assert normalize_answer("The  Denver Broncos!") == "denver broncos"
    assert normalize_answer("an apple, a pear") == "apple pear"
    assert exact_match("Denver Broncos", "the Denver Broncos.") == 1
    assert token_f1("Denver Broncos", "Broncos") == pytest.approx(2 * 1 * 0.5 / 1.5)  # P=1, R=1/2
    assert token_f1("Denver Broncos", "Carolina Panthers") == 0.0
    # shared tokens counted with multiplicity: gold "a b b c", pred "b b b" -> 2 shared
    assert token_f1("x y y z", "y y y") == pytest.approx(2 * (2 / 3) * (2 / 4) / ((2 / 3) + (2 / 4)))
    assert token_f1("", "") == 1.0 and token_f1("", "something") == 0.0


def test_metric_squad_v2_all_answerable_and_unanswerable():
    items = [
        ("q1", ["Denver Broncos", "The Broncos"], "Broncos"),  # EM via 2nd gold, F1 1
        ("q2", ["Santa Clara, California"], "Santa Clara"),  # EM 0, F1 2*1*(2/3)/(5/3) = 0.8
        ("q3", ["[UNKNOWN]"], "[UNKNOWN]"),  # abstention on an unanswerable item: 1, 1
        ("q4", ["[UNKNOWN]"], "Levi's Stadium"),  # answer to an unanswerable item: 0, 0
        ("q5", ["Super Bowl 50"], None),  # nothing extracted: 0, 0
    ]
    records = [
        {"unit": {"item": qid}, "metrics": METRICS.create("squad_v2").score(pred, Item(qid, "q", golds))}
        for qid, golds, pred in items
    ]
    assert records[1]["metrics"]["f1"] == pytest.approx(0.8)
    summary = {name: value["mean"] for name, value in task_scores(records).items()}
    assert summary["exact"] == pytest.approx(2 / 5)
    assert summary["f1"] == pytest.approx((1 + 0.8 + 1 + 0 + 0) / 5)
    assert summary["HasAns_exact"] == pytest.approx(1 / 3) and summary["HasAns_f1"] == pytest.approx(1.8 / 3)
    assert summary["NoAns_exact"] == pytest.approx(1 / 2) and summary["NoAns_f1"] == pytest.approx(1 / 2)
    assert task_scores(records)["HasAns_f1"]["items"] == 3


def test_metric_squad_v2_f1_hand_computed():
    # gold "norman conquest of england" (4 tokens), prediction "norman conquest": P 1, R 1/2
    assert squad_v2_scores("Norman conquest", ["the Norman conquest of England"])["f1"] == pytest.approx(2 / 3)
    # max over golds: "denver broncos team" vs "denver broncos" P 2/3 R 1 -> 0.8; vs "broncos" -> 0.5
    scores = squad_v2_scores("the Denver Broncos team", ["Denver Broncos", "Broncos"])
    assert scores["f1"] == pytest.approx(0.8) and scores["exact"] == 0.0
    # punctuation goes before the articles: "U.S. Army" and "the US army" are the same answer
    assert squad_v2_scores("the US army", ["U.S. Army"])["exact"] == 1.0
    # a reply that mentions the marker is an answer: 5 tokens (answer is unknown or paris), 1 shared
    mention = squad_v2_scores("The answer is [UNKNOWN] or Paris", ["Paris"])
    assert mention["f1"] == pytest.approx(2 * (1 / 5) * 1 / (1 / 5 + 1)) and mention["exact"] == 0.0


def test_metric_squad_v2_only_the_exact_marker_abstains():
    # dev item 571cac5d5efbb31900334dd3: the gold answer is the word "unknown"
    assert squad_v2_scores("unknown", ["unknown"]) == {"exact": 1.0, "f1": 1.0, "HasAns_exact": 1.0, "HasAns_f1": 1.0}
    assert squad_v2_scores("  [UNKNOWN]\n", ["[UNKNOWN]"])["NoAns_exact"] == 1.0
    assert squad_v2_scores("unknown", ["[UNKNOWN]"]) == {"exact": 0.0, "f1": 0.0, "NoAns_exact": 0.0, "NoAns_f1": 0.0}
    assert squad_v2_scores("[UNKNOWN]", ["Paris"])["HasAns_f1"] == 0.0  # abstaining on an answerable item
    # the official convention: an empty gold list is unanswerable, the empty prediction abstains
    assert squad_v2_scores("", []) == {"exact": 1.0, "f1": 1.0, "NoAns_exact": 1.0, "NoAns_f1": 1.0}


def test_metric_squad_v2_gold_answers_that_normalise_to_nothing_are_dropped():
    # the official script keeps only gold texts non-empty after normalisation, else [""]
    assert squad_v2_scores("", ["the", "a"]) == {"exact": 1.0, "f1": 1.0, "HasAns_exact": 1.0, "HasAns_f1": 1.0}


# MADC (seed 003, Appendix): entropy and log-likelihood examples.
def trajectory_transcript(rounds: list[list[str | None]]) -> Transcript:
    """A transcript in which agent i's answer in turn t is rounds[t][i]."""
    agents = [Agent(i, Persona(f"a{i}"), "m", "e") for i in range(len(rounds[0]))]
    messages = []
    for turn, answers in enumerate(rounds, start=1):
        for agent, answer in enumerate(answers):
            messages.append(Message(len(messages), turn, agent, agent, "draft", f"({answer})", f"({answer})",
                                    answer, None))
    return Transcript(agents=agents, messages=messages, turns_used=len(rounds))


def debate_scores(metric: str, rounds, target="A", answer_type="choice", per_turn=True):
    transcript = trajectory_transcript(rounds)
    item = Item("q", "question", target, choices=tuple("ABCD"))
    return METRICS.create(metric,
                          {"per_turn": per_turn}).score_debate("A", item, DebateView(transcript, answer_type, target))


def test_metric_madc_entropy_example():
    # 10 agents: (A)x5,(B)x5 then (A)x8,(B)x1,(C)x1 -> 0.9219 bits; then (A)x10 -> 0.
    fixed = debate_scores("answer_entropy", [list("AAAAABBBBB"), list("AAAAAAAABC")])
    assert round(fixed["answer_entropy"], 4) == 0.9219
    assert fixed["answer_entropy_turn1"] == pytest.approx(1.0)
    assert fixed["answer_entropy_sum"] == pytest.approx(1.0 + fixed["answer_entropy"])
    random_ = debate_scores("answer_entropy", [list("AAAAABBBBB"), list("AAAAAAAAAA")], per_turn=False)
    assert random_ == {"answer_entropy": 0.0, "answer_entropy_sum": 1.0}  # per-turn values only on request
    assert entropy_bits(["A"] * 8 + ["B", "C"]) == pytest.approx(-(0.8 * math.log2(0.8) + 2 * 0.1 * math.log2(0.1)))


def test_metric_madc_entropy_leaves_out_unparsed_answers():
    scores = debate_scores("answer_entropy", [["A", "B", None, None]])
    assert scores["answer_entropy"] == pytest.approx(1.0)  # A and B half each


def test_metric_madc_log_likelihood_example():
    # gold A: (A)x9,(B)x1 -> log2 0.9 = -0.152; (A)x10 -> 0.0
    fixed = debate_scores("gold_likelihood", [list("AAAAABBBBB"), list("AAAAAAAAAB")])
    assert round(fixed["gold_log2_likelihood"], 3) == -0.152 and fixed["gold_share"] == pytest.approx(0.9)
    assert fixed["gold_log2_likelihood_turn1"] == pytest.approx(-1.0)
    assert fixed["gold_log2_likelihood_sum"] == pytest.approx(-1.0 + math.log2(0.9))
    assert debate_scores("gold_likelihood", [list("AAAAABBBBB"), list("AAAAAAAAAA")])["gold_log2_likelihood"] == 0.0



def test_metric_madc_log_likelihood_floor_when_no_agent_holds_the_gold_answer():
    # log2 0 = -inf; the floor is log2(1/(2n)): 4 answers -> log2(1/8) = -3, one bit below
    # log2(1/4) = -2, the value with a single holder.
    none = debate_scores("gold_likelihood", [list("BBBB")])
    assert none["gold_share"] == 0.0 and none["gold_log2_likelihood"] == -3.0
    assert debate_scores("gold_likelihood", [list("ABBB")])["gold_log2_likelihood"] == -2.0
    # turn 1: 1 of 2 hold A -> -1; turn 2: none of 2 -> log2(1/4) = -2; sum -3
    lost = debate_scores("gold_likelihood", [list("AB"), list("BB")])
    assert lost["gold_log2_likelihood_turn1"] == -1.0 and lost["gold_log2_likelihood_turn2"] == -2.0
    assert lost["gold_log2_likelihood"] == -2.0 and lost["gold_log2_likelihood_sum"] == -3.0
    # unparsed answers do not count in n: 2 parsed of 4 -> log2(1/4) = -2
    assert debate_scores("gold_likelihood", [["B", "C", None, None]])["gold_log2_likelihood"] == -2.0


def test_metric_answer_diversity_hand_computed_and_with_sbert():
    # embeddings (1,0), (0,1), (1,1): cosines 0, 1/sqrt2, 1/sqrt2 -> mean sqrt2/3
    assert mean_pairwise_cosine([[1, 0], [0, 1], [1, 1]]) == pytest.approx(math.sqrt(2) / 3)
    transcript = trajectory_transcript([["A", "B", "C"]])
    transcript.messages[0].solution = "Paris is the capital of France."
    transcript.messages[1].solution = "The capital of France is Paris."
    transcript.messages[2].solution = "I would rather eat a sandwich."
    view = DebateView(transcript, "text", "Paris")
    fake = METRICS.create("answer_diversity", {"embedder": lambda texts: [[1, 0], [0, 1], [1, 1]]})
    assert fake.score_debate(None, None, view) == {"answer_cosine_similarity": pytest.approx(math.sqrt(2) / 3)}
    from sentence_transformers import SentenceTransformer, util

    from madeval.metrics.models import default_model_path

    texts = view.final_texts()
    embeddings = SentenceTransformer(default_model_path(), device="cpu").encode(texts, convert_to_tensor=True)
    cosines = util.cos_sim(embeddings, embeddings)
    expected = float(cosines[0, 1] + cosines[0, 2] + cosines[1, 2]) / 3
    got = METRICS.create("answer_diversity").score_debate(None, None, view)["answer_cosine_similarity"]
    assert got == pytest.approx(expected, abs=1e-5)


def test_metric_answer_diversity_reads_the_draft_an_agreeing_agent_backs():
    transcript = trajectory_transcript([["A", "A"]])
    transcript.messages[1] = Message(1, 1, 1, 1, "improve", "[AGREE]", None, "A", True, backs=0)
    transcript.messages[0].solution = "Draft text"
    assert DebateView(transcript, "choice", "A").final_texts() == ["Draft text", "Draft text"]


# Math
@pytest.mark.parametrize(
    ("prediction", "target", "equal"),
    [
        ("\\frac{1}{2}", "0.5", True),
        ("\\dfrac12", "1/2", True),
        ("(3,\\tfrac{\\pi}{2})", "\\left( 3, \\frac{\\pi}{2} \\right)", True),
        ("x = 5", "5", True),
        ("10\\%", "10", True),
        ("1,000", "1000", True),
        ("2\\sqrt{2}", "\\sqrt{8}", True),
        ("90^\\circ", "90", True),
        ("5 \\text{ cm}", "5", True),
        ("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}", True),
        ("2", "3", False),
        ("(3,\\pi)", "(3,\\tfrac{\\pi}{2})", False),
        ("(1,2)", "[1,2]", False),
        (None, "3", False),
    ],
)
def test_metric_math_equivalence(prediction, target, equal):
    assert math_equal(prediction, target) is equal
    assert METRICS.create("math_equivalence").score(prediction, Item("m", "q", target)) == float(equal)


@pytest.mark.parametrize(
    ("prediction", "target", "equal"),
    [
        ("3*sqrt(2)/2", "\\frac{3\\sqrt{2}}{2}", True),  # plain arithmetic
        # "pi" outside LaTeX is the product p*i for math-verify and for lm-eval's checkers alike
        # (bench/math_agreement.py); madeval's former parser read it as 2*pi.
        ("2*pi", "2\\pi", False),
        ("2^10", "1024", True),
        ("2**3**2", "512", True),  # right-associative: 2^9
        ("2(x+1)", "2x+2", True),
        ("9^{9^{9^{9}}}", "3", False),  # too large to evaluate: refused, not computed
        ("9^9^9^9", "3", False),
        ("1000000!", "3", False),
    ],
)
def test_metric_math_plain_arithmetic_and_huge_numbers(prediction, target, equal):
    assert math_equal(prediction, target) is equal


EXPLOITS = [
    "\\boxed{{__import__('pathlib').Path('{path}').touch()}}",
    "\\boxed{{__import__(\"os\").system(\"touch {path}\")}}",
    "The answer is $\\boxed{{open('{path}', 'w')}}$",
    "\\boxed{{exec(\"open('{path}','w')\")}}",
]


@pytest.mark.parametrize("template", EXPLOITS)
def test_metric_math_reply_is_never_executed(template, tmp_path, monkeypatch):
    """A reply that is Python code creates no file, scores wrong, and no eval/exec is called."""
    import builtins

    from madeval.metrics.answers import answers_match
    from madeval.metrics.checker import equivalent

    calls = []  # sympy evaluates its own fixed strings at import; the reply must never be among them

    def recording(real):
        def call(source, *args, **kwargs):
            # a module's own code, run by an import (the checker's pool imports multiprocessing's modules
            # when it starts a worker), is not text from a reply: only text and code compiled from text
            if not getattr(source, "co_filename", "<").startswith("<"):
                return real(source, *args, **kwargs)
            names = getattr(source, "co_names", ())
            calls.append(f"{source} {names} {getattr(source, 'co_consts', ())}")
            return real(source, *args, **kwargs)

        return call

    equivalent("1", "1")  # imports math-verify and sympy (whose import runs exec) before watching
    monkeypatch.setattr(builtins, "eval", recording(builtins.eval))
    monkeypatch.setattr(builtins, "exec", recording(builtins.exec))
    target = tmp_path / "x"
    reply = template.format(path=target)
    assert equivalent(reply, "5") is False  # the checker's own code, in this process, watched
    assert math_equal(reply, "5") is False  # and through the worker process
    assert answers_match("math", reply, ["5", "\\frac{1}{2}"]) is False
    assert METRICS.create("math_equivalence").score(reply, Item("m", "q", "5")) == 0.0
    assert not target.exists()
    assert not [c for c in calls if any(word in c for word in ("__import__", "open", "touch", str(target)))]


def test_metric_math_helpers():
    assert last_boxed("a \\boxed{1} then \\boxed{\\frac{a}{b^{2}}} end") == "\\frac{a}{b^{2}}"
    assert last_boxed("\\boxed{unbalanced") is None and last_boxed("no box") is None
    assert last_boxed("\\boxed 7 is it") == "7"
    assert integer_value("$1{,}000$.") == 1000 and integer_value("9" * 5000) is None  # over int()'s digit limit
    assert integer_value("025") == 25 and integer_value("\\boxed{25}") == 25 and integer_value("2.5") is None


def test_metric_integer_match_for_aime():
    metric = METRICS.create("integer_match")
    assert metric.score("25", Item("a", "q", "025")) == 1.0
    assert metric.score("250", Item("a", "q", "025")) == 0.0
    assert metric.score(None, Item("a", "q", "025")) == 0.0


def test_metric_plugin_from_a_third_party(tmp_path, monkeypatch):
    """A plugin adds a metric through the register_metrics hook and a task YAML names it."""
    from madeval import hookimpl
    from madeval.core.plugins import pm
    from madeval.metrics.base import Metric
    from madeval.settings.config import RunSettings
    from madeval.task.definition import load_tasks

    class Length(Metric):
        """Number of characters of the answer."""

        name = "answer_length"

        def score(self, prediction, item):
            return float(len(prediction or ""))

    class Plugin:
        @staticmethod
        @hookimpl
        def register_metrics(register):
            register("answer_length", Length)

    (tmp_path / "t.yaml").write_text(
        "task: lengthy\ndataset: {generator: !function rows.make, size: 2, seed: 0}\n"
        "doc_to_text: q\ndoc_to_target: a\nanswer_type: text\nanswer_extraction: [final_text]\n"
        "metric_list: [{metric: answer_length}, {metric: accuracy}]\n"
    )
    (tmp_path / "rows.py").write_text("def make(size, seed):\n    return [{'q': 'x', 'a': 'abc'}] * size\n")
    pm.register(Plugin, name="length-plugin")
    try:
        task = load_tasks(RunSettings(tasks=["lengthy"], include_path=[str(tmp_path)]), registries())["lengthy"]
        item = task.items[0]
        assert task.score(task.extract("FINAL SOLUTION: abc", item), item) == {"answer_length": 3.0, "accuracy": 1.0}
    finally:
        pm.unregister(name="length-plugin")
