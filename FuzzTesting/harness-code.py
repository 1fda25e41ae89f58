#!/usr/bin/env python3
"""Prints a hash of the code one fuzz harness runs, at a commit.

A soak counts only executions of the same code (soak.sh), but a hash of the whole tree would
restart every harness's soak on any change anywhere. This hash covers what the harness can reach:

- its executable in FuzzTesting/Sources/, FuzzTesting/Package.swift, and its file in
  NotifBridgeFuzzing with FuzzInput.swift (the input reader every harness uses). Not
  FuzzTarget.swift: its switch only names each harness's function, so adding a harness there
  does not restart the others' soaks;
- every target of the main package that file imports, and everything they depend on, by the
  manifest as SwiftPM reads it (`swift package dump-package`): each target's source folder and
  its entry in the manifest (dependencies, settings);
- the requirements of the external packages those targets name.

A module can only call code it imports, so a change outside that set cannot change what the
harness runs. Each harness's file in NotifBridgeFuzzing names no other harness's types (only
FuzzInput.swift's); this script refuses to hash one that does.

    FuzzTesting/harness-code.py HARNESS... [--rev REV] [--paths]

Prints `HARNESS HASH` a line (`--paths`: the paths hashed instead). Without --rev the commit is
HEAD, and any uncommitted change under those paths is refused (exit 2): a soak runs committed code.
"""
import hashlib
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FUZZING = "Sources/Tools/NotifBridgeFuzzing"

# Harness → (executable in FuzzTesting/Sources, its file in NotifBridgeFuzzing).
HARNESSES = {
    "reassembler": ("FuzzReassembler", "WireTargets.swift"),
    "stream-decoder": ("FuzzStreamDecoder", "WireTargets.swift"),
    "session": ("FuzzSession", "SessionTarget.swift"),
    "ledger": ("FuzzLedger", "LedgerTarget.swift"),
    "control": ("FuzzControl", "ControlTarget.swift"),
    "apns": ("FuzzAPNs", "APNsTarget.swift"),
    "scenario": ("FuzzScenario", "ScenarioTarget.swift"),
    "policy": ("FuzzPolicy", "PolicyTarget.swift"),
    "ancs": ("FuzzANCS", "ANCSTarget.swift"),
    "ratchet": ("FuzzRatchet", "RatchetTarget.swift"),
}
IMPORT = re.compile(r"^\s*(?:@[\w()]+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


def git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def manifest_at(rev):
    """The main manifest as SwiftPM reads it at `rev` (only Package.swift is needed)."""
    with tempfile.TemporaryDirectory() as folder:
        (pathlib.Path(folder) / "Package.swift").write_text(git("show", f"{rev}:Package.swift"))
        out = subprocess.run(["swift", "package", "dump-package"], cwd=folder, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def closure(manifest, imports):
    """The local targets `imports` reaches through the manifest's target dependencies."""
    targets = {t["name"]: t for t in manifest["targets"]}
    seen, pending = set(), [name for name in imports if name in targets]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for dependency in targets[name].get("dependencies", []):
            for kind in ("byName", "target"):
                if kind in dependency and dependency[kind][0] in targets:
                    pending.append(dependency[kind][0])
    return [targets[name] for name in sorted(seen)]


DECLARATION = re.compile(r"^(?:public |private |fileprivate |internal )?(?:final )?(?:enum|struct|class|actor|protocol) ([A-Za-z_][A-Za-z0-9_]*)", re.M)


def check_self_contained(file, rev):
    """A harness's file may use FuzzInput.swift's types, and no other file's."""
    names = git("ls-tree", "--name-only", f"{rev}:{FUZZING}").split()
    source = git("show", f"{rev}:{FUZZING}/{file}")
    for other in names:
        if other in (file, "FuzzInput.swift", "FuzzTarget.swift"):
            continue
        for name in DECLARATION.findall(git("show", f"{rev}:{FUZZING}/{other}")):
            if re.search(rf"\b{name}\b", source):
                raise SystemExit(f"harness-code.py: {file} uses {name} from {other}; move it to FuzzInput.swift or into {file}")


def reached(harness, rev):
    """(paths, manifest entries) that make up what the harness runs at `rev`."""
    executable, file = HARNESSES[harness]
    check_self_contained(file, rev)
    manifest = manifest_at(rev)
    source = git("show", f"{rev}:{FUZZING}/{file}")
    targets = closure(manifest, set(IMPORT.findall(source)))
    fuzzing = next(t for t in manifest["targets"] if t["name"] == "NotifBridgeFuzzing")
    paths = [f"FuzzTesting/Sources/{executable}", "FuzzTesting/Package.swift", f"{FUZZING}/FuzzInput.swift", f"{FUZZING}/{file}"]
    paths += [t["path"] for t in targets]
    packages = {d["product"][1] for t in targets + [fuzzing] for d in t.get("dependencies", []) if "product" in d}
    requirements = [d for d in manifest["dependencies"] if any(entry.get("identity") in packages for entries in d.values() for entry in entries)]
    entries = [json.dumps(t, sort_keys=True) for t in targets + [fuzzing]] + [json.dumps(d, sort_keys=True) for d in requirements]
    return paths, entries


def code_hash(harness, rev):
    paths, entries = reached(harness, rev)
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"{path} {git('rev-parse', f'{rev}:{path}').strip()}\n".encode())
    for entry in entries:
        digest.update(entry.encode() + b"\n")
    return digest.hexdigest()[:40], paths


def main(argv):
    rev, show_paths, harnesses = "HEAD", False, []
    while argv:
        arg = argv.pop(0)
        if arg == "--rev" and argv:
            rev = argv.pop(0)
        elif arg == "--paths":
            show_paths = True
        elif arg in HARNESSES:
            harnesses.append(arg)
        else:
            print(f"usage: harness-code.py HARNESS... [--rev REV] [--paths]; harnesses: {' '.join(HARNESSES)}", file=sys.stderr)
            return 2
    if not harnesses:
        print("harness-code.py: name at least one harness", file=sys.stderr)
        return 2
    for harness in harnesses:
        digest, paths = code_hash(harness, rev)
        if rev == "HEAD":
            dirty = git("status", "--porcelain", "--", "Package.swift", *paths)
            if dirty:
                print(f"harness-code.py: uncommitted changes to what {harness} runs; a soak runs committed code:\n{dirty}", file=sys.stderr)
                return 2
        if show_paths:
            print("\n".join(f"{harness} {path}" for path in paths))
        else:
            print(f"{harness} {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
