"""``soulframe memory eval``: measuring memory search on your own golden questions, or on
public long-conversation benchmarks (LoCoMo, REALTALK)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from .memory import _index
from .state import State, echo_json, pass_state


@click.command("eval")
@click.argument("golden", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--conversations", "conversations", type=click.Path(exists=True),
              help="LoCoMo (locomo10.json) or REALTALK (Chat_*.json) conversations: a file or a directory.")
@click.option("--conversation", "only", multiple=True, metavar="NAME",
              help="Only this conversation (repeatable; Chat_1 picks Chat_1_Emi_Elise).")
@click.option("--channel", "channels", multiple=True, type=click.Choice(["hybrid", "keyword", "vector"]),
              help="Channels to measure with --conversations (repeatable; default all three).")
@click.option("--index-dir", type=click.Path(file_okay=False),
              help="Keep each conversation's index here (reused by the next run: nothing embedded twice).")
@click.option("--per-question", is_flag=True, help="With --json: each question's scores too.")
@click.option("-k", "k", type=click.IntRange(min=1), default=6, show_default=True, help="Cut-off for recall@k.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: golden questions {queries, k, channels, per_query}; conversations "
                   "{k, conversations, questions, channels, index_seconds, unresolved_evidence, ...}.")
@pass_state
def memory_eval(state: State, golden: str | None, conversations: str | None, only: tuple[str, ...],
                channels: tuple[str, ...], index_dir: str | None, per_question: bool, k: int,
                as_json: bool) -> None:
    """Measure memory search: on your own golden questions, or on public conversations.

    GOLDEN is JSON lines: {"id", "query", "relevant": [{"path", "contains"}], "kind"}; a hit
    is relevant when it is in that file and its text contains that string (or covers the
    entry's "line" when it names one). "relevant": [] marks a question memory cannot
    answer: it should return nothing. Also reports the characters returned per query, the
    false "no results" rate and, with a "split" field, each of them per split.

    With --conversations, each conversation becomes a temporary workspace of daily logs
    (one turn per line, "Speaker: text", the session date as the file name), indexed with
    your configuration and plugins, and every question is asked as `memory search` asks
    it. Reported per channel, overall and per category: recall@k (the share of a
    question's evidence turns inside the top k hits), all@k, MRR and the characters the
    hits cite; the index time, query latency and evidence ids that name no turn.

    \b
      soulframe memory eval my-questions.jsonl
      soulframe memory eval --conversations locomo10.json --conversation conv-26
      soulframe memory eval --conversations realtalk/ --index-dir ~/.cache/sf-eval --json
    """
    if conversations:
        if golden:
            raise click.UsageError("give either GOLDEN or --conversations, not both")
        _eval_conversations(state, conversations, only, channels, index_dir, per_question, k, as_json)
        return
    if golden is None:
        raise click.UsageError("give GOLDEN (a JSON-lines file of questions) or --conversations PATH")
    from ..memory.evaluation import evaluate, load_golden

    mem = _index(state)
    queries = load_golden(golden)
    mem.sync()
    known = {f.path for f in mem.files()}
    missing = sorted({str(r["path"]) for q in queries for r in q["relevant"]} - known)
    if missing:
        # a golden file meant for another workspace scores 0 everywhere: say why
        click.secho(
            f"warning: {len(missing)} path(s) in {golden} are not memory files of "
            f"{mem.agent.root} (e.g. {missing[0]}); is -w the workspace these queries are about?",
            fg="yellow", err=True,
        )
    result = evaluate(mem, queries, k=k)
    if as_json:
        echo_json(result)
        return
    click.echo(f"{len(queries)} queries, k = {k}")
    cols = [("R@1", "recall@1")] + ([("R@3", "recall@3")] if k > 3 else [])
    cols += [] if k == 1 else [(f"R@{k}", "recall@k")]
    click.echo(f"{'channel':10} " + " ".join(f"{c:>6}" for c, _ in cols)
               + f" {'MRR':>6} {'chars':>6} {'no-res':>6} {'unrel':>6}")
    for name, m in result["channels"].items():
        # chars: mean characters returned per query (the prompt cost of the hits); no-res:
        # the right passage was the top candidate but min_score returned nothing; unrel:
        # questions marked unanswerable ("relevant": []) that returned something
        click.echo(f"{name:10} " + " ".join(f"{m[key]:6.3f}" for _, key in cols) + f" {m['mrr']:6.3f}"
                   + f" {m['context_chars']:6.0f} {_rate(m.get('false_no_results')):>6}"
                   + f" {_rate(m.get('unrelated_returned')):>6}")
    splits = result["channels"].get("hybrid", {}).get("by_split", {})
    if len(splits) > 1:  # the half used to choose settings next to the half held apart
        click.echo("hybrid by split: " + "; ".join(
            f"{s} R@{k} {_rate(v['recall@k'])}, no-res {_rate(v.get('false_no_results'))}, "
            f"unrel {_rate(v.get('unrelated_returned'))}" for s, v in splits.items()))
    if result.get("notice"):
        click.secho(f"warning: {result['notice']}", fg="yellow", err=True)


def _eval_conversations(state: State, path: str, only: tuple[str, ...], channels: tuple[str, ...],
                        index_dir: str | None, per_question: bool, k: int, as_json: bool) -> None:
    import tempfile
    from pathlib import Path

    from ..memory import conversations as conv_mod
    from ..memory.conversation_eval import CHANNELS, evaluate_conversations, table

    chosen = conv_mod.select(conv_mod.load(path), only)
    total = sum(len(c.questions) for c in chosen)
    with contextlib.ExitStack() as stack:
        if index_dir:
            work = Path(index_dir).expanduser()
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="soulframe-eval-")))
        bar = stack.enter_context(_eval_bar(total))
        result = evaluate_conversations(state.config(), chosen, work, k=k, channels=channels or CHANNELS,
                                        progress=bar, per_question=per_question)
    if as_json:
        echo_json(result)
        return
    click.echo(table(result), nl=False)
    if result.get("notice"):
        click.secho(f"warning: {result['notice']}", fg="yellow", err=True)


@contextmanager
def _eval_bar(total: int) -> Iterator[Callable[[str, str, int, int], None] | None]:
    """A progress bar on stderr over every question of every conversation (a terminal only)."""
    if not sys.stderr.isatty():
        yield None
        return
    seen: dict[str, int] = {}
    with click.progressbar(length=max(total, 1), label="evaluating", file=sys.stderr,
                           item_show_func=lambda s: s) as bar:
        def update(name: str, stage: str, done: int, of: int) -> None:
            step = done - seen.get(name, 0) if stage == "questions" else 0
            seen[name] = done if stage == "questions" else seen.get(name, 0)
            bar.update(max(step, 0), f"{name}: {stage}")

        yield update


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
