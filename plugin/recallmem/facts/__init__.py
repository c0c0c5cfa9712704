"""Rules over facts that every layer shares: input to facts (``validation``), list filters
(``listing``), the export format (``export_format``), the near-duplicate rule
(``near_duplicates``), and decay and expiry over a fact and a time. Pure: no storage."""
