"""The OpenAPI description of `POST /v1/chat/completions`.

The route reads its body itself (every unknown field must pass through
untouched, so there is no pydantic model of it); without this description the
schema would say it takes no body at all, and neither clients nor a schema
fuzzer (tests/integration/test_schema.py) would know what to send. It states
the shape OpenAI documents, loosely: anything else is still accepted and
forwarded, and the parser gives the precise 400s.
"""

from __future__ import annotations

from typing import Any

from policies.registry import PRESET_NAMES

_CONTENT_PART: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"type": "string", "enum": ["text", "image_url", "input_audio", "file"]},
        "text": {"type": "string"},
        "image_url": {
            "type": "object",
            "properties": {"url": {"type": "string"}, "detail": {"type": "string"}},
        },
    },
}

_TOOL_CALL: dict[str, Any] = {
    "type": "object",
    "required": ["id", "type", "function"],
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string", "enum": ["function"]},
        "function": {
            "type": "object",
            "required": ["name", "arguments"],
            "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}},
        },
    },
}

_TEXT_OR_PARTS: dict[str, Any] = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": _CONTENT_PART}]
}


def _message(roles: list[str], required: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["role", *required],
        "properties": {
            "role": {"type": "string", "enum": roles},
            "content": _TEXT_OR_PARTS,
            "name": {"type": "string"},
            **extra,
        },
    }


# One variant per role, as in OpenAI's own schema.
_MESSAGE: dict[str, Any] = {
    "anyOf": [
        _message(["system", "developer", "user"], ["content"]),
        _message(
            ["assistant"],
            [],
            content={"anyOf": [_TEXT_OR_PARTS, {"type": "null"}]},
            tool_calls={"type": "array", "items": _TOOL_CALL},
        ),
        _message(["tool"], ["content", "tool_call_id"], tool_call_id={"type": "string"}),
    ]
}

CHAT_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string", "description": "A `model_name` from memproxy's model_list"},
        "messages": {"type": "array", "minItems": 1, "items": _MESSAGE},
        "stream": {"type": "boolean"},
        "stream_options": {
            "type": "object",
            "properties": {"include_usage": {"type": "boolean"}},
        },
        "temperature": {"type": "number"},
        "max_tokens": {"type": "integer"},
        "max_completion_tokens": {"type": "integer"},
        "user": {"type": "string"},
    },
    # Every other OpenAI (or provider) field is forwarded unchanged.
    "additionalProperties": True,
}


def _header(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": False,
        "description": description,
        "schema": schema,
    }


CHAT_OPENAPI: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": CHAT_REQUEST}},
    },
    "parameters": [
        _header(
            "X-Memory-Session",
            "Name the session (scoped to the caller's key)",
            {"type": "string", "pattern": "^[!-~]{1,128}$"},
        ),
        _header(
            "X-Memory-Mode",
            "How memory is applied to this request",
            {"type": "string", "enum": ["managed", "raw", "shadow", "compare"]},
        ),
        _header(
            "X-Memory-Budget",
            "Token budget of the forwarded context (a positive integer)",
            {"type": "string", "pattern": "^[1-9][0-9]{0,7}$"},
        ),
        _header(
            "X-Memory-Policy",
            "A policy preset",
            {"type": "string", "enum": list(PRESET_NAMES)},
        ),
    ],
}
