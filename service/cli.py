"""`tutorqa`: one console script with subcommands. Command bodies import their heavy parts lazily."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from service.search.protocol import SearchUnavailableError
from service.settings import PROJECT_ROOT, Settings, SettingsError, markdown_table

SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"   # the team's data sets, on its own machines only


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from service.indexing import index_file
    from service.search.backends import describe

    if status := missing(args.file):
        return status
    embedder, index = writable_index(settings, args.kind)
    report = index_file(args.file, index, embedder, args.kind, checkpoint_s=args.checkpoint_s)
    for line in report.rejected:
        print(f"rejected {args.file}:{line}", file=sys.stderr)
    print(f"{args.kind}: {report.summary()} -> {describe(settings.search, args.kind)}")
    return 1 if report.rejected else 0


def cmd_delete(args: argparse.Namespace, settings: Settings) -> int:
    from service.search.backends import describe

    if args.file and (status := missing(args.file)):
        return status
    ids = list(dict.fromkeys(args.ids + (args.file.read_text(encoding="utf-8").split() if args.file else [])))
    if not ids:
        print("error: name the ids to delete, or a file of them with --file", file=sys.stderr)
        return 2
    _, index = writable_index(settings, args.kind)
    deleted = index.delete(ids)
    index.save()
    print(f"{args.kind}: deleted {deleted} of {len(ids)} ids; index holds {index.count()} -> "
          f"{describe(settings.search, args.kind)}")
    return 0


def writable_index(settings: Settings, kind: str):
    """The embedder and the index of `kind` opened for writing on the configured backend."""
    from service.embedder import embedder_from
    from service.search.backends import open_index

    embedder = embedder_from(settings.search)
    return embedder, open_index(settings.search, kind, embedder.name, embedder.dimension)


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from service.app import build_pipeline
    from service.models import AnswerRequest

    pipeline, _ = build_pipeline(settings)
    response = pipeline.run(AnswerRequest(query=args.question, user_id=args.user_id, subject=args.subject))
    print(json.dumps(response.to_dict(), indent=2, ensure_ascii=False))
    return 0


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    """gunicorn in the foreground; with --with-llm, the local LLM server runs beside it and both
    stop together on SIGTERM or Ctrl-C."""
    metrics_dir = settings.search.data_dir / "prometheus"
    shutil.rmtree(metrics_dir, ignore_errors=True)   # stale files from dead workers would skew the counters
    metrics_dir.mkdir(parents=True)
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
    gunicorn = [sys.executable, "-m", "gunicorn", "-c", str(PROJECT_ROOT / "service" / "gunicorn_conf.py")]
    if not args.with_llm:
        os.execve(gunicorn[0], gunicorn, env)
    from service.llm.local_server import wait_until_up

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))   # run the clean-up below
    children = [subprocess.Popen([sys.executable, "-m", "service.cli", "llm-server"], env=env)]
    try:
        wait_until_up(settings.llm_server, process=children[0])
        children.append(subprocess.Popen(gunicorn, env=env))
        return children[-1].wait()
    finally:
        for child in reversed(children):
            child.terminate()
        for child in children:
            child.wait(timeout=30)


def cmd_llm_server(args: argparse.Namespace, settings: Settings) -> int:
    from service.llm.local_server import server_command

    command = server_command(settings.llm_server, settings.llm.model)
    os.execvp(command[0], command)


def publish(report: dict, out: Path, name: str, headline: Callable[[dict], str],
            plot: Callable[[dict, Path], None] | None = None) -> int:
    """Write reports/<name>.json (and .png), print the headline figures and where they went."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    written = [path]
    if plot is not None:
        plot(report, path.with_suffix(".png"))
        written.append(path.with_suffix(".png"))
    print(headline(report))
    print("wrote " + " and ".join(map(str, written)))
    return 0


def missing(*paths: Path, hint: str = "") -> int | None:
    """Exit status 2, with the cause printed, when an input file is not there."""
    for path in paths:
        if not path.is_file():
            print(f"error: no such file: {path}{hint}", file=sys.stderr)
            return 2
    return None


def cmd_eval_gate(args: argparse.Namespace, settings: Settings) -> int:
    from service.evaluation.gate import evaluate, headline

    return missing(args.file) or publish(evaluate(args.file), args.out, "gate", headline)


def cmd_eval_references(args: argparse.Namespace, settings: Settings) -> int:
    from service.embedder import embedder_from
    from service.evaluation.references import evaluate, headline, plot

    if status := missing(args.corpus, args.questions):
        return status
    search = settings.search
    report = evaluate(args.corpus, args.questions, embedder_from(search),
                      cache=search.data_dir / "eval", mode=args.mode or search.reference_mode,
                      answer_weight=search.reference_answer_weight if args.answer_weight is None else args.answer_weight,
                      candidates=search.reference_candidates, top_k=search.reference_top_k,
                      splits=tuple(args.splits.split(",")), limit=args.limit)
    name = "references" if args.mode in (None, search.reference_mode) else f"references-{args.mode}"
    return publish(report, args.out, name, headline, plot)


