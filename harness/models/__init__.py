"""The model layer: one client for every model call (litellm, imported lazily), its cache, errors and mocks.

``client`` (retries, caps, concurrency), ``cache`` (the response cache a transcript
doubles as), ``errors`` (the failure taxonomy), ``messages`` (request/response
types), ``mock``, ``script`` and ``reasoner`` (offline models for tests, the CLI and the demo;
``replies``: what they answer and the failures they inject).
May import: ``engine``, ``agents`` (the reasoner reuses the interval belief), ``harness.play``.
"""
