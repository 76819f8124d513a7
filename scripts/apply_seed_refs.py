"""Replace citations of the seed documents ("seed 000 §8.3") with references to docs/contracts.md.

The mapping is docs/.seed_refs.tsv: a header line, then one `citation<TAB>replacement` per line. A space in a
citation matches any run of whitespace, so a citation wrapped over two lines (in a docstring or a markdown
paragraph) is found too. Longer citations win over their prefixes ("seed 000 §6.4, seed 001 §4.9" before
"seed 000 §6.4"), and a citation never matches the start of a longer section number ("seed 000 §4" does not
match "seed 000 §4.4").

Every tracked .py, .html, .js and .md file is rewritten (bytes other than the citations unchanged), except
docs/contracts.md and this script. Each replacement is printed as `path:line: old -> new`. Afterwards the
files are searched for citations the mapping does not cover; any left over are listed and the exit status
is 1. A warning names each code line whose trailing comment the replacement made longer than the line length
(`ruff format` would split it).

    python scripts/apply_seed_refs.py [--root DIR] [--mapping FILE] [--dry-run]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAPPING = "docs/.seed_refs.tsv"
CONTRACTS = "docs/contracts.md"
# Files that are about the citations, not users of them.
EXCLUDED = frozenset({CONTRACTS, "scripts/apply_seed_refs.py"})
SUFFIXES = (".py", ".html", ".js", ".md")
HEADER = ("citation", "replacement")
REFERENCE = "docs/contracts.md §"
DEFAULT_LINE_LENGTH = 88  # ruff's, when pyproject.toml sets none

# What counts as a citation left behind: "seed 00N" (or "Seed", "seeds") with a section sign shortly after,
# or a section sign followed by a number on its own (e.g. "(§8.3)").
SEED_CITATION = re.compile(r"\b[Ss]eeds?\s+00\d\b[^§\n]{0,40}§\s?\d")
SECTION_NUMBER = re.compile(r"§\s?\d")


@dataclass(frozen=True)
class Replacement:
    path: str
    line: int
    old: str
    new: str


def normalise(text: str) -> str:
    return " ".join(text.split())


def read_mapping(path: Path) -> dict[str, str]:
    """Citation (whitespace normalised) → replacement; the header and blank lines are skipped."""
    mapping: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        fields = raw.split("\t")
        if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
            raise ValueError(f"{path}:{number}: expected 'citation<TAB>replacement', got {raw!r}")
        if tuple(fields) == HEADER:
            continue
        citation = normalise(fields[0])
        if citation in mapping:
            raise ValueError(f"{path}:{number}: citation {citation!r} is listed twice")
        mapping[citation] = fields[1].strip()
    return mapping


def citation_pattern(citations: list[str]) -> re.Pattern[str]:
    """One regex matching any citation, longest first; spaces match any whitespace."""
    alternatives = []
    for citation in sorted(citations, key=len, reverse=True):
        body = r"\s+".join(re.escape(word) for word in citation.split(" "))
        before = r"(?<![\w.])" if citation[0].isalnum() else ""
        after = r"(?![\w])(?!\.\d)(?!-\d)" if citation[-1].isalnum() else ""
        alternatives.append(before + body + after)
    return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives))


def tracked_files(root: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True, text=True
    ).stdout
    return sorted(name for name in listed.split("\0") if name.endswith(SUFFIXES) and name not in EXCLUDED)


def rewrite(
    text: str, *, path: str, pattern: re.Pattern[str], mapping: dict[str, str]
) -> tuple[str, list[Replacement]]:
    """`text` with every citation replaced, and what was replaced where."""
    done: list[Replacement] = []

    def replace(match: re.Match[str]) -> str:
        old = match.group(0)
        new = mapping[normalise(old)]
        line = text.count("\n", 0, match.start()) + 1
        done.append(Replacement(path=path, line=line, old=normalise(old), new=new))
        return new

    return pattern.sub(replace, text), done


def leftovers(text: str, replacements: list[str]) -> list[tuple[int, str]]:
    """Citations still in `text` (line number, excerpt), ignoring the section numbers of the replacements."""
    cleaned = text
    for replacement in sorted(set(replacements), key=len, reverse=True):
        cleaned = cleaned.replace(replacement, " " * len(replacement))
    found: list[tuple[int, str]] = []
    for regex in (SEED_CITATION, SECTION_NUMBER):
        for match in regex.finditer(cleaned):
            line = cleaned.count("\n", 0, match.start()) + 1
            excerpt = normalise(text[max(0, match.start() - 30) : match.end() + 10])
            if (line, excerpt) not in found:
                found.append((line, excerpt))
    return found


def line_length(root: Path) -> int:
    """`[tool.ruff] line-length` of the checkout's pyproject.toml."""
    try:
        config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return DEFAULT_LINE_LENGTH
    return int(config.get("tool", {}).get("ruff", {}).get("line-length", DEFAULT_LINE_LENGTH))


def overlong_code_comments(text: str, limit: int) -> list[int]:
    """Lines of Python code whose trailing comment now cites the contracts and runs past `limit`.

    Long docstrings and comment lines are allowed (E501 is off), but `ruff format` splits a code line that is
    too long even when only its comment is: such a citation needs a shorter replacement.
    """
    numbers = []
    for number, line in enumerate(text.splitlines(), start=1):
        code, hash_sign, comment = line.partition("#")
        if hash_sign and code.strip() and REFERENCE in comment and len(line) > limit:
            numbers.append(number)
    return numbers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path("."), help="the git checkout to rewrite")
    parser.add_argument("--mapping", type=Path, help=f"the TSV mapping (default: ROOT/{DEFAULT_MAPPING})")
    parser.add_argument("--dry-run", action="store_true", help="print the replacements, write nothing")
    args = parser.parse_args(argv)

    root: Path = args.root.resolve()
    mapping = read_mapping(args.mapping or root / DEFAULT_MAPPING)
    pattern = citation_pattern(list(mapping))
    replacements = list(mapping.values())
    limit = line_length(root)

    total = 0
    changed_files = 0
    remaining: list[str] = []
    for name in tracked_files(root):
        path = root / name
        text = path.read_bytes().decode("utf-8")  # not read_text: keep line endings as they are
        new_text, done = rewrite(text, path=name, pattern=pattern, mapping=mapping)
        for item in done:
            print(f"{item.path}:{item.line}: {item.old!r} -> {item.new!r}")
        if done:
            total += len(done)
            changed_files += 1
            if not args.dry_run:
                path.write_bytes(new_text.encode("utf-8"))
        remaining += [f"{name}:{line}: {excerpt}" for line, excerpt in leftovers(new_text, replacements)]
        if name.endswith(".py"):
            for line in overlong_code_comments(new_text, limit):
                print(
                    f"warning: {name}:{line}: a code line with a citation comment is over {limit} characters"
                )

    verb = "would replace" if args.dry_run else "replaced"
    print(f"{verb} {total} citations in {changed_files} files ({len(mapping)} mapping entries)")
    if remaining:
        print(f"{len(remaining)} citations have no mapping:", file=sys.stderr)
        for entry in remaining:
            print(f"  {entry}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
