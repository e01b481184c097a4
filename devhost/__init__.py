"""A local Azure Functions host for this app: dev and tests only, never deployed.

It imports `function_app.py`, validates it the way the Python worker would, and drives
its HTTP, queue, blob and timer triggers against Azurite with the real host's semantics,
and serves the admin endpoint that runs a function by hand.
"""
