"""``arena sweep`` and ``arena leaderboard``: grids of runs on a local pool or a Ray cluster, and one rating over them.

The sweep file (:mod:`harness.sweep.spec`) names agents x environments x seeds x hint
levels; each cell is an ordinary run directory written by the same code as ``arena bench
paper`` (classical and learned agents) or ``arena run`` (model agents)
(:mod:`harness.sweep.cells`), run by worker processes or Ray tasks
(:mod:`harness.sweep.backends`). :mod:`harness.sweep.leaderboard` fits one Bradley-Terry
rating over every game of any set of run, bench and sweep directories, one fit per
condition set. :mod:`harness.sweep.adaptive` schedules ``arena tournament --adaptive``
(run on real games by :mod:`harness.sweep.adaptive_run`, benchmarked on known strengths by
:mod:`harness.sweep.adaptive_bench`).

May import every harness part below it (bench, runs, tournaments, ...); ``ray`` is
imported only when the Ray backend is used.
"""
