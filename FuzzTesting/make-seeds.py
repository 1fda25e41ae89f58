#!/usr/bin/env python3
"""Writes FuzzTesting/Corpus/<target>/ from the repository's own inputs, deterministically:
the golden vectors (Tests/Vectors/golden-v1.json, Tests/Vectors/ancs, Tests/Vectors/ratchet-v1.json), Fixtures/apns,
Scenarios/*.yaml and the Examples policy. Input layouts are FuzzTarget's (Sources/Tools/NotifBridgeFuzzing): records are
tag(1) | length(2, little-endian) | body.

    FuzzTesting/make-seeds.py            # rewrite the corpus
    FuzzTesting/make-seeds.py --check    # exit 1 if the committed corpus is out of date
"""
import json
import pathlib
import shutil
import struct
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = json.loads((ROOT / "Tests/Vectors/golden-v1.json").read_text())


def record(tag, body=b""):
    return bytes([tag]) + struct.pack("<H", len(body)) + bytes(body)


def pieces(data, size):
    """The piece layout of the stream and line targets: (length - 1) then the bytes."""
    out = b""
    for start in range(0, len(data), size):
        piece = data[start:start + size]
        out += bytes([len(piece) - 1]) + piece
    return out


# Protobuf wire format, just enough for the schema's messages.
def varint(value):
    out = b""
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def field(number, value):
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else bytes(value)
    return varint(number << 3 | 2) + varint(len(data)) + data


def fixed64(number, value):
    return varint(number << 3 | 1) + struct.pack("<Q", value)


def hello(suites=("XWing", "P256"), resume=None, version=1, max_chunk=0):
    body = field(1, version) + b"".join(field(2, s) for s in suites)
    if resume:
        body += field(3, field(1, resume[0]) + fixed64(2, resume[1]))
    if max_chunk:
        body += field(4, max_chunk)
    return field(1, body)


def key_material(exchange):
    return field(3, field(1, exchange["suite"]) + field(2, exchange["version"])
                 + field(3, bytes.fromhex(exchange["encapsulatedKey"]))
                 + field(4, exchange["identifier"]) + field(5, bytes.fromhex(exchange["keyID"])))


def bind(ref, feature):
    return field(5, field(1, ref) + field(2, feature))


def sealed(ciphertext, feature=None, ref=0):
    body = field(1, ref) if ref else field(2, feature)
    return field(6, body + field(3, ciphertext))


def host_event(sequence, kind, source="com.apple.MobileSMS", ident="msg-1", title="Anna", alert=True):
    notification_id = field(1, source) + field(2, ident)
    notification = field(1, notification_id) + field(2, "Messages") + field(3, title)
    if kind == "add":
        alerting = field(1, int(alert)) + field(2, 1) + field(4, 1) + field(5, b"")
        body = field(2, field(1, notification) + field(2, alerting))
    elif kind == "update":
        body = field(3, field(1, notification))
    elif kind == "remove":
        body = field(4, field(1, notification_id))
    else:
        body = field(5, b"")
    return field(1, sequence) + body


def frame(message, chunk_length, message_id):
    """ChunkFramer's framing (docs/PROTOCOL.md §3.1)."""
    if len(message) + 2 <= chunk_length:
        return [bytes([3, message_id]) + message]
    chunks, offset = [], 0
    while offset < len(message):
        header = bytes([1, message_id]) + struct.pack("<I", len(message)) if offset == 0 else bytes([0, message_id])
        end = min(offset + chunk_length - len(header), len(message))
        if end == len(message):
            header = bytes([header[0] | 2]) + header[1:]
        chunks.append(header + message[offset:end])
        offset = end
    return chunks


def wire_seeds():
    reassembler, stream = {}, {}
    for index, case in enumerate(GOLDEN["framing"]):
        chunks = [bytes.fromhex(c) for c in case["chunks"]]
        reassembler[f"golden-framing-{index}"] = b"".join(record(0, c) for c in chunks)
        frames = b"".join(struct.pack("<H", len(c)) + c for c in chunks)
        stream[f"golden-framing-{index}"] = pieces(frames, 7 + index * 50)
    first, second = frame(bytes(range(60)), 24, 1), frame(bytes(range(90)), 32, 2)
    interleaved = [c for pair in zip(first, second) for c in pair] + first[len(second):] + second[len(first):]
    reassembler["interleaved"] = b"".join(record(0, c) for c in interleaved)
    reassembler["timeout"] = record(0, first[0]) + record(11, first[1]) + record(0x80, second[0])
    stream["over-limit"] = pieces(struct.pack("<H", 300) + bytes(300), 64)
    stream["empty-frame"] = pieces(struct.pack("<H", 0) + b"\x03\x00", 8)
    return {"reassembler": reassembler, "stream-decoder": stream}


