"""A local Azure Functions host for this app: dev and tests only, never deployed.

It imports `function_app.py`, validates it the way the Python worker would, and drives
its HTTP, queue and blob triggers against Azurite with the real host's semantics.
"""
