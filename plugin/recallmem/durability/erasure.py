"""What a purge does besides deleting records, so no file under the home keeps the text.

Before the first record of a purge is deleted (:meth:`Erasure.before`): the scrub is
recorded as owed (durability/owed_scrub.py: a crash before it ran is scrubbed at the next
open), the purged rows leave pending import intents (an unfinished import must not bring
them back), and every other file a higher layer registered in :attr:`Erasure.quoting`
drops them: the pending consolidation plans (lifecycle/merge_journal.py, registered by
operations/writing.py), which quote the merged text and every part's. After the deletes,
:meth:`Erasure.scrubbed` scrubs and then clears the owed mark.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from recallmem.durability.intents import IntentLog
from recallmem.durability.owed_scrub import OwedScrub

# Called with a user id and the ids about to be purged (None: the whole user).
Forget = Callable[[str, Collection[str] | None], None]


class Erasure:
    """The files of one home a purge must clear."""

    def __init__(self, home: Path) -> None:
        self.intents = IntentLog(home)
        self.owed = OwedScrub(home)
        self.quoting: list[Forget] = []

    def before(self, user_id: str, ids: Collection[str] | None) -> None:
        """Call before deleting the user's facts ``ids`` (None: the whole user)."""
        self.owed.owe()
        if ids is None:
            self.intents.drop_rows(user_id, lambda f: False, profiles=True)
        else:
            self.intents.drop_rows(user_id, lambda f: f.id not in ids, profiles=False)
        for forget in self.quoting:
            forget(user_id, ids)

    def scrubbed(self, scrub: Callable[[], None]) -> None:
        """Run ``scrub`` (after the deletes); then no scrub is owed."""
        self.owed.scrubbed(scrub)
