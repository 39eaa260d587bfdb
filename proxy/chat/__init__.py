"""The chat request path: prepare → forward → after.

Shared by chat completions and the wire APIs translated to it (`proxy.http`).
"""
