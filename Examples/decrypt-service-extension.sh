#!/bin/sh
# A notification service extension for `notifbridge phone send --service-extension`, after the
# decrypting extension in Apple's "Modifying content in newly delivered notifications":
#
#   swift run notifbridge phone send --service-extension Examples/decrypt-service-extension.sh \
#       Fixtures/apns/secret-message.apns.json
#
# The APNs payload arrives on stdin. ENCRYPTED_DATA becomes the body (base64 stands in for real
# decryption here) and the title says it was decrypted; every other field is kept. If anything
# fails, the script exits non-zero and the phone forwards the original "(Encrypted)" content,
# as iOS does when an extension never calls its content handler. Needs jq.
set -eu
command -v jq >/dev/null 2>&1 || { echo "decrypt-service-extension: jq is not installed" >&2; exit 1; }
jq -c '
  if (.ENCRYPTED_DATA | type) != "string" then error("the payload has no ENCRYPTED_DATA string")
  else {title: "Secret Message 🔓", body: (.ENCRYPTED_DATA | @base64d)} end'
