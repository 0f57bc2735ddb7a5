"""A CrewAI crew with knowledge and memory under OpenInference (the `crewai_openinference_knowledge-memory` capture's
trace exports).

Two tasks (a researcher with two tools, one raising once; a writer streamed, given the research as context), a crew
with two `StringKnowledgeSource`s and `memory=True`, kicked off twice in one session. Around each task CrewAI calls the
agent's LLM for its own work: a rewrite of the task prompt as a knowledge search query before it, the memory's
extraction of statements from the task and its result after it, then an analysis of each statement it saves. It
appends what its memory recalled and its knowledge found to the task prompt; no span records either but that prompt.

Before `crewai_knowledge_memory`: each of CrewAI's own calls showed its prompt as a question of the task's agent
("The original query is: …", "Content:\\nTask: …", "Content to store: …") and its instructions as a system step of
the agent (three system prompts in each task's trajectory); each task's question was the task prompt with the
memories and knowledge chunks CrewAI appended (the turn-1 writer's 1,568 characters for a 417-character task), the
documents found listed nowhere; the embedding requests' attributes were unmapped. These tests hold what a person
expects: CrewAI's calls its work, marked; each task asked once, its prompt alone; what was recalled and found listed
as retrievals on the step of the call first sent it, the second kickoff's recalled memories among them.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import crewai_knowledge_memory, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part
from tests.captures import corpus, questions

CAPTURE = "crewai_openinference_knowledge-memory"
SESSION = "crew-knowledge-memory-1"
REQUESTS = ["Plan a 2-day business trip to Lisbon: check the weather and what 500 EUR is in USD.",
            "Back to Lisbon next month for 3 days: what is 800 EUR in USD now?"]
WRITER_TASK = "Write a short trip brief for the traveller from the research."
POLICY = ("Acme travel policy. Hotels in Lisbon are capped at 180 EUR a night. Meals are reimbursed up to 60 EUR a "
          "day. Flights under six hours are booked in economy. Expenses are claimed in USD within 30 days.")
GUIDE = ("Lisbon city guide. Trams 28 and 12 climb to the Alfama district. The Baixa district holds most business "
         "hotels. Pack comfortable shoes: Lisbon is built on seven hills.")
APPENDED = ("\n\n# Memories from past conversations:\n", "Additional Information: ")
Json = dict[str, Any]


def _tasks() -> list[Json]:
    """The four tasks' trajectories, in the order they ran: turn 1's researcher and writer, then turn 2's."""
    return capture_document(CAPTURE, SESSION).get("subagent_trajectories") or []


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _purpose(step: Json) -> str | None:
    return ((step.get("extra") or {}).get("framework_work") or {}).get("purpose")


def _cut(prompt: str) -> str:
    """A task prompt as the log holds it, without what CrewAI appended after its criteria (memories, knowledge)."""
    criteria = prompt.index("\n\nThis is the expected criteria for your final answer: ")
    ends = [at for at in (prompt.find(marker, criteria) for marker in APPENDED) if at >= 0]
    return prompt[:min(ends)] if ends else prompt


def test_each_task_is_its_agents_calls_and_crewais_own_in_order() -> None:
    log = _log()
    purposes = {0: "knowledge search query", 4: "memory extraction", 5: "memory save analysis",
                6: "memory save analysis", 7: "knowledge search query", 9: "memory extraction",
                10: "memory save analysis", 11: "knowledge search query", 14: "memory extraction",
                15: "memory save analysis", 16: "knowledge search query", 18: "memory extraction",
                19: "memory save analysis"}
    seqs = [[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 10], [11, 12, 13, 14, 15], [16, 17, 18, 19]]
    for task, calls in zip(_tasks(), seqs, strict=True):
        steps = task["steps"]
        # CrewAI's query rewrite first, then the agent's instructions and its task once, then its calls.
        assert [s["source"] for s in steps[:3]] == ["agent", "system", "user"]
        agent_steps = [s for s in steps if s["source"] == "agent"]
        assert [s.get("llm_call_count") for s in agent_steps] == [1] * len(calls)
        for step, seq in zip(agent_steps, calls, strict=True):
            answer = log[seq]["response"]
            assert corpus.message_text(step.get("message")) == answer["text"]
            assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()] == [
                (c["id"], c["name"], c["arguments"]) for c in answer["tool_calls"]]
            assert (step["metrics"]["prompt_tokens"], step["metrics"]["completion_tokens"]) == (
                answer["usage"]["input_tokens"], answer["usage"]["output_tokens"])
            assert _purpose(step) == purposes.get(seq)
        # The writer's LLM streamed; CrewAI's memory analyses on a copy of the researcher's LLM, not streamed.
        assert [s["extra"]["request"].get("stream") is True for s in agent_steps] == [
            log[seq]["stream"] for seq in calls]


