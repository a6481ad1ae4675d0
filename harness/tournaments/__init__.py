"""Frozen evaluation: matches, tournament plans and their runs over worker processes, results and statistics.

Under the referee (the default) the game loop and K stay in the tournament
workers and every unprivileged agent plays from a player process
(:mod:`harness.referee.seats`); ``--in-process`` runs are marked UNENFORCED.

May import: ``engine``, ``agents``, and the parts below it (``play`` ... ``referee``).
"""
