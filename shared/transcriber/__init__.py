"""Transcribers turn a voice capture's audio into text; see `protocol.py`."""
