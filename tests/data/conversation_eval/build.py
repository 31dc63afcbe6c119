"""Write the conversation evaluation set (deterministic: ``python build.py`` rewrites it
byte for byte; stdlib only).

Six long conversations between two people, each a workspace of daily logs
(``<pair>/memory/YYYY-MM-DD.md``, one session per file, one turn per line ``Speaker: text``),
and ``golden.jsonl``: questions about single turns (``fact``), the date a thing was said
(``when``, answered by the session date in the file name) and threads running across several
sessions (``multi``: lists and counts), each naming its evidence lines. Every question carries
``split``: ``tune`` (free to look at while choosing search settings) or ``held`` (never used
for that; reported beside it).

Questions are paraphrased: they name the person, but describe the thing in other words than
the turn ("what kind of dog" for "a beagle puppy"), as someone asking weeks later would.
Everything here is invented.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEED = 13

PAIRS = [
    ("Maya", "Daniel", "2025-09-02"), ("Priya", "Tom", "2025-10-14"), ("Lucas", "Ines", "2026-01-05"),
    ("Hana", "Joel", "2025-06-20"), ("Omar", "Greta", "2025-11-03"), ("Sofia", "Ravi", "2026-02-09"),
]
SESSIONS = 18

# --------------------------------------------------------------------------- single facts
# each: slots (one value picked per use), statements (what the speaker says), questions
# (asked later, in other words), when-questions. {p} is the speaker.
FACTS: list[dict[str, Any]] = [
    {"slots": {"breed": ["beagle", "border collie", "dachshund", "labrador", "whippet"],
               "name": ["Pepper", "Miso", "Juniper", "Biscuit", "Olive"]},
     "say": ["We finally brought home a {breed} puppy, we named her {name}.",
             "Big news, we adopted a little {breed} called {name} on Saturday."],
     "ask": ["What kind of dog did {p} get?", "Which breed is {p}'s new pet?"],
     "when": ["When did {p} bring the new dog home?", "When did {p} tell you about adopting the pet?"]},
    {"slots": {"company": ["Northwind", "Halcyon Labs", "Bramble & Co", "Tessera", "Quayside Bank"],
               "role": ["data analyst", "product designer", "site reliability engineer", "account manager"]},
     "say": ["I accepted the offer from {company}, I start as a {role} next month.",
             "Signed the contract with {company} today, {role} role, finally!"],
     "ask": ["Where is {p} going to work next?", "Which employer hired {p}?"],
     "when": ["When did {p} say yes to the new position?"]},
    {"slots": {"hobby": ["pottery", "salsa", "life drawing", "bouldering", "choir singing"]},
     "say": ["I signed up for {hobby} classes on Thursday evenings.",
             "Started doing {hobby} once a week, my first session was brilliant."],
     "ask": ["What new pastime has {p} taken up?", "Which weekly activity did {p} start?"],
     "when": ["When did {p} mention starting the new weekly class?"]},
    {"slots": {"body": ["ankle", "wrist", "shoulder", "knee"], "sport": ["five-a-side football", "tennis", "squash", "netball"]},
     "say": ["The physio says I sprained my {body} playing {sport}.",
             "Hurt my {body} at {sport} on Sunday, it's swollen and purple."],
     "ask": ["How did {p} get injured?", "What was {p} doing when they got hurt?"],
     "when": ["When did {p} talk about the sports injury?"]},
    {"slots": {"car": ["a red Skoda Fabia", "an old Volvo estate", "a second-hand Toyota Yaris", "a blue Mini"]},
     "say": ["We bought {car} last weekend, it's in great shape.",
             "Picked up {car} from the dealer, our first car together."],
     "ask": ["What vehicle did {p} buy?", "Which car did {p} end up purchasing?"],
     "when": ["When did {p} get the car?"]},
    {"slots": {"sib": ["sister", "brother", "cousin"], "place": ["Porto", "the Lake District", "Kraków", "Galway", "Seville"],
               "month": ["June", "September", "October", "May"]},
     "say": ["My {sib} is getting married in {place} in {month}.",
             "Guess what, my {sib} got engaged, the wedding will be in {place} in {month}."],
     "ask": ["Where is the wedding in {p}'s family going to be?", "Which place did {p} say the family wedding is in?"],
     "when": ["When did {p} share the news of the engagement in the family?"]},
    {"slots": {"book": ["The Overstory", "Piranesi", "Pachinko", "A Gentleman in Moscow", "The Secret History"]},
     "say": ["I'm halfway through {book}, I can't put it down.",
             "Just finished {book}, it made me cry on the train."],
     "ask": ["Which novel was {p} absorbed in?", "What was {p} reading that they loved?"],
     "when": ["When did {p} talk about that novel?"]},
    {"slots": {"area": ["Leith", "Clifton", "Didsbury", "Jericho", "Headingley"]},
     "say": ["We're moving to a flat in {area} at the end of the month.",
             "We got the keys to the new place in {area}, boxes everywhere."],
     "ask": ["Which neighbourhood is {p} relocating to?", "Where is {p}'s new home?"],
     "when": ["When did {p} talk about the move to a new flat?"]},
    {"slots": {"dish": ["pierogi", "jollof rice", "lasagne", "dal makhani", "paella"]},
     "say": ["I finally nailed my grandmother's {dish} recipe.",
             "Cooked {dish} for eight people last night and nobody left any."],
     "ask": ["What dish has {p} perfected?", "Which meal was {p} proud of cooking?"],
     "when": ["When did {p} brag about the cooking success?"]},
    {"slots": {"exam": ["driving test", "accountancy exam", "Spanish B2 exam", "first aid certificate"]},
     "say": ["I passed my {exam}! First try.", "Results came in, I passed the {exam}."],
     "ask": ["Which test did {p} pass?", "What qualification did {p} succeed at?"],
     "when": ["When did {p} find out the result of the test?"]},
    {"slots": {"band": ["Fontaines D.C.", "Khruangbin", "Wet Leg", "Arlo Parks", "The National"], "venue": ["the Roundhouse", "Brixton Academy", "the Barrowland", "Albert Hall"]},
     "say": ["We saw {band} live at {venue}, my ears are still ringing.",
             "{band} at {venue} last night was the best gig of the year."],
     "ask": ["Which musicians did {p} go to see?", "What concert did {p} attend?"],
     "when": ["When did {p} mention the gig?"]},
    {"slots": {"plant": ["a fig tree", "tomatoes", "a lemon tree", "runner beans"]},
     "say": ["My balcony garden is going well, I planted {plant} in big pots.",
             "I've started growing {plant} on the allotment."],
     "ask": ["What is {p} growing?", "What did {p} put in the garden?"],
     "when": ["When did {p} talk about the gardening?"]},
]

# --------------------------------------------------------------------------- multi-session threads
THREADS: list[dict[str, Any]] = [
    {"items": ["Lisbon", "Oslo", "Munich", "Dublin", "Rotterdam", "Vienna"],
     "say": ["Work sent me to {x} for three days, the client meetings went fine.",
             "I'm flying to {x} on Monday for the quarterly review with the team there.",
             "Back from the {x} trip, exhausted but we closed the deal."],
     "list": "Which cities has {p} travelled to for work?", "count": "How many business trips has {p} talked about?"},
    {"items": ["a 5K parkrun", "a 10K along the river", "the half marathon", "a trail race in the hills", "a charity relay"],
     "say": ["Ran {x} this weekend, new personal best.", "Did {x} on Sunday, my legs are dead.",
             "Signed up for {x} and actually finished it."],
     "list": "What running events has {p} taken part in?", "count": "How many races did {p} run?"},
    {"items": ["the Thai place on Bridge Street", "a tiny Georgian restaurant", "that new ramen bar", "a Lebanese grill near the station", "the vegan bistro"],
     "say": ["We tried {x} for dinner, the food was amazing.", "Had lunch at {x}, I'd go back.",
             "Took my parents to {x}, they loved it."],
     "list": "Which restaurants did {p} recommend after eating there?", "count": "How many new places to eat did {p} try?"},
    {"items": ["the tiles", "the plumbing", "the new worktop", "the cabinets", "the lighting"],
     "say": ["Kitchen update: {x} went in this week, slowly getting there.",
             "The builders finally sorted {x} in the kitchen.", "More kitchen drama, {x} was delayed again."],
     "list": "What progress has {p} reported on the kitchen renovation?", "count": "How many kitchen renovation updates did {p} give?"},
]

# --------------------------------------------------------------------------- small talk
OPENERS = ["Hey, how's your week going?", "Morning! Did you sleep okay?", "Hi, long time no talk.",
           "How was the weekend?", "Hey you, got a minute?", "Evening! What's new?"]
FILLER = [
    "Pretty quiet, mostly tidied the flat.", "Haha, that sounds like a lot.", "Honestly I just needed a nap.",
    "Same here, it's been non-stop.", "Oh no, that's rough.", "Ha, classic.", "I know what you mean.",
    "The weather has been miserable all week.", "It finally stopped raining here.", "I'm so behind on emails.",
    "Did you watch the match?", "Not really, I fell asleep halfway.", "We should catch up properly soon.",
    "Yes please, it's been ages.", "My phone battery is dying, sorry if I drop off.",
    "Work is fine, nothing exciting.", "I had way too much coffee today.", "That made me laugh.",
    "Wait, really?", "No way!", "Tell me everything.", "Fair enough.", "I'll think about it.",
    "Traffic was horrible this morning.", "I'm cooking something simple tonight.", "Can't complain.",
    "The neighbours were loud again last night.", "I keep meaning to call my mum back.",
    "Let's not talk about the train strike.", "I'm trying to drink more water.", "Ugh, Mondays.",
    "I've been binge-watching a silly baking show.", "Sounds lovely.", "Good for you!",
    "That's so you.", "I need a holiday.", "Maybe next weekend?", "I'm free on Thursday evening.",
    "Send me a photo!", "I'll send it later.", "Oh that reminds me, I owe you a tenner.",
    "Don't worry about it.", "Anyway, enough about me.", "How's the family?", "All good, thanks for asking.",
]
REACTIONS = ["Oh wow, congratulations!", "That's amazing news.", "No way, tell me more.", "Oh, that sounds stressful.",
             "Ha, I love that.", "Good for you, honestly.", "That must have been something.", "Nice one!"]
CLOSERS = ["Right, I need to run. Talk soon!", "Okay, bedtime for me. Night!", "Speak tomorrow?", "Catch you later."]


def fill(template: str, values: dict[str, str]) -> str:
    return template.format(**values)


def _chatter(rng: random.Random, lines: list[str], speakers: tuple[str, str], turn: list[int]) -> Any:
    """Small talk appended to ``lines``, the two speakers taking turns as people do."""

    def chat(count: int) -> None:
        for _ in range(count):
            turn[0] += 1
            lines.append(f"{speakers[turn[0] % 2]}: {rng.choice(FILLER)}")

    return chat


def build() -> None:
    rng = random.Random(SEED)
    golden: list[dict[str, Any]] = []
    for a, b, start in PAIRS:
        pair = f"{a.lower()}-{b.lower()}"
        root = HERE / pair / "memory"
        root.mkdir(parents=True, exist_ok=True)
        for old in root.glob("*.md"):
            old.unlink()
        day = dt.date.fromisoformat(start)
        dates = []
        for _ in range(SESSIONS):
            dates.append(day)
            day += dt.timedelta(days=rng.randint(3, 14))
        # what each session says: (speaker, text, question-specs)
        plan: list[list[tuple[str, str, list[dict[str, Any]]]]] = [[] for _ in range(SESSIONS)]
        facts = list(FACTS)
        rng.shuffle(facts)
        for fact in facts:
            for who in (a, b):
                values = {k: rng.choice(v) for k, v in fact["slots"].items()}
                text = fill(rng.choice(fact["say"]), values)
                qs = [{"kind": "fact", "query": rng.choice(fact["ask"]).format(p=who)}]
                if rng.random() < 0.6:
                    qs.append({"kind": "when", "query": rng.choice(fact["when"]).format(p=who)})
                plan[rng.randrange(SESSIONS)].append((who, text, qs))
        threads = rng.sample(THREADS, 3)
        for t, thread in enumerate(threads):
            who = (a, b)[t % 2]
            n = rng.randint(2, 4)
            items = rng.sample(thread["items"], n)
            sessions = sorted(rng.sample(range(SESSIONS), n))
            ask = [{"kind": "multi", "query": thread["list"].format(p=who)},
                   {"kind": "multi", "query": thread["count"].format(p=who)}]
            for item, s in zip(items, sessions, strict=True):
                plan[s].append((who, fill(rng.choice(thread["say"]), {"x": item}), ask))
        evidence: dict[int, list[tuple[str, int, str]]] = {}  # id(question spec) -> lines
        specs: dict[int, dict[str, Any]] = {}
        for s, when in enumerate(dates):
            lines = [f"# {when.isoformat()}", ""]
            first, second = (a, b) if rng.random() < 0.5 else (b, a)
            lines.append(f"{first}: {rng.choice(OPENERS)}")
            lines.append(f"{second}: {rng.choice(FILLER)}")
            turn = [0]
            chat = _chatter(rng, lines, (first, second), turn)

            items = plan[s]
            rng.shuffle(items)
            for who, text, qs in items:
                other = b if who == a else a
                chat(rng.randint(4, 12))
                lines.append(f"{who}: {text}")
                lineno = len(lines)
                for q in qs:
                    evidence.setdefault(id(q), []).append((f"memory/{when.isoformat()}.md", lineno, f"{who}: {text}"))
                    specs[id(q)] = q
                lines.append(f"{other}: {rng.choice(REACTIONS)}")
            chat(rng.randint(6, 16))
            lines.append(f"{first}: {rng.choice(CLOSERS)}")
            (root / f"{when.isoformat()}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for key, q in specs.items():
            ev = evidence[key]
            golden.append({
                "workspace": pair, "kind": q["kind"], "query": q["query"],
                "relevant": [{"path": p, "line": n, "contains": text} for p, n, text in ev],
                **({"answer": ev[0][0][7:17]} if q["kind"] == "when" else {}),
                **({"answer": len(ev)} if "How many" in q["query"] else {}),
            })
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for g in golden:
        by_kind.setdefault(g["kind"], []).append(g)
    for group in by_kind.values():  # half of each kind held apart, chosen at random
        held = set(rng.sample(range(len(group)), len(group) // 2))
        for i, g in enumerate(group):
            g["split"] = "held" if i in held else "tune"
    out = []
    for i, g in enumerate(golden, 1):
        out.append(json.dumps({"id": f"c{i:03d}", **g}, ensure_ascii=False))
    (HERE / "golden.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    build()
