"""A Responses request in chat form: its input items as chat messages, its body as
chat parameters (what chat has no field for is not sent), and the reverse, chat
messages as input items, for the clients that replay chat conversations
(`proxy.eval_wire`, tests).

The items map one to one: system from `instructions`, user / assistant messages,
a `function_call` as an assistant `tool_calls` entry and its
`function_call_output` as the tool message after it. A non-function tool is
refused with a 400 that says so.
"""

from __future__ import annotations

import json
from typing import Any

from proxy.errors import ProxyError
from proxy.responses_answer import Item, unpack_thinking

_ROLES = frozenset({"user", "assistant", "system", "developer"})


def _bad(message: str, param: str) -> ProxyError:
    return ProxyError(400, f"{param}: {message}", param=param, code="invalid_value")


def input_items(value: Any) -> list[Item]:
    """`input` as a list of items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if not isinstance(value, list) or not all(isinstance(i, dict) for i in value):
        raise _bad("must be a string or a list of input items", "input")
    return list(value)


def _part(part: Any, where: str) -> dict[str, Any]:
    if isinstance(part, dict):
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            return {"type": "text", "text": part["text"]}
        if kind == "refusal":
            return {"type": "text", "text": str(part.get("refusal", ""))}
        if kind == "input_image":
            url = part.get("image_url") or part.get("file_id")
            if not isinstance(url, str):
                raise _bad("input_image needs an image_url", f"{where}.image_url")
            image: dict[str, Any] = {"url": url}
            if part.get("detail"):
                image["detail"] = part["detail"]
            return {"type": "image_url", "image_url": image}
        if kind == "input_file":
            file = {k: part[k] for k in ("file_id", "file_data", "filename") if k in part}
            return {"type": "file", "file": file}
    kind = part.get("type") if isinstance(part, dict) else None
    raise _bad(f"unsupported content part type {kind!r}", f"{where}.type")


def _message(item: Item, where: str) -> dict[str, Any]:
    role = item.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        raise _bad(f"invalid role {role!r}", f"{where}.role")
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        raise _bad("content must be a string or a list of parts", f"{where}.content")
    parts = [_part(p, f"{where}.content[{j}]") for j, p in enumerate(content)]
    if role != "user" or all(p["type"] == "text" for p in parts):
        return {"role": role, "content": "".join(p.get("text", "") for p in parts)}
    return {"role": role, "content": parts}


def _output_text(output: Any) -> Any:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    return json.dumps(output, ensure_ascii=False)


def items_to_chat(
    items: list[Item], instructions: Any = None, *, keep_thinking: bool = False
) -> list[dict[str, Any]]:
    """Chat messages for Responses items, tool calls kept with their outputs.

    `keep_thinking` (Claude upstreams): the thinking blocks packed in a reasoning
    item go back on the assistant message after it, as litellm's `thinking_blocks`.
    """
    chat: list[dict[str, Any]] = []
    thinking: list[dict[str, Any]] = []
    if isinstance(instructions, str) and instructions:
        chat.append({"role": "system", "content": instructions})
    elif instructions is not None and not isinstance(instructions, str):
        raise _bad("must be a string", "instructions")
    for i, item in enumerate(items):
        where = f"input[{i}]"
        kind = item.get("type", "message")
        if kind == "message":
            chat.append(_message(item, where))
            if chat[-1]["role"] == "assistant" and thinking:
                chat[-1]["thinking_blocks"], thinking = thinking, []
        elif kind == "function_call":
            if not isinstance(item.get("call_id"), str) or not isinstance(item.get("name"), str):
                raise _bad("function_call needs string call_id and name", where)
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item.get("arguments") or ""},
            }
            last = chat[-1] if chat else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                if last["content"] == "":
                    last["content"] = None
            else:
                chat.append({"role": "assistant", "content": None, "tool_calls": [call]})
                if thinking:
                    chat[-1]["thinking_blocks"], thinking = thinking, []
        elif kind == "function_call_output":
            if not isinstance(item.get("call_id"), str):
                raise _bad("function_call_output needs a string call_id", f"{where}.call_id")
            output = _output_text(item.get("output", ""))
            chat.append({"role": "tool", "tool_call_id": item["call_id"], "content": output})
        elif kind == "reasoning":
            # Kept in the stored conversation; forwarded only as Claude's own blocks.
            if keep_thinking:
                thinking += unpack_thinking(item)
        else:
            raise _bad(f"unsupported input item type {kind!r}", f"{where}.type")
    return chat


def _tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise _bad("must be a list", "tools")
    out = []
    for i, tool in enumerate(tools):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind != "function":
            raise _bad(
                f"tool type {kind!r} is not supported (memproxy forwards function tools)",
                f"tools[{i}].type",
            )
        if not isinstance(tool.get("name"), str):
            raise _bad("a function tool needs a string name", f"tools[{i}].name")
        fn = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
        out.append({"type": "function", "function": fn})
    return out


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "function", "function": {"name": choice.get("name")}}
    raise _bad("must be auto, none, required or a function choice", "tool_choice")


def _response_format(text: Any) -> dict[str, Any] | None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    if fmt.get("type") == "json_schema":
        schema = {k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}
        return {"type": "json_schema", "json_schema": schema}
    raise _bad(f"unsupported format type {fmt.get('type')!r}", "text.format.type")


def request_params(body: dict[str, Any]) -> dict[str, Any]:
    """Chat parameters for a Responses body (what chat has no field for is not sent)."""
    params: dict[str, Any] = {}
    for key in ("temperature", "top_p", "parallel_tool_calls", "user", "top_logprobs"):
        if body.get(key) is not None:
            params[key] = body[key]
    limit = body.get("max_output_tokens")
    if limit is not None:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise _bad("must be a positive integer", "max_output_tokens")
        params["max_tokens"] = limit
    if body.get("tools"):
        params["tools"] = _tools(body["tools"])
    if body.get("tool_choice") is not None:
        params["tool_choice"] = _tool_choice(body["tool_choice"])
    fmt = _response_format(body.get("text"))
    if fmt is not None:
        params["response_format"] = fmt
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort"):
        params["reasoning_effort"] = reasoning["effort"]
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("must be a boolean", "stream")
    if stream:
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
    return params


def chat_to_items(messages: list[dict[str, Any]]) -> tuple[str | None, list[Item]]:
    """The reverse of `items_to_chat` (for clients: eval, tests): (instructions, items)."""
    system = [m for m in messages if m.get("role") in ("system", "developer")]
    instructions = "\n".join(str(m.get("content") or "") for m in system) if system else None
    items: list[Item] = []
    for msg in messages[len(system) :]:
        role = msg.get("role")
        if role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": msg.get("tool_call_id"),
                    "output": msg.get("content") or "",
                }
            )
            continue
        if msg.get("content") or not msg.get("tool_calls"):
            kind = "output_text" if role == "assistant" else "input_text"
            text = msg.get("content") if isinstance(msg.get("content"), str) else ""
            items.append(
                {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
            )
        for call in msg.get("tool_calls") or ():
            fn = call.get("function") or {}
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id"),
                    "name": fn.get("name"),
                    "arguments": fn.get("arguments") or "",
                }
            )
    return instructions, items
