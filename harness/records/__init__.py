"""What a run leaves behind: versioned transcript records (manifest, games, model calls), writer, reader, provenance.

May import: ``engine``, ``agents``, and the parts below it (``play``, ``models``, ``prompting``, ``registry``).
"""
