"""Token counts made comparable across emitters: prompt tokens always include cached ones."""

from __future__ import annotations

from evalkit.trajectory.operations import Usage


def normalised_usage(
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    cache_read: int | None = None,
    cache_write: int | None = None,
    reasoning: int | None = None,
    input_includes_cache: bool | None = None,
) -> Usage:
    """Usage with `input_tokens` counting every prompt token, as ATIF's `prompt_tokens` does.

    `input_includes_cache` is what the emitter is known to do; None means unknown, and
    then a prompt smaller than its own cache reads and writes must exclude them.
    """
    cached = (cache_read or 0) + (cache_write or 0)
    normalisation = None
    if input_tokens is not None and cached:
        excludes = input_includes_cache is False or (input_includes_cache is None and input_tokens < cached)
        if excludes:
            input_tokens += cached
            normalisation = "cache tokens added to prompt tokens"
    elif input_tokens is None and cached and input_includes_cache is False:
        input_tokens = cached
        normalisation = "prompt tokens are the cache tokens alone"
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
        normalisation=normalisation,
    )