def session_seeds():
    seeds = {}
    for exchange in GOLDEN["exchanges"]:
        config = bytes([0 if exchange["suite"] == "XWing" else 3])
        name = exchange["suite"].lower()
        feature = exchange["featureID"]
        inbound = [m for m in exchange["messages"] if m["direction"] == "HostToAccessory"]
        setup = record(0, hello()) + record(0, key_material(exchange))
        seeds[f"{name}-sealed"] = config + setup + b"".join(record(0, sealed(bytes.fromhex(m["ciphertext"]), feature)) for m in inbound)
        resume = (bytes.fromhex(exchange["keyID"]), int(exchange["exchangeID"], 16))
        seeds[f"{name}-bound-resumed"] = (config + setup + record(0, bind(1, feature))
                                          + record(0, sealed(bytes.fromhex(inbound[0]["ciphertext"]), ref=1))
                                          + record(2) + record(0, hello(resume=resume, max_chunk=64))
                                          + b"".join(record(0, sealed(bytes.fromhex(m["ciphertext"]), feature)) for m in inbound[1:]))
        seeds[f"{name}-events"] = config + setup + b"".join(record(1, bytes.fromhex(m["plaintext"])) for m in inbound)
        tampered = bytearray(bytes.fromhex(inbound[0]["ciphertext"]))
        tampered[-1] ^= 1
        seeds[f"{name}-resync"] = config + setup + record(0, sealed(bytes(tampered), feature)) + record(0, key_material(exchange)) + record(3, b"\x0b")
    seeds["p256-on-local-network"] = bytes([1]) + record(0, hello()) + record(0, key_material(GOLDEN["exchanges"][1]))
    seeds["unsupported-version"] = bytes([0]) + record(0, hello(version=2))
    return {"session": seeds}


def ledger_seeds():
    golden = [bytes.fromhex(m["plaintext"]) for m in GOLDEN["exchanges"][0]["messages"] if m["direction"] == "HostToAccessory"]
    events = [host_event(1, "add"), host_event(2, "update", title="Anna (edited)"), host_event(3, "add", ident="msg-2"),
              host_event(4, "remove"), host_event(5, "update"), host_event(6, "removeAll"), host_event(7, "add", ident="msg-3", alert=False)]
    return {"ledger": {
        "golden": b"".join(record(0, e) for e in golden),
        "golden-reversed": b"".join(record(0, e) for e in reversed(golden)),
        "lifecycle": b"".join(record(0, e) for e in events),
        "replayed-after-new-exchange": b"".join(record(0, e) for e in events[:4]) + record(3, b"\x01") + b"".join(record(0, e) for e in events),
        # Tag 4 ends the batch after its event: one transaction per event, as at a slow pace.
        "lifecycle-one-per-batch": b"".join(record(4, e) for e in events),
    }}


def text_seeds():
    lines = [{"op": "list"}, {"op": "reply", "source": "com.apple.MobileSMS", "id": "msg-4711", "action": "reply", "text": "On my way 🏃"},
             {"op": "action", "source": "com.apple.mobilephone", "id": "call-2203", "action": "accept"},
             {"op": "dismiss", "source": "com.apple.MobileSMS", "id": "msg-4711"}, {"op": "clear", "source": "com.apple.MobileSMS", "id": "msg-4712"}]
    stream = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)
    control = {"all-operations": pieces(stream, 40), "not-json": pieces(b"list\n{\"op\": 1}\n", 5), "too-long": pieces(b"x" * 700 + b"\n{\"op\":\"list\"}\n", 256)}
    apns = {path.stem.replace(".apns", ""): b"\x00" + path.read_bytes() for path in sorted((ROOT / "Fixtures/apns").glob("*.apns.json"))}
    apns["focus-message"] = b"\x02" + (ROOT / "Fixtures/apns/message.apns.json").read_bytes()
    icon = __import__("base64").b64encode((ROOT / "Fixtures/images/genmoji-wave.png").read_bytes()).decode()
    apns["rewrite-text"] = b"\x01" + json.dumps({"title": "Anna", "body": "Decrypted: see you at 8"}).encode()
    apns["rewrite-attachment"] = b"\x01" + json.dumps({"subtitle": "", "attachments": [{"type": "public.png", "base64": icon}]}).encode()
    return {"control": control, "apns": apns}