def test_crewais_own_calls_ask_no_question_and_give_no_instructions() -> None:
    log = _log()
    own = [entry for entry in log if entry["request"]["messages"][0]["content"].startswith(
        ("Your goal is to rewrite", "You extract discrete", "You analyze content to be stored"))]
    assert len(own) == 13
    for task in _tasks():
        # One system step, the agent's own; one user step, the task.
        system = [s for s in task["steps"] if s["source"] == "system"]
        assert len(system) == 1 and system[0]["message"].startswith(f"You are {task['agent']['name']}.")
        users = [s["message"] for s in task["steps"] if s["source"] == "user"]
        assert len(users) == 1 and users[0].startswith("\nCurrent Task: ")
    # What each analysis was given to store is named on its step.
    stored = [s["extra"]["framework_work"].get("content") for task in _tasks() for s in task["steps"]
              if _purpose(s) == "memory save analysis"]
    given = [entry["request"]["messages"][1]["content"] for entry in log
             if entry["request"]["messages"][0]["content"].startswith("You analyze content to be stored")]
    assert stored == [text.removeprefix("Content to store:\n").split("\n\nExisting scopes: ")[0] for text in given]
    assert stored[0] == "Lisbon was sunny at 24°C during the trip research."


def test_each_task_is_asked_its_prompt_once_without_what_crewai_appended() -> None:
    log = _log()
    first_calls = [1, 8, 12, 17]  # each task's first call of its agent, sent the task prompt
    for task, seq in zip(_tasks(), first_calls, strict=True):
        (user,) = [s for s in task["steps"] if s["source"] == "user"]
        sent = log[seq]["request"]["messages"][1]["content"]
        assert any(marker in sent for marker in APPENDED)
        assert user["message"] == _cut(sent)
        assert not any(marker in user["message"] for marker in APPENDED)
    # The writer's prompt still holds the context CrewAI gave it: the research's answer.
    writer = next(s for s in _tasks()[1]["steps"] if s["source"] == "user")["message"]
    assert writer.endswith("This is the context you're working with:\n" + log[3]["response"]["text"])


def test_the_memories_recalled_and_the_knowledge_found_are_listed_as_retrievals() -> None:
    log = _log()
    listed = [[s["extra"]["retrievals"] for s in task["steps"] if "retrievals" in (s.get("extra") or {})]
              for task in _tasks()]
    # Once a task, on the step of the call first sent them (its first call of the agent's).
    assert [len(found) for found in listed] == [1, 1, 1, 1]
    researcher_1, writer_1, researcher_2, writer_2 = (found[0] for found in listed)
    # Turn 1's researcher: no memory yet, the knowledge found for the rewritten query.
    assert [(r["retriever"], r["query"]) for r in researcher_1] == [
        ("CrewAI knowledge", log[0]["response"]["text"])]
    assert [d["content"] for d in researcher_1[0]["documents"]] == [GUIDE, POLICY]
    # Turn 1's writer: the memories the researcher's task saved, with their scores and what the analysis gave them.
    memory, knowledge = writer_1
    assert (memory["retriever"], memory["query"]) == ("CrewAI memory", WRITER_TASK)
    assert memory["documents"][0] == {
        "score": 0.72, "content": "Lisbon was sunny at 24°C during the trip research.",
        "metadata": {"categories": ["travel", "weather"], "entities": ["Lisbon"], "dates": [],
                     "topics": ["travel", "weather"]}}
    assert [d["content"] for d in memory["documents"]] == json.loads(log[4]["response"]["text"])["memories"]
    assert (knowledge["retriever"], knowledge["query"]) == ("CrewAI knowledge", log[7]["response"]["text"])
    # Turn 2: the second kickoff recalls what turn 1 saved, its query the task's description.
    memory = researcher_2[0]
    assert (memory["retriever"], memory["query"]) == ("CrewAI memory", REQUESTS[1])
    assert [(d["score"], d["content"]) for d in memory["documents"]] == [
        (0.71, "Lisbon was sunny at 24°C during the trip research."),
        (0.68, "The Lisbon trip brief recommends a Baixa hotel under the 180 EUR cap."),
        (0.62, "500 EUR converted to 545 USD at a rate of 1.09.")]
    assert "800 EUR converted to 880 USD at a rate of 1.10." in [d["content"] for d in writer_2[0]["documents"]]
    # Each listing names the span recording it: the call's, whose prompt held the documents.
    steps = [s for task in _tasks() for s in task["steps"] if "retrievals" in (s.get("extra") or {})]
    assert all(r["span_id"] == s["extra"]["span_id"] and r["from"] == "task prompt"
               for s in steps for r in s["extra"]["retrievals"])


