"""LLM-backed extraction and summarisation, behind an injected completion callable.

`policies/` never imports the proxy: the proxy hands in `complete(messages)
-> LLMReply` (a configured model through litellm) and runs these off the
response path, in session order. Each policy asks for one JSON object,
validates it against a schema (and against the source text: extracted values
must be verbatim), asks once more on a parse or validation failure, and
otherwise falls back to the rule-based policy, on an error or a timeout too.
Every call is accounted (`PolicyCall`: attempts, tokens, cost, outcome) so the
request that caused it can record it.

The sync `extract` / `summarize` methods are the rule-based fallback itself:
the response path never waits for a model.

- `calls.py`: the injected callable, one validated JSON answer (`ask_json`) and
  its account (`PolicyCall`); the hybrid extractor asks through it too.
- `extractor.py`: `LLMExtractor`, one user message to memory operations.
- `summarizer.py`: `LLMSummarizer`, the evicted turns to summary lines.
"""
