"""The viewer (``arena view``): one self-contained HTML page of a run, checked in a real browser.

Above ``runs`` (it reads every kind of run directory: ``arena run``, ``match``/``tournament``, ``bench paper``):
:mod:`~harness.view.sources` reads a run, :mod:`~harness.view.overview` computes what the overview shows,
:mod:`~harness.view.boards` the board at every ply (from the engine), :mod:`~harness.view.build` writes the page
and its per-game chunks (:mod:`~harness.view.data`: the pydantic models of what is written),
:mod:`~harness.view.serve` serves a live run, :mod:`~harness.view.browser` drives Debian's headless Chromium
over the DevTools protocol (tests and ``arena bench view``), :mod:`~harness.view.synthetic` writes a large
synthetic run for the benchmark. The page itself is ``static/`` (plain JS, CSS and HTML; no build step).

It may import the engine and the harness parts below it (``runs``, ``tournaments``, ``records``, ...); ``bench`` and
``cli`` import it.
"""