def test_the_raising_tool_is_flagged_and_each_result_is_on_its_call() -> None:
    truth = capture_truth(CAPTURE)
    researcher = _tasks()[0]
    calls = [s for s in researcher["steps"] if s.get("tool_calls")]
    first, retry = calls
    failed = results_by_call(first)["call_1_1"]
    assert failed["content"] == truth.tool_results["call_1_1"]
    assert failed["content"] == "Error executing tool: exchange-rate service unavailable"
    assert failed["extra"]["is_error"] is True
    assert results_by_call(first)["call_1_0"]["content"] == "sunny, 24°C"
    assert results_by_call(retry)["call_2_0"]["content"] == "545.0 USD"


def test_embedding_requests_are_read_and_no_steps() -> None:
    embeddings = [s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "EMBEDDING"]
    assert len(embeddings) > 10
    for span in embeddings:
        reader = SpanReader(span)
        assert openinference.map_span(reader, ()) is None
        assert reader.unused() == set()
    document = capture_document(CAPTURE, SESSION)
    assert document["extra"]["unmapped_attributes"] == []
    assert sum(1 for task in _tasks() for s in task["steps"] if s.get("llm_call_count") == 1) == len(_log())


def _task_call(prompt: str) -> LlmCall:
    span = next(s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "LLM")
    return LlmCall(span=span, emitter="openinference", input_messages=[
        Message("system", [Part("text", text="You are Analyst. A desk.\nYour personal goal is: help")]),
        Message("user", [Part("text", text=prompt)])])


def test_a_knowledge_chunk_holding_line_breaks_is_one_document_where_the_session_embedded_it() -> None:
    chunk = "Policy.\nHotels are capped.\nMeals too."
    prompt = ("\nCurrent Task: Plan.\n\nThis is the expected criteria for your final answer: A plan.\nyou MUST return "
              f"the actual complete content as the final answer, not a summary.Additional Information: {chunk}\nGuide.")
    embedding = next(s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "EMBEDDING")
    embedded = replace(embedding, attributes={**embedding.attributes, "embedding.embeddings.0.embedding.text": chunk})
    call = _task_call(prompt)
    crewai_knowledge_memory.complete_calls([embedded], [call])
    (knowledge,) = call.extra["retrievals"]
    assert [d["content"] for d in knowledge["documents"]] == [chunk, "Guide."]
    assert call.input_messages[1].text == prompt[:prompt.index("Additional Information: ")]
    # Where no embedding request of the session holds it, a chunk is a line.
    call = _task_call(prompt)
    crewai_knowledge_memory.complete_calls([], [call])
    assert [d["content"] for d in call.extra["retrievals"][0]["documents"]] == [*chunk.split("\n"), "Guide."]


def test_crewais_recall_exploration_and_consolidation_are_its_memorys_work() -> None:
    span = next(s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "LLM")
    exploring = LlmCall(span=span, emitter="openinference", input_messages=[Message("user", [Part(
        "text", text="Query: the budget\n\nRelevant memory excerpts:\n500 EUR is 545 USD\n\nExtract the most relevant "
                     "information for the query.")])])
    consolidating = LlmCall(span=span, emitter="openinference", input_messages=[
        Message("system", [Part("text", text="You are comparing new content against existing memories to decide.")]),
        Message("user", [Part("text", text="New content to consider storing:\n800 EUR is 880 USD\n\nExisting similar "
                                           "memories:\n- 500 EUR is 545 USD")])])
    asking = LlmCall(span=span, emitter="openinference", input_messages=[
        Message("user", [Part("text", text="Query: what is the plan?")])])
    crewai_knowledge_memory.complete_calls([], [exploring, consolidating, asking])
    assert exploring.framework_work == {"by": "CrewAI", "purpose": "memory recall exploration"}
    assert consolidating.framework_work == {"by": "CrewAI", "purpose": "memory consolidation",
                                            "content": "800 EUR is 880 USD"}
    assert asking.framework_work is None  # a person's question that happens to start so


def test_the_corpus_reads_each_task_prompt_as_asked_without_what_crewai_appended() -> None:
    log = _log()
    # CrewAI's own requests ask nothing; each task's first call asks its prompt, what CrewAI appended no question.
    assert [(a.seq, a.text) for a in questions.asked_anew(log)] == [
        (seq, _cut(log[seq]["request"]["messages"][1]["content"])) for seq in (1, 8, 12, 17)]
    document = copy.deepcopy(capture_document(CAPTURE, SESSION))
    assert questions.missing_questions(document, log) == []
    # A task's question shown with the memories and knowledge appended is not the task asked.
    writer = document["subagent_trajectories"][1]
    (user,) = [s for s in writer["steps"] if s["source"] == "user"]
    user["message"] = log[8]["request"]["messages"][1]["content"]
    assert len(questions.missing_questions(document, log)) == 1
