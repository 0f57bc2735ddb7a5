"""CrewAI's knowledge and memory around a task, as OpenInference records them (its crewai instrumentation's task span,
the openai one's LLM and EMBEDDING spans under it).

A crew given `knowledge_sources` (or an agent given its own) searches them before each task: CrewAI asks the agent's
LLM to rewrite the task prompt as a search query (`Agent._get_knowledge_search_query`: its own system prompt, "Your
goal is to rewrite the user query…", and "The original query is: <task prompt>"), searches the knowledge store with
the answer and appends what it found to the task prompt (`extract_knowledge_context`: "Additional Information: " and
the chunks' texts, one a line; the agent's knowledge, then the crew's). A crew with `memory=True` (CrewAI 1.15's
unified `Memory`) recalls memories for the task's description before it (`Agent._retrieve_memory_context`) and appends
them (the `memory` slice: "# Memories from past conversations:", "Relevant memories:", each `MemoryMatch.format()` — a
`- (score=…) <content>` line, then its categories and metadata indented — and CrewAI's note on using the `Search
memory` tool); after the task it asks the LLM to extract memory statements from the task and its result
(`extract_memories_from_content`), then saves them in the background (`EncodingFlow`: a call per statement for its
scope, categories and importance, `analyze_for_save`; one comparing it with similar memories,
`analyze_for_consolidation`). A long recall query is analysed by the LLM first, and a recall of low confidence
explored by it (`RecallFlow.analyze_query_step`, `recursive_exploration`). Each of those prompts is CrewAI's, fixed
(translations/en.json's `memory` section and slices).

No span records any of this but the calls themselves and the embedding requests: no retriever span, the documents
found only in the task prompt the agent's first call of the task was sent. So (`complete_calls`):
- CrewAI's own calls (the query rewrite, the memory's extraction, analyses and exploration) are the framework's work,
  not the agent's conversation (`LlmCall.framework_work`): each a step of its answer, marked with what it was for
  (`extra.framework_work`), its prompt no question and its instructions no system step (the builder's rule);
- the task prompt is the question without what CrewAI appended to it: the memories recalled and the knowledge found
  are listed as retrievals (`extra.retrievals`, in the shape every retrieval is listed: the retriever, the query, the
  documents in their order) on the step of the call first sent them, its span the one recording them.

The knowledge's chunks are the lines of its block, but a chunk the session's embedding requests embedded (CrewAI
embeds each source's chunks when the crew adds them) is taken whole, line breaks and all. The knowledge's query is
the answer of the rewrite call before it under the same task span; the memory's, the task's description (CrewAI
recalls with `task.description`), from the prompt's `Current Task:` line.

Seen in a real capture: tests/captures/crewai_openinference_knowledge-memory (crewai 1.15.44: two
`StringKnowledgeSource`s, `memory=True`, two kickoffs, the second recalling the first's memories).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.openinference_retrievers import as_document
from evalkit.trajectory.operations import LlmCall, Message, Part
from evalkit.trajectory.span import Span

# CrewAI's own prompts (crewai 1.15 translations/en.json), by how each call's first message starts: its system prompt.
_REWRITE = "Your goal is to rewrite the user query so that it is optimized for retrieval from a vector database."
_OWN_SYSTEM_PROMPTS = (
    (_REWRITE, "knowledge search query"),  # `knowledge_search_query_system_prompt`
    ("You extract discrete, reusable memory statements", "memory extraction"),  # `extract_memories_system`
    ("You analyze content to be stored in a hierarchical memory system.", "memory save analysis"),  # `save_system`
    ("You are comparing new content against existing memories", "memory consolidation"),  # `consolidation_system`
    ("You analyze a query for searching memory.", "memory recall query analysis"),  # `query_system`
)
# `RecallFlow.recursive_exploration`'s prompt, one user message: the query, then the memories found.
_EXPLORATION = ("Query: ", "\n\nRelevant memory excerpts:\n")
# What the save analyses and the consolidation were given to store (`save_user`, `consolidation_user`), to name it.
_CONTENT_TO_STORE = (("Content to store:\n", "\n\nExisting scopes: "),
                     ("New content to consider storing:\n", "\n\nExisting similar memories:\n"))
_BY = "CrewAI"

# A CrewAI agent's system prompt (`role_playing`: "You are {role}. {backstory}\nYour personal goal is: {goal}"), and its
# task prompt (`task`: "\nCurrent Task: {input}", the input `Task.prompt()`: the description, then the criteria).
_ROLE_PLAYING, _AGENT_PROMPT = "You are ", "\nYour personal goal is: "
_TASK = "Current Task: "
_CRITERIA = "\n\nThis is the expected criteria for your final answer: "
# What CrewAI appends to the task prompt: the memories recalled (the `memory` slice), the knowledge found.
_MEMORY_BLOCK = "\n\n# Memories from past conversations:\n"
_MEMORY_LIST = "Relevant memories:\n"
_MEMORY_NOTE = "\n\nIMPORTANT: The memories above are an automatic selection"
_MEMORY_MATCH = "- (score="
_KNOWLEDGE = "Additional Information: "
_MEMORY_RETRIEVER, _KNOWLEDGE_RETRIEVER = "CrewAI memory", "CrewAI knowledge"
_EMBEDDED_TEXT = ("embedding.embeddings.", ".embedding.text")  # an EMBEDDING span's texts (OpenInference)


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """CrewAI's own calls marked its work; each task prompt cut to the task, what was appended to it listed as the
    retrievals it was (on the call first sent it)."""
    rewrites: dict[tuple[str, str | None], list[LlmCall]] = {}
    tasks: list[LlmCall] = []
    for call in calls:
        messages = call.input_messages
        if not messages:
            continue
        first = messages[0]
        if first.role == "system":
            text = first.text
            purpose = next((purpose for prompt, purpose in _OWN_SYSTEM_PROMPTS if text.startswith(prompt)), None)
            if purpose is not None:
                _mark(call, purpose)
                if purpose == _OWN_SYSTEM_PROMPTS[0][1]:
                    rewrites.setdefault((call.span.trace_id, call.span.parent_span_id), []).append(call)
            elif text.startswith(_ROLE_PLAYING) and _AGENT_PROMPT in text:
                tasks.append(call)
        elif first.role == "user" and len(messages) == 1:
            text = first.text
            if text.startswith(_EXPLORATION[0]) and _EXPLORATION[1] in text:
                _mark(call, "memory recall exploration")
    embedded: set[str] | None = None
    for call in tasks:
        # The task prompt is the message after the agent's instructions, on each call of the task's loop.
        message = call.input_messages[1] if len(call.input_messages) > 1 else None
        if message is None or message.role != "user" or len(message.parts) != 1 or message.parts[0].kind != "text":
            continue
        text = message.parts[0].text or ""
        if not text.startswith((_TASK, "\n" + _TASK)):
            continue
        task, memories, knowledge = _split(text)
        if task == text:
            continue
        # A message of its own: a history re-sent may share its objects with an earlier call's (resent_history).
        call.input_messages[1] = Message(message.role, [Part("text", text=task)], name=message.name)
        if len(call.input_messages) > 2:
            continue  # re-sent: listed on the call first sent it
        if knowledge and embedded is None:
            embedded = _embedded_texts(spans)
        call.extra["retrievals"] = _retrievals(call, task, memories, knowledge, rewrites, embedded or set())


def _mark(call: LlmCall, purpose: str) -> None:
    work: dict[str, Any] = {"by": _BY, "purpose": purpose}
    prompt = call.input_messages[-1].text
    for start, end in _CONTENT_TO_STORE:
        if prompt.startswith(start) and end in prompt:
            work["content"] = prompt[len(start):prompt.index(end)]
    call.framework_work = work


def _split(text: str) -> tuple[str, str | None, list[str]]:
    """The task prompt, the memories block CrewAI appended (None: none) and each knowledge block's text."""
    criteria = text.find(_CRITERIA)
    if criteria < 0:
        return text, None, []
    end = len(text)
    knowledge: list[str] = []
    at = text.find(_KNOWLEDGE, criteria)
    if at >= 0:
        end = at
        blocks = text[at:].split(_KNOWLEDGE)[1:]
        knowledge = [block for block in blocks if block]
    memories = None
    block = text.find(_MEMORY_BLOCK, criteria, end)
    if block >= 0:
        memories = text[block + len(_MEMORY_BLOCK):end]
        end = block
    return text[:end], memories, knowledge


