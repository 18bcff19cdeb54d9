#!/usr/bin/env python3
"""Keeps docs/ true, run by `make test`: every configuration key the library
knows (from `cairn config --keys --json`) must appear in docs/config.md with
its default, and docs/format.md must document the current format version."""
import json
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
cli = sys.argv[1]
errors = []
config_doc = (root / "docs" / "config.md").read_text()
out = subprocess.run([cli, "config", "--keys", "--json"], check=True, capture_output=True,
                     text=True, env={"PATH": "/usr/bin:/bin"}).stdout
for line in out.splitlines():
    key = json.loads(line)
    row = re.search(r"^\|\s*`%s`\s*\|.*$" % re.escape(key["key"]), config_doc, re.M)
    if not row:
        errors.append(f"docs/config.md: key {key['key']} is not documented")
    elif f"`{key['default']}`" not in row.group(0):
        errors.append(f"docs/config.md: {key['key']} default should be `{key['default']}`")
layout = (root / "src" / "format" / "layout.h").read_text()
version = re.search(r"kFormatVersion = (\d+)", layout).group(1)
if f"format version {version}" not in (root / "docs" / "format.md").read_text():
    errors.append(f"docs/format.md does not document format version {version}")
part = (root / "src" / "format" / "part.h").read_text()
part_version = re.search(r"kPartFormatVersion = (\d+)", part).group(1)
if f"part format version {part_version}" not in (root / "docs" / "format.md").read_text():
    errors.append(f"docs/format.md does not document part format version {part_version}")
for e in errors:
    print(e)
print(f"docs check: {len(errors)} problem(s)")
sys.exit(1 if errors else 0)
