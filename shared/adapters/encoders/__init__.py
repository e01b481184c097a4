"""The offline sentence encoders, plain numpy forward passes (local only, like the classifier and
the embedder over them): all-MiniLM-L6-v2 (`minilm.py`), multilingual-e5-small
(`multilingual_e5.py`), and what the classifier asks of one (`sentence.SentenceEncoder`)."""
