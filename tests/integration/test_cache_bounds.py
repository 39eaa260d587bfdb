"""The per-process caches hold at most `memory.cache_sessions` sessions."""

from __future__ import annotations

from typing import Any


async def test_caches_stay_within_cache_sessions(proxy_factory: Any) -> None:
    proxy = await proxy_factory(memory={"cache_sessions": 3, "budget_tokens": 300})
    for n in range(7):
        history = [{"role": "user", "content": f"conversation {n}: plan the trip to city {n}"}]
        resp = await proxy.chat(history)
        assert resp.status_code == 200, resp.text
        history += [
            resp.json()["choices"][0]["message"],
            {"role": "user", "content": f"and for city {n}, keep the budget under {n}00 euros"},
        ]
        resp = await proxy.chat(history)
        assert resp.status_code == 200, resp.text
    await proxy.settle()
    pipeline = proxy.services.pipeline
    sizes = {
        "prompts": len(pipeline._last_forwarded),
        "turns": len(pipeline.cache._by_session),
        "memory": len(pipeline.memory.cache._cache),
        "layers": len(pipeline.lifecycle._cache),
    }
    assert all(0 < size <= 3 for size in sizes.values()), sizes


async def test_a_session_that_fell_out_of_the_caches_continues(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await proxy_factory(memory={"cache_sessions": 1, "budget_tokens": 200})
    first = [{"role": "user", "content": "Remember: my order number is QX-4471. Never call me."}]
    resp = await proxy.chat(first)
    session = resp.headers["X-Memory-Session"]
    first.append(resp.json()["choices"][0]["message"])
    for n in range(3):  # more than the budget holds, so memory must carry the order number
        first += [
            {"role": "user", "content": f"Filler question {n} about shipping times to Norway?"},
            {"role": "assistant", "content": f"Filler answer {n}: usually three to five days."},
        ]
    # Another conversation pushes the first one out of every cache.
    other = await proxy.chat([{"role": "user", "content": "unrelated: what is a haiku?"}])
    assert other.headers["X-Memory-Session"] != session
    await proxy.settle()
    first.append({"role": "user", "content": "What was my order number again?"})
    resp = await proxy.chat(first)
    assert resp.status_code == 200, resp.text
    assert resp.headers["X-Memory-Session"] == session
    forwarded = str(stub_upstream.received[-1].body["messages"])
    assert "QX-4471" in forwarded