def _retrievals(call: LlmCall, task: str, memories: str | None, knowledge: list[str],
                rewrites: dict[tuple[str, str | None], list[LlmCall]], embedded: set[str]) -> list[dict[str, Any]]:
    span = call.span
    listed: list[dict[str, Any]] = []
    if memories is not None:
        description = task.lstrip("\n").removeprefix(_TASK).split(_CRITERIA, 1)[0]
        listed.append(_listing(_MEMORY_RETRIEVER, description, _memories(memories), span))
    if knowledge:
        before = [c for c in rewrites.get((span.trace_id, span.parent_span_id), ())
                  if c.span.start_time_unix_nano <= span.start_time_unix_nano]
        rewrite = max(before, key=lambda c: c.span.start_time_unix_nano, default=None)
        query = rewrite.output_messages[0].text if rewrite is not None and rewrite.output_messages else None
        for block in knowledge:
            listed.append(_listing(_KNOWLEDGE_RETRIEVER, query, [as_document({"content": chunk})
                                                                 for chunk in _chunks(block, embedded)], span))
    return listed


def _listing(retriever: str, query: str | None, documents: list[dict[str, Any]], span: Span) -> dict[str, Any]:
    """A retrieval as `build._list_retrieval` lists one, its documents read from the task prompt the call was sent."""
    return {"retriever": retriever, "query": query, "documents": documents, "span_id": span.span_id,
            "from": "task prompt"}


