"""Write the paraphrase calibration set (deterministic; stdlib only).

    python tests/data/paraphrase_eval/build.py

A workspace of 80 daily logs (two remembered facts on 36 of them, among everyday small talk), and
``golden.jsonl``: one question per fact, worded as someone would ask it days later (sharing
few or none of the note's words), plus ``unrelated`` questions about things the logs never
mention, which must return nothing. Everything here is invented.

Two halves, each with its own facts, questions and logs (April-May and June-July): ``"split":
"tune"`` (free to look at while choosing search settings) and ``"split": "held"`` (written
before any result on it was seen, and never used to choose settings; reported beside the
tuning half).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (note as remembered, question asked later)
FACTS: list[tuple[str, str]] = [
    ("Tomas keeps his spare house key under the blue flowerpot", "how do I get into his place if he's away"),
    ("The wifi password for the cabin is written inside the pantry door", "how do we get online at the lake house"),
    ("Dr Okafor moved the knee appointment to 3 December", "when is the orthopaedic visit"),
    ("Lena switched teams and now reports to Marcus", "who is her new manager"),
    ("Grandma's birthday dinner is booked at Osteria Lupo for Saturday at 7", "where are we eating for gran's celebration"),
    ("The car needs an oil change at 45,000 km", "when is the vehicle due for servicing"),
    ("Priyanka is allergic to shellfish", "can she have prawns at the party"),
    ("The landlord says rent goes up to 1,450 from March", "how much will the flat cost us in spring"),
    ("Ordered a replacement charger for the laptop, it arrives Thursday", "when is the new power adapter coming"),
    ("Jonas is learning the cello and practises on Sunday mornings", "which instrument has he taken up"),
    ("The kids' swimming lessons moved to Wednesdays at the leisure centre", "what day do the children go to the pool"),
    ("Passport renewals need new photos taken at the post office", "what do we need for the travel documents"),
    ("Dad only drinks decaf after 4pm", "what coffee should I make my father in the evening"),
    ("Biscuit has been on a grain-free diet since the vet visit", "what is the dog allowed to eat"),
    ("Recycling is collected every other Tuesday", "when do the bins go out"),
    ("Sofia's flight lands at 14:20 at Terminal 2", "what time should I pick her up from the airport"),
    ("Hartley Heating is servicing the boiler on the 9th", "who is coming to look at the radiators and hot water"),
    ("Book club is reading The Remains of the Day this month", "which novel is the reading group discussing"),
    ("Lent our ladder to Mr Patel next door", "who has the stepladder"),
    ("The gym membership renews automatically on 1 February at 39 a month", "how much is the fitness subscription"),
    ("Aunt Ruth's new mobile number ends in 4471", "how can I reach my aunt by phone"),
    ("Maya wants the Lego observatory set for her birthday", "what present should we buy the girl"),
    ("The plumber recommended replacing the kitchen tap cartridge", "what did the tradesman suggest for the dripping faucet"),
    ("The insurance policy is in the green folder in the study", "where are the home cover documents kept"),
    ("Alex is vegetarian but eats fish", "what can Alex eat at the barbecue"),
    ("Parked on level 3, bay C14, at the airport car park", "where did I leave the car"),
    ("Emma started as a pharmacist at the hospital in October", "what does Emma do for work now"),
    ("Cancelled the Netflix subscription to save money", "did we drop any of the streaming services"),
    ("The spare bedroom will be painted sage green", "what colour is the guest room going to be"),
    ("Ben's school play is on Friday the 14th at 6pm", "when is the performance at his school"),
    ("Switched the electricity supplier to Octopus in June", "which company provides our power"),
    ("The tax return has to be filed by 31 January", "what is the deadline for the self assessment"),
    ("Nora broke her wrist skiing in Austria", "what happened to Nora on her winter holiday"),
    ("Sam hates phone calls and only answers texts", "how does Sam like to be contacted"),
    ("My hiking boots are size 44", "what shoe size should I order for the trek"),
    ("The neighbours' cat is called Pickles", "what is next door's pet named"),
]

#: questions about things the logs never mention (their words occur nowhere in them)
UNRELATED: list[str] = [
    "what is the boiling point of mercury",
    "how do I configure a kubernetes ingress controller",
    "who won the 1998 world cup final",
    "what is the population of Mongolia",
    "how many moons does Jupiter have",
    "how do you say thank you in Japanese",
    "what is the derivative of sine",
    "what is the share price of Tesla",
    "explain quantum entanglement simply",
    "who wrote Pride and Prejudice",
    "how tall is Kilimanjaro",
    "what is the chemical formula of table salt",
    "when was the Eiffel Tower built",
    "what are the rules of cricket",
    "how do I compile a Rust program",
    "what are the symptoms of scurvy",
    "how do volcanoes form",
    "what time zone is Singapore in",
    "how does a refrigerator compressor work",
    "what is the capital of Australia",
    "how many bones are in the human body",
    "what language is spoken in Brazil",
    "what causes the northern lights",
    "how do I solve a quadratic equation",
]

#: the held-apart half: (note as remembered, question asked later), never used to tune
HELD_FACTS: list[tuple[str, str]] = [
    ("The babysitter, Chloe, charges 12 an hour and can't do Saturdays", "how much do we pay the person who minds the kids"),
    ("Uncle Victor is flying in from Montreal on the 22nd", "when does my relative from Canada arrive"),
    ("The dishwasher warranty runs out in August", "until when is the appliance guarantee valid"),
    ("Freya got a place at Westbrook university to study architecture", "which course did she get into"),
    ("The window cleaner comes on the first Monday of each month", "how often does someone wash the glass outside"),
    ("Raj lent me his camping stove for the festival", "whose cooker did I borrow for the weekend away"),
    ("Hugo's piano teacher is Mrs Lindqvist on Harbour Street", "who gives the boy his music lessons"),
    ("The council tax direct debit comes out on the 15th", "what date is the local authority payment taken"),
    ("Mum's blood test results came back normal", "was everything fine with my mother's lab work"),
    ("The broadband deal ends in November and we can switch without a fee", "when can we change internet provider for free"),
    ("Theo is scared of thunderstorms and hides under the bed", "why does the little one get upset when the weather turns"),
    ("The front door is painted Farrow and Ball Hague Blue", "what shade did we use on the entrance"),
    ("Marta's baby boy was born on Tuesday and is called Felix", "what did my colleague name her newborn"),
    ("The bike lock code is 7391", "how do I open the padlock on my bike"),
    ("Rosa is coming to stay for the long weekend in May", "when is our houseguest visiting"),
    ("The chimney sweep is booked for the 4th of October", "when is someone coming to clean the fireplace flue"),
    ("Ahmed is teetotal, so buy him elderflower cordial", "what should we get our guest who doesn't drink alcohol"),
    ("The lost property office says my scarf was handed in at Victoria station", "where can I collect what I left on the train"),
    ("Clara is running the Berlin marathon in September", "which race is Clara training for"),
    ("Water is leaking through the ceiling in the downstairs toilet", "where is the damp patch coming from"),
    ("Signed the kids up for tennis camp in the first week of August", "what are the children doing in the summer holidays"),
    ("Mrs Douglas next door feeds the goldfish when we're away", "who looks after the fish while we travel"),
    ("The electrician said the fuse box needs replacing before we sell", "what work must happen before the house goes on the market"),
    ("Isabel's favourite flowers are peonies", "what bouquet should I get for Isabel"),
    ("The library books are due back on the 28th", "when do the borrowed books have to be returned"),
    ("Kofi moved to Lisbon for a job at a design studio", "where does Kofi live now"),
    ("The heating oil tank was filled with 900 litres in January", "how much fuel did we buy for the furnace"),
    ("Eva only needs glasses for reading since her eye test", "what did the optician tell Eva"),
    ("Our cleaner, Dorota, comes every other Wednesday morning", "when does the housekeeper visit"),
    ("Finn's football practice moved to the indoor hall at St Mary's", "where does the boy play soccer now"),
    ("The will is kept with the solicitor at Barnes and Co", "who holds the legal papers about the inheritance"),
    ("The spa gift voucher expires at the end of June", "until when can we use the pampering present"),
    ("Oskar can't eat gluten, he has coeliac disease", "is bread okay for Oskar"),
    ("The moving van is booked for 7am on the 30th", "when do the removals people arrive"),
    ("Planted the cherry tree in the far left corner of the garden", "where did we put the new fruit sapling"),
    ("Harriet takes the 8:15 ferry to the island on Fridays", "how does she get across the water at the end of the week"),
]

#: held-apart questions about things the logs never mention (their words occur nowhere in them)
HELD_UNRELATED: list[str] = [
    "what is the speed of light in a vacuum",
    "how do I reverse a linked list in Python",
    "who composed the Moonlight Sonata",
    "what is the atomic mass of carbon",
    "when did the Roman empire collapse",
    "how does chlorophyll capture sunlight",
    "what is the longest desert in Africa",
    "how do I create a postgres replica",
    "who discovered penicillin",
    "what is the GDP of Argentina",
    "how many people make up a rugby squad",
    "what is the difference between mitosis and meiosis",
    "how do tides relate to the moon",
    "who invented the telephone",
    "what is the square root of 144",
    "how do I write a SQL join",
    "what are the main causes of inflation",
    "what does DNA stand for",
    "how many kilometres separate Mars and Earth",
    "what is the plot of Hamlet",
    "how do hurricanes get their names",
    "which element has the symbol Fe",
    "how does elliptic curve cryptography work",
    "what year did the Titanic sink",
]

SMALL_TALK: list[str] = [
    "Grey morning, drizzle until about eleven.",
    "Finished the crossword over breakfast for once.",
    "Watched half of a documentary about octopuses, very strange animals.",
    "Long queue at the bakery again, the croissants were worth it.",
    "Tried the new ramen place on the corner, too salty.",
    "Traffic on the ring road was awful this morning.",
    "The tomatoes on the balcony are finally turning red.",
    "Had a nice chat with the postman about his allotment.",
    "Felt tired all afternoon, probably the heat.",
    "Walked along the river at lunch, saw two herons.",
    "The washing machine is making that rattling noise again.",
    "Made a big pot of lentil soup for the week.",
    "Someone's car alarm went off at 3am.",
    "Started a new podcast about medieval history.",
    "Bought too many apples at the market.",
    "It was warm enough to sit outside in the evening.",
    "The printer jammed twice, gave up and went to the library.",
    "Phoned Mum, she sounded cheerful.",
    "Cleaned out the fridge, found a very old jar of pesto.",
    "Went to bed early with a book.",
    "Lovely sunset over the hills tonight.",
    "Tried a yoga video, my hamstrings disagree.",
    "The bus was twenty minutes late.",
    "Baked banana bread with the overripe bananas.",
    "Watered the houseplants, the fern looks sad.",
    "A pigeon has decided to nest on the window ledge.",
    "Spent the evening sorting old photos.",
    "The new neighbours upstairs are quite loud.",
    "Picked up the dry cleaning on the way home.",
    "Ran out of milk, had black tea instead.",
    "Re-watched an old comedy, still funny.",
    "Got caught in a downpour without an umbrella.",
    "The café by the station has a new barista who draws leaves in the foam.",
    "Played cards after dinner, lost every round.",
    "Windy day, the bins blew over in the street.",
    "Repotted the basil into a bigger pot.",
    "Tidied the hallway cupboard at last.",
    "Fixed the squeaky hinge on the wardrobe with some oil.",
    "Heard thunder in the distance but it stayed dry.",
    "Wrote a few postcards that I will probably forget to send.",
    "Listened to the radio while cooking.",
    "The morning run felt easy today.",
    "Cut my hair myself, not a success.",
    "Tried a new brand of oat milk, not bad.",
    "Ironed shirts for the week.",
    "Looked at holiday photos from last summer.",
    "The streetlight outside keeps flickering.",
    "Made pancakes on a weekday just because.",
]

#: per half: two facts a day on 18 days, and 22 days of small talk only: 40 logs, one chunk each
FACTS_PER_DAY = 2
DAYS_TOTAL = 40
#: (split, first day, seed, facts, unrelated questions, first fact id, first unrelated id);
#: the held half's logs come after the tuning half's, on days of their own
HALVES = (
    ("tune", "2026-04-01", 20260504, FACTS, UNRELATED, 1, 1),
    ("held", "2026-06-01", 20260601, HELD_FACTS, HELD_UNRELATED, 37, 25),
)


def write_half(memory: Path, split: str, first_day: str, seed: int, all_facts: list[tuple[str, str]],
               unrelated: list[str], fact_id: int, unrelated_id: int) -> list[dict[str, object]]:
    """Write one half's logs into ``memory``; return its golden entries."""
    import datetime as dt

    rng = random.Random(seed)
    facts = list(enumerate(all_facts, fact_id))
    rng.shuffle(facts)
    first = dt.date.fromisoformat(first_day)
    days = sorted(rng.sample(range(60), DAYS_TOTAL))
    with_facts = set(rng.sample(range(DAYS_TOTAL), len(facts) // FACTS_PER_DAY))
    golden: list[dict[str, object]] = []
    for d, offset in enumerate(days):
        day = (first + dt.timedelta(days=offset)).isoformat()
        notes = [facts.pop() for _ in range(FACTS_PER_DAY)] if d in with_facts else []
        lines = [note for _, (note, _q) in notes] + rng.sample(SMALL_TALK, rng.randint(8, 12))
        rng.shuffle(lines)
        (memory / f"{day}.md").write_text(f"# {day}\n\n" + "".join(f"- {ln}\n" for ln in lines),
                                          encoding="utf-8")
        for i, (note, question) in notes:
            golden.append({"id": f"p{i:03d}", "query": question, "kind": "paraphrase",
                           "relevant": [{"path": f"memory/{day}.md", "contains": note}], "split": split})
    golden.sort(key=lambda g: str(g["id"]))
    golden += [{"id": f"u{i:03d}", "query": q, "kind": "unrelated", "relevant": [], "split": split}
               for i, q in enumerate(unrelated, unrelated_id)]
    return golden


def build() -> None:
    memory = HERE / "workspace" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    for old in memory.glob("*.md"):
        old.unlink()
    golden = [g for half in HALVES for g in write_half(memory, *half)]
    (HERE / "golden.jsonl").write_text("".join(json.dumps(g) + "\n" for g in golden), encoding="utf-8")


if __name__ == "__main__":
    build()