def cmd_eval_attribution(args: argparse.Namespace, settings: Settings) -> int:
    from service.embedder import embedder_from
    from service.evaluation.attribution import evaluate, headline

    if status := missing(args.data / "corpus.jsonl", hint=" (--data must be the SciFact folder)"):
        return status
    return publish(evaluate(args.data, embedder_from(settings.search)), args.out, "attribution", headline)


def cmd_eval_match(args: argparse.Namespace, settings: Settings) -> int:
    from service.embedder import embedder_from
    from service.evaluation.match import evaluate, headline, plot

    if status := missing(args.file, args.bank, hint=" (scripts/make_match_set.py builds the sets and the full bank)"):
        return status
    report = evaluate(args.file, args.bank, embedder_from(settings.search), settings.search.data_dir / "eval",
                      settings.search.match_threshold)
    return publish(report, args.out, "match", headline, plot)


def cmd_eval_llm(args: argparse.Namespace, settings: Settings) -> int:
    from prompts import load_prompts
    from service.evaluation.llm import development_items, evaluate, headline
    from service.generate import Tutor
    from service.llm.client import OpenAIChatLLM

    llm = OpenAIChatLLM(settings.llm)
    if not llm.ping():
        print(f"error: no LLM answers at {settings.llm.base_url}: start one with `tutorqa llm-server`", file=sys.stderr)
        return 2
    items = development_items(args.data, args.gate_set, args.per_group)
    report = evaluate(Tutor(llm, load_prompts(), cache=None, default_model=settings.llm.model), items)
    report["model"], report["endpoint"] = settings.llm.model, settings.llm.base_url
    return publish(report, args.out, "llm", headline)


def cmd_bench_search(args: argparse.Namespace, settings: Settings) -> int:
    from service.benchmarks.search import headline, plot, run
    from service.embedder import embedder_from

    if status := missing(args.corpus, args.questions):
        return status
    sizes = sorted(int(size) for size in args.sizes.split(","))
    report = run(args.corpus, args.questions, embedder_from(settings.search), settings.search.data_dir / "eval",
                 settings.search.data_dir / "bench", sizes)
    return publish(report, args.out, "bench_search", headline, plot)


