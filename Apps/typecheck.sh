#!/usr/bin/env bash
# Type-checks the Apple adapters under Apps/ on Linux. Apple's frameworks do not exist here, so
# Apps/StandIns/ declares exactly the signatures the adapters use (each citing its source); this
# script compiles each stand-in as a module of that framework's name, then type-checks every
# adapter source against them and the package's own modules, as the Xcode targets group them.
# The stand-ins are never shipped and are not part of the package.
#
#     swift build && Apps/typecheck.sh
#
# Adapters are checked in Swift 5 mode, as the Xcode projects build them: Sendable and actor
# annotations of Apple's frameworks are not reproduced by the stand-ins, so this check covers
# names, types and signatures, not concurrency annotations. Exits non-zero on any error.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${NOTIFBRIDGE_BUILD_DIR:-$(swift build --show-bin-path)}
modules="$build/Modules"
if [ ! -d "$modules" ] || [ ! -e "$modules/NotifBridgeAccessory.swiftmodule" ]; then
    echo "typecheck: no package modules in $modules; run swift build first" >&2
    exit 1
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Every declaration a stand-in adds must say where its shape comes from: a `///` line right above
# it (attributes aside), with an Apple page or a working project's file. Witnesses that only
# satisfy a protocol (rawValue, body: Never, builder functions, description) are exempt.
python3 - <<'PY'
import pathlib, re, sys
witness = re.compile(r"^\s*(nonisolated\s+)?(public|open)\s+(override\s+)?(let rawValue|init\(rawValue|var body: Never"
                     r"|typealias Body = Never|var description|init\(stringLiteral|static func build|init\(\)|init\(\) \{)")
declaration = re.compile(r"^\s*(@\w+(\(.*\))?\s+)*(nonisolated\s+)?(public|open)\s|^extension ")
uncited = []
for path in sorted(pathlib.Path("Apps/StandIns").rglob("*.swift")):
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if not declaration.match(line) or witness.match(line) or line.startswith("extension App") \
                or re.match(r"^extension (Button|ForEach|MenuBarExtra|AppExtensionPoint) ", line):
            continue
        j = i - 1
        while j >= 0 and re.match(r"^\s*@", lines[j]):
            j -= 1
        if j < 0 or not lines[j].strip().startswith("///"):
            uncited.append(f"{path}:{i + 1}: {line.strip()}")
for line in uncited:
    print(f"typecheck: no source cited for {line}", file=sys.stderr)
sys.exit(1 if uncited else 0)
PY

# The C modules the package's modules were built against (NIO's, swift-atomics', GRDB's SQLite,
# swift-crypto's), found through their module maps as SwiftPM passes them: the maps it generates
# for C targets, and those the dependencies ship under Sources/.
cflags=()
while IFS= read -r map; do
    cflags+=(-Xcc "-fmodule-map-file=$map" -Xcc "-I$(dirname "$map")")
done < <({ find "$build" -mindepth 2 -maxdepth 2 -path '*.build/module.modulemap'
           find .build/checkouts -path '*/Sources/*/module.modulemap' -not -path '*/Tests/*'; } 2>/dev/null | sort)

common=(-swift-version 5 -parse-as-library -I "$out" -I "$modules" "${cflags[@]}")

# Stand-ins, each after the ones it imports.
for framework in ExtensionFoundation UniformTypeIdentifiers UIKit CoreBluetooth Security UserNotifications SwiftUI \
                 AccessorySetupKit AccessoryTransportExtension AccessoryNotifications; do
    swiftc -emit-module -module-name "$framework" -swift-version 6 -parse-as-library -I "$out" \
        -emit-module-path "$out/$framework.swiftmodule" Apps/StandIns/"$framework"/*.swift
done
echo "typecheck: compiled $(ls "$out"/*.swiftmodule | wc -l) stand-in modules"

check() {
    local target=$1
    shift
    swiftc -typecheck -module-name "$target" "${common[@]}" "$@"
    echo "typecheck: $target ($# files) ok"
}

# The iOS app and its three extensions (Apps/iOS/project.yml), then the Mac accessory.
check NotifBridge Apps/iOS/NotifBridge/*.swift
check DataProvider Apps/iOS/DataProvider/*.swift
check TransportSecurity Apps/iOS/TransportSecurity/*.swift Apps/iOS/Shared/*.swift
check Transport Apps/iOS/Transport/*.swift Apps/iOS/Shared/*.swift
check NotifBridgeMac Apps/macOS/NotifBridgeMac/*.swift
