"""The capture pipeline's application package: domain, services and adapters."""
