"""golden-v1.json: PROTOCOL.md §8 steps 1–8, and the end-to-end example after them."""
import os

import accessory
import aes_gcm
import framing
import protobuf

DIRECTIONS = ("HostToAccessory", "AccessoryToHost")
EVENT_TYPE = {"HostToAccessory": "HostEvent", "AccessoryToHost": "AccessoryEvent"}


def h(text):
    return bytes.fromhex(text)


def check_exchange(c, ex):
    kem = accessory.kem_for_suite(ex["suite"])
    secret = h(ex["accessorySecret"])
    # Step 1: the key from its secret, and its 8-byte key ID.
    public = accessory.public_key(kem, secret)
    c.check("step 1 public key length", accessory.PUBLIC_KEY_LEN[kem], len(h(ex["accessoryPublicKey"])))
    c.check("step 1 accessoryPublicKey", h(ex["accessoryPublicKey"]), public)
    c.check("step 1 keyID = SHA-256(public key)[0..8]", h(ex["keyID"]),
            accessory.key_id(h(ex["accessoryPublicKey"])))
    # Step 2: the exchange ID, 16 hex digits of the big-endian u64.
    enc = h(ex["encapsulatedKey"])
    c.check("step 2 encapsulatedKey length", accessory.ENC_LEN[kem], len(enc))
    c.check("step 2 exchangeID", ex["exchangeID"], "%016x" % accessory.exchange_id(enc))
    # Steps 3–4: recipient, then one export per direction.
    info = accessory.hpke_info(ex["suite"], ex["version"], ex["identifier"])
    ctx = accessory.recipient(kem, secret, enc, info)
    keys = {}
    for direction, field in zip(DIRECTIONS, ("hostToAccessoryKey", "accessoryToHostKey")):
        keys[direction] = ctx.export(accessory.export_context(info, direction, ex["featureID"]))
        c.check("step 4 %s" % field, h(ex[field]), keys[direction])
    # Steps 5–6: open, then decode and compare by value with `decoded`.
    decoded = []
    for i, m in enumerate(ex["messages"]):
        label = "message %d (%s)" % (i, m.get("summary", m["direction"]))
        plaintext = aes_gcm.open_framed(keys[m["direction"]], h(m["ciphertext"]))
        c.check("step 5 %s opens to plaintext" % label, h(m["plaintext"]), plaintext)
        kind = EVENT_TYPE[m["direction"]]
        try:
            value = protobuf.decode(kind, h(m["plaintext"]))
        except protobuf.DecodeError as exc:
            c.fail("step 6 %s does not decode as %s: %s" % (label, kind, exc))
            continue
        decoded.append((m["direction"], value))
        c.check("step 6 %s as %s" % (label, kind), m["decoded"], protobuf.to_json(kind, value))
    # Step 7: our own receipt for host event #1 must equal the recorded one byte for byte.
    receipts = [i for i, m in enumerate(ex["messages"]) if m["direction"] == "AccessoryToHost"]
    c.true("step 7 the last message is the accessory's", receipts and receipts[-1] == len(ex["messages"]) - 1)
    first = [v for d, v in decoded if d == "HostToAccessory" and v.get("sequence") == 1]
    if not c.true("step 7 a host event with sequence 1 exists", len(first) == 1):
        return
    event = first[0]
    notification_id = next((v["notification"]["id"] for k, v in event.items()
                            if k in ("add", "update") and "notification" in v), None)
    if notification_id is None and "remove" in event:
        notification_id = event["remove"].get("id")
    receipt = {"host_sequence": event["sequence"], "stored": True, "alerted": True}
    if notification_id is not None:
        receipt["id"] = notification_id
    ours = protobuf.encode("AccessoryEvent", {"sequence": 1, "receipt": receipt})
    c.check("step 7 receipt for #1 byte for byte", h(ex["messages"][-1]["plaintext"]), ours)
    sealed = aes_gcm.seal_framed(keys["AccessoryToHost"], os.urandom(12), ours)
    c.check("step 7 sealed receipt opens again", ours, aes_gcm.open_framed(keys["AccessoryToHost"], sealed))
    c.check("step 7 sealed length = 12 + plaintext + 16", len(ours) + 28, len(sealed))


def check_framing(c, vectors):
    for i, f in enumerate(vectors):
        message = h(f["message"])
        chunks = [h(x) for x in f["chunks"]]
        r = framing.Reassembler()
        try:
            outputs = [r.feed(chunk) for chunk in chunks]
        except framing.Refused as exc:
            c.fail("framing[%d] reassembler refused a chunk: %s" % (i, exc))
            outputs = [None]
        c.check("framing[%d] reassembled message" % i, message, outputs[-1] if outputs else None)
        c.true("framing[%d] nothing completes before the last chunk" % i,
               all(o is None for o in outputs[:-1]))
        c.true("framing[%d] every chunk within chunkLength" % i,
               all(len(x) <= f["chunkLength"] for x in chunks))
        c.check("framing[%d] framer output" % i, f["chunks"],
                [x.hex() for x in framing.Framer(f["chunkLength"]).frame(message)])


def check_end_to_end(c, ex):
    """§8's closing example: the X-Wing remove-all as Sealed{feature_ref: 1}, one chunk, one
    TCP frame, and back again through the stream deframer, reassembler and decoder."""
    remove_all = [m for m in ex["messages"] if "remove_all" in m["decoded"]]
    if not c.true("a remove-all message exists", len(remove_all) == 1):
        return
    m = remove_all[0]
    ciphertext = h(m["ciphertext"])
    link = protobuf.encode("LinkMessage", {"sealed": {"feature_ref": 1, "ciphertext": ciphertext}})
    # LinkMessage field 6 (0x32), Sealed field 1 = 1 (08 01), field 3 (0x1a) with its length.
    header = bytes([0x32, len(link) - 2, 0x08, 0x01, 0x1A, len(ciphertext)])
    c.check("Sealed LinkMessage header", header, link[:6])
    chunks = framing.Framer(4096).frame(link)
    c.check("one chunk", 1, len(chunks))
    c.check("chunk = 03 00 ‖ LinkMessage", b"\x03\x00" + link, chunks[0])
    frame = framing.stream_frame(chunks[0])
    c.check("TCP prefix = chunk length, u16 LE", len(chunks[0]).to_bytes(2, "little"), frame[:2])
    got = framing.StreamDeframer().feed(frame)
    c.check("stream deframer gives the chunk", [chunks[0]], got)
    message = framing.Reassembler().feed(got[0])
    sealed = protobuf.decode("LinkMessage", message)["sealed"]
    c.check("decoded feature_ref", 1, sealed.get("feature_ref"))
    info = accessory.hpke_info(ex["suite"], ex["version"], ex["identifier"])
    ctx = accessory.recipient(accessory.kem_for_suite(ex["suite"]), h(ex["accessorySecret"]),
                              h(ex["encapsulatedKey"]), info)
    key = ctx.export(accessory.export_context(info, "HostToAccessory", ex["featureID"]))
    plaintext = aes_gcm.open_framed(key, sealed["ciphertext"])
    c.check("opened remove-all", m["decoded"],
            protobuf.to_json("HostEvent", protobuf.decode("HostEvent", plaintext or b"")))
    # §4.2: KeyConfirm carries exchange_id as fixed64, so the wire holds it little-endian.
    confirm = protobuf.encode("LinkMessage", {"key_confirm": {"exchange_id": int(ex["exchangeID"], 16)}})
    c.check("KeyConfirm LinkMessage = 22 09 09 ‖ exchangeID reversed",
            b"\x22\x09\x09" + h(ex["exchangeID"])[::-1], confirm)
