"""A failing LLM or a missing index degrades the answer; it never fails the request."""

from __future__ import annotations

import shutil
import time

from service.app import create_app
from tests.conftest import make_settings
from tests.support import PHOTOSYNTHESIS_MCQ, ScriptedLLM

DEAD_LLM = "http://127.0.0.1:9/v1"   # discard port: connection refused at once


def ask(client, query):
    return client.post("/v1/answer", json={"query": query, "user_id": "student-1"})


def test_llm_down_still_gives_the_bank_answer_without_explanation(demo_data_dir, tmp_path):
    client = create_app(make_settings(demo_data_dir, tmp_path, DEAD_LLM)).test_client()
    reply = ask(client, PHOTOSYNTHESIS_MCQ)
    body = reply.get_json()
    assert reply.status_code == 200
    assert body["status"] == "answered" and body["source"] == "bank"
    assert body["answer"]["option"] == "B"
    assert body["explanation"]["steps"] == []
    assert body["degraded"] == ["explain"]
    assert body["references"], "references come from the index, not the LLM"


def test_llm_down_without_bank_match_is_unavailable(demo_data_dir, tmp_path):
    client = create_app(make_settings(demo_data_dir, tmp_path, DEAD_LLM)).test_client()
    reply = ask(client, "Why do leaves change color in autumn?")
    assert reply.status_code == 200
    body = reply.get_json()
    assert body["status"] == "unavailable" and body["degraded"] == ["generate"]
    assert "try again" in body["message"]


def test_llm_server_error_and_garbage_reply_are_unavailable(client, llm):
    llm.script(503)
    assert ask(client, "Why do leaves change color in autumn?").get_json()["status"] == "unavailable"
    llm.script("this is not json")
    assert ask(client, "Why do leaves change color in autumn?").get_json()["status"] == "unavailable"
    llm.script({"abstain": False, "abstain_reason": "", "steps": ["One."], "option": "Z"})
    body = ask(client, "Which gas do plants take in? A. oxygen B. carbon dioxide C. helium").get_json()
    assert body["status"] == "unavailable"


def test_llm_down_marks_readiness_degraded_not_down(demo_data_dir, tmp_path):
    client = create_app(make_settings(demo_data_dir, tmp_path, DEAD_LLM)).test_client()
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.get_json()["status"] == "degraded"


def test_missing_indexes_degrade_to_the_llm_and_readiness_says_why(copy_of_demo_indexes, tmp_path, llm):
    shutil.rmtree(copy_of_demo_indexes / "indexes")
    client = create_app(make_settings(copy_of_demo_indexes, tmp_path, llm.base_url)).test_client()
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert "tutorqa index qa" in ready.get_json()["checks"]["qa"]["error"]
    llm.script({"abstain": False, "abstain_reason": "", "steps": ["Chloroplasts capture light."], "option": "B"})
    body = ask(client, PHOTOSYNTHESIS_MCQ).get_json()
    assert body["status"] == "answered" and body["source"] == "generated"
    assert body["answer"] == {"text": "chloroplast", "option": "B"}
    assert body["degraded"] == ["match", "references"]


def test_llm_killed_mid_run_bank_still_answers_others_unavailable_within_a_second(demo_data_dir, tmp_path):
    server = ScriptedLLM()
    client = create_app(make_settings(demo_data_dir, tmp_path, server.base_url)).test_client()
    server.script({"steps": ["Chloroplasts capture light.", "Photosynthesis happens there."]})
    assert ask(client, PHOTOSYNTHESIS_MCQ).get_json()["explanation"]["steps"]
    server.server.shutdown()
    server.server.server_close()
    for _ in range(3):   # the third call finds the circuit open
        started = time.perf_counter()
        bank = ask(client, PHOTOSYNTHESIS_MCQ)
        middle = time.perf_counter()
        other = ask(client, "Why do leaves change color in autumn?")
        assert middle - started < 1.0 and time.perf_counter() - middle < 1.0
        assert bank.status_code == other.status_code == 200
        assert bank.get_json()["status"] == "answered" and bank.get_json()["degraded"] == ["explain"]
        assert other.get_json()["status"] == "unavailable"
    assert client.get("/readyz").get_json()["status"] == "degraded"


def test_an_unreachable_search_cluster_degrades_answers_and_is_asked_again(demo_data_dir, tmp_path, llm):
    settings = make_settings(demo_data_dir, tmp_path, llm.base_url, SEARCH_BACKEND="opensearch",
                             OPENSEARCH_URL="http://127.0.0.1:9", OPENSEARCH_TIMEOUT_S=2)
    client = create_app(settings).test_client()
    for _ in range(2):   # not ready at start-up, and still not when asked again
        ready = client.get("/readyz")
        assert ready.status_code == 503
        qa = ready.get_json()["checks"]["qa"]
        assert "OpenSearch at http://127.0.0.1:9 is unreachable" in qa["error"] and qa["retrying"] is True
    llm.script({"abstain": False, "abstain_reason": "", "steps": ["Chloroplasts capture light."], "option": "B"})
    reply = ask(client, PHOTOSYNTHESIS_MCQ)
    body = reply.get_json()
    assert reply.status_code == 200 and body["status"] == "answered" and body["source"] == "generated"
    assert body["degraded"] == ["match", "references"]
