#!/usr/bin/env python3
"""Every module a target imports must be one it declares in Package.swift.

SwiftPM lets a target import any module that is built before it, so an undeclared import
compiles until the dependency graph changes. This reads the manifest as SwiftPM resolves it
(`swift package dump-package`), scans each target's Swift files for imports, and lists every
import of a package module or product the target does not declare. Modules that come with the
toolchain (Foundation, Synchronization, Testing, ...) are not declared in a manifest, so they
are skipped. Exit status 1 if anything is undeclared.

    scripts/check-imports.py [PACKAGE_DIR]
"""
import json
import pathlib
import re
import subprocess
import sys

TOOLCHAIN = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Glibc", "Musl", "Darwin",
    "Synchronization", "Testing", "XCTest", "os", "Observation", "_Concurrency", "Swift", "CoreBluetooth",
    "Network", "CryptoKit", "SwiftUI", "UIKit", "AppKit", "UserNotifications", "AccessorySetupKit",
}
IMPORT = re.compile(r"^\s*(?:@[\w()]+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    manifest = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True, capture_output=True, text=True).stdout)
    local = {t["name"] for t in manifest["targets"]}
    # Modules of other packages that this manifest can see: every product any target names.
    external = set()
    for target in manifest["targets"]:
        for dependency in target.get("dependencies", []):
            if "product" in dependency:
                external.add(dependency["product"][0])
    # And every module of a resolved dependency, named or not: a target could import one that
    # only comes in through another package (NIOHTTPTypes did) and go unnoticed.
    for sources in root.glob(".build/checkouts/*/Sources/*"):
        if sources.is_dir() and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", sources.name):
            external.add(sources.name)
    problems = []
    for target in manifest["targets"]:
        declared = set()
        for dependency in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    declared.add(dependency[kind][0])
        default = {"test": "Tests", "executable": "Sources", "regular": "Sources"}.get(target["type"], "Sources")
        path = root / (target.get("path") or f"{default}/{target['name']}")
        for source in sorted(path.rglob("*.swift")):
            for module in sorted(set(IMPORT.findall(source.read_text()))):
                if module in TOOLCHAIN or module == target["name"] or module in declared:
                    continue
                if module in local or module in external:
                    problems.append(f"{source.relative_to(root)}: imports {module}, which target {target['name']} does not declare")
    products = {p["name"] for p in manifest["products"]}
    apps = check_xcode_targets(root, products, problems)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} undeclared import(s)", file=sys.stderr)
        return 1
    print(f"every import of {len(manifest['targets'])} targets and {apps} Xcode targets is declared")
    return 0


# What the Apple SDKs provide to every Xcode target without a package dependency.
APPLE = {
    "AccessoryNotifications", "AccessorySetupKit", "AccessoryTransportExtension", "ExtensionFoundation",
    "Security", "UniformTypeIdentifiers",
}


def check_xcode_targets(root, products, problems):
    """Checks the imports of every target in Apps/*/project.yml; returns how many targets it read."""
    try:
        import yaml
    except ImportError:
        problems.append("Apps/*/project.yml: PyYAML is needed to read them (apt-get install python3-yaml)")
        return 0
    count = 0
    for project in sorted(root.glob("Apps/*/project.yml")):
        spec = yaml.safe_load(project.read_text())
        local = {name for name, package in (spec.get("packages") or {}).items() if "path" in package}
        for name, target in (spec.get("targets") or {}).items():
            count += 1
            declared = set()
            for dependency in target.get("dependencies") or []:
                if "package" in dependency:
                    product = dependency.get("product", dependency["package"])
                    if dependency["package"] in local and product not in products:
                        problems.append(f"{project.relative_to(root)}: target {name} depends on {product}, which this package does not offer")
                    declared.add(product)
            for entry in target.get("sources") or []:
                path = project.parent / (entry["path"] if isinstance(entry, dict) else entry)
                files = [path] if path.is_file() else sorted(path.rglob("*.swift"))
                for source in files:
                    for module in sorted(set(IMPORT.findall(source.read_text()))):
                        if module not in TOOLCHAIN and module not in APPLE and module not in declared:
                            problems.append(f"{source.relative_to(root)}: imports {module}, which Xcode target {name} does not list")
    return count


if __name__ == "__main__":
    sys.exit(main())
