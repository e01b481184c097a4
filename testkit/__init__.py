"""Test and bench tooling that both tests/ and bench/ import: the devhost child process and
waiting helpers, the scripted OpenAI-compatible server, the storage tap and fault proxy, the
web app's server. Dev only, never deployed (.funcignore)."""
