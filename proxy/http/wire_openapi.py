"""The OpenAPI description of `POST /v1/responses` and `POST /v1/messages`.

Like `proxy.http.openapi` for chat: the routes read their bodies themselves, so this
states the documented shape loosely (for clients and the schema fuzzer);
the adapters give the precise 400s.
"""

from __future__ import annotations

from typing import Any

from proxy.http.openapi import CHAT_OPENAPI

_ANY_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}

_RESPONSES_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {
            "type": "string",
            "enum": ["message", "function_call", "function_call_output", "reasoning"],
        },
        "role": {"type": "string", "enum": ["user", "assistant", "system", "developer"]},
        "content": {"anyOf": [{"type": "string"}, {"type": "array", "items": _ANY_OBJECT}]},
        "call_id": {"type": "string"},
        "name": {"type": "string"},
        "arguments": {"type": "string"},
        "output": {"type": "string"},
    },
    "additionalProperties": True,
}

RESPONSES_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string", "description": "A `model_name` from memproxy's model_list"},
        "input": {"anyOf": [{"type": "string"}, {"type": "array", "items": _RESPONSES_ITEM}]},
        "instructions": {"type": "string"},
        "previous_response_id": {"type": "string"},
        "store": {"type": "boolean"},
        "stream": {"type": "boolean"},
        "tools": {"type": "array", "items": _ANY_OBJECT},
        "max_output_tokens": {"type": "integer"},
        "temperature": {"type": "number"},
    },
    "additionalProperties": True,
}

_BLOCK: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {
            "type": "string",
            "enum": ["text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking"],
        },
        "text": {"type": "string"},
    },
    "additionalProperties": True,
}

MESSAGES_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "messages", "max_tokens"],
    "properties": {
        "model": {"type": "string", "description": "A `model_name` from memproxy's model_list"},
        "max_tokens": {"type": "integer"},
        "system": {"anyOf": [{"type": "string"}, {"type": "array", "items": _BLOCK}]},
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"type": "string", "enum": ["user", "assistant"]},
                    "content": {"anyOf": [{"type": "string"}, {"type": "array", "items": _BLOCK}]},
                },
            },
        },
        "stream": {"type": "boolean"},
        "tools": {"type": "array", "items": _ANY_OBJECT},
    },
    "additionalProperties": True,
}


def _openapi(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
        "parameters": CHAT_OPENAPI["parameters"],
    }


RESPONSES_OPENAPI = _openapi(RESPONSES_REQUEST)
MESSAGES_OPENAPI = _openapi(MESSAGES_REQUEST)
