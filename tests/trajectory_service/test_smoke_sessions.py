"""Sessions from hand-built OTLP requests: split traces, arrival order, missing parents, big values, prices."""

from __future__ import annotations

from tests.trajectory_service.conftest import Service, assert_schema_and_atif_valid, chat, root, span


async def test_session_split_across_traces_arriving_out_of_order(svc: Service) -> None:
    agent, key = await svc.new_agent()
    # Trace 2 first, children before roots; the roots carry the session id and come last.
    await svc.send(key, [chat(2, 21, 20, 10.0, user="second question", text="second answer")])
    await svc.send(key, [chat(1, 11, 10, 1.0, user="first question", text="first answer")])
    await svc.send(key, [root(2, 20, "s-split", 9.5, 11.0), root(1, 10, "s-split", 0.5, 2.0)])
    reply = await svc.trajectory(agent, "s-split")
    assert reply.status == 200, reply.text
    document = reply.body
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid"
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("user", "first question"), ("agent", "first answer"), ("user", "second question"), ("agent", "second answer")]
    assert document["final_metrics"]["total_prompt_tokens"] == 200
    # test-model: $1 in, $4 out per million -> 2 x (100 x 1 + 10 x 4) = 280 per million
    assert document["final_metrics"]["total_cost_usd"] == 0.00028
    assert document["extra"]["settlement"]["trace_count"] == 2
    assert_schema_and_atif_valid(document)
