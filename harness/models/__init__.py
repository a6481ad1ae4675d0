"""The model layer: one client for every model call (litellm, imported lazily), its cache, errors and mocks.

``client`` (retries, caps, concurrency), ``cache`` (the response cache a transcript
doubles as), ``errors`` (the failure taxonomy), ``messages`` (request/response
types), ``mock`` and ``reasoner`` (offline models for tests and the demo).
May import: ``engine``, ``agents`` (the reasoner reuses the interval belief), ``harness.play``.
"""
