"""Function entrypoints (blueprints): parse, authorise, call one service, shape the response."""
