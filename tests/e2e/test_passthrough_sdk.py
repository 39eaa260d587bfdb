"""End to end: every pass-through route with the official openai SDK (and LangChain's
OpenAIEmbeddings) against `memproxy serve`, the stub upstream behind it."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml

from proxy.stub.embeddings import embed_text
from proxy.stub.passthrough import PNG_1X1_B64, STUB_FLAG_WORD, speech_bytes
from proxy.stub.state import Fault
from tests.conftest import make_config
from tests.e2e.serving import free_port, serve

pytestmark = pytest.mark.e2e

KEY = "sk-e2e-pass"


@pytest.fixture(scope="module")
def served(stub: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("e2e-pass")
    config = make_config(
        stub.url, tmp / "memproxy.db", server={"api_keys": [KEY], "request_timeout_s": 5}
    )
    config_path = tmp / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    proc = serve(config_path, port := free_port())
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def client(served: str, stub: Any) -> openai.OpenAI:
    stub.reset()
    return openai.OpenAI(base_url=f"{served}/v1", api_key=KEY, max_retries=0)


def test_embeddings(client: openai.OpenAI, stub: Any) -> None:
    # The SDK asks for base64 and decodes it: the vector survives both directions.
    result = client.embeddings.create(model="stub", input=["night train", "sleeper car"])
    assert [d.index for d in result.data] == [0, 1]
    assert result.data[0].embedding == pytest.approx(embed_text("night train"), abs=1e-6)
    assert result.usage.prompt_tokens > 0
    assert stub.received[-1].body["encoding_format"] == "base64"


def test_langchain_openai_embeddings(served: str, stub: Any) -> None:
    from langchain_openai import OpenAIEmbeddings

    stub.reset()
    # No context-length check: it would tokenise with tiktoken first (no download
    # happens here either way: the network guard would fail the test).
    embedder = OpenAIEmbeddings(
        model="stub",
        base_url=f"{served}/v1",
        api_key=KEY,  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    vectors = embedder.embed_documents(["river delta", "mountain pass"])
    assert len(vectors) == 2
    assert vectors[1] == pytest.approx(embed_text("mountain pass"), abs=1e-6)
    assert embedder.embed_query("river delta") == pytest.approx(vectors[0], abs=1e-6)


def test_langchain_length_check_uses_the_bundled_tokenizer(
    served: str, stub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its default length check LangChain tokenises (tiktoken) and sends token
    arrays; pointed at the BPE files litellm ships, tiktoken downloads nothing."""
    from langchain_openai import OpenAIEmbeddings

    from proxy.tokens import bundled_tiktoken_dir

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(bundled_tiktoken_dir()))
    stub.reset()
    embedder = OpenAIEmbeddings(
        model="stub",
        base_url=f"{served}/v1",
        api_key=KEY,  # type: ignore[arg-type]
        tiktoken_model_name="text-embedding-3-small",
        max_retries=0,
    )
    [vector] = embedder.embed_documents(["harbour lights"])
    assert vector == pytest.approx(embed_text("harbour lights"), abs=1e-6)
    assert isinstance(stub.received[-1].body["input"][0], list)  # token ids went upstream


def test_completions_plain_and_streamed(client: openai.OpenAI) -> None:
    done = client.completions.create(model="stub", prompt="The tide", max_tokens=5)
    assert done.choices[0].text == "completion: The tide"
    stream = client.completions.create(
        model="stub", prompt="The tide", stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "completion: The tide"
    assert any(c.usage and c.usage.total_tokens for c in chunks)


def test_moderations_and_images(client: openai.OpenAI) -> None:
    moderation = client.moderations.create(model="stub", input=f"{STUB_FLAG_WORD} words")
    assert moderation.results[0].flagged is True
    image = client.images.generate(model="stub", prompt="a red kite")
    assert image.data is not None
    assert image.data[0].b64_json == PNG_1X1_B64
    png = base64.b64decode(PNG_1X1_B64)
    edited = client.images.edit(model="stub", image=("in.png", png), prompt="add rain")
    assert edited.data is not None
    assert edited.data[0].b64_json == PNG_1X1_B64


def test_audio_transcription_and_speech(client: openai.OpenAI, stub: Any) -> None:
    text = client.audio.transcriptions.create(
        model="stub", file=("note.wav", io.BytesIO(b"RIFF" + bytes(28)))
    )
    assert text.text == "transcript of note.wav (32 bytes)"
    with client.audio.speech.with_streaming_response.create(
        model="stub", voice="alloy", input="see you at noon"
    ) as speech:
        assert speech.headers["content-type"] == "audio/mpeg"
        audio = b"".join(speech.iter_bytes())
    assert audio == speech_bytes("see you at noon")
    assert stub.received[-1].body["voice"] == "alloy"


def test_files_and_batches(client: openai.OpenAI, tmp_path: Path) -> None:
    jsonl = b'{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}}\n'
    uploaded = client.files.create(file=("requests.jsonl", jsonl), purpose="batch")
    assert uploaded.bytes == len(jsonl)
    assert [f.id for f in client.files.list()] == [uploaded.id]
    assert client.files.retrieve(uploaded.id).filename == "requests.jsonl"
    assert client.files.content(uploaded.id).content == jsonl

    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert client.batches.retrieve(batch.id).status == "validating"
    assert [b.id for b in client.batches.list()] == [batch.id]
    assert client.batches.cancel(batch.id).status == "cancelled"

    assert client.files.delete(uploaded.id).deleted is True
    with pytest.raises(openai.NotFoundError) as missing:
        client.files.retrieve(uploaded.id)
    assert missing.value.body == {  # the provider's own error object
        "message": f"No such File object: {uploaded.id}",
        "type": "invalid_request_error",
        "param": "id",
        "code": None,
    }


def test_models_retrieve(client: openai.OpenAI) -> None:
    assert client.models.retrieve("stub").id == "stub"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("no-such-model")


def test_upstream_error_status_and_body_kept(client: openai.OpenAI, stub: Any) -> None:
    stub.inject(Fault(status=422, message="prompt too odd", path="/v1/completions"))
    with pytest.raises(openai.UnprocessableEntityError) as failed:
        client.completions.create(model="stub", prompt="x")
    assert failed.value.status_code == 422
    assert failed.value.body == {
        "message": "prompt too odd",
        "type": "stub_error",
        "param": None,
        "code": None,
    }


def test_key_required(served: str) -> None:
    anonymous = openai.OpenAI(base_url=f"{served}/v1", api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        anonymous.embeddings.create(model="stub", input="x")
    with pytest.raises(openai.AuthenticationError):
        anonymous.files.list()


def test_route_litellm_lacks_is_501(client: openai.OpenAI) -> None:
    with pytest.raises(openai.APIStatusError) as failed:
        client.audio.translations.create(model="stub", file=("a.wav", b"RIFF"))
    assert failed.value.status_code == 501
    assert "POST /v1/audio/translations" in failed.value.message


def test_unknown_route_lists_served_routes(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as failed:
        client.fine_tuning.jobs.list()
    message = failed.value.message
    assert "GET /v1/fine_tuning/jobs" in message
    assert "POST /v1/embeddings" in message
    assert "POST /v1/chat/completions" in message
