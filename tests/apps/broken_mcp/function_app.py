import json

import azure.functions as func

app = func.FunctionApp()


# The extension refuses a worker input schema that is not a JSON schema of an object.
@app.mcp_tool_trigger(
    arg_name="invocation",
    tool_name="broken",
    description="A tool whose schema is an array.",
    input_schema=json.dumps({"type": "array"}),
    use_worker_input_schema=True,
)
async def broken(invocation: str) -> str:
    return ""
