"""The second brain as an MCP server, on the Functions MCP extension's triggers: one tool
function per tool an assistant may call (`services/assistant_tools.ASSISTANT_TOOLS`),
registered in one loop; each capture as a Markdown resource (`capture://{id}`); three prompts.
Every call acts as the user whose key its HTTP request carried (shared/http/mcp_binding.py)."""

import json
from typing import Any

import azure.functions as func

from shared import telemetry
from shared.bootstrap import Root, root
from shared.domain.documents import utcnow
from shared.http.mcp_binding import Invocation, tool_error, tool_result
from shared.http.prefer import DEFAULT_WAIT_S
from shared.services.assistant_tools import ASSISTANT_TOOLS
from shared.services.export import capture_markdown
from shared.services.tools import AssistantPorts, Tool

bp = func.Blueprint()

CAPTURE_URI = "capture://{id}"
_CAPTURE_PREFIX = CAPTURE_URI.removesuffix("{id}")


def ports(app: Root) -> AssistantPorts:
    return AssistantPorts(
        adapters=app.adapters,
        preferences=app.digest.preferences,
        max_capture_chars=app.settings.max_capture_chars,
        # A capture (or an answer) is waited for as long as the plain JSON door waits
        # without a Prefer header; past it the tool answers with where the capture is.
        wait_s=DEFAULT_WAIT_S,
        now=utcnow,
        ask_threads=app.ask_threads,
        ask_model=app.ask_model,
    )


def function_name(tool: Tool[Any, AssistantPorts]) -> str:
    return f"mcp_tool_{tool.name}"


def register_tool(tool: Tool[Any, AssistantPorts]) -> None:
    """The tool as a function on the extension's tool trigger: its input schema is the
    catalogue's (the worker's own, `useWorkerInputSchema`), its answer a whole CallToolResult
    (`useResultSchema`), a refusal a tool error with the HTTP API's code."""

    async def function(invocation: str) -> str:
        try:
            call = Invocation.read(invocation)
            document = await tool.call(call.user(), call.arguments or {}, ports(root()))
        except Exception as exc:  # every failure is the tool's error, told once
            return tool_error(exc)
        return tool_result(document)

    # The host names the function after this; its one parameter is the trigger's.
    function.__name__ = function.__qualname__ = function_name(tool)
    function.__doc__ = tool.description
    bp.mcp_tool_trigger(
        arg_name="invocation",
        tool_name=tool.name,
        description=tool.description,
        input_schema=json.dumps(tool.input_schema()),
        use_worker_input_schema=True,
        use_result_schema=True,
    )(telemetry.traced(function))


for _tool in ASSISTANT_TOOLS:
    register_tool(_tool)


@bp.mcp_resource_trigger(
    arg_name="invocation",
    uri=CAPTURE_URI,
    resource_name="capture",
    title="A capture",
    description="One capture as Markdown: front matter (id, bucket or status, dates, people, "
    "due, done), the title and the text. The id is the one the tools give.",
    mime_type="text/markdown",
)
@telemetry.traced
async def mcp_resource_capture(invocation: str) -> str:
    call = Invocation.read(invocation)
    user_id = call.user()
    capture_id = (call.uri or "").removeprefix(_CAPTURE_PREFIX)
    return await capture_markdown(user_id, capture_id, root().adapters.repo)


# The prompts are instructions for the assistant, in terms of the tools above: they carry
# none of the user's data, so they need no key; the tools they ask for do.


@bp.mcp_prompt_trigger(
    arg_name="invocation",
    prompt_name="whats_due",
    title="What's due",
    description="What is overdue, due today and due this week, and the questions waiting.",
)
async def mcp_prompt_whats_due(invocation: str) -> str:
    return (
        "What's due? Use my second brain's tools: call `today` for today's digest, then "
        "`list_bucket` with bucket admin, done false and dueBefore a week after the digest's "
        "date for what comes next. Answer with short lists: overdue, due today, due this "
        "week (each item's title and due day), then the captures waiting for my answer "
        "(their questionText). Do not change anything."
    )


@bp.mcp_prompt_trigger(
    arg_name="invocation",
    prompt_name="prepare_one_on_one",
    title="Prepare my 1:1",
    description="Everything to bring to a 1:1 with someone, from what was captured about them.",
    prompt_arguments=[
        func.PromptArgument("person", "The person the 1:1 is with, as I write their name.", True)
    ],
)
async def mcp_prompt_prepare_one_on_one(invocation: str) -> str:
    arguments = Invocation.read(invocation).arguments or {}
    person = " ".join(str(arguments.get("person") or "").split())[:100]
    return (
        f"Help me prepare my 1:1 with {person}. Use my second brain's tools: call `person` "
        f"with name {json.dumps(person)} for everything I captured that names them, and "
        f"`search` for {json.dumps(person)} for notes that mention them otherwise. Then give "
        "me: what I promised them or owe them that is not done, open questions and follow-ups, "
        "topics to raise (newest first), and anything due that involves them. Quote my notes' "
        "titles and dates; do not invent anything that is not in them."
    )


@bp.mcp_prompt_trigger(
    arg_name="invocation",
    prompt_name="weekly_review",
    title="Weekly review",
    description="Go over the week: what came in, what is stuck, what is next.",
)
async def mcp_prompt_weekly_review(invocation: str) -> str:
    return (
        "Run my weekly review with my second brain's tools. Call `today`; `list_bucket` for "
        "projects with done false (each should have a next action), for admin with done false "
        "and dueBefore a week after today, and for people with done false. Then tell me: what "
        "is overdue, which projects are stuck (no next action, or nothing new for a while), "
        "who I should follow up with, what is due next week, and the questions my captures "
        "are waiting on. Suggest next actions, and ask me before changing anything with "
        "`update_capture` or answering with `answer_question`."
    )