def file_seeds():
    scenario = {path.stem: path.read_bytes() for path in sorted((ROOT / "Scenarios").glob("*.yaml"))}
    example = (ROOT / "Examples/policy.json").read_bytes()
    policy = {"example": example, "empty": b"{}",
              "quiet-hours": b'{"quietHours": {"start": "23:30", "end": "06:00"}, "silentMode": true}',
              "burst-retention": b'{"burst": {"maxAlerts": 1, "windowSeconds": 0.5}, "retention": {"maxCount": 1, "maxBytes": 10, "maxAgeDays": 0.5}}',
              "display-hook": b'{"display": "2x16", "hook": {"command": ["true"], "on": "all"}, "desktopNotifications": true}'}
    return {"scenario": scenario, "policy": policy}


def ancs_seeds():
    """ANCSTarget's records: 0 Notification Source, 1 Data Source, 2 tick, 3 action, 4 failed
    write, 5 a write to the phone model; bits 3-5 of the tag are seconds that pass first."""
    seeds, exchanges = {}, {}
    for path in sorted((ROOT / "Tests/Vectors/ancs").glob("*.hex")):
        body = b""
        for line in path.read_text().splitlines():
            label, _, value = line.partition(":")
            if label in ("ns", "ds"):
                body += record(0 if label == "ns" else 1, bytes.fromhex(value))
        exchanges[path.stem] = body
    seeds.update(exchanges)
    call = exchanges["incoming-call"]
    seeds["actions"] = call + record(3, b"\x00\x02\x01\x00\x00") + record(3, b"\x01\x02\x01\x00\x00") + record(4) + record(2)
    seeds["timeout"] = call[:40] + record(2 | 6 << 3) + call
    seeds["phone-writes"] = b"".join(record(5, bytes.fromhex(w)) for w in (
        "00 01 00 00 00 00 01 10 00 03 20 00 05", "01 63 6f 6d 2e 61 00 00", "02 01 00 00 00 00", "02 01 00 00 00 01", "03"))
    return {"ancs": seeds}


def ratchet_seeds():
    """RatchetTarget's records: 0 deliver message body[0], 1 deliver it tampered (bit body[2]),
    2 parse and deliver the body as it is, 3 save and restore. Raw bodies come from the ratchet
    vectors, which another chain sealed, so they must be refused."""
    vectors = json.loads((ROOT / "Tests/Vectors/ratchet-v1.json").read_text())
    deliver = lambda *indices: b"".join(record(0, bytes([i])) for i in indices)
    raw = b"".join(record(2, bytes.fromhex(m["message"])) for chain in vectors["chains"] for m in chain["messages"])
    return {"ratchet": {
        "in-order": deliver(0, 1, 2, 3),
        "reordered-replayed": deliver(0, 3, 1, 2, 2, 3) + record(3) + deliver(1, 4),
        "window-edge": deliver(16, 0, 17, 34, 35, 1) + record(3) + deliver(18),
        "tampered": record(1, bytes([2, 0, 5])) + deliver(2) + record(1, bytes([2, 0, 200])),
        "foreign-vectors": raw + deliver(0),
    }}


def write(directory):
    for seeds in (wire_seeds(), session_seeds(), ledger_seeds(), text_seeds(), file_seeds(), ancs_seeds(), ratchet_seeds()):
        for target, files in seeds.items():
            folder = directory / target
            folder.mkdir(parents=True, exist_ok=True)
            for name, data in files.items():
                (folder / name).write_bytes(data)


def main():
    corpus = ROOT / "FuzzTesting/Corpus"
    if sys.argv[1:] == ["--check"]:
        with tempfile.TemporaryDirectory() as scratch:
            write(pathlib.Path(scratch))
            fresh = sorted(p.relative_to(scratch) for p in pathlib.Path(scratch).rglob("*") if p.is_file())
            kept = sorted(p.relative_to(corpus) for p in corpus.rglob("*") if p.is_file())
            stale = fresh != kept or any((corpus / p).read_bytes() != (pathlib.Path(scratch) / p).read_bytes() for p in fresh)
        print("corpus is out of date: run FuzzTesting/make-seeds.py" if stale else "corpus is up to date")
        sys.exit(1 if stale else 0)
    shutil.rmtree(corpus, ignore_errors=True)
    write(corpus)


if __name__ == "__main__":
    main()
