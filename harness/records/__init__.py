"""What a run leaves behind: versioned transcript records (manifest, games, model calls), writer, reader, provenance.

``entries`` (the records), ``transcript`` (the hash-chained writer, the reader, resume),
``chain`` (reading and sealing hash-chained files), ``integrity`` (is a run's record
whole: chains, seal, every game and call once; what ``arena replay`` checks first),
``provenance`` (versions, git commit).
May import: ``engine``, ``agents``, and the parts below it (``play``, ``models``, ``prompting``, ``registry``).
"""
