"""The peer of `python -m bench peer`: Microsoft Agent Framework's AG-UI FastAPI endpoint with an
OpenAI chat-completions client on the scripted model. Runs only in .venv-peer; stores nothing."""

from __future__ import annotations

import os

from agent_framework import Agent
from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint
from agent_framework_openai import OpenAIChatCompletionClient
from fastapi import FastAPI


def create_app() -> FastAPI:
    """The endpoint at /api/capture, its model at PEER_MODEL_BASE_URL (the scripted server)."""
    client = OpenAIChatCompletionClient(
        model="fake-model", api_key="sk-bench", base_url=os.environ["PEER_MODEL_BASE_URL"]
    )
    agent = Agent(client, instructions="File the capture.", name="capture")
    app = FastAPI()
    # One user and no snapshot store: the peer only relays the model, as the issue measured it.
    add_agent_framework_fastapi_endpoint(app, agent, path="/api/capture", single_user=True)
    return app
