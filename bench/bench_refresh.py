"""Benchmark the release-matrix refresh (run by hand; numbers go in docs/matrix.md).

A full refresh from an empty cache (a fresh temporary cache folder, no
previous matrix) against the index pip is configured with: how many wheel
bytes it reads as a fraction of the total size of the wheels it describes.
Target: <= 1.5 %. This downloads what a first real refresh downloads
(about 1 % of the wheels, a few minutes at most): run it rarely.

``--serve DIR`` instead serves the project's wheels found in DIR (for
example the real onnxruntime-qnn wheels the tests download) from a real
index server on 127.0.0.1 (tests/helpers/index_server.py: JSON simple API,
HTTP Range) and refreshes against it: repeatable numbers without the network.

Usage: python bench/bench_refresh.py [--index-url URL | --serve DIR]
       [--project NAME] [--limit N] [--jobs N] [--target PERCENT] [--output PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # mypy reads matrix/ as the top-level package ``matrix``
    from matrix import refresh
else:  # the maintainers' tool lives in the repository (matrix/refresh/), not in the wheel
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from matrix import refresh


@contextlib.contextmanager
def _served(folder: Path, project: str) -> Iterator[str]:
    """The index URL of a local server holding ``project``'s wheels in ``folder``."""
    sys.path.append(str(Path(__file__).resolve().parent.parent / "tests"))
    from helpers.index_server import Served, serve

    prefix = project.replace("-", "_") + "-"
    wheels = sorted(p for p in folder.glob("*.whl") if p.name.startswith(prefix))
    if not wheels:
        raise SystemExit(f"bench_refresh: no {prefix}*.whl in {folder}")
    with serve(project, [Served(p.name, p.read_bytes()) for p in wheels]) as server:
        yield server.url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--index-url", help="default: pip's configuration")
    where.add_argument("--serve", type=Path, metavar="DIR", help="serve DIR's wheels locally")
    parser.add_argument("--project", default=refresh.DEFAULT_PROJECT)
    parser.add_argument("--limit", type=int, help="only the N newest releases")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--target", type=float, default=1.5, help="percent (default 1.5)")
    parser.add_argument("--output", type=Path, help="also write the matrix here")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        index_url = args.index_url
        if args.serve is not None:
            index_url = stack.enter_context(_served(args.serve, args.project))
        return _bench(args, index_url)


def _bench(args: argparse.Namespace, index_url: str | None) -> int:
    try:
        index = refresh.resolve_index_url(index_url)
    except refresh.UsageError as exc:
        print(f"bench_refresh: {exc}", file=sys.stderr)
        return 2
    log_stream = sys.stderr if args.verbose else io.StringIO()
    with tempfile.TemporaryDirectory(prefix="bench-refresh-") as cache:
        options = refresh.Options(
            index=index,
            project=args.project,
            cache_dir=Path(cache),
            previous=None,
            limit=args.limit,
            jobs=args.jobs,
        )
        try:
            result = refresh.refresh(options, refresh.Log(log_stream, args.verbose))
        except refresh.IndexReadError as exc:
            print(f"bench_refresh: could not read the index: {exc}", file=sys.stderr)
            return 1
    if args.output is not None:
        args.output.write_text(refresh.dump(result.document), "utf-8")
    stats = result.stats
    percent = 100.0 * stats.bytes_read / stats.bytes_total if stats.bytes_total else 0.0
    releases = len(result.document["releases"])
    print(f"index              {refresh.public_url(index.value)} ({index.source})")
    print(f"releases           {releases}")
    print(f"wheels             {stats.files} ({stats.errors} with errors)")
    print(f"read by range      {stats.by_range}, fetched whole {stats.fetched_whole}")
    print(f"requests           {stats.requests} (index page included)")
    print(f"wheel bytes total  {stats.bytes_total:,}")
    print(f"wheel bytes read   {stats.bytes_read:,}")
    print(f"fraction read      {percent:.3f} % (target <= {args.target} %)")
    print(f"time               {stats.seconds:.1f} s")
    for filename, message in result.errors:
        print(f"error              {filename}: {message}")
    return 0 if percent <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
