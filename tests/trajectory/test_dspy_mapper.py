"""DSPy ReAct's re-rendered loop (`trajectory/mappers/dspy.py`): the question as first asked, then each step's
thought and call again and its observation a result."""

from __future__ import annotations

from evalkit.trajectory.mappers.dspy import read_react_trajectory
from evalkit.trajectory.operations import Message, Part

ASK = "\n\nRespond with the corresponding output fields, starting with the field `[[ ## next_thought ## ]]`."


def _user(trajectory: str) -> Message:
    text = f"[[ ## question ## ]]\nWeather?\n\n[[ ## trajectory ## ]]\n{trajectory}{ASK}"
    return Message("user", [Part("text", text=text)])


def test_the_loop_is_taken_out_and_each_step_is_its_call_and_observation_again() -> None:
    loop = ("[[ ## thought_0 ## ]]\nLook it up.\n\n[[ ## tool_name_0 ## ]]\nget_weather\n\n"
            "[[ ## tool_args_0 ## ]]\n{\"city\": \"Paris\"}\n\n"
            "[[ ## observation_0 ## ]]\nExecution error in get_weather: boom\n\n"
            "[[ ## thought_1 ## ]]\nAgain.\n\n[[ ## tool_name_1 ## ]]\nget_weather\n\n"
            "[[ ## tool_args_1 ## ]]\n{\"city\": \"Paris\"}\n\n[[ ## observation_1 ## ]]\nsunny")
    system = Message("system", [Part("text", text="Your input fields are: …")])
    read = read_react_trajectory([system, _user(loop)])
    assert read[0] is system
    assert read[1].role == "user" and read[1].text == _user("").text
    assert [(m.role, m.text, [(c.name, c.arguments) for c in m.tool_calls],
             [(r.name, r.text, r.call_id) for r in m.tool_results]) for m in read[2:]] == [
        ("assistant", "Look it up.", [("get_weather", {"city": "Paris"})], []),
        ("tool", "", [], [("get_weather", "Execution error in get_weather: boom", None)]),
        ("assistant", "Again.", [("get_weather", {"city": "Paris"})], []),
        ("tool", "", [], [("get_weather", "sunny", None)])]


def test_a_first_call_and_a_field_not_of_react_s_loop_are_left_as_they_are() -> None:
    first = [_user("")]
    assert read_react_trajectory(first) == first
    other = [_user("[[ ## notes ## ]]\nx\n\n[[ ## observation_0 ## ]]\ny")]
    assert read_react_trajectory(other) == other
    plain = [Message("user", [Part("text", text="Weather in Paris?")])]
    assert read_react_trajectory(plain) == plain
