"""`compass clusters`: the synthetic-cluster generator from the terminal (thesis ch. 5; issue 30 item 4).

    compass clusters describe ARCHETYPE [--seed N] [--json]       an archetype and one data set drawn from it
    compass clusters export ARCHETYPE --out FILE.jsonl [--seed N]  that data set, one {"x", "label"} per line
    compass clusters sample ARCHETYPE --n N [--seed N] [--out DIR] archetypes like it (repliclust's sample_hyperparams)

ARCHETYPE is a YAML file of Table 5.1 parameters or the name of one under the archetype folders. Data are synthetic.
A bad file, key, value or flag is one line on stderr naming it, exit code 2, nothing written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import yaml

from compass.clusters import Archetype, ArchetypeError, generate
from compass.clusters.describe import describe, describe_text, sample_hyperparams, to_jsonl
from resources.clusters_configs import archetype as named_archetype


class ClustersFlagError(ValueError):
    """A bad flag or argument of `compass clusters`; the message names it."""


def load(spec: str) -> Archetype:
    """A YAML file by path, else a shipped or configured archetype by name."""
    path = Path(spec)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ClustersFlagError(f"{spec}: no such archetype file")
        return Archetype.from_yaml(path)
    try:
        return named_archetype(spec)
    except KeyError as exc:
        raise ClustersFlagError(str(exc.args[0])) from None


MAX_VARIANTS = 10_000  # `sample --n`: archetypes written in one go


def _positive(flag: str, value: int, most: int) -> int:
    if not 1 <= value <= most:
        raise ClustersFlagError(f"{flag} {value}: must be a positive whole number, at most {most:,}")
    return value


def cmd_describe(args: argparse.Namespace) -> int:
    archetype = load(args.archetype)
    summary = describe(archetype, generate(archetype, args.seed), seed=args.seed)
    print(json.dumps(summary, indent=1, default=float) if args.json else describe_text(summary))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    archetype = load(args.archetype)
    out = Path(args.out)
    if not out.parent.is_dir():
        raise ClustersFlagError(f"--out {args.out}: folder {out.parent} does not exist")
    data = generate(archetype, args.seed)
    out.write_text(to_jsonl(data))
    print(f"{out}: {len(data.y)} points, {archetype.n_clusters} clusters, {data.X.shape[1]}-D (synthetic, seed {args.seed})")
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    archetype = load(args.archetype)
    variants = sample_hyperparams(archetype, _positive("--n", args.n, MAX_VARIANTS), np.random.default_rng(args.seed))
    if args.out is None:
        print(yaml.safe_dump_all([v.to_dict() for v in variants], sort_keys=False), end="")
        return 0
    folder = Path(args.out)
    if not folder.is_dir():
        raise ClustersFlagError(f"--out {args.out}: not an existing folder")
    for v in variants:
        (folder / f"{v.name}.yaml").write_text(yaml.safe_dump(v.to_dict(), sort_keys=False))
    print(f"{folder}: {len(variants)} archetype files ({', '.join(v.name for v in variants[:3])}"
          f"{', ...' if len(variants) > 3 else ''})")
    return 0


def _guarded(func):
    """One line on stderr and exit code 2 for a bad archetype or flag, never a traceback."""
    def run(args: argparse.Namespace) -> int:
        try:
            if args.seed < 0:
                raise ClustersFlagError(f"--seed {args.seed}: must be a whole number >= 0")
            return func(args)
        except (ArchetypeError, ClustersFlagError) as exc:
            print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
    return run


def add_clusters_parser(sub: argparse._SubParsersAction) -> None:
    clusters = sub.add_parser("clusters", help="synthetic cluster data from an archetype: describe, export, sample")
    commands = clusters.add_subparsers(dest="clusters_command", required=True)
    for name, func, text in (("describe", cmd_describe, "an archetype and one data set drawn from it (text or JSON)"),
                             ("export", cmd_export, "one data set as JSONL: {\"x\": [...], \"label\": k} per point"),
                             ("sample", cmd_sample, "archetypes like this one (Poisson n_clusters, n_samples, dim)")):
        cmd = commands.add_parser(name, help=text)
        cmd.add_argument("archetype", help="YAML file of Table 5.1 parameters, or an archetype name")
        cmd.add_argument("--seed", type=int, default=0)
        cmd.set_defaults(func=_guarded(func))
        if name == "describe":
            cmd.add_argument("--json", action="store_true", help="the summary as JSON")
        elif name == "export":
            cmd.add_argument("--out", required=True, help="the JSONL file to write")
        else:
            cmd.add_argument("--n", type=int, required=True, help="how many archetypes")
            cmd.add_argument("--out", help="folder for one YAML file each (default: YAML documents on stdout)")
