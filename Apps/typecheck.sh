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
