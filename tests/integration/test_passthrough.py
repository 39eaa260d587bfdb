"""Pass-through routes in-process: the app reaches the local stub through litellm.

What the stub received is the assertion point for "unchanged upstream"; the
request records (a real SQLite file) for "a record per call".
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from proxy.served import SERVED_ROUTES
from proxy.stub.embeddings import embed_text
from proxy.stub.passthrough import PNG_1X1_B64, STUB_FLAG_WORD, speech_bytes
from proxy.stub.state import Fault

KEY = "sk-tenant-pass"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture
async def proxy(proxy_factory: Any) -> Any:
    return await proxy_factory(server={"api_keys": [KEY], "request_timeout_s": 5})


def records(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute("SELECT * FROM requests ORDER BY id").fetchall()
    return [dict(r) for r in rows]


async def test_embeddings_pass_through_and_are_recorded(
    proxy: Any, stub_upstream: Any, tmp_path: Path
) -> None:
    body = {"model": "stub", "input": ["ferry timetable", "harbour"], "user": "u-17"}
    response = await proxy.client.post("/v1/embeddings", json=body, headers=AUTH)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["object"] == "list"
    assert [d["index"] for d in data["data"]] == [0, 1]
    assert data["data"][0]["embedding"] == pytest.approx(embed_text("ferry timetable"))
    assert data["usage"]["prompt_tokens"] > 0
    sent = stub_upstream.received[-1]
    assert sent.path == "/v1/embeddings"
    assert sent.body["input"] == ["ferry timetable", "harbour"]
    assert sent.body["user"] == "u-17"
    assert sent.body["model"] == "stub-model"  # the model_list entry's provider model
    await proxy.settle()
    [row] = records(tmp_path / "memproxy.db")
    assert row["id"] == response.headers["x-memory-request-id"]
    assert (row["route"], row["mode"], row["model"], row["status"]) == (
        "/v1/embeddings",
        "passthrough",
        "stub",
        200,
    )
    assert row["raw_tokens"] == data["usage"]["prompt_tokens"]
    assert row["session_id"] is None
    record = json.loads(row["record_json"])
    assert record["route"] == "POST /v1/embeddings"
    assert record["usage"]["prompt_tokens"] == data["usage"]["prompt_tokens"]


async def test_fields_litellm_does_not_know_reach_an_openai_provider(
    proxy: Any, stub_upstream: Any
) -> None:
    body = {"model": "stub", "input": "tide", "dimensions": 64, "vendor_knob": {"a": 1}}
    response = await proxy.client.post("/v1/embeddings", json=body, headers=AUTH)
    assert response.status_code == 200, response.text
    assert stub_upstream.received[-1].body["dimensions"] == 64
    assert stub_upstream.received[-1].body["vendor_knob"] == {"a": 1}


async def test_completion_plain_and_streamed(
    proxy: Any, stub_upstream: Any, tmp_path: Path
) -> None:
    body = {"model": "stub", "prompt": "Once upon", "max_tokens": 7}
    response = await proxy.client.post("/v1/completions", json=body, headers=AUTH)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["text"] == "completion: Once upon"
    assert response.json()["object"] == "text_completion"
    assert stub_upstream.received[-1].body["max_tokens"] == 7

    body = {**body, "stream": True, "stream_options": {"include_usage": True}}
    async with proxy.client.stream("POST", "/v1/completions", json=body, headers=AUTH) as streamed:
        assert streamed.status_code == 200
        assert streamed.headers["content-type"].startswith("text/event-stream")
        lines = [line async for line in streamed.aiter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(c["choices"][0]["text"] for c in chunks if c["choices"])
    assert text == "completion: Once upon"
    assert any(c.get("usage") for c in chunks)
    assert stub_upstream.received[-1].body["stream"] is True
    await proxy.settle()
    plain, streamed_row = records(tmp_path / "memproxy.db")
    assert (streamed_row["route"], streamed_row["status"]) == ("/v1/completions", 200)
    assert json.loads(streamed_row["record_json"])["usage"]["completion_tokens"] > 0
    assert plain["raw_tokens"] > 0


async def test_moderation_images_and_speech(proxy: Any, stub_upstream: Any) -> None:
    moderated = await proxy.client.post(
        "/v1/moderations",
        json={"model": "stub", "input": f"a {STUB_FLAG_WORD} line"},
        headers=AUTH,
    )
    assert moderated.status_code == 200, moderated.text
    assert moderated.json()["results"][0]["flagged"] is True
    assert moderated.json()["results"][0]["categories"]["self-harm"] is True  # OpenAI's key

    image = await proxy.client.post(
        "/v1/images/generations",
        json={"model": "stub", "prompt": "a lighthouse", "response_format": "b64_json"},
        headers=AUTH,
    )
    assert image.status_code == 200, image.text
    assert image.json()["data"][0]["b64_json"] == PNG_1X1_B64
    assert stub_upstream.received[-1].body["response_format"] == "b64_json"

    speech = await proxy.client.post(
        "/v1/audio/speech",
        json={"model": "stub", "input": "good morning", "voice": "alloy"},
        headers=AUTH,
    )
    assert speech.status_code == 200, speech.text
    assert speech.content == speech_bytes("good morning")
    assert speech.headers["content-type"] == "audio/mpeg"


async def test_multipart_routes(proxy: Any, stub_upstream: Any) -> None:
    audio = ("memo.wav", b"RIFF" + bytes(60), "audio/wav")
    heard = await proxy.client.post(
        "/v1/audio/transcriptions",
        data={"model": "stub", "language": "en"},
        files={"file": audio},
        headers=AUTH,
    )
    assert heard.status_code == 200, heard.text
    assert heard.json()["text"] == "transcript of memo.wav (64 bytes)"
    assert stub_upstream.received[-1].body["language"] == "en"
    plain = await proxy.client.post(
        "/v1/audio/transcriptions",
        data={"model": "stub", "response_format": "text"},
        files={"file": audio},
        headers=AUTH,
    )
    assert plain.text == "transcript of memo.wav (64 bytes)"

    png = base64.b64decode(PNG_1X1_B64)
    varied = await proxy.client.post(
        "/v1/images/variations",
        data={"model": "stub"},
        files={"image": ("in.png", png, "image/png")},
        headers=AUTH,
    )
    assert varied.status_code == 200, varied.text
    assert varied.json()["data"][0]["b64_json"] == PNG_1X1_B64
    assert stub_upstream.received[-1].body["image"]["bytes"] == len(png)


async def test_files_and_batches_round_trip(proxy: Any, tmp_path: Path) -> None:
    lines = b'{"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions"}\n'
    created = await proxy.client.post(
        "/v1/files",
        data={"purpose": "batch"},
        files={"file": ("jobs.jsonl", lines, "application/jsonl")},
        headers=AUTH,
    )
    assert created.status_code == 200, created.text
    file_id = created.json()["id"]
    assert created.json()["bytes"] == len(lines)
    listed = await proxy.client.get("/v1/files", params={"purpose": "batch"}, headers=AUTH)
    assert [f["id"] for f in listed.json()["data"]] == [file_id]
    got = await proxy.client.get(f"/v1/files/{file_id}", headers=AUTH)
    assert got.json()["filename"] == "jobs.jsonl"
    content = await proxy.client.get(f"/v1/files/{file_id}/content", headers=AUTH)
    assert content.content == lines

    batch = await proxy.client.post(
        "/v1/batches",
        json={
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
        },
        headers=AUTH,
    )
    assert batch.status_code == 200, batch.text
    batch_id = batch.json()["id"]
    assert (await proxy.client.get("/v1/batches", headers=AUTH)).json()["data"][0]["id"] == (
        batch_id
    )
    assert (await proxy.client.get(f"/v1/batches/{batch_id}", headers=AUTH)).json()[
        "status"
    ] == "validating"
    cancelled = await proxy.client.post(f"/v1/batches/{batch_id}/cancel", headers=AUTH)
    assert cancelled.json()["status"] == "cancelled"

    deleted = await proxy.client.delete(f"/v1/files/{file_id}", headers=AUTH)
    assert deleted.json() == {"id": file_id, "deleted": True, "object": "file"}
    missing = await proxy.client.get(f"/v1/files/{file_id}", headers=AUTH)
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == f"No such File object: {file_id}"
    assert missing.json()["error"]["param"] == "id"  # the provider's own error object

    await proxy.settle()
    routes = [(r["route"], r["status"], r["model"]) for r in records(tmp_path / "memproxy.db")]
    assert ("/v1/files/{file_id}", 404, "stub") in routes
    assert len(routes) == 10


async def test_upstream_error_keeps_status_and_shape(proxy: Any, stub_upstream: Any) -> None:
    stub_upstream.inject(Fault(status=403, message="key lacks scope", path="/v1/moderations"))
    response = await proxy.client.post(
        "/v1/moderations", json={"model": "stub", "input": "x"}, headers=AUTH
    )
    assert response.status_code == 403
    assert response.json() == {
        "error": {"message": "key lacks scope", "type": "stub_error", "param": None, "code": None}
    }


async def test_auth_unknown_model_and_bad_bodies(proxy: Any) -> None:
    body = {"model": "stub", "input": "x"}
    refused = await proxy.client.post("/v1/embeddings", json=body)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_api_key"
    unknown = await proxy.client.post(
        "/v1/embeddings", json={**body, "model": "nope"}, headers=AUTH
    )
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "model_not_found"
    no_model = await proxy.client.post("/v1/embeddings", json={"input": "x"}, headers=AUTH)
    assert no_model.status_code == 400
    assert no_model.json()["error"]["param"] == "model"
    not_json = await proxy.client.post("/v1/embeddings", content=b"{", headers=AUTH)
    assert not_json.status_code == 400
    not_form = await proxy.client.post(
        "/v1/audio/transcriptions", json={"model": "stub"}, headers=AUTH
    )
    assert not_form.status_code == 400
    assert not_form.json()["error"]["code"] == "invalid_content_type"


async def test_route_litellm_lacks_is_a_501(proxy: Any) -> None:
    response = await proxy.client.post(
        "/v1/audio/translations",
        data={"model": "stub"},
        files={"file": ("a.wav", b"RIFF", "audio/wav")},
        headers=AUTH,
    )
    assert response.status_code == 501
    error = response.json()["error"]
    assert "POST /v1/audio/translations" in error["message"]
    assert error["code"] == "route_not_supported"


async def test_provider_litellm_cannot_serve_is_a_501(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    entry = {
        "model_name": "claude-ish",
        "litellm_params": {"model": "anthropic/claude-x", "api_base": stub_upstream.url,
                           "api_key": "sk-provider-secret-123"},
    }  # fmt: skip
    proxy = await proxy_factory(model_list=[entry])
    response = await proxy.client.post("/v1/embeddings", json={"model": "claude-ish", "input": "x"})
    assert response.status_code == 501, response.text
    assert "POST /v1/embeddings" in response.json()["error"]["message"]
    assert stub_upstream.received == []


async def test_models_retrieve(proxy: Any) -> None:
    found = await proxy.client.get("/v1/models/stub", headers=AUTH)
    assert found.json() == {"id": "stub", "object": "model", "created": 0, "owned_by": "memproxy"}
    missing = await proxy.client.get("/v1/models/nope", headers=AUTH)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "model_not_found"


async def test_unknown_route_names_the_served_ones(proxy: Any) -> None:
    response = await proxy.client.post("/v1/assistants", json={}, headers=AUTH)
    assert response.status_code == 404
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "unknown_route"
    assert "POST /v1/assistants" in error["message"]
    for route in SERVED_ROUTES:
        assert route in error["message"]


def test_served_routes_list_matches_the_app() -> None:
    from proxy.config import settings_from_dict
    from proxy.http.app import create_app

    paths = create_app(settings_from_dict({}, env={})).openapi()["paths"]
    real = {
        f"{method.upper()} {path}"
        for path, operations in paths.items()
        if path.startswith("/v1/")
        for method in operations
    }
    assert real == set(SERVED_ROUTES)


async def test_image_edit_with_several_images(proxy: Any, stub_upstream: Any) -> None:
    png = base64.b64decode(PNG_1X1_B64)
    edited = await proxy.client.post(
        "/v1/images/edits",
        data={"model": "stub", "prompt": "add a moon"},
        files=[("image[]", ("a.png", png, "image/png")), ("image[]", ("b.png", png, "image/png"))],
        headers=AUTH,
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["data"][0]["b64_json"] == PNG_1X1_B64
    sent = stub_upstream.received[-1]
    assert sent.body["prompt"] == "add a moon"


async def test_logs_show_a_pass_through_record(
    proxy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from proxy.logs_cli import show_logs

    done = await proxy.client.post(
        "/v1/embeddings", json={"model": "stub", "input": "quay"}, headers=AUTH
    )
    await proxy.settle()
    args = argparse.Namespace(n=5, session=None, json=False, q=None)
    assert await show_logs(proxy.services.settings, args) == 0
    out = capsys.readouterr().out
    assert done.headers["x-memory-request-id"] in out
    assert "- POST /v1/embeddings · model: `stub` · status: 200" in out
