"""pydantic-ai on a `FallbackModel` whose first model fails (the `pydantic-ai_openai_fallback-model` capture).

pydantic-ai records a failed attempt at a request as an ERROR child span of the request's `chat` span, `model request
attempt <model>` (the tried model, `pydantic_ai.model_request.attempt`, the error as an exception event); the `chat`
span names the model that answered. Each attempt is listed on the step of the call it was made for
(`trajectory/mappers/pydantic_ai_attempts.py`), never a step of its own: read as an LLM call, it was an empty step of
the failed model, and the answer it sits under was dropped as its wrapper. The fake LLM's `llm_errors.jsonl` holds the
failed requests (each with the log's call that came next), its `llm_log.jsonl` the four answered ones.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from evalkit.trajectory.summary import summarise
from tests.captures import corpus
from tests.captures.recording.fake_llm import FakeLLM
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth

CAPTURE = "pydantic-ai_openai_fallback-model"
SESSION = "pai-fallback-1"
ATTEMPT = "pydantic_ai.model_request.attempt"

Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _failures() -> list[Json]:
    """The requests the fake LLM answered with a scripted error: the ground truth of the failed attempts."""
    text = (corpus.load(CAPTURE).path / "llm_errors.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _step_of(document: Json, seq: int) -> Json:
    """The step of the log's call `seq`, by the response id the fake LLM gave it."""
    (step,) = [s for s in corpus.llm_steps(document) if s["extra"].get("response_id") == f"openai-resp-{seq}"]
    return step


def test_each_answer_is_one_step_of_the_model_that_gave_it() -> None:
    # The premise: each failed attempt's span is under the chat span of the call that answered after it.
    spans = capture_spans(CAPTURE)
    attempts = [s for s in spans if ATTEMPT in s.attributes]
    by_id = {s.span_id: s for s in spans}
    assert [(s.attributes["gen_ai.request.model"], by_id[s.parent_span_id].attributes["gen_ai.request.model"])
            for s in attempts] == [("gpt-4o", "gpt-4o-mini")] * 2

    document = _document()
    log = corpus.load(CAPTURE).llm_log
    assert [_step_of(document, entry["seq"])["model_name"] for entry in log] == [
        "gpt-4o", "gpt-4o-mini", "gpt-4o", "gpt-4o-mini"] == [entry["model"] for entry in log]
    assert len(corpus.llm_steps(document)) == len(log)
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    # No step of a failed model, no step re-built from history for an answer the build lost.
    assert not any(step.get("is_copied_context") for step in document["steps"])
    assert ATTEMPT not in document["extra"]["unmapped_attributes"]
    assert "warnings" not in document["extra"]


def test_a_failed_attempt_is_listed_on_the_step_that_answered_after_it() -> None:
    document = _document()
    failures = _failures()
    assert [(f["model"], f["error"]["status"], f["stream"]) for f in failures] == [
        ("gpt-4o", 500, False), ("gpt-4o", 429, True)]
    for failure in failures:
        step = _step_of(document, failure["before_seq"])
        (attempt,) = step["extra"]["failed_attempts"]
        assert (attempt["model"], attempt["provider"], attempt["attempt"]) == (failure["model"], "openai", 0)
        error = attempt["error"]
        assert error["status"] == "error"
        assert f"status_code: {failure['error']['status']}" in error["message"]
        assert failure["error"]["message"] in error["message"]
        (exception,) = error["exceptions"]
        assert exception["type"] in ("pydantic_ai.exceptions.ModelServerError",
                                     "pydantic_ai.exceptions.ModelRateLimitError")
    before = {f["before_seq"] for f in failures}
    assert not any(step["extra"].get("failed_attempts") for step in corpus.llm_steps(document)
                   if int(step["extra"]["response_id"].rsplit("-", 1)[1]) not in before)


def test_tokens_cost_and_errors_count_what_happened() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    steps = corpus.llm_steps(document)
    # Only the answered calls are billed, each priced at the model that answered.
    assert all(step["metrics"]["cost_usd"] for step in steps)
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (
        truth.input_tokens, truth.output_tokens)
    assert abs(final["total_cost_usd"] - sum(step["metrics"]["cost_usd"] for step in steps)) < 1e-12
    # No answered call failed; the two attempts and the ModelRetry result are the session's failures, as the session
    # list counts their ERROR spans.
    assert not any((step.get("extra") or {}).get("error") for step in document["steps"])
    summary = summarise(document)
    assert (summary.tool_errors, summary.errors) == (1, 1 + len(_failures()))


def test_the_fake_llm_answers_a_scripted_error_as_openai_does() -> None:
    replies = [{"error": {"status": 429, "message": "Rate limit reached.", "type": "requests",
                          "code": "rate_limit_exceeded"}},
               {"text": "ok"}]
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}).encode()
    with FakeLLM(replies) as llm:
        request = urllib.request.Request(f"{llm.base_url}/chat/completions", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=10)
            raise AssertionError("the scripted error was not answered")
        except urllib.error.HTTPError as error:
            assert error.code == 429
            assert json.loads(error.read()) == {"error": {"message": "Rate limit reached.", "type": "requests",
                                                          "param": None, "code": "rate_limit_exceeded"}}
        with urllib.request.urlopen(request, timeout=10) as answered:
            assert json.loads(answered.read())["choices"][0]["message"]["content"] == "ok"
        # The failure is no call of the log: it is kept apart, before the call that came next.
        assert [entry["seq"] for entry in llm.log] == [0]
        (failure,) = llm.script.failures
        assert (failure["before_seq"], failure["model"], failure["error"]["status"]) == (0, "gpt-4o", 429)
