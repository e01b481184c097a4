"""The embedders: text to vectors, offline (MiniLM) or Azure OpenAI."""