def _memories(block: str) -> list[dict[str, Any]]:
    """The recalled memories as documents: each match's content and score, its categories and metadata."""
    note = block.find(_MEMORY_NOTE)
    listing = block[:note] if note >= 0 else block
    listing = listing.removeprefix(_MEMORY_LIST)
    documents: list[dict[str, Any]] = []
    for line in listing.split("\n"):
        if line.startswith(_MEMORY_MATCH):
            score, _, content = line[len(_MEMORY_MATCH):].partition(") ")
            documents.append({"score": _number(score), "content": content, "metadata": {}})
        elif line.startswith("  ") and documents and ": " in line:
            key, _, value = line.strip().partition(": ")
            documents[-1]["metadata"][key] = value.split(", ") if key == "categories" else _literal(value)
        elif documents:  # a memory's content spanning lines
            documents[-1]["content"] += "\n" + line
    return [as_document({**document, "metadata": document["metadata"] or None}) for document in documents]


def _chunks(block: str, embedded: set[str]) -> list[str]:
    """A knowledge block's chunks: the texts the session embedded that it holds whole, else its lines."""
    chunks: list[str] = []
    at = 0
    while at < len(block):
        whole = max((text for text in embedded if block.startswith(text, at)
                     and (at + len(text) == len(block) or block[at + len(text)] == "\n")), key=len, default=None)
        if whole is not None:
            end = at + len(whole)
        else:
            newline = block.find("\n", at)
            end = newline if newline >= 0 else len(block)
        chunks.append(block[at:end])
        at = end + 1
    return [chunk for chunk in chunks if chunk]


def _embedded_texts(spans: Sequence[Span]) -> set[str]:
    prefix, suffix = _EMBEDDED_TEXT
    return {value for span in spans if span.attributes.get("openinference.span.kind") == "EMBEDDING"
            for key, value in span.attributes.items()
            if isinstance(value, str) and key.startswith(prefix) and key.endswith(suffix)}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _literal(value: str) -> Any:
    """A metadata value as CrewAI wrote it (`f"{value}"`: a list as its repr), read back where it is a literal."""
    if value[:1] in "[{(":
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value