def cmd_bench_embed(args: argparse.Namespace, settings: Settings) -> int:
    from service.benchmarks.embed import headline, plot, run

    if status := missing(args.corpus):
        return status
    return publish(run(args.corpus, settings.search.data_dir / "models", args.n), args.out, "bench_embed", headline, plot)


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    from ab_testing.report import experiment_report, plot_report
    from service.store import SQLStore

    report = experiment_report(args.experiment, SQLStore(settings.database_url).experiment_answers(args.experiment))
    print(json.dumps(report, indent=2))
    if not report["arms"]:
        print(f"no answers were served under experiment {args.experiment!r}", file=sys.stderr)
        return 1
    if args.plot:
        plot_report(report, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def cmd_config(args: argparse.Namespace, settings: Settings) -> int:
    if args.markdown:
        print(markdown_table())
    else:
        print(settings.model_dump_json(indent=2))
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="tutorqa", description="Tutoring-answers microservice")
    commands = root.add_subparsers(dest="command", required=True)

    index = commands.add_parser("index", help="add or update records of an index from a JSONL file")
    index.add_argument("kind", choices=["qa", "passages"])
    index.add_argument("file", type=Path)
    index.add_argument("--checkpoint-s", type=float, default=120.0,
                       help="save progress this often: a re-run after an interruption resumes from there")
    index.set_defaults(run=cmd_index)

    delete = commands.add_parser("delete", help="remove records of an index by id")
    delete.add_argument("kind", choices=["qa", "passages"])
    delete.add_argument("ids", nargs="*", help="record ids")
    delete.add_argument("--file", type=Path, help="a file of ids, separated by white space")
    delete.set_defaults(run=cmd_delete)

    ask = commands.add_parser("ask", help="answer one question and print the JSON answer (no HTTP)")
    ask.add_argument("question")
    ask.add_argument("--user-id", help="assigns experiment arms; without it, every feature's default")
    ask.add_argument("--subject")
    ask.set_defaults(run=cmd_ask)

    serve = commands.add_parser("serve", help="run the HTTP service under gunicorn")
    serve.add_argument("--with-llm", action="store_true", help="also run the local LLM server, stopped on exit")
    serve.set_defaults(run=cmd_serve)

    llm = commands.add_parser("llm-server", help="run llama.cpp's OpenAI-compatible server with the local model")
    llm.set_defaults(run=cmd_llm_server)

    evaluate = commands.add_parser("eval", help="measure a stage on labelled data; writes reports/<stage>.json")
    stages = evaluate.add_subparsers(dest="stage", required=True)
    gate = stages.add_parser("gate", help="the gate against labelled queries")
    gate.add_argument("file", type=Path, help='JSONL: {"q", "kind": mcq|frq|not_question, "complete", "math"}')
    gate.set_defaults(run=cmd_eval_gate)
    references = stages.add_parser("references", help="precision/recall of references on SciQ-shaped files")
    references.add_argument("--corpus", type=Path, default=SHARED_DATA / "sciq" / "passages.jsonl")
    references.add_argument("--questions", type=Path, default=SHARED_DATA / "sciq" / "sciq_all.jsonl")
    references.add_argument("--splits", default="valid,test", help="comma-separated; the threshold is chosen on the first")
    references.add_argument("--limit", type=int, help="at most N questions per split, for a quick run")
    references.add_argument("--mode", choices=["hybrid", "published"], help="default: REFERENCE_MODE")
    references.add_argument("--answer-weight", type=float, help="default: REFERENCE_ANSWER_WEIGHT")
    references.set_defaults(run=cmd_eval_references)
    attribution = stages.add_parser("attribution", help="sentence attribution on SciFact claims")
    attribution.add_argument("--data", type=Path, default=SHARED_DATA / "scifact", help="SciFact folder")
    attribution.set_defaults(run=cmd_eval_attribution)
    llm = stages.add_parser("llm", help="the configured LLM on MCQs, FRQs and incomplete questions")
    llm.add_argument("--data", type=Path, default=SHARED_DATA, help="folder with sciq/, mmlu/, gsm8k/")
    llm.add_argument("--gate-set", type=Path, default=PROJECT_ROOT / "tests" / "data" / "gate_dev.jsonl")
    llm.add_argument("--per-group", type=int, default=30, help="items per group (SciQ, MMLU, GSM8K, incomplete)")
    llm.set_defaults(run=cmd_eval_llm)
    match = stages.add_parser("match", help="bank matching: paraphrases found, unrelated questions not matched")
    match.add_argument("file", type=Path, help='JSONL: {"query", "expect": qa_id or null}')
    match.add_argument("--bank", type=Path, default=PROJECT_ROOT / "var" / "eval" / "full_bank.jsonl",
                       help="Q&A bank JSONL to match against (indexed once into the data folder)")
    match.set_defaults(run=cmd_eval_match)
    for stage in (gate, references, attribution, llm, match):
        stage.add_argument("--out", type=Path, default=Path("reports"), help="folder for the report")

    bench = commands.add_parser("bench", help="measure speed; writes reports/bench_<name>.json and a plot")
    benches = bench.add_subparsers(dest="bench", required=True)
    bench_search = benches.add_parser("search", help="embedded indexes of growing size: build time, disk, memory, latency")
    bench_search.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated passage counts")
    bench_search.add_argument("--corpus", type=Path, default=SHARED_DATA / "sciq" / "passages.jsonl",
                              help="real passages the synthetic ones are made from")
    bench_search.add_argument("--questions", type=Path, default=SHARED_DATA / "sciq" / "sciq_all.jsonl",
                              help="SciQ-shaped questions used as queries")
    bench_search.set_defaults(run=cmd_bench_search)
    bench_embed = benches.add_parser("embed", help="passage-encoding throughput of each backend, batch size and process count")
    bench_embed.add_argument("--corpus", type=Path, default=SHARED_DATA / "sciq" / "passages.jsonl")
    bench_embed.add_argument("-n", type=int, default=1000, help="passages to encode per variant")
    bench_embed.set_defaults(run=cmd_bench_embed)
    for command in (bench_search, bench_embed):
        command.add_argument("--out", type=Path, default=Path("reports"), help="folder for the report")

    report = commands.add_parser("report", help="per-arm coverage and thumbs-up rate of an experiment, with intervals")
    report.add_argument("experiment")
    report.add_argument("--plot", type=Path, help="also write a PNG of the arms")
    report.set_defaults(run=cmd_report)

    config = commands.add_parser("config", help="print the effective configuration")
    config.add_argument("--markdown", action="store_true", help="print the README's table of variables")
    config.set_defaults(run=cmd_config)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        return args.run(args, settings)
    except SearchUnavailableError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (SettingsError, FileNotFoundError, ImportError, ValueError) as error:   # MappingConflictError too
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
