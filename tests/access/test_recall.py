"""Who a token is, a user's roles, an agent: remembered briefly, and never past a write of this process."""

from __future__ import annotations

from dataclasses import replace

from evalkit.access import Access
from evalkit.migrations import migrate
from evalkit.store import Store


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_a_write_here_applies_at_once_one_elsewhere_within_the_recall_time(store: Store) -> None:
    migrate(store)
    clock = Clock()
    here, elsewhere = Access(store, clock), Access(store, clock)  # two processes sharing one store
    here.create_workspace("acme")
    here.create_user("ann")
    here.set_member("acme", "ann", "reader", added_by="admin")
    agent = here.create_agent("bot", "acme")
    token = here.create_token("ann", "user")

    assert here.roles_of("ann")["acme"] == "reader"
    assert here.find_agent(agent.agent_id) == agent
    principal = here.principal_for_token(token)
    assert principal is not None and principal.name == "ann"

    here.set_member("acme", "ann", "admin", added_by="admin")
    assert here.roles_of("ann")["acme"] == "admin"  # written here: at once
    assert here.find_agent(agent.agent_id) == agent

    elsewhere.set_member("acme", "ann", "reader", added_by="admin")
    elsewhere.update_agent(replace(agent, description="changed elsewhere"))
    assert here.roles_of("ann")["acme"] == "admin"  # recalled
    assert here.find_agent(agent.agent_id) == agent
    clock.now += 11  # past the recall time
    assert here.roles_of("ann")["acme"] == "reader"
    found = here.find_agent(agent.agent_id)
    assert found is not None and found.description == "changed elsewhere"
    assert here.principal_for_token("evk_not_a_token") is None
