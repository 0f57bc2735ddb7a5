"""Google ADK's workflow agents (`SequentialAgent`, `ParallelAgent`, `LoopAgent`), as ADK's own tracing records them.

A workflow agent calls no model: it runs its sub-agents, one after another, side by side or in a loop. ADK 2.x opens
an `invoke_agent <name>` span for it as for any agent (`record_agent_invocation`), with the same attributes as an
`LlmAgent`'s (operation, name, description, conversation id: nothing says which kind it is), and each sub-agent's
`invoke_agent` span under it; the turn's `invoke_workflow <root>` span (no agent of its own) holds the root's. So a
`SequentialAgent` of a `ParallelAgent` of two `LlmAgent`s and a third `LlmAgent` is, per turn:

    invoke_workflow trip_planner
      invoke_agent trip_planner          (SequentialAgent)
        invoke_agent research            (ParallelAgent)
          invoke_agent weather_agent     (LlmAgent: its generate_content and execute_tool spans)
          invoke_agent hotel_agent       (LlmAgent, side by side with weather_agent)
        invoke_agent summariser          (LlmAgent)

A run holding other runs and doing no work itself is what the builder takes for a synthetic root (a span grouping
agents' runs, no agent itself) and looks through: each `LlmAgent`'s run was then one trajectory with the others',
named after the first, the workflow's structure lost. ADK records only agents the app built, so each of its runs is
an agent (`AgentRun.app_agent`): a workflow agent's run is a trajectory of its own and its sub-agents' runs its
subagents, in the order they started.

Nothing on the workflow agents' spans says what they were asked or answered (ADK 2.13 records no input or output on
an `invoke_agent` span): their trajectories hold only their sub-agents' runs, each of which shows what its model was
sent, the user's message among it; a sub-agent's answer (the state value its `output_key` names) is its last one.
"""

from __future__ import annotations

from evalkit.trajectory.operations import AgentRun


def app_agent_run(run: AgentRun) -> AgentRun:
    """An ADK `invoke_agent` span's run: an agent the app built, a workflow agent's too."""
    run.app_agent = True
    return run
