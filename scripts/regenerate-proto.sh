#!/usr/bin/env bash
# Regenerates Sources/Protocol/NotifBridgeWire/Generated/notifbridge.pb.swift from the .proto.
# Needs protoc (apt-get install protobuf-compiler). Builds protoc-gen-swift from the
# swift-protobuf version SwiftPM resolved for this package.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package resolve
checkout=.build/checkouts/swift-protobuf
swift build -c release --product protoc-gen-swift --package-path "$checkout" --scratch-path .build-protoc
protoc --plugin=protoc-gen-swift=.build-protoc/release/protoc-gen-swift \
    --swift_opt=Visibility=Public \
    --swift_out=Sources/Protocol/NotifBridgeWire/Generated \
    -I Sources/Protocol/NotifBridgeWire/Proto Sources/Protocol/NotifBridgeWire/Proto/notifbridge.proto
echo "regenerated Sources/Protocol/NotifBridgeWire/Generated/notifbridge.pb.swift"
