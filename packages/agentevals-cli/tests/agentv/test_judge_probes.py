"""The bias probes of ``agentevals calibrate`` as the judge sees them: llm_judge and rubric prompts under each
``RunOptions.judge_probe``, sent to a real loopback chat-completions server."""

from __future__ import annotations

from typing import Any

from agentevals.engine.options import JudgeProbe, RunOptions
from agentevals.evaluators.agentv._judge import PADDING, probe_prompt

ANSWER = "The capital of France is Paris."


def judge_entry(server: Any) -> dict[str, Any]:
    return {"type": "llm_judge", "name": "quality", "model": "judge-model", "base_url": server.base_url,
            "api_key_env": "TEST_JUDGE_KEY"}


def sent(av: Any, server: Any, entry: dict[str, Any], probe: JudgeProbe | None) -> str:
    av.run(entry, av.case(ANSWER, criteria="Names Paris", options=RunOptions(judge_probe=probe)))
    return server.requests_to("POST", "/chat/completions")[-1].json["messages"][-1]["content"]


def sections(prompt: str) -> list[str]:
    return [line for line in prompt.splitlines() if line.startswith("[[ ## ")]


def test_each_probe_changes_only_what_it_names(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"score": 1}
    entry = judge_entry(chat_server)
    plain = sent(av, chat_server, entry, None)
    assert sections(plain) == ["[[ ## criteria ## ]]", "[[ ## question ## ]]", "[[ ## reference_answer ## ]]",
                               "[[ ## answer ## ]]"]
    position = sent(av, chat_server, entry, JudgeProbe("position"))
    assert sections(position) == list(reversed(sections(plain)))
    assert position.startswith(plain[:plain.index("[[ ## ")])  # the preamble stays first
    lines = lambda prompt: sorted(line for line in prompt.splitlines() if line.strip())  # noqa: E731
    assert lines(position) == lines(plain)  # nothing lost or added
    verbose = sent(av, chat_server, entry, JudgeProbe("verbosity"))
    assert verbose == plain.replace(ANSWER, ANSWER + PADDING)
    restated = "Paris is the French capital."
    paraphrased = sent(av, chat_server, entry, JudgeProbe("paraphrase", {"t1": restated}))
    assert paraphrased == plain[:plain.rindex(ANSWER)] + restated + plain[plain.rindex(ANSWER) + len(ANSWER):]
    assert sent(av, chat_server, entry, JudgeProbe("paraphrase", {"other": restated})) == plain  # no paraphrase
    assert sent(av, chat_server, entry, JudgeProbe("label-order")) == plain  # freeform: no labels to reorder


def test_label_order_reverses_rubric_items_and_keeps_their_scoring(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"checks": [{"id": "accuracy", "satisfied": True, "reasoning": "ok"},
                                                {"id": "clarity", "satisfied": False, "reasoning": "terse"}]}
    items = [{"id": "accuracy", "outcome": "Correct", "weight": 3.0}, {"id": "clarity", "outcome": "Clear"}]
    entry = {"type": "rubric", "name": "criteria", "model": "judge", "base_url": chat_server.base_url,
             "api_key_env": "TEST_JUDGE_KEY", "rubrics": items}
    plain = av.run(entry, av.case(ANSWER))
    reordered = av.run(entry, av.case(ANSWER, options=RunOptions(judge_probe=JudgeProbe("label-order"))))
    first, second = (r.json["messages"][-1]["content"] for r in chat_server.requests_to("POST", "/chat/completions"))
    order = lambda prompt: [line.split("]")[0] for line in prompt.splitlines() if line.startswith("- [")]  # noqa: E731
    assert order(first) == ["- [accuracy", "- [clarity"]
    assert order(second) == ["- [clarity", "- [accuracy"]
    assert (reordered.score, reordered.status) == (plain.score, plain.status)


def test_probe_prompt_leaves_a_prompt_without_the_answer_or_sections_alone() -> None:
    assert probe_prompt(JudgeProbe("verbosity"), "Rate it.", answer="absent", case_id="c") == "Rate it."
    assert probe_prompt(JudgeProbe("position"), "[[ ## only ## ]]\nx", answer="x", case_id="c") == "[[ ## only ## ]]\nx"
    assert probe_prompt(None, "anything", answer="any", case_id="c") == "anything"


def test_verbosity_pads_the_answer_section_not_a_rubric_item_that_quotes_the_answer(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"checks": [{"id": "names", "satisfied": True, "reasoning": "ok"}]}
    answer = "helm list"
    entry = {"type": "rubric", "name": "criteria", "model": "judge", "base_url": chat_server.base_url,
             "api_key_env": "TEST_JUDGE_KEY", "rubrics": [{"id": "names", "outcome": f"Mentions {answer}"}]}
    av.run(entry, av.case(answer))
    av.run(entry, av.case(answer, options=RunOptions(judge_probe=JudgeProbe("verbosity"))))
    plain, padded = (r.json["messages"][-1]["content"] for r in chat_server.requests_to("POST", "/chat/completions"))
    at = plain.index("[[ ## answer ## ]]")
    assert plain.rindex(f"Mentions {answer}") > at  # the rubric items follow the answer's section
    assert padded[:at] == plain[:at]  # everything before the answer's section as it was
    assert padded[at:] == plain[at:].replace(answer, answer + PADDING, 1)
    assert f"Mentions {answer}" in padded and f"Mentions {answer}{PADDING}" not in padded
