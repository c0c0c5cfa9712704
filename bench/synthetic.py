"""A synthetic corpus for scale runs: plain sentences about made-up people, all distinct.

Deterministic: fact ``i`` is always the same sentence, so runs are comparable.

>>> synthetic_fact(0)
'Ada adopted a border collie in Lisbon during spring'
>>> len({synthetic_fact(i) for i in range(10_000)})
10000
"""

from __future__ import annotations

NAMES = (
    "Ada",
    "Ben",
    "Chen",
    "Dara",
    "Eli",
    "Farah",
    "Gus",
    "Hana",
    "Ivo",
    "Jun",
    "Kai",
    "Lena",
    "Milo",
    "Nia",
    "Omar",
    "Pia",
    "Quinn",
    "Rosa",
    "Sami",
    "Tomas",
    "Uma",
    "Vik",
    "Wen",
    "Xia",
    "Yusuf",
    "Zoe",
    "Anya",
    "Bruno",
    "Cleo",
    "Dev",
    "Emre",
    "Fumi",
    "Gil",
    "Hugo",
    "Ines",
    "Jana",
    "Kofi",
    "Lars",
    "Maya",
    "Noor",
    "Otto",
    "Priya",
    "Raf",
    "Sol",
    "Tara",
    "Umar",
    "Vera",
    "Wes",
    "Yara",
    "Zed",
)
ACTIONS = (
    "adopted",
    "bought",
    "sold",
    "painted",
    "repaired",
    "borrowed",
    "lost",
    "found",
    "photographed",
    "designed",
    "ordered",
    "returned",
    "built",
    "cleaned",
    "shared",
    "rented",
    "tried",
    "won",
    "gave away",
    "wrote about",
    "studied",
    "planned",
    "booked",
    "cooked",
    "recommended",
    "reviewed",
    "collected",
    "restored",
    "packed",
    "learned",
    "taught",
    "visited",
    "organised",
    "cancelled",
    "celebrated",
    "practised",
    "grew",
    "watched",
    "translated",
    "sketched",
)
THINGS = (
    "a border collie",
    "a red bicycle",
    "an old piano",
    "a sailing boat",
    "a tea set",
    "a vintage camera",
    "a wool coat",
    "a board game",
    "a sourdough starter",
    "a kayak",
    "a telescope",
    "a violin",
    "a garden shed",
    "a laptop",
    "a mountain tent",
    "a chess set",
    "a ceramic vase",
    "a motorbike",
    "a fish tank",
    "a bonsai tree",
    "a drone",
    "a sewing machine",
    "a record player",
    "a surfboard",
    "a wedding cake",
    "a jigsaw puzzle",
    "a bird feeder",
    "a guitar",
    "a rug",
    "a coffee grinder",
    "a paddle board",
    "a kite",
    "a sculpture",
    "a novel",
    "a quilt",
    "a lamp",
    "a snowboard",
    "a bookshelf",
    "a map",
    "a robot kit",
    "a cactus",
    "a hammock",
    "a canoe",
    "a mural",
    "a podcast",
    "a recipe book",
    "a science fair project",
    "a flute",
    "a scooter",
    "a yoga mat",
    "a bread oven",
    "a poster",
    "a mosaic",
    "a lantern",
    "a diary",
    "a puppet",
    "a vegetable patch",
    "a treehouse",
    "a pottery wheel",
    "a harmonica",
)
PLACES = (
    "Lisbon",
    "Osaka",
    "Nairobi",
    "Lima",
    "Oslo",
    "Hanoi",
    "Quito",
    "Tbilisi",
    "Perth",
    "Dakar",
    "Cork",
    "Bergen",
    "Cusco",
    "Porto",
    "Kyoto",
    "Accra",
    "Sapporo",
    "Utrecht",
    "Valencia",
    "Tallinn",
    "Hobart",
    "Malmo",
    "Bologna",
    "Sucre",
    "Riga",
    "Leeds",
    "Aarhus",
    "Zadar",
    "Fez",
    "Gdansk",
)
SEASONS = ("during spring", "last summer", "in the autumn", "over the winter")


def synthetic_fact(i: int) -> str:
    """The ``i``-th synthetic sentence (distinct for every i below 14.4 million)."""
    i, name = divmod(i, len(NAMES))
    i, thing = divmod(i, len(THINGS))
    i, action = divmod(i, len(ACTIONS))
    i, place = divmod(i, len(PLACES))
    season = i % len(SEASONS)
    return f"{NAMES[name]} {ACTIONS[action]} {THINGS[thing]} in {PLACES[place]} {SEASONS[season]}"


def synthetic_query(i: int) -> str:
    """A question in the corpus's vocabulary (about the ``i``-th fact's subject)."""
    fact = synthetic_fact(i * 7919)
    name, rest = fact.split(" ", 1)
    thing = next(t for t in THINGS if t in rest)
    return f"What did {name} do with {thing}?"


def synthetic_questions(i: int) -> list[str]:
    """Search keys for fact ``i``, shaped as the keying model writes them (two short
    questions, one in Chinese, and a paraphrase in Chinese): their words are made up, their
    lengths and scripts are what a write and a store pay for, for the timed scale runs only.

    >>> synthetic_questions(0)[0]
    'What did Ada do with a border collie?'
    """
    fact = synthetic_fact(i)
    name, rest = fact.split(" ", 1)
    thing = next(t for t in THINGS if t in rest)
    place = next(p for p in PLACES if p in rest)
    return [f"What did {name} do with {thing}?", f"{name}在{place}做了什么？",
            f"{name}在{place}处理了{thing}，那是{SEASONS[i % len(SEASONS)]}的事"]  # fmt: skip
