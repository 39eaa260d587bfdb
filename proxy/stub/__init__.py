"""A real OpenAI-compatible upstream on 127.0.0.1 for tests, `eval` and `bench`.

It records every request body it receives (the assertion point of the tests:
`recorder.py`), answers deterministically (an echo, a tool call when tools are
offered, a scripted reply keyed by the last user/tool message, or replies
queued in order for prompts containing a text: `replies.py`), serves
`/v1/embeddings` with vectors that carry real similarity (`embeddings.py`),
Anthropic's `/v1/messages` (`anthropic.py`), the other OpenAI routes
(`passthrough.py`: completions, moderations, images, audio, files, batches),
and injects faults on demand (`state.py`: `Fault`): an HTTP status (with
Retry-After), a delay, a reset connection, or a stream cut mid-way (`chat.py`).
It keeps a prompt cache as providers do and reports the usage they would
(`usage.py`). It runs in a background thread with its own event loop
(`server.py`: `StubUpstream`).
"""
