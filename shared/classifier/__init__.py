"""Classifiers turn a capture's text into a bucket guess; see `protocol.py`."""
